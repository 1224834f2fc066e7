"""Shapes and decision models, as the user configures them. Every change is logged.

A decision model is checked before it is added: it must answer one real question with a shape
and a confidence (for `choice`, on one of the paths native decision APIs use).
"""

from __future__ import annotations

import re
from typing import Any

from benchwarmers.bench.bounds import DECISION
from benchwarmers.bench.calls.service import NoSlot
from benchwarmers.bench.names import suggest
from benchwarmers.bench.panels.shapes import CHOICE_PATHS, KINDS, ask_decision_model
from benchwarmers.bench.snapshot import EVERY_SHAPE
from benchwarmers.bench.state import BenchState
from benchwarmers.errors import Conflict, InvalidRequest, NotFound, Unavailable, UpstreamRefused
from benchwarmers.store import decisions as decision_rows
from benchwarmers.store import evidence as role_rows
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change
from benchwarmers.upstream.failures import UpstreamFailure

NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
PROBE = "Review this function for bugs: def mean(xs): return sum(xs) / len(xs)"


class ShapeAdmin:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def onboard(self, alias: str, kind: str) -> str | None:
        """Check the model answers as a decision model; for `choice`, find the path that answers."""
        if kind not in KINDS:
            raise InvalidRequest(f"kind must be one of {', '.join(KINDS)}, not {kind!r}", param="kind")
        snapshot = await self.state.snapshot()
        model = snapshot.models[alias]
        row = {"alias": alias, "kind": kind, "path": None}
        if kind == "chat":
            try:
                await ask_decision_model(self.state.calls, snapshot, row, model, PROBE)
            except NoSlot as exc:
                raise Unavailable(f"{alias} was not asked: {exc}; try again shortly", param="alias") from None
            except UpstreamFailure as exc:
                raise UpstreamRefused(f"{alias} did not answer the test question: {exc}", param="alias") from None
            except ValueError as exc:
                raise InvalidRequest(
                    f"{alias} answered, but not as a decision model ({exc}); pick a model that follows "
                    "JSON instructions, or use --kind choice for a native decision API",
                    param="alias",
                    code="not_a_decision_model",
                ) from None
            return None
        failures = []
        for path in CHOICE_PATHS:
            try:
                await ask_decision_model(self.state.calls, snapshot, {**row, "path": path}, model, PROBE)
            except NoSlot as exc:
                raise Unavailable(f"{alias} was not asked: {exc}; try again shortly", param="alias") from None
            except (UpstreamFailure, ValueError) as exc:
                failures.append(f"{path}: {exc}")
            else:
                return path
        raise InvalidRequest(
            f"{alias} answered no decision API ({'; '.join(failures)}); try --kind chat", param="alias"
        )

    # -- configuration ------------------------------------------------------------------------

    async def set_shape(self, name: str, description: str, *, actor: str | None = None) -> dict[str, str]:
        if not NAME.match(name):
            raise InvalidRequest(f"shape name {name!r} must be one lower-case word", param="name")
        if not description.strip():
            raise InvalidRequest("a shape needs a description: decision models choose by it", param="description")
        async with self.state.write() as conn:
            before = await setting_rows.shapes(conn)
            after = {**before, name: description.strip()}
            await setting_rows.put_setting(conn, "shapes", after)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="shape",
                name=name,
                action="update" if name in before else "create",
                before=before.get(name),
                after=after[name],
            )
        return after

    async def remove_shape(self, name: str, *, actor: str | None = None) -> dict[str, str]:
        async with self.state.write() as conn:
            before = await setting_rows.shapes(conn)
            if name not in before:
                raise NotFound(f"no shape {name!r}; shapes are: {', '.join(before)}", param="name")
            if name in ("general", "vision"):
                raise InvalidRequest(f"{name!r} is built in: the gateway falls back to it", param="name")
            after = {k: v for k, v in before.items() if k != name}
            await setting_rows.put_setting(conn, "shapes", after)
            await record_change(
                conn, actor=actor or self.state.actor, subject="shape", name=name, action="delete", before=before[name]
            )
        return after

    async def add_decision_model(self, alias: str, kind: str = "chat", *, actor: str | None = None) -> dict[str, Any]:
        snapshot = await self.state.snapshot()
        if alias not in snapshot.models:
            raise NotFound(f"no model {alias!r} on the roster.{suggest(alias, snapshot.models)}", param="alias")
        if any(row["alias"] == alias for row in snapshot.decision_models):
            raise Conflict(f"{alias} is a decision model already", param="alias")
        path = await self.onboard(alias, kind)
        row = {"alias": alias, "kind": kind, "path": path}
        async with self.state.write() as conn:
            await decision_rows.add_decision_model(conn, alias, kind, path)
            await record_change(
                conn, actor=actor or self.state.actor, subject="decision_model", name=alias, action="create", after=row
            )
        return row

    async def remove_decision_model(self, alias: str, *, actor: str | None = None) -> None:
        """Remove a decision model; when it is the pinned `decision` role, the pin goes with it."""
        async with self.state.write() as conn:
            if not await decision_rows.remove_decision_model(conn, alias):
                raise NotFound(f"{alias!r} is not a decision model", param="alias")
            await record_change(
                conn, actor=actor or self.state.actor, subject="decision_model", name=alias, action="delete"
            )
            if await role_rows.get_role(conn, DECISION, EVERY_SHAPE) == alias:
                await role_rows.delete_role(conn, DECISION, EVERY_SHAPE)
                await record_change(
                    conn,
                    actor=actor or self.state.actor,
                    subject="role",
                    name=f"{DECISION}/{EVERY_SHAPE}",
                    action="delete",
                    before={"alias": alias},
                )
