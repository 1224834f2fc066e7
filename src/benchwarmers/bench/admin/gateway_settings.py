"""Gateway settings: the numbers that tune every panel (timeouts, seat counts, replay window ...).

What each may be is the model in nouns/gateway.py; this service checks a change against
it, stores the whole object and logs the change.
"""

from __future__ import annotations

from typing import Any

from benchwarmers.bench.state import BenchState
from benchwarmers.nouns.gateway import GATEWAY_DEFAULTS, GatewaySettings, check, read_stored
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change

__all__ = ["GATEWAY_DEFAULTS", "GatewaySettingsAdmin"]


class GatewaySettingsAdmin:
    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def set_gateway(self, *, actor: str | None = None, **values: Any) -> dict[str, Any]:
        """Change the settings given (None means unchanged); one wrong value refuses them all."""
        given = {k: v for k, v in values.items() if v is not None}
        check(given)
        async with self.state.write() as conn:
            before = read_stored(await setting_rows.get_setting(conn, "gateway", {})).model_dump()
            after = GatewaySettings.model_validate({**before, **given}).model_dump()
            if after == before:
                return after  # nothing to store or log
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
