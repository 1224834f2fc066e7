"""Roles beside `primary`: the default merger (per shape or every shape) and the decision model asked
first; `role import` reads a TOML or JSON roles file in one transaction, `role export` writes one."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from sqlalchemy import select

from benchwarmers.bench.evidence.primary import Primary
from benchwarmers.bench.panels.merge import merger_candidates
from benchwarmers.store.changes import list_changes
from benchwarmers.store.schema import roles
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed
from tests.support.cli import cli_in
from tests.support.gateway_fixtures import ROSTER
from tests.support.panels import ask, collection

EXAMPLE = Path(__file__).parents[3] / "examples" / "roles.toml"


def cli_for(server: BenchServer, monkeypatch):
    return cli_in(server.settings.home, monkeypatch)


@pytest.fixture
def cli_home(bench_with_roster):
    return bench_with_roster.settings.home


def pins(server: BenchServer) -> list[tuple[str, str, str]]:
    async def read(bench):
        async with bench.state.read() as conn:
            query = select(roles.c.role, roles.c.shape, roles.c.alias).order_by(roles.c.role, roles.c.shape)
            return [tuple(r) for r in await conn.execute(query)]

    return server.admin(read)


def role_changes(server: BenchServer) -> list[tuple]:
    async def read(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn, subject="role")

    return [(c["name"], c["action"], c["before"], c["after"]) for c in reversed(server.admin(read))]


def merger_of(client, name: str = "pair") -> tuple[str, str]:
    merger = ask(client, f"bench/{name}:merged").bench["merger"]
    return merger["alias"], merger["chosen_as"]


def test_merger_candidates_put_the_pinned_merger_after_the_collections():
    collection_ = {"members": ["a", "b"], "merger": "m"}
    counts = {"b": (3, 4)}
    router = Primary("p", False, None)
    assert merger_candidates(collection_, "review", counts, router, {"review": "r", "*": "e"}) == [
        ("m", "the collection's merger"),
        ("r", "the merger pinned for review"),
        ("e", "the merger pinned for every shape"),
        ("b", "the best evidence on review among the panel's models: 3/4 useful"),
        ("p", "the router's best for review"),
        ("a", "the first member that fits"),
    ]
    assert merger_candidates({"members": ["a"], "merger": None}, "code", {}, None, {"review": "r", "*": "a"}) == [
        ("a", "the merger pinned for every shape")
    ]


def test_the_merger_role_merges_when_the_collection_names_none(bench_with_roster, client, cli):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    assert merger_of(client) == ("fake/llama-3.3-70b", "the first member that fits")
    assert cli("role", "set", "merger", "fake/kimi-k2") == (0, "pinned fake/kimi-k2 as merger for every shape\n")
    assert merger_of(client) == ("fake/kimi-k2", "the merger pinned for every shape")
    assert cli("role", "set", "merger", "general", "fake/glm-4.5-air") == (
        0,
        "pinned fake/glm-4.5-air as merger for general\n",
    )
    assert merger_of(client) == ("fake/glm-4.5-air", "the merger pinned for general")
    # A collection's own merger still comes first.
    collection(bench_with_roster, "own", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0, merger="fake/deepseek-r1")
    assert merger_of(client, "own") == ("fake/deepseek-r1", "the collection's merger")
    assert cli("role", "list") == (
        0,
        """\
┏━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┓
┃ role   ┃ shape       ┃ alias            ┃
┡━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━┩
│ merger │ every shape │ fake/kimi-k2     │
│ merger │ general     │ fake/glm-4.5-air │
└────────┴─────────────┴──────────────────┘
""",
    )
    assert cli("role", "clear", "merger", "general") == (
        0,
        "cleared the merger for general (was fake/glm-4.5-air); the merge rules decide again\n",
    )
    assert cli("role", "clear", "merger") == (
        0,
        "cleared the merger for every shape (was fake/kimi-k2); the merge rules decide again\n",
    )
    assert cli("role", "clear", "merger") == (1, "error: no merger is pinned for every shape\n")
    assert cli("role", "set", "merger", "nope", "fake/kimi-k2")[1].startswith("error: shape 'nope' is not known")
    assert cli("role", "set", "merger", "review", "kimi-k2") == (
        1,
        "error: no model 'kimi-k2' on the roster. Did you mean fake/kimi-k2?\n",
    )
    assert cli("role", "set", "primary", "fake/kimi-k2") == (1, "error: role set primary takes SHAPE ALIAS\n")
    assert cli("role", "set", "merger", "a", "b", "c") == (
        1,
        "error: role set merger takes [SHAPE] ALIAS (no shape: every shape)\n",
    )
    assert role_changes(bench_with_roster) == [
        ("merger/*", "create", None, {"alias": "fake/kimi-k2"}),
        ("merger/general", "create", None, {"alias": "fake/glm-4.5-air"}),
        ("merger/general", "delete", {"alias": "fake/glm-4.5-air"}, None),
        ("merger/*", "delete", {"alias": "fake/kimi-k2"}, None),
    ]
    assert pins(bench_with_roster) == []


def labels(fake) -> list[str]:
    return [r.json["model"] for r in fake.chat_requests if r.json["messages"][0]["content"].startswith("You label")]


def test_the_decision_role_is_asked_first_among_the_decision_models(bench_with_roster, client, fake, cli):
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.9}')
    fake.script("gemma-3-27b", reply='{"shape": "code", "confidence": 0.8}')
    for alias in ("fake/kimi-k2", "fake/gemma-3-27b"):
        bench_with_roster.admin(lambda b, alias=alias: b.shapes.add_decision_model(alias, "chat"))
    collection(bench_with_roster, "auto", ["llama-3.3-70b"], max_explorers=1)
    fake.clear()
    assert ask(client, "bench/auto").bench["shape_by"] == "decision model fake/kimi-k2 at 0.90"

    assert cli("role", "set", "decision", "fake/gemma-3-27b") == (
        0,
        "pinned fake/gemma-3-27b as decision model\n",
    )
    assert ask(client, "bench/auto").bench["shape_by"] == "decision model fake/gemma-3-27b at 0.80"
    assert labels(fake) == ["kimi-k2", "gemma-3-27b"]
    code, out = cli("role", "list")
    assert code == 0 and "│ decision │ –     │ fake/gemma-3-27b │" in out

    # Gone from its listing: the other decision models are asked, in their order.
    fake.listing(
        "/v1/models", {"object": "list", "data": [listed(m, w) for m, w in ROSTER.items() if m != "gemma-3-27b"]}
    )
    bench_with_roster.admin(lambda b: b.endpoints.refresh_endpoint("fake"))
    assert ask(client, "bench/auto").bench["shape_by"] == "decision model fake/kimi-k2 at 0.90"

    assert cli("role", "set", "decision", "fake/phi-4") == (
        1,
        "error: fake/phi-4 is not a decision model; add it first with `benchwarmers decision add fake/phi-4` "
        "(that checks it answers with a shape)\n",
    )
    assert cli("role", "set", "decision", "review", "fake/kimi-k2") == (
        1,
        "error: the decision role has no shape: its model is what labels a request's shape "
        "(benchwarmers role set decision ALIAS)\n",
    )
    # Removing it as a decision model unpins it, in the same transaction.
    assert cli("decision", "remove", "fake/gemma-3-27b")[0] == 0
    assert pins(bench_with_roster) == []
    assert role_changes(bench_with_roster) == [
        ("decision/*", "create", None, {"alias": "fake/gemma-3-27b"}),
        ("decision/*", "delete", {"alias": "fake/gemma-3-27b"}, None),
    ]
    assert cli("role", "clear", "decision") == (1, "error: no decision model is pinned\n")


ROLES_TOML = """\
decision = "fake/kimi-k2"

[primary]
review = "fake/llama-3.3-70b"
code = "fake/qwen3-coder"

[merger]
"*" = "fake/glm-4.5-air"
design = "fake/deepseek-r1"
"""


def test_role_import_and_export_round_trip(bench_with_roster, cli, fake, tmp_path):
    fake.script("kimi-k2", reply='{"shape": "review", "confidence": 0.9}')
    bench_with_roster.admin(lambda b: b.shapes.add_decision_model("fake/kimi-k2", "chat"))
    assert cli("role", "set", "primary", "general", "fake/phi-4")[0] == 0
    file = tmp_path / "roles.toml"
    file.write_text(ROLES_TOML)
    assert cli("role", "import", str(file)) == (0, "imported: 5 pinned, 0 changed, 0 unchanged\n")
    assert pins(bench_with_roster) == [
        ("decision", "*", "fake/kimi-k2"),
        ("merger", "*", "fake/glm-4.5-air"),
        ("merger", "design", "fake/deepseek-r1"),
        ("primary", "code", "fake/qwen3-coder"),
        ("primary", "general", "fake/phi-4"),
        ("primary", "review", "fake/llama-3.3-70b"),
    ]
    assert cli("role", "import", str(file)) == (0, "imported: 0 pinned, 0 changed, 5 unchanged\n")

    exported = """\
# Roles pinned on this bench: `benchwarmers role import FILE` reads this back.

decision = "fake/kimi-k2"

[primary]
code = "fake/qwen3-coder"
general = "fake/phi-4"
review = "fake/llama-3.3-70b"

[merger]
"*" = "fake/glm-4.5-air"
design = "fake/deepseek-r1"
"""
    assert cli("role", "export") == (0, exported)
    as_json = tmp_path / "roles.json"
    assert cli("role", "export", str(as_json)) == (0, f"exported 6 role(s) to {as_json}\n")
    assert orjson.loads(as_json.read_bytes()) == {
        "decision": "fake/kimi-k2",
        "primary": {"code": "fake/qwen3-coder", "general": "fake/phi-4", "review": "fake/llama-3.3-70b"},
        "merger": {"*": "fake/glm-4.5-air", "design": "fake/deepseek-r1"},
    }

    # JSON, with --replace: what the file leaves out is unpinned; what it changes is logged as an update.
    as_json.write_bytes(orjson.dumps({"primary": {"review": "fake/qwen3-32b"}, "merger": {"*": "fake/glm-4.5-air"}}))
    before = len(role_changes(bench_with_roster))
    assert cli("role", "import", str(as_json), "--replace") == (
        0,
        "imported: 0 pinned, 1 changed, 1 unchanged, 4 cleared\n",
    )
    assert pins(bench_with_roster) == [("merger", "*", "fake/glm-4.5-air"), ("primary", "review", "fake/qwen3-32b")]
    assert role_changes(bench_with_roster)[before:] == [
        ("primary/review", "update", {"alias": "fake/llama-3.3-70b"}, {"alias": "fake/qwen3-32b"}),
        ("decision/*", "delete", {"alias": "fake/kimi-k2"}, None),
        ("merger/design", "delete", {"alias": "fake/deepseek-r1"}, None),
        ("primary/code", "delete", {"alias": "fake/qwen3-coder"}, None),
        ("primary/general", "delete", {"alias": "fake/phi-4"}, None),
    ]


REFUSED = [
    ("bad.toml", 'primary = "fake/phi-4"\n', "primary must be a table of shape = alias"),
    ("bad.toml", "[primary]\nreview = 3\n", "primary must be a table of shape = alias"),
    ("bad.toml", "decision = ['fake/kimi-k2']\n", "decision must be one alias (a string)"),
    ("bad.json", "[]", "a roles file holds one table: decision, primary and merger"),
    ("bad.json", "{", "bad.json is not JSON: unexpected end of data"),
    (
        "bad.toml",
        "[pimary]\nreview = 'fake/phi-4'\n",
        "'pimary' is not a role; a roles file holds primary, merger, decision",
    ),
    (
        "bad.toml",
        '[primary]\n"*" = "fake/phi-4"\n',
        "the primary role is pinned per shape: give one (benchwarmers role set primary SHAPE ALIAS)",
    ),
    # All or nothing: the first pin is fine, the second is not on the roster.
    (
        "bad.toml",
        "[merger]\n'*' = 'fake/phi-4'\nreview = 'fake/phi-5'\n",
        "no model 'fake/phi-5' on the roster. Did you mean fake/phi-4, fake/kimi-k2, fake/glm-4.5-air?",
    ),
    (
        "bad.toml",
        "[merger\n",
        "bad.toml is not TOML: Expected ']' at the end of a table declaration (at line 1, column 8)",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), REFUSED)
def test_role_import_refusals_write_nothing(bench_with_roster, cli, tmp_path, monkeypatch, name, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    assert cli("role", "import", name) == (1, f"error: {message}\n")
    assert pins(bench_with_roster) == []
    assert role_changes(bench_with_roster) == []


def test_the_example_roles_file_imports(server, fake, monkeypatch):
    ids = ["llama-3.3-70b-versatile", "llama-3.1-8b-instant", "qwen/qwen3-coder:free", "deepseek/deepseek-r1:free"]
    for name in ("groq", "or"):
        add_fake_endpoint(server, fake, name, models=[listed(i) for i in ids])
    fake.script("llama-3.1-8b-instant", reply='{"shape": "review", "confidence": 0.9}')
    server.admin(lambda b: b.shapes.add_decision_model("groq/llama-3.1-8b-instant", "chat"))
    cli = cli_for(server, monkeypatch)
    assert cli("role", "import", str(EXAMPLE)) == (0, "imported: 5 pinned, 0 changed, 0 unchanged\n")
    assert pins(server) == [
        ("decision", "*", "groq/llama-3.1-8b-instant"),
        ("merger", "*", "groq/llama-3.3-70b-versatile"),
        ("merger", "design", "or/deepseek/deepseek-r1:free"),
        ("primary", "code", "or/qwen/qwen3-coder:free"),
        ("primary", "review", "groq/llama-3.3-70b-versatile"),
    ]
