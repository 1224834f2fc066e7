"""Swaps the bench makes itself: in a collection with `auto_swap` on, a member that a decisive
advice (bench/evidence/advice.py: P ≥ SWAP_P, SWAP_MIN_VERDICTS on both) says an explorer beats is
replaced by that explorer, in its place in the member list.

The old member leaves the members and nothing else: it stays on the roster, so when it is free it
may sit the collection's explorer seats like any other model and its evidence keeps coming. Each
swap is one change in the change log (actor "advise", action "swap"): `before` is the collection,
`after` the collection with a `swap` entry that names both models, the evidence and the `undo`
command. At most one swap per collection per round, so the next round sees the new members.

The watch (bench/upkeep/watch.py) runs this every SWAP_EVERY seconds on the leader only: one
process acts, and the verdict path stays as cheap as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwarmers.bench.evidence.advice import Advice, advice, edit_command
from benchwarmers.store import collection_rows
from benchwarmers.store.changes import record_change

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

ACTOR = "advise"
SWAP_EVERY = 600.0


def decisive(found: list[Advice], auto: set[str]) -> list[Advice]:
    """The swap to make per collection with auto_swap on: its most certain decisive advice."""
    chosen: dict[str, Advice] = {}
    for item in found:
        if item.kind != "swap" or not item.decisive or item.collection not in auto:
            continue
        best = chosen.get(item.collection)
        if best is None or (item.p or 0.0) > (best.p or 0.0):
            chosen[item.collection] = item
    return [chosen[name] for name in sorted(chosen)]


async def auto_swap(state: BenchState) -> list[dict[str, Any]]:
    """Make the decisive swaps of collections with auto_swap on; the `swap` entries logged."""
    snapshot = await state.snapshot()
    auto = {name for name, c in snapshot.collections.items() if c.get("auto_swap")}
    if not auto:
        return []
    made = []
    for item in decisive(await advice(state), auto):
        if item.member is None or item.explorer is None:
            continue
        async with state.write() as conn:
            before = await collection_rows.get_collection(conn, item.collection)
            # Checked again inside the write: the user may have edited the members meanwhile.
            if before is None or item.member not in before["members"] or item.explorer in before["members"]:
                continue
            fields = collection_rows.collection_fields(before)
            members = [item.explorer if m == item.member else m for m in fields["members"]]
            swap = {
                "shape": item.shape,
                "member": item.member,
                "explorer": item.explorer,
                "p": round(item.p or 0.0, 4),
                "verdicts": item.verdicts,
                "undo": edit_command(item.collection, fields["members"]),
            }
            await collection_rows.update_collection(conn, item.collection, {"members": members})
            await record_change(
                conn,
                actor=ACTOR,
                subject="collection",
                name=item.collection,
                action="swap",
                before=fields,
                after={**fields, "members": members, "swap": swap},
            )
        made.append(swap)
    return made
