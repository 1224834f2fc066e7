"""Panel ids that cannot collide: the row is reserved under its id before any model is called, and
an id another process holds is never used twice."""

from __future__ import annotations

import hashlib
import re

import httpx2
import orjson
from sqlalchemy import func, select

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.panels.ids import PanelIds
from benchwarmers.store.schema import panels, seats
from tests.support.panels import collection

ID_FORM = re.compile(r"^p\d{8}-\d{6}-[0-9a-f]{8}$")


def test_ids_are_readable_and_never_repeat_in_one_process():
    ids = PanelIds()
    drawn = [ids.new(now=1_764_460_800.0) for _ in range(5_000)]
    assert len(set(drawn)) == 5_000
    assert all(ID_FORM.match(i) for i in drawn)
    assert drawn[0].startswith("p20251130-000000-")


def test_an_id_held_by_another_process_is_drawn_again_and_every_seat_is_recorded(bench_with_roster, fake):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    body = {"model": "bench/pair", "messages": [{"role": "user", "content": "Review this."}]}
    raw = orjson.dumps(body)
    held = "p20261130-120000-0000beef"

    async def race(bench):
        # Another process reserved `held` a moment ago (its row has no response yet).
        async with bench.state.write() as conn:
            await conn.execute(
                panels.insert().values(
                    id=held, created_at=0.0, collection="pair", reply="all", shape="", shape_by="",
                    caller="other", request={}, request_hash="x", skipped=[],
                )
            )  # fmt: skip
        prepared = await bench.panels.prepare(body, hashlib.sha256(raw).hexdigest(), Caller(), held)
        reply = await bench.panels.run(prepared)
        async with bench.state.read() as conn:
            ours = (await conn.execute(select(panels.c.caller).where(panels.c.id == held))).scalar_one()
            seat_count = await conn.scalar(
                select(func.count()).select_from(seats).where(seats.c.panel_id == prepared.panel_id)
            )
        return prepared.panel_id, reply, ours, seat_count

    panel_id, reply, holder, seat_count = bench_with_roster.admin(race)
    assert panel_id != held and ID_FORM.match(panel_id)
    assert holder == "other"  # the other process's reservation is untouched
    assert reply["bench"]["panel"] == panel_id
    assert [s["call"] for s in reply["bench"]["seats"]] == [f"{panel_id}.member1", f"{panel_id}.member2"]
    assert seat_count == 2


def test_a_refused_request_leaves_no_reservation(bench_with_roster):
    collection(bench_with_roster, "blind", ["llama-3.3-70b"], max_explorers=0)
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    content = [{"type": "text", "text": "What is this?"}, image]
    refused = httpx2.post(
        f"{bench_with_roster.v1}/chat/completions",
        json={"model": "bench/blind", "messages": [{"role": "user", "content": content}]},
        timeout=30,
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "no_vision_seat"

    async def count(bench):
        async with bench.state.read() as conn:
            return await conn.scalar(select(func.count()).select_from(panels))

    assert bench_with_roster.admin(count) == 0
