"""The real-provider tier: one llama.cpp server for the whole session (loading the model takes seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.real.llama import LlamaServer, require_real_tier


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    gguf = require_real_tier()
    server = LlamaServer(gguf, tmp_path_factory.mktemp("llama") / "llama-server.log")
    try:
        yield server
    finally:
        server.stop()
