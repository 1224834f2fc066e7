"""Panels through the gateway, as most end-to-end tests start them: a collection on a bench server, one question."""

from __future__ import annotations

from openai import OpenAI

from tests.support.benchserver import BenchServer


def collection(server: BenchServer, name: str, members: list[str], **extra: object) -> None:
    data = {
        "name": name,
        "members": [f"fake/{m}" for m in members],
        "description": f"{name} work",
        "tags": ["test"],
        **extra,
    }
    server.admin(lambda bench: bench.collections.add_collection(data))


def ask(client: OpenAI, model: str, text: str = "Review this function.", **kwargs: object):
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}], **kwargs)
