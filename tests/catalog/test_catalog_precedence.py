"""One precedence rule when sources disagree: override → learned (windows only lower) → listing →
models.dev → unknown; through real refreshes and real panels against the fake provider."""

from __future__ import annotations

import httpx2

from tests.support.catalog import ALIAS, OR_ID, entry, fact, refresh, serve_listing, setup
from tests.support.panels import ask


def test_sources_disagree_and_one_rule_decides(server, fake_upstream, client):
    setup(server, fake_upstream, entry(window=131_072))
    # The listing beats models.dev; models.dev fills in what the listing does not say.
    assert fact(server, "context_window") == {"value": 131_072, "source": "listing"}
    assert fact(server, "output_cap") == {"value": 131_072, "source": "models.dev"}
    assert fact(server, "family") == {"value": "llama", "source": "models.dev"}
    assert fact(server, "free") == {"value": True, "source": "listing"}

    # A listing that stops giving a window falls through to models.dev.
    serve_listing(fake_upstream, entry(window=None))
    refresh(server)
    assert fact(server, "context_window") == {"value": 65_536, "source": "models.dev"}

    # A real "maximum context length" error is learned, and it is lower, so it wins.
    server.admin(lambda b: b.collections.add_collection({"name": "p", "members": [ALIAS], "max_explorers": 0}))
    fake_upstream.script(OR_ID, context_limit=40_000)
    assert ask(client, "bench/p").bench["seats"][0]["status"] == "error"
    assert fact(server, "context_window") == {"value": 40_000, "source": "learned"}

    # A second error naming a larger window does not raise it: learned windows only ever lower.
    fake_upstream.script(OR_ID, context_limit=50_000)
    assert ask(client, "bench/p").bench["seats"][0]["status"] == "error"
    assert fact(server, "context_window") == {"value": 40_000, "source": "learned"}
    learned = [s for s in server.admin(lambda b: b.models.model(ALIAS))["sources"] if s["source"] == "learned"]
    assert [(s["fact"], s["value"]) for s in learned] == [("context_window", 40_000)]

    # A listing below what was learned wins: the learned window only counts while it is lower.
    serve_listing(fake_upstream, entry(window=30_000))
    refresh(server)
    assert fact(server, "context_window") == {"value": 30_000, "source": "listing"}

    # The user's override beats every source.
    server.admin(lambda b: b.models.set_model(ALIAS, context=100_000, vision=True, family="meta"))
    assert fact(server, "context_window") == {"value": 100_000, "source": "override"}
    assert fact(server, "input_kinds") == {"value": ["image", "text"], "source": "override"}
    assert fact(server, "family") == {"value": "meta", "source": "override"}


def test_a_model_with_no_known_window_is_never_refused(server, fake_upstream):
    setup(server, fake_upstream, entry("someone/unlisted-model-7b", window=None))
    assert fact(server, "context_window", "or/someone/unlisted-model-7b") is None
    fake_upstream.script("someone/unlisted-model-7b")
    server.admin(
        lambda b: b.collections.add_collection(
            {"name": "p", "members": ["or/someone/unlisted-model-7b"], "max_explorers": 0}
        )
    )
    response = httpx2.post(
        f"{server.v1}/chat/completions",
        json={"model": "bench/p", "messages": [{"role": "user", "content": "x" * 2_000_000}]},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.json()["bench"]["seats"][0]["status"] == "ok"
