"""The alert figures `/metrics` reads from the database at each scrape, for Prometheus's alert rules
(deploy/prometheus-alerts.yml): open alerts by kind, and notifications by state.

Every kind and state is always exported, 0 when there is none, so a rule's `> 0` never meets an
absent series.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from benchwarmers.bench.admin.alerts import LABELS
from benchwarmers.store import alerts as alert_rows
from benchwarmers.store import notify as notify_rows

if TYPE_CHECKING:
    from benchwarmers.bench.state import BenchState

STATES = ("sent", "pending", "failed")


class _Read:
    def __init__(self, name: str, text: str, label: str, values: dict[str, int]) -> None:
        self.name, self.text, self.label, self.values = name, text, label, values

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily(self.name, self.text, labels=[self.label])
        for key, value in self.values.items():
            family.add_metric([key], value)
        yield family


async def scrape_figures(state: BenchState) -> list[_Read]:
    async with state.read() as conn:
        open_alerts = await alert_rows.open_counts(conn)
        deliveries = await notify_rows.delivery_counts(conn)
    kinds = {kind: open_alerts.get(kind, 0) for kind in LABELS} | open_alerts
    return [
        _Read(
            "benchwarmers_alerts_open",
            "Open alerts (not acknowledged, not resolved) by kind: went_paid, retiring, failing, owed...",
            "kind",
            kinds,
        ),
        _Read(
            "benchwarmers_notifications",
            "Alert notifications by state: sent, pending (queued or to retry), failed (given up).",
            "state",
            {s: deliveries.get(s, 0) for s in STATES},
        ),
    ]
