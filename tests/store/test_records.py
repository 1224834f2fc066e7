"""The typed records name exactly what is stored and what is sent: a table's columns, a reply's keys."""

from __future__ import annotations

import httpx2
import pytest

from benchwarmers.bench.panels.reply import (
    ChatCompletion,
    Choice,
    PublicMerger,
    PublicPick,
    PublicSeat,
    ReplyBench,
    Usage,
)
from benchwarmers.store import schema
from benchwarmers.store.records import (
    Collection,
    CollectionFields,
    ListedPanel,
    LoggedSeat,
    PanelRow,
    PublicVerdict,
    SeatRow,
)
from tests.support.panels import collection


def keys(record: type) -> set[str]:
    return set(record.__required_keys__) | set(record.__optional_keys__)


def test_row_records_are_their_tables_columns():
    assert keys(PanelRow) == set(schema.panels.c.keys())
    assert keys(SeatRow) == set(schema.seats.c.keys())
    assert keys(Collection) == set(schema.collections.c.keys()) - {"id", "updated_at"}
    assert keys(CollectionFields) == keys(Collection) - {"created_at"}


def post(server, body):
    response = httpx2.post(f"{server.url}/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("reply", ["all", "merged", "pick"])
def test_a_reply_and_its_listing_have_the_records_keys(bench_with_roster, reply):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], reply=reply)
    sent = post(bench_with_roster, {"model": "bench/pair", "messages": [{"role": "user", "content": "Review this."}]})
    assert set(sent) == keys(ChatCompletion)
    [choice] = sent["choices"]
    assert set(choice) == keys(Choice)
    assert set(choice["message"]) == {"role", "content"}
    assert set(sent["usage"]) == keys(Usage)
    bench = sent["bench"]
    left_out = {"note"} | ({"merger"} if reply != "merged" else set()) | ({"picked"} if reply != "pick" else set())
    assert set(bench) == keys(ReplyBench) - left_out
    # `stands_in_for` is on a stand-in's seat only (tests/bench/panels/test_stand_ins.py): these are members.
    assert all(set(seat) == keys(PublicSeat) - {"stands_in_for"} for seat in bench["seats"])
    if reply == "merged":
        assert set(bench["merger"]) == keys(PublicMerger) - {"stands_in_for"}
    if reply == "pick":
        assert set(bench["picked"]) == keys(PublicPick)

    call = bench["seats"][0]["call"]
    judged = {"call": call, "useful": True, "note": "", "real": [], "false": []}
    assert httpx2.post(f"{bench_with_roster.url}/bench/verdict", json=judged).status_code == 200
    listed = httpx2.get(f"{bench_with_roster.url}/bench/panels/{bench['panel']}").json()
    assert set(listed) == keys(ListedPanel)
    assert all(set(seat) == keys(LoggedSeat) for seat in listed["seats"])
    [verdict] = [seat["verdict"] for seat in listed["seats"] if seat["call"] == call]
    assert set(verdict) == keys(PublicVerdict)
