"""Collections through the CLI: exact output, every refusal, export/import round trip, changes log."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from benchwarmers.bench.services import Bench
from benchwarmers.settings import Settings
from benchwarmers.store.changes import list_changes


@pytest.fixture
def cli(cli, fake_upstream):
    invoke = cli
    fake_upstream.listing(
        "/v1/models",
        {
            "object": "list",
            "data": [{"id": m, "context_length": 32_000} for m in ("llama-3.3-70b", "qwen3-32b", "gemma-3-27b")],
        },
    )
    assert invoke("endpoint", "add", "p", "--base-url", fake_upstream.base_url, "--free-tier")[0] == 0
    assert invoke("endpoint", "refresh", "p")[0] == 0
    return invoke


def test_add_list_show_edit_remove(cli, tmp_path):
    code, out = cli(
        "collection",
        "add",
        "reviewers",
        "--member",
        "p/llama-3.3-70b",
        "--member",
        "p/qwen3-32b",
        "--description",
        "Code review: real defects",
        "--tag",
        "code",
        "--tag",
        "review",
    )
    assert (code, out) == (0, "created bench/reviewers: 2 member(s) + 2 explorer seat(s)\n")
    code, out = cli("collection", "show", "reviewers")
    assert orjson.loads(out) == {
        "name": "reviewers",
        "description": "Code review: real defects",
        "tags": ["code", "review"],
        "members": ["p/llama-3.3-70b", "p/qwen3-32b"],
        "shape": None,
        "reply": "all",
        "merger": None,
        "max_explorers": None,
        "max_calls": None,
        "auto_swap": False,
        "require_tags": [],
        "exclude_tags": [],
        "daily_panels": None,
        "daily_tokens": None,
        "stand_ins": False,
    }
    assert cli("collection", "edit", "reviewers", "--shape", "review", "--reply", "merged", "--max-explorers", "1") == (
        0,
        "updated bench/reviewers\n",
    )
    listed = orjson.loads(cli("collection", "list", "--json")[1])
    assert [(c["name"], c["shape"], c["reply"], c["max_explorers"]) for c in listed] == [
        ("reviewers", "review", "merged", 1)
    ]
    # auto_swap: off unless asked, shown by `collection show`, and an edit without the flag keeps it.
    assert cli("collection", "edit", "reviewers", "--auto-swap") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["auto_swap"] is True
    assert cli("collection", "edit", "reviewers", "--reply", "merged") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["auto_swap"] is True
    assert cli("collection", "edit", "reviewers", "--no-auto-swap") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["auto_swap"] is False
    # stand_ins the same way: off unless asked, kept by an edit without the flag.
    assert cli("collection", "edit", "reviewers", "--stand-ins") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["stand_ins"] is True
    assert cli("collection", "edit", "reviewers", "--max-calls", "4") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["stand_ins"] is True
    assert cli("collection", "edit", "reviewers", "--no-stand-ins") == (0, "updated bench/reviewers\n")
    assert orjson.loads(cli("collection", "show", "reviewers")[1])["stand_ins"] is False
    table = cli("collection", "list")[1]
    assert "bench/reviewers" in table and "p/llama-3.3-70b, p/qwen3-32b" in table
    assert cli("collection", "remove", "reviewers") == (0, "removed bench/reviewers\n")
    assert cli("collection", "remove", "reviewers") == (1, "error: no collection named 'reviewers'.\n")

    async def log():
        async with Bench(Settings(home=tmp_path / "home")) as bench, bench.state.read() as conn:
            return [(c["subject"], c["name"], c["action"]) for c in await list_changes(conn, subject="collection")]

    assert asyncio.run(log()) == [
        ("collection", "reviewers", "delete"),
        *[("collection", "reviewers", "update")] * 7,
        ("collection", "reviewers", "create"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["Bad_Name", "--member", "p/qwen3-32b"],
            "collection name 'Bad_Name' is not valid: use lower-case letters, digits and '-' (at most 64)",
        ),
        (
            ["ok", "--member", "p/qwen3-32b", "--description", "x" * 301],
            "description is 301 characters; at most 300 are allowed",
        ),
        (
            ["ok", "--member", "p/qwen3-32b", *[a for i in range(9) for a in ("--tag", f"t{i}")]],
            "9 tags given; at most 8 are allowed",
        ),
        (
            ["ok", "--member", "p/qwen3-32b", "--tag", "Two Words"],
            "tag 'Two Words' is not one lower-case word (letters, digits, '-')",
        ),
        (
            ["ok", "--member", "qwen3-32b"],
            "member 'qwen3-32b' is not on the roster. Did you mean p/qwen3-32b? See `benchwarmers model list`.",
        ),
        (["ok"], "a collection needs at least one member (--member ALIAS)"),
        (["ok", "--member", "p/qwen3-32b", "--reply", "some"], "reply must be 'all', 'merged' or 'pick', not 'some'"),
        (
            ["ok", "--member", "p/qwen3-32b", "--shape", "poetry"],
            "shape 'poetry' is not known. Shapes are: "
            "general, review, design, enumeration, code, writing, math, vision",
        ),
    ],
)
def test_invalid_collections_are_refused_with_what_is_wrong(cli, args, message):
    assert cli("collection", "add", *args) == (1, f"error: {message}\n")


def test_export_and_import_round_trip_exactly(cli, tmp_path, monkeypatch, fake_upstream):
    cli("collection", "add", "a", "--member", "p/llama-3.3-70b", "--description", "first", "--tag", "x")
    cli(
        "collection",
        "add",
        "b",
        "--member",
        "p/qwen3-32b",
        "--member",
        "p/gemma-3-27b",
        "--shape",
        "code",
        "--reply",
        "merged",
        "--merger",
        "p/llama-3.3-70b",
        "--max-explorers",
        "1",
        "--max-calls",
        "4",
    )
    exported = tmp_path / "collections.json"
    assert cli("collection", "export", str(exported)) == (0, f"exported 2 collection(s) to {exported}\n")
    # A second bench with the same roster imports the file and exports the very same bytes.
    monkeypatch.setenv("BENCHWARMERS_HOME", str(tmp_path / "other"))
    cli("endpoint", "add", "p", "--base-url", fake_upstream.base_url, "--free-tier")
    cli("endpoint", "refresh", "p")
    assert cli("collection", "import", str(exported)) == (0, "imported: 2 created, 0 updated, 0 unchanged\n")
    again = tmp_path / "again.json"
    cli("collection", "export", str(again))
    assert again.read_bytes() == exported.read_bytes()
    assert cli("collection", "import", str(exported)) == (0, "imported: 0 created, 0 updated, 2 unchanged\n")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x"}')
    assert cli("collection", "import", str(broken)) == (
        1,
        f"error: {broken} must hold a JSON list of collections, as `collection export` writes\n",
    )


def test_a_collection_is_taken_as_name_or_bench_name_everywhere(cli):
    made = cli("collection", "add", "bench/x", "--member", "p/qwen3-32b")
    assert made == (0, "created bench/x: 1 member(s) + 2 explorer seat(s)\n")
    assert orjson.loads(cli("collection", "show", "bench/x")[1])["name"] == "x"
    assert cli("collection", "edit", "bench/x", "--description", "a test") == (0, "updated bench/x\n")
    assert orjson.loads(cli("collection", "show", "x")[1])["description"] == "a test"
    logged = cli("log", "--collection", "bench/x")  # known, with no panels yet: an empty log, not an error
    assert (logged[0], logged[1].splitlines()[-1]) == (0, "no panels yet: benchwarmers ask bench/NAME 'prompt'")
    assert cli("collection", "show", "bench/xx") == (1, "error: no collection named 'xx'. Did you mean x?\n")
    assert cli("collection", "remove", "bench/x") == (0, "removed bench/x\n")
    assert cli("collection", "list", "--json") == (0, "[]\n")
