"""The changes log as Settings shows it (pure): a summary of what changed, times as UTC, the JSON on demand."""

from __future__ import annotations

import orjson

from benchwarmers.dashboard.change_views import FIELDS_SHOWN, change_line, summary, utc, value_text

AT = 1_796_154_072.45  # 2026-12-01 19:41:12 UTC


def change(action: str, before: object = None, after: object = None, name: str = "fake/phi-4") -> dict:
    return {"at": AT, "actor": "dashboard", "subject": "model", "name": name, "action": action,
            "before": before, "after": after}  # fmt: skip


def test_an_edit_names_only_the_fields_that_changed_before_and_after():
    edited = change("update", {"context_window": 128_000, "vision": False, "family": "phi"},
                    {"context_window": 200_000, "vision": True, "family": "phi"})  # fmt: skip
    assert summary(edited) == ["context window: 128,000 → 200,000", "vision: no → yes"]
    added = change("edit", {"api_key": "…0001"}, {"api_key": "…9876", "base_url": "http://h/v1"})
    assert summary(added) == ["api key: …0001 → …9876", "base url: http://h/v1"]
    assert summary(change("edit", {"api_key_env": "X", "free_tier": True}, {"free_tier": False})) == [
        "api key env: removed",
        "free tier: yes → no",
    ]


def test_times_are_utc_dates_and_counts_stay_numbers():
    retired = change("retire", after={"retired_at": AT, "next_probe_at": AT + 600, "streak": 3})
    assert summary(retired) == [
        "retired at: 2026-12-01 19:41:12 UTC",
        "next probe at: 2026-12-01 19:51:12 UTC",
        "streak: 3",
    ]
    assert summary(change("cooldown", after={"until": AT, "streak": 2})) == [f"until: {utc(AT)}", "streak: 2"]
    # A small number in a time field is not a time (a count of seconds, say), nor is a flag.
    assert value_text(600, "waited_at") == "600"
    assert value_text(True, "seen_at") == "yes"


def test_a_creation_lists_what_it_set_without_the_empty_fields_or_its_own_name():
    collection = {"name": "reviewers", "description": "Code review", "tags": [], "members": ["fake/a", "fake/b"]}
    created = change("create", after={**collection, "shape": None, "max_explorers": 0}, name="reviewers")
    assert summary(created) == ["description: Code review", "members: fake/a, fake/b", "max explorers: 0"]
    removed = change("delete", before={"name": "reviewers", "members": ["fake/a"]}, name="reviewers")
    assert summary(removed) == ["members: fake/a"]


def test_scalars_nothing_recorded_and_long_summaries():
    assert summary(change("acknowledge")) == []
    assert summary(change("set", 1, 2)) == ["1 → 2"]
    assert summary(change("set", None, "on")) == ["on"]
    assert summary(change("set", "on", None)) == ["was on"]
    many = change("create", after={f"field_{i}": i + 1 for i in range(FIELDS_SHOWN + 3)})
    assert summary(many)[-1] == "and 3 more" and len(summary(many)) == FIELDS_SHOWN + 1
    assert value_text({"requests-minute": 20, "tokens-day": 1_000_000}) == "requests-minute: 20, tokens-day: 1,000,000"
    assert value_text("x" * 200).endswith("…") and len(value_text("x" * 200)) == 80


def test_a_row_carries_the_exact_utc_and_the_stored_json_whole():
    row = change_line(change("retire", after={"retired_at": AT, "streak": 3}))
    assert row["utc"] == "2026-12-01 19:41:12 UTC"
    assert (row["actor"], row["action"], row["subject"], row["name"]) == ("dashboard", "retire", "model", "fake/phi-4")
    assert orjson.loads(row["raw"]) == {"before": None, "after": {"retired_at": AT, "streak": 3}}
