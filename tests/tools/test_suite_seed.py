"""Seeded `claim-*` tasks: each defect mechanism on a snippet (exact text), refusals, and every
shipped seed's mutation caught by its named test on a mutated copy (and passing on the unmutated one)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from benchwarmers.bench.suite.tasks import load_folder, shipped_folder, task_json
from benchwarmers.errors import InvalidRequest
from tools.seeding.mutations import MECHANISMS, Mutation, apply_mutation, function_span, places
from tools.seeding.seed import (
    CATALOGUE,
    build_task,
    changed_lines,
    judge,
    load_seeds,
    parse_seed,
    seed_all,
)
from tools.seeding.testrun import Result, Run, run_tests
from tools.suite_seed import app

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """\
import asyncio


class Box:
    def pick(self, xs, limit=3):
        # the first few, skipping blanks
        out = []
        for i, x in enumerate(xs):
            if i >= limit:  # enough
                break
            if x is None or x < 0:
                continue
            out.append(max(x, limit - 1))
        try:
            n = int(out[0])
        except (IndexError, ValueError) as exc:
            raise RuntimeError("empty") from exc
        return [y for y in out if y != n] if out and n else out

    async def fetch(self, client):
        return await client.get(1)
"""


def mutate(mechanism: str, occurrence: int = 0, function: str = "Box.pick", **options: object) -> str:
    return apply_mutation(SNIPPET, Mutation("snippet", function, mechanism, occurrence, options))


@pytest.mark.parametrize(
    ("mechanism", "occurrence", "options", "old", "new"),
    [
        ("off-by-one", 0, {}, "if i >= limit:  # enough", "if i > limit:  # enough"),
        ("off-by-one", 0, {"form": "arithmetic"}, "max(x, limit - 1)", "max(x, limit)"),
        ("inverted-condition", 0, {}, "if i >= limit:  # enough", "if i < limit:  # enough"),
        ("inverted-condition", 1, {}, "if x is None or x < 0:", "if not (x is None or x < 0):"),
        ("inverted-condition", 2, {}, "if out and n else out", "if not (out and n) else out"),
        ("inverted-condition", 3, {}, "if y != n]", "if y == n]"),
        ("inverted-condition", 1, {"form": "comparison"}, "if x is None or", "if x is not None or"),
        ("wrong-variable", 1, {"name": "limit", "replacement": "i"}, "max(x, limit - 1)", "max(x, i - 1)"),
        ("swapped-arguments", 0, {"call": "max"}, "max(x, limit - 1)", "max(limit - 1, x)"),
        ("removed-guard", 1, {}, "            if x is None or x < 0:\n                continue\n", ""),
        ("wrong-default", 0, {"parameter": "limit", "value": "4"}, "limit=3", "limit=4"),
        ("swallowed-exception", 0, {}, 'raise RuntimeError("empty") from exc', "pass"),
        ("dropped-condition", 0, {}, "if x is None or x < 0:", "if x is None:"),
        ("dropped-condition", 0, {"operand": 0}, "if x is None or x < 0:", "if x < 0:"),
        ("dropped-condition", 1, {}, "if out and n else", "if out else"),
    ],
)
def test_each_mechanism_rewrites_one_node_and_keeps_the_rest(mechanism, occurrence, options, old, new):
    assert SNIPPET.count(old) == 1
    assert mutate(mechanism, occurrence, **options) == SNIPPET.replace(old, new)


def test_dropped_await_in_a_method():
    assert mutate("dropped-await", function="Box.fetch") == SNIPPET.replace(
        "return await client.get(1)", "return client.get(1)"
    )


def test_every_mechanism_is_exercised():
    assert set(MECHANISMS) == {
        "off-by-one",
        "inverted-condition",
        "wrong-variable",
        "dropped-await",
        "swapped-arguments",
        "removed-guard",
        "wrong-default",
        "swallowed-exception",
        "dropped-condition",
    }


def test_places_lists_the_candidates_by_occurrence():
    assert places(SNIPPET, Mutation("snippet", "Box.pick", "off-by-one")) == [">= limit", "< 0"]
    assert places(SNIPPET, Mutation("snippet", "Box.pick", "removed-guard")) == [
        "if i >= limit: # enough break",
        "if x is None or x < 0: continue",
    ]


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (Mutation("snippet", "pick", "off-by-one"), "snippet has no function 'pick' (qualified, e.g. Class.method)"),
        (
            Mutation("snippet", "Box.pick", "dropped-await"),
            "snippet:Box.pick has 0 place(s) for dropped-await (an awaited call left unawaited); "
            "occurrence 0 is not one of them",
        ),
        (
            Mutation("snippet", "Box.pick", "swallowed-exception", 1),
            "snippet:Box.pick has 1 place(s) for swallowed-exception (an except clause's body replaced by "
            "`pass`); occurrence 1 is not one of them",
        ),
        (
            Mutation("snippet", "Box.pick", "wrong-variable", 0, {"name": "x"}),
            "wrong-variable needs options replacement",
        ),
        (
            Mutation("snippet", "Box.pick", "wrong-default", 0, {"parameter": "xs", "value": "()"}),
            "parameter 'xs' has no default to change",
        ),
        (
            Mutation("snippet", "Box.pick", "dropped-condition", 0, {"operand": 2}),
            "options.operand must be 0..1: the condition has 2 parts",
        ),
        (
            Mutation("snippet", "Box.pick", "off-by-one", 0, {"form": "loose"}),
            "options.form must be one of comparison, arithmetic (got 'loose')",
        ),
        (Mutation("snippet", "Box.pick", "typo"), "unknown mechanism 'typo'; mechanisms are: " + ", ".join(MECHANISMS)),
    ],
)
def test_a_target_that_is_not_there_is_refused(mutation, message):
    with pytest.raises(InvalidRequest) as caught:
        apply_mutation(SNIPPET, mutation)
    assert caught.value.message == message


def test_removing_a_blocks_only_statement_leaves_pass():
    source = "def f(x):\n    if x:\n        return 1\n"
    assert apply_mutation(source, Mutation("m", "f", "removed-guard")) == "def f(x):\n    pass\n"


def test_function_span_and_changed_lines():
    assert function_span(SNIPPET, "Box.pick") == (5, 18)
    assert function_span(SNIPPET, "Box.fetch") == (20, 21)
    assert changed_lines(SNIPPET, mutate("off-by-one")) == (9, 9)
    # A deletion is keyed by the lines on either side of it.
    assert changed_lines(SNIPPET, mutate("removed-guard", 1)) == (10, 11)


def test_a_seed_names_a_claim_id_a_node_id_and_a_known_mechanism():
    good = {
        "id": "claim-x",
        "mutation": {"module": "m", "function": "f", "mechanism": "off-by-one"},
        "mechanism": "m",
        "patterns": ["x"],
        "test": "tests/test_x.py::test_x",
    }
    assert parse_seed(good).mutation == Mutation("m", "f", "off-by-one")
    for change, message in [
        ({"id": "x"}, "seed: id must be claim-<slug> in lower-case letters, digits, '.' and '-'"),
        ({"test": "tests/test_x.py"}, "seed (claim-x): test must be a pytest node id, e.g. tests/test_x.py::test_y"),
        ({"patterns": []}, "seed (claim-x): key.patterns must be a non-empty list of regular expressions"),
        (
            {"mutation": {**good["mutation"], "mechanism": "nope"}},  # type: ignore[dict-item]
            "seed (claim-x): mechanism must be one of " + ", ".join(MECHANISMS) + " (got 'nope')",
        ),
    ]:
        with pytest.raises(InvalidRequest) as caught:
            parse_seed({**good, **change})
        assert caught.value.message == message


# -- the shipped seeds ------------------------------------------------------------------------------

SEEDS = load_seeds(ROOT / CATALOGUE)


def test_at_least_twelve_seeds_ship_and_each_one_is_a_task_that_equals_what_seeding_writes():
    shipped = {t.id: t for t in load_folder(shipped_folder()) if t.kind == "claim"}
    assert len(SEEDS) >= 12
    assert sorted(shipped) == sorted(s.id for s in SEEDS)
    for seed in SEEDS:
        task = shipped[seed.id]
        assert task_json(task) == task_json(build_task(seed, ROOT / "src")), seed.id
        # The key's lines are the mutated ones, inside the excerpt; nothing in the prompt says so.
        excerpt = task.files[0]
        assert task.key is not None and excerpt.start <= task.key.lines[0] <= task.key.lines[1] <= excerpt.end
        assert (task.test, task.seed, task.source.repo, task.source.license) == (
            seed.test,
            seed.mutation.as_json(),
            "benchwarmers",
            "MIT",
        )
        assert seed.mutation.mechanism not in task.prompt()


def test_every_shipped_mutation_is_caught_by_its_test_and_the_unmutated_code_passes():
    """The issue's rule: a seeded task counts only if the project's own tests catch its mutation.
    seed_all runs every named test once on an unmutated copy, then each mutation on its own copy."""
    outcomes = seed_all(ROOT, SEEDS, jobs=2)
    assert [(o.seed.id, o.caught, o.message) for o in outcomes] == [(s.id, True, f"caught by {s.test}") for s in SEEDS]


def test_a_mutation_its_test_does_not_catch_is_refused_and_no_task_is_written(tmp_path, monkeypatch):
    wilson = next(s for s in SEEDS if s.id == "claim-wilson-centre")
    unrelated = {
        **wilson.as_json(),
        "id": "claim-wilson-untested",
        "test": "tests/bench/evidence/test_stats.py::test_maturity",
    }
    catalogue = tmp_path / "seeds.json"
    catalogue.write_bytes(orjson.dumps([unrelated]))
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, ["--seeds", str(catalogue), "--out", str(tmp_path / "tasks")])
    assert result.exit_code == 1
    assert (
        "claim-wilson-untested: refused: tests/bench/evidence/test_stats.py::test_maturity passes on the mutated code, "
        "so it "
        "does not catch wrong-variable in wilson (src/benchwarmers/bench/evidence/stats.py); pick a test that "
        "fails on it or another mutation"
    ) in result.output
    assert "0 seeded, 1 refused" in result.output
    assert not (tmp_path / "tasks").exists()


def test_the_tests_run_only_against_the_copy(tmp_path):
    # A folder without benchwarmers in it: the project's own package would be imported, so no test runs.
    (tmp_path / "src").mkdir()
    with pytest.raises(InvalidRequest, match="the tests did not import the copy: benchwarmers was imported from"):
        run_tests(ROOT, [Run(tmp_path / "src", ("tests/bench/evidence/test_stats.py::test_maturity",))])


# How a reviewer who found each defect might put it: each must name its mechanism by the patterns.
FOUND = {
    "claim-nominee-uses-slot": "called_members counts nominees too, so each nominee takes an explorer seat",
    "claim-explorer-family-repeats": "filters on taken_families, not families: two explorers of the same family",
    "claim-retired-model-explores": "_eligible never checks c.retired, so a retired model can explore",
    "claim-epsilon-inverted": "inverted: rng.random() >= epsilon picks by evidence 1 - epsilon of the time",
    "claim-thompson-swapped": "betavariate arguments are swapped: alpha should be useful + 1",
    "claim-wilson-centre": "the centre uses z / (2 * n) where Wilson has z squared",
    "claim-413-estimate-swapped": "estimate_tokens is called with its arguments in the wrong order (images first)",
    "claim-key-scope-unchecked": "nothing checks caller.collections: a scoped key can call any collection",
    "claim-replay-key-ignored": "the condition is inverted: with an idempotency key it matches the body hash",
    "claim-replay-unawaited": "asyncio.shield(inflight) is returned without await",
    "claim-gateway-key-kept-in-answer": 'inverted: `"bwk_" not in text` means gateway keys are never scrubbed',
    "claim-short-secrets-scrubbed": "short secrets are no longer skipped: the minimum length check is gone",
    "claim-cooldown-doubles-early": "off by one: the exponent should be streak - 1, the first 429 already doubles",
    "claim-window-below-answered": "learned < floor is not checked, so the window can drop below an answered prompt",
    "claim-retire-one-late": "off by one: streak > failing_after retires one seat too late",
    "claim-pacing-one-over": "count + cost >= budget.entries refuses the last slot of the window",
    "claim-ratelimit-exhausted-window": "remaining < 0 misses windows with 0 remaining, they are not exhausted",
    "claim-explorer-default-calls": "max_calls defaults to 6 but a panel makes five calls",
    "claim-panel-id-collision-swallowed": "the IntegrityError is swallowed, so a taken id is reused",
}


def test_each_seeds_patterns_name_its_mechanism_and_not_an_unrelated_claim():
    assert sorted(FOUND) == sorted(s.id for s in SEEDS)
    unrelated = "this function has no docstring and its name is unclear; add type hints"
    for seed in SEEDS:
        assert any(re.search(p, FOUND[seed.id], re.IGNORECASE) for p in seed.patterns), seed.id
        # The key's own sentence names it too (the fake `finder` reviewer claims in those words).
        assert any(re.search(p, seed.mechanism, re.IGNORECASE) for p in seed.patterns), seed.id
        assert not any(re.search(p, unrelated, re.IGNORECASE) for p in seed.patterns), seed.id


def test_a_seed_is_caught_only_when_its_test_passes_unmutated_and_fails_mutated():
    seed = next(s for s in SEEDS if s.id == "claim-window-below-answered")  # a parametrized test
    task = build_task(seed, ROOT / "src")
    passed, failed = Result(0, "5 passed"), Result(1, f"FAILED {seed.test}[8000-4000-5000-None] - assert 4000 is None")
    assert judge(seed, task, passed, failed).caught
    assert judge(seed, task, passed, failed).task == task
    refused = judge(seed, task, failed, failed)
    assert (refused.caught, refused.task) == (False, None)
    assert refused.message.startswith(
        f"refused: its test {seed.test} does not pass on the unmutated code (pytest exit 1):\nFAILED {seed.test}[8000"
    )
    missing = judge(seed, task, Result(4, "ERROR: not found: tests/x.py::y"), failed)
    assert missing.message == (
        f"refused: its test {seed.test} does not pass on the unmutated code (pytest exit 4):\n"
        "ERROR: not found: tests/x.py::y"
    )
    other_failed = Result(1, "FAILED tests/test_other.py::test_other - boom")
    assert judge(seed, task, other_failed, failed).caught  # another seed's test failing is that seed's refusal
    assert judge(seed, task, passed, Result(2, "Interrupted: 1 error during collection")).message == (
        f"refused: {seed.test} did not run on the mutated code (pytest exit 2):\nInterrupted: 1 error during collection"
    )
