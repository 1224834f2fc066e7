"""`Bench`: the one place the process state and the services built on it are put together.

The HTTP server, the CLI and the tests hold a `Bench`; each service receives only the state it
acts on, and no service reaches back into this object (nothing in `bench/` imports it).

Each service is built, and its module imported, when it is first used: a CLI listing needs one
service, and importing all of them (the panel path, the shape decider, the suite) cost a third of
its start-up.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from benchwarmers.bench.state import BenchState
from benchwarmers.settings import Settings

if TYPE_CHECKING:
    from benchwarmers.bench.admin.collection_admin import Collections
    from benchwarmers.bench.admin.endpoints import Endpoints
    from benchwarmers.bench.admin.gateway_settings import GatewaySettingsAdmin
    from benchwarmers.bench.admin.keys import Keys
    from benchwarmers.bench.admin.models import Models
    from benchwarmers.bench.admin.shapes import ShapeAdmin
    from benchwarmers.bench.budgets import Budgets
    from benchwarmers.bench.core.estimate import Ratios
    from benchwarmers.bench.evidence.verdicts import Verdicts
    from benchwarmers.bench.facades import Alerts, Allowances, Changes, Discovery, EndpointEdits, Evidence, Figures
    from benchwarmers.bench.metrics import Metrics
    from benchwarmers.bench.notify.targets import NotifyTargets
    from benchwarmers.bench.panels.log import CallLog
    from benchwarmers.bench.panels.service import Panels
    from benchwarmers.bench.snapshot import Snapshot
    from benchwarmers.bench.suite.run import SuiteRuns


class Bench:
    def __init__(self, settings: Settings, *, actor: str = "cli") -> None:
        self.state = BenchState(settings, actor=actor)

    @cached_property
    def endpoints(self) -> Endpoints:
        from benchwarmers.bench.admin.endpoints import Endpoints

        return Endpoints(self.state)

    @cached_property
    def notify(self) -> NotifyTargets:
        from benchwarmers.bench.notify.targets import NotifyTargets

        return NotifyTargets(self.state)

    @cached_property
    def models(self) -> Models:
        from benchwarmers.bench.admin.models import Models

        return Models(self.state)

    @cached_property
    def collections(self) -> Collections:
        from benchwarmers.bench.admin.collection_admin import Collections

        return Collections(self.state)

    @cached_property
    def gateway_settings(self) -> GatewaySettingsAdmin:
        from benchwarmers.bench.admin.gateway_settings import GatewaySettingsAdmin

        return GatewaySettingsAdmin(self.state)

    @cached_property
    def shapes(self) -> ShapeAdmin:
        from benchwarmers.bench.admin.shapes import ShapeAdmin

        return ShapeAdmin(self.state)

    @cached_property
    def keys(self) -> Keys:
        from benchwarmers.bench.admin.keys import Keys

        return Keys(self.state)

    @cached_property
    def panels(self) -> Panels:
        from benchwarmers.bench.panels.service import Panels
        from benchwarmers.bench.panels.shapes import ShapeDecider

        return Panels(self.state, ShapeDecider(self.state))

    @cached_property
    def verdicts(self) -> Verdicts:
        from benchwarmers.bench.evidence.verdicts import Verdicts

        return Verdicts(self.state)

    @cached_property
    def log(self) -> CallLog:
        from benchwarmers.bench.panels.log import CallLog

        return CallLog(self.state)

    @cached_property
    def suite(self) -> SuiteRuns:
        from benchwarmers.bench.suite.run import SuiteRuns

        return SuiteRuns(self.state, self.panels)

    # What the edges call instead of module functions given `bench.state` (bench/facades.py).

    @cached_property
    def evidence(self) -> Evidence:
        from benchwarmers.bench.facades import Evidence

        return Evidence(self.state)

    @cached_property
    def alerts(self) -> Alerts:
        from benchwarmers.bench.facades import Alerts

        return Alerts(self.state)

    @cached_property
    def changes(self) -> Changes:
        from benchwarmers.bench.facades import Changes

        return Changes(self.state)

    @cached_property
    def allowances(self) -> Allowances:
        from benchwarmers.bench.facades import Allowances

        return Allowances(self.state)

    @cached_property
    def discovery(self) -> Discovery:
        from benchwarmers.bench.facades import Discovery

        return Discovery(self.state)

    @cached_property
    def endpoint_edits(self) -> EndpointEdits:
        from benchwarmers.bench.facades import EndpointEdits

        return EndpointEdits(self.state)

    @cached_property
    def figures(self) -> Figures:
        from benchwarmers.bench.facades import Figures

        return Figures(self.state)

    async def snapshot(self) -> Snapshot:
        """The config as one immutable view, reloaded when the changes log has a newer version."""
        return await self.state.snapshot()

    @property
    def budgets(self) -> Budgets:
        return self.state.budgets

    @property
    def metrics(self) -> Metrics:
        return self.state.metrics

    @property
    def ratios(self) -> Ratios:
        return self.state.ratios

    @property
    def settings(self) -> Settings:
        return self.state.settings

    async def open(self) -> Bench:
        await self.state.open()
        return self

    async def close(self) -> None:
        # A recorder exists only where panels were built; one never built has nothing to flush.
        if "panels" in self.__dict__:
            self.panels.reservations.close()
            await self.panels.recorder.close()
        await self.state.close()

    async def __aenter__(self) -> Bench:
        return await self.open()

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
