"""The endpoint kinds' registry (upstream/kinds.py) and the seat client each wire names."""

from __future__ import annotations

from benchwarmers.bench.bounds import KINDS
from benchwarmers.bench.clients import SeatClients
from benchwarmers.upstream.client import UpstreamPool
from benchwarmers.upstream.kinds import ENDPOINT_KINDS, LISTING_KINDS, Wire, endpoint_kind
from benchwarmers.upstream.listings import KINDS as LISTING_FORMATS


def test_every_wire_has_a_seat_client_with_or_without_llm() -> None:
    for client in ("builtin", "llm"):
        clients = SeatClients(UpstreamPool(), client)
        assert set(clients.wires) == set(Wire)
        assert all(callable(getattr(seat, "seat", None)) for seat in clients.wires.values())


def test_the_kinds_offered_are_the_registry_and_each_listed_kind_has_a_listing_format() -> None:
    listed = ("openai", "openrouter", "groq", "mistral", "ollama", "lmstudio", "llamacpp", "vllm", "openwebui")
    listed += ("litellm", "cliproxy", "responses", "anthropic")
    assert (tuple(ENDPOINT_KINDS), KINDS) == ((*listed, "llm"), (*listed, "llm"))
    assert [listed, listed] == [LISTING_KINDS, LISTING_FORMATS]
    assert [k.name for k in ENDPOINT_KINDS.values() if k.wire is not Wire.chat] == ["responses", "anthropic", "llm"]


def test_an_unregistered_kind_is_called_as_chat_completions() -> None:
    kind = endpoint_kind("someday")
    assert (kind.wire, kind.at_url, kind.local, kind.text_only) == (Wire.chat, True, False, False)
    assert endpoint_kind("llm").text_only and not endpoint_kind("llm").at_url
