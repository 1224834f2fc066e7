"""Renaming: `model alias` and `endpoint rename` carry every stored mention along in one transaction
(collections, roles, decision models, seats, alerts), a running server sees it, the leaderboard keeps
the evidence under the new name, and refreshes still find the models by id."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from benchwarmers.bench.evidence import roles
from benchwarmers.store.changes import list_changes
from benchwarmers.store.schema import alerts, collections, decision_models, endpoints, models, seats
from benchwarmers.store.schema import roles as role_table
from tests.support.benchserver import BenchServer, listed
from tests.support.gateway_fixtures import ROSTER
from tests.support.judging import judge
from tests.support.panels import ask, collection

GEMMA = "fake/gemma-3-27b"
LABEL = '{"shape": "review", "confidence": 0.9}'


def rows(server: BenchServer, query: Any) -> list[tuple]:
    async def read(bench):
        async with bench.state.read() as conn:
            return [tuple(r) for r in await conn.execute(query)]

    return server.admin(read)


def change_log(server: BenchServer) -> list[dict]:
    async def read(bench):
        async with bench.state.read() as conn:
            return await list_changes(conn)

    return server.admin(read)


def seat_aliases(server: BenchServer) -> dict[str, int]:
    return dict(rows(server, select(seats.c.alias, func.count()).group_by(seats.c.alias)))


@pytest.fixture
def cli_home(bench_with_roster):
    return bench_with_roster.settings.home


def review_board(server: BenchServer) -> dict:
    [board] = httpx2.get(f"{server.url}/api/leaderboard?shape=review").json()["shapes"]
    return board


@pytest.fixture
def gemma_everywhere(bench_with_roster, client, fake):
    """gemma is a member of `trio`, `pair`'s merger, a decision model, pinned in all three roles, has
    judged seats on review and one failing alert."""
    server = bench_with_roster
    fake.script("gemma-3-27b", reply=LABEL)
    server.admin(lambda b: b.shapes.add_decision_model(GEMMA, "chat"))
    collection(server, "trio", ["llama-3.3-70b", "qwen3-32b", "gemma-3-27b"], shape="review", max_explorers=0)
    collection(server, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0, reply="merged", merger=GEMMA)
    for role, shape in (("primary", "review"), ("merger", None), ("decision", None)):
        server.admin(lambda b, role=role, shape=shape: roles.set_role(b.state, role, shape, GEMMA))
    for useful in (True, False):
        calls = {s["alias"]: s["call"] for s in ask(client, "bench/trio").bench["seats"]}
        judge(server, calls[GEMMA], useful)
        judge(server, calls["fake/llama-3.3-70b"], True)
    server.admin(lambda b: b.gateway_settings.set_gateway(failing_after=1))
    fake.script("gemma-3-27b", status=500)
    ask(client, "bench/trio")
    fake.script("gemma-3-27b", reply=LABEL)
    return server


def test_model_alias_moves_every_mention_in_one_logged_change(gemma_everywhere, client, fake, cli):
    server = gemma_everywhere
    before = review_board(server)
    [gemma_before] = [m for m in before["models"] if m["alias"] == GEMMA]
    assert (gemma_before["seats"], gemma_before["verdicts"], gemma_before["useful"], gemma_before["errors"]) == (
        3, 2, 1, 1
    )  # fmt: skip
    assert seat_aliases(server)[GEMMA] == 3
    version = len(change_log(server))

    assert cli("model", "alias", GEMMA, "gemma") == (
        0,
        "renamed fake/gemma-3-27b to gemma; moved with it: 2 collection(s) (pair, trio), 3 role(s), "
        "1 decision model(s), 3 seat(s), 1 alert(s)\n",
    )

    # Every row that named it names the new alias; the model keeps its endpoint and id.
    assert rows(server, select(models.c.model_id).where(models.c.alias == "gemma")) == [("gemma-3-27b",)]
    assert rows(server, select(models.c.id).where(models.c.alias == GEMMA)) == []
    assert rows(
        server, select(collections.c.name, collections.c.members, collections.c.merger).order_by(collections.c.name)
    ) == [
        ("pair", ["fake/llama-3.3-70b", "fake/qwen3-32b"], "gemma"),
        ("trio", ["fake/llama-3.3-70b", "fake/qwen3-32b", "gemma"], None),
    ]
    assert sorted(rows(server, select(role_table.c.role, role_table.c.shape, role_table.c.alias))) == [
        ("decision", "*", "gemma"),
        ("merger", "*", "gemma"),
        ("primary", "review", "gemma"),
    ]
    assert rows(server, select(decision_models.c.alias)) == [("gemma",)]
    assert seat_aliases(server) == {"fake/llama-3.3-70b": 3, "fake/qwen3-32b": 3, "gemma": 3}
    assert rows(server, select(alerts.c.kind, alerts.c.subject)) == [("failing", "gemma")]
    # One change, and only one.
    log = change_log(server)
    assert len(log) == version + 1
    change = log[0]
    assert (change["actor"], change["subject"], change["name"], change["action"]) == (
        "cli", "model", GEMMA, "rename"
    )  # fmt: skip
    assert (change["before"], change["after"]) == (
        {"alias": GEMMA},
        {"alias": "gemma", "collections": ["pair", "trio"], "roles": 3, "decision_models": 1, "seats": 3, "alerts": 1},
    )

    # The leaderboard keeps its evidence under the new alias, and its pin.
    after = review_board(server)
    [gemma_after] = [m for m in after["models"] if m["alias"] == "gemma"]
    strip = ("alias", "strength_interval")  # the bootstrap resamples outcomes sorted by alias
    assert {k: v for k, v in gemma_after.items() if k not in strip} == {
        k: v for k, v in gemma_before.items() if k not in strip
    }
    assert (after["pinned"], after["primary"], after["primary_by"]) == ("gemma", "gemma", "pinned")
    assert GEMMA not in {m["alias"] for m in after["models"]}

    # The running server seats and merges the renamed model at once, and its verdicts count (its
    # failure retired it: restored under its new name, it is asked again).
    assert cli("model", "restore", "gemma")[0] == 0
    seated = ask(client, "bench/trio").bench
    assert [(s["alias"], s["status"]) for s in seated["seats"]] == [
        ("fake/llama-3.3-70b", "ok"),
        ("fake/qwen3-32b", "ok"),
        ("gemma", "ok"),
    ]
    assert fake.chat_requests[-1].json["model"] == "gemma-3-27b"
    judge(server, seated["seats"][2]["call"], True)
    [gemma_now] = [m for m in review_board(server)["models"] if m["alias"] == "gemma"]
    assert (gemma_now["seats"], gemma_now["verdicts"], gemma_now["useful"]) == (4, 3, 2)
    merger = ask(client, "bench/pair").bench["merger"]
    assert (merger["alias"], merger["status"], merger["chosen_as"]) == ("gemma", "ok", "the collection's merger")
    # Its staleness too: the server's seat history was re-read, so no count is left under the old alias.
    history = server.bench.state.history
    assert ("gemma", "review") in history.last_seated
    assert not any(alias == GEMMA for alias, _shape in (*history.last_seated, *history.counts))

    # The decision model is asked under its new alias.
    collection(server, "auto", ["llama-3.3-70b"])
    assert ask(client, "bench/auto").bench["shape_by"] == "decision model gemma at 0.90"

    # A refresh finds it by its id: nothing new, nothing gone, the alias stays.
    assert cli("endpoint", "refresh", "fake") == (0, "fake: 10 models listed, 0 new, 0 gone\n")
    assert rows(server, select(models.c.alias).where(models.c.model_id == "gemma-3-27b")) == [("gemma",)]


def test_model_alias_refusals_change_nothing(bench_with_roster, cli, fake):
    assert cli("endpoint", "add", "other", "--base-url", fake.base_url)[0] == 0
    before = rows(bench_with_roster, select(models.c.alias).order_by(models.c.alias))
    logged = len(change_log(bench_with_roster))
    refusals = {
        ("fake/phi-4", "fake/qwen3-32b"): "error: fake/qwen3-32b is already on the roster; give that model another "
        "alias first (benchwarmers model alias) or pick another name",
        ("fake/phi-4", "other/phi-4"): "error: alias 'other/phi-4' starts with other/, the prefix of endpoint other, "
        "and the model is on fake; use fake/... or a name whose prefix is no endpoint's",
        ("fake/phi-4", "phi 4"): "error: alias 'phi 4' has a space or a control character; use none",
        ("fake/phi-4", "phi\x074"): "error: alias 'phi\\x074' has a space or a control character; use none",
        ("fake/phi-4", "fake/"): "error: alias 'fake/' is not valid: it may not start or end with '/' or hold '//'",
        ("fake/phi-4", "/phi"): "error: alias '/phi' is not valid: it may not start or end with '/' or hold '//'",
        ("fake/phi-4", "fake//phi"): "error: alias 'fake//phi' is not valid: it may not start or end with '/' or "
        "hold '//'",
        ("fake/phi-4", ""): "error: an alias has 1 to 300 characters (got 0)",
        ("fake/phi-4", "p" * 301): "error: an alias has 1 to 300 characters (got 301)",
        ("phi-4", "phi"): "error: no model 'phi-4' on the roster. Did you mean fake/phi-4?",
    }
    for (alias, new), message in refusals.items():
        assert cli("model", "alias", alias, new) == (1, message + "\n"), new
    assert cli("model", "alias", "fake/phi-4", "fake/phi-4") == (
        0,
        "fake/phi-4 is already called fake/phi-4; nothing changed\n",
    )
    assert rows(bench_with_roster, select(models.c.alias).order_by(models.c.alias)) == before
    assert len(change_log(bench_with_roster)) == logged
    # Its own endpoint's prefix, or a prefix that is no endpoint's, is fine.
    assert cli("model", "alias", "fake/phi-4", "fake/phi")[0] == 0
    assert cli("model", "alias", "fake/phi", "small/phi")[0] == 0
    # ... and an endpoint named after a prefix another endpoint's model holds is refused.
    assert cli("endpoint", "add", "small", "--base-url", fake.base_url) == (
        1,
        "error: small/phi starts with small/ but is on another endpoint; give it another alias first "
        "(benchwarmers model alias) or pick another endpoint name\n",
    )


def test_endpoint_rename_moves_the_prefix_its_seats_and_custom_aliases_stay(bench_with_roster, client, cli, fake):
    server = bench_with_roster
    assert cli("model", "alias", "fake/phi-4", "phi")[0] == 0
    assert cli("model", "alias", "fake/kimi-k2", "fake/kimi")[0] == 0
    duo = {"name": "duo", "members": ["phi", "fake/llama-3.3-70b"], "max_explorers": 0}
    server.admin(lambda b: b.collections.add_collection(duo))
    duo = ask(client, "bench/duo").bench
    judge(server, duo["seats"][1]["call"], True)
    logged = len(change_log(server))

    code, out = cli("endpoint", "rename", "fake", "local")
    assert (code, out) == (
        0,
        "renamed endpoint fake to local and 9 alias(es) under fake/; moved with them: 1 collection(s) (duo), "
        "0 role(s), 0 decision model(s), 1 seat(s), 0 alert(s)\n",
    )
    assert rows(server, select(endpoints.c.name)) == [("local",)]
    expected = sorted(["phi", "local/kimi", *(f"local/{m}" for m in ROSTER if m not in ("phi-4", "kimi-k2"))])
    assert rows(server, select(models.c.alias).order_by(models.c.alias)) == [(a,) for a in expected]
    assert rows(server, select(collections.c.members)) == [(["phi", "local/llama-3.3-70b"],)]
    assert rows(server, select(seats.c.alias, seats.c.endpoint).order_by(seats.c.position)) == [
        ("phi", "local"),
        ("local/llama-3.3-70b", "local"),
    ]
    [change] = change_log(server)[: len(change_log(server)) - logged]
    assert (change["subject"], change["name"], change["action"], change["before"]) == (
        "endpoint", "fake", "rename", {"name": "fake"}
    )  # fmt: skip
    assert change["after"]["name"] == "local"
    assert change["after"]["aliases"]["fake/kimi"] == "local/kimi"
    assert change["after"]["aliases"]["fake/llama-3.3-70b"] == "local/llama-3.3-70b"
    assert "fake/phi-4" not in change["after"]["aliases"] and len(change["after"]["aliases"]) == 9
    assert (change["after"]["seats"], change["after"]["endpoint_seats"], change["after"]["collections"]) == (
        1, 2, ["duo"]
    )  # fmt: skip

    # The running server calls the renamed endpoint; the leaderboard keeps the verdict.
    seated = ask(client, "bench/duo").bench["seats"]
    assert [(s["alias"], s["status"]) for s in seated] == [("phi", "ok"), ("local/llama-3.3-70b", "ok")]
    [board] = httpx2.get(f"{server.url}/api/leaderboard").json()["shapes"]
    assert {m["alias"]: (m["seats"], m["verdicts"]) for m in board["models"]} == {
        "local/llama-3.3-70b": (2, 1),
        "phi": (2, 0),
    }
    # A refresh of the renamed endpoint finds every model by its id.
    assert cli("endpoint", "refresh", "local") == (0, "local: 10 models listed, 0 new, 0 gone\n")


def test_endpoint_rename_refusals_change_nothing(bench_with_roster, cli, fake):
    assert cli("endpoint", "add", "other", "--base-url", fake.base_url)[0] == 0
    assert cli("model", "alias", "fake/qwen3-32b", "local/llama-3.3-70b")[0] == 0
    logged = len(change_log(bench_with_roster))
    assert cli("endpoint", "rename", "fake", "other") == (
        1,
        "error: endpoint 'other' exists already; pick another name\n",
    )
    assert cli("endpoint", "rename", "fake", "Not Valid") == (
        1,
        "error: endpoint name 'Not Valid' is not valid: lower-case letters, digits, '.', '_' or '-'\n",
    )
    assert cli("endpoint", "rename", "fak", "local") == (1, "error: no endpoint named 'fak'. Did you mean fake?\n")
    # fake/llama-3.3-70b would become local/llama-3.3-70b, which qwen holds.
    assert cli("endpoint", "rename", "fake", "local") == (
        1,
        "error: local/llama-3.3-70b is already on the roster; give that model another alias first "
        "(benchwarmers model alias) or pick another name\n",
    )
    # A model of fake's may not end up under the prefix of other's new name.
    assert cli("model", "alias", "fake/phi-4", "spare/phi")[0] == 0
    assert cli("endpoint", "rename", "other", "spare") == (
        1,
        "error: spare/phi starts with spare/ but is on another endpoint; give it another alias first "
        "(benchwarmers model alias) or pick another endpoint name\n",
    )
    assert cli("endpoint", "rename", "fake", "fake") == (0, "endpoint fake is already called fake; nothing changed\n")
    assert rows(bench_with_roster, select(endpoints.c.name).order_by(endpoints.c.name)) == [("fake",), ("other",)]
    assert len(change_log(bench_with_roster)) == logged + 1  # the spare/phi alias only


def test_a_newly_listed_id_whose_alias_is_held_gets_the_next_free_one(bench_with_roster, cli, fake):
    assert cli("model", "alias", "fake/phi-4", "fake/phi-5")[0] == 0
    fake.listing("/v1/models", {"object": "list", "data": [listed(m) for m in [*ROSTER, "phi-5"]]})
    assert cli("endpoint", "refresh", "fake") == (0, "fake: 11 models listed, 1 new, 0 gone\n")
    assert rows(
        bench_with_roster, select(models.c.alias, models.c.model_id).where(models.c.alias.like("fake/phi%"))
    ) == [
        ("fake/phi-5", "phi-4"),
        ("fake/phi-5~2", "phi-5"),
    ]
    assert cli("endpoint", "refresh", "fake") == (0, "fake: 11 models listed, 0 new, 0 gone\n")
