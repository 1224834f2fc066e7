"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.upstream import FakeUpstream


@pytest.fixture
def fake_upstream() -> Iterator[FakeUpstream]:
    """A fresh fake provider on 127.0.0.1 for one test (its own thread and event loop)."""
    with FakeUpstream() as fake:
        yield fake


pytest_plugins = ["tests.gateway_fixtures"]
