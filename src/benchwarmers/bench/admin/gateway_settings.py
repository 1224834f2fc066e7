"""Gateway settings: the numbers that tune every panel (timeouts, seat counts, replay window ...)."""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.state import BenchState
from benchwarmers.errors import InvalidRequest
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change
from benchwarmers.store.gateway_settings import GATEWAY_DEFAULTS


class GatewaySettingsAdmin:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def set_gateway(self, *, actor: str | None = None, **values: Any) -> dict[str, Any]:
        async with self.state.write() as conn:
            before = await setting_rows.gateway_limits(conn)
            after = {**before, **{k: v for k, v in values.items() if v is not None}}
            unknown = set(after) - set(GATEWAY_DEFAULTS)
            if unknown:
                raise InvalidRequest(f"unknown gateway setting(s): {', '.join(sorted(unknown))}")
            for key, value in values.items():
                if value is not None:
                    check_gateway_value(key, value)
            await setting_rows.put_setting(conn, "gateway", after)
            await record_change(
                conn,
                actor=actor or self.state.actor,
                subject="setting",
                name="gateway",
                action="update",
                before=before,
                after=after,
            )
        return after


# Upper bounds where one matters (the seat counts match a collection's own override).
_GATEWAY_MAX = {"max_explorers": 20, "max_calls": 20, "epsilon": 1}
# Where 0 would stall the bench: no free slot for any seat (each waits out its timeout), or a
# stream that sends pings without pause.
_GATEWAY_MIN = {"endpoint_concurrency": 1}
_GATEWAY_ABOVE_ZERO = frozenset({"ping_interval"})


def check_gateway_value(name: str, value: Any) -> None:
    """A gateway setting is a number of its default's kind: whole when the default is, never negative."""
    whole = isinstance(GATEWAY_DEFAULTS[name], int)
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise InvalidRequest(f"{name} must be a {'whole ' if whole else ''}number", param=name)
    if name in _GATEWAY_ABOVE_ZERO and value <= 0:
        raise InvalidRequest(f"{name} must be more than 0", param=name)
    top, low = _GATEWAY_MAX.get(name), _GATEWAY_MIN.get(name, 0)
    if value < low or (top is not None and value > top):
        bounds = f"from {low} to {top}" if top is not None else f"{low} or more"
        raise InvalidRequest(f"{name} must be {bounds}", param=name)
