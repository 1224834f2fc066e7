"""`Bench`: the one place the process state and the services built on it are put together.

The HTTP server, the CLI and the tests hold a `Bench`; each service receives only the state it
acts on, and no service reaches back into this object (nothing in `bench/` imports it).
"""

from __future__ import annotations

from benchwarmers.bench.admin.collection_admin import Collections
from benchwarmers.bench.admin.endpoints import Endpoints
from benchwarmers.bench.admin.gateway_settings import GatewaySettingsAdmin
from benchwarmers.bench.admin.keys import Keys
from benchwarmers.bench.admin.models import Models
from benchwarmers.bench.admin.shapes import ShapeAdmin
from benchwarmers.bench.evidence.verdicts import Verdicts
from benchwarmers.bench.panels.log import CallLog
from benchwarmers.bench.panels.service import Panels
from benchwarmers.bench.panels.shapes import ShapeDecider
from benchwarmers.bench.state import BenchState
from benchwarmers.bench.suite_run import SuiteRuns
from benchwarmers.settings import Settings


class Bench:
    def __init__(self, settings: Settings, *, actor: str = "cli") -> None:
        self.state = BenchState(settings, actor=actor)
        self.endpoints = Endpoints(self.state)
        self.models = Models(self.state)
        self.collections = Collections(self.state)
        self.gateway_settings = GatewaySettingsAdmin(self.state)
        self.shapes = ShapeAdmin(self.state)
        self.keys = Keys(self.state)
        self.panels = Panels(self.state, ShapeDecider(self.state))
        self.verdicts = Verdicts(self.state)
        self.log = CallLog(self.state)
        self.suite = SuiteRuns(self.state, self.panels)

    @property
    def settings(self) -> Settings:
        return self.state.settings

    async def open(self) -> Bench:
        await self.state.open()
        return self

    async def close(self) -> None:
        await self.panels.recorder.close()
        await self.state.close()

    async def __aenter__(self) -> Bench:
        return await self.open()

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
