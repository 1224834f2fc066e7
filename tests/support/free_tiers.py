"""Providers' free tiers as tests write them: a tier entry, a user's own file, the host a tier is keyed by."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from tests.fakes.upstream import FakeUpstream

OPENROUTER_SUMMARY = (
    "free: 50 requests a day, 20 requests a minute (the day resets at 00:00 UTC); prompts may be used for "
    "training by some free models' providers, unless your OpenRouter privacy settings rule them out"
)


OPENROUTER_TIER = {
    "provider": "openrouter",
    "summary": OPENROUTER_SUMMARY,
    "source": "https://openrouter.ai/docs/api-reference/limits",
    "checked": "2026-12-02",
    "data_use": "prompts may be used for training by some free models' providers, unless your OpenRouter "
    "privacy settings rule them out",
    "data_use_source": "https://openrouter.ai/docs/guides/privacy/logging",
    "note": "50 a day is for accounts that bought less than 10 credits (1,000 a day after that); the day is the "
    "UTC day and the allowance is shared by all :free models of the account",
}


def user_file(path: Path, host: str, **model: Any) -> Path:
    entry = {"model": "*", "free": True, "limits": {"requests-day": 50, "resets-day": "00:00"}, **model}
    data = {
        "format": 1,
        "checked": "2026-12-01",
        "providers": [
            {
                "provider": "fake-free",
                "name": "Fake free tier",
                "hosts": [host],
                "source": "https://example.org/fake-free-tier",
                "checked": "2026-12-01",
                "models": [entry],
            }
        ],
    }
    path.write_bytes(orjson.dumps(data))
    return path


def host_of(fake: FakeUpstream) -> str:
    parts = urlsplit(fake.base_url)
    return f"{parts.hostname}:{parts.port}"
