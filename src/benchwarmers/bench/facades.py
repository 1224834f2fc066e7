"""Services over the bench's module functions, for the edges: the server calls these, never the functions
with `bench.state`.

Each method forwards to one function, passing the state it acts on; the function stays where its idea is.
As in bench/services.py, a module is imported when its method is first called (a CLI listing imports
none of the evidence).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwarmers.bench.state import BenchState

if TYPE_CHECKING:
    from benchwarmers.bench.evidence.advice import Advice
    from benchwarmers.bench.evidence.board import Board
    from benchwarmers.bench.evidence.standings import ShapeStandings
    from benchwarmers.bench.notify.figures import _Read
    from benchwarmers.catalog.prices import ListPrice


class Evidence:
    """The evidence the verdicts make: boards, standings, reports, advice, trends, cost, wrong claims."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def leaderboard(
        self, shape: str | None = None, days: float | None = None, human_only: bool = False
    ) -> list[Board]:
        from benchwarmers.bench.evidence.board import leaderboard

        return await leaderboard(self.state, shape=shape, days=days, human_only=human_only)

    async def standings(self, days: float | None = None) -> list[ShapeStandings]:
        from benchwarmers.bench.evidence.standings import standings

        return await standings(self.state, days)

    async def honesty_report(self, days: float) -> dict[str, Any]:
        from benchwarmers.bench.evidence.reports import honesty_report

        return await honesty_report(self.state, days)

    async def advice(self) -> list[Advice]:
        from benchwarmers.bench.evidence.advice import advice

        return await advice(self.state)

    async def advice_report(self) -> dict[str, Any]:
        from benchwarmers.bench.evidence.advice import advice_report

        return await advice_report(self.state)

    async def useful_trend(self, days: int, shape: str | None = None) -> dict[str, Any]:
        from benchwarmers.bench.evidence import trends

        return await trends.useful_trend(self.state, days, shape)

    async def calls_trend(self, days: int, shape: str | None = None) -> dict[str, Any]:
        from benchwarmers.bench.evidence import trends

        return await trends.calls_trend(self.state, days, shape)

    async def value_trend(self, days: int) -> dict[str, Any]:
        from benchwarmers.bench.evidence import trends

        return await trends.value_trend(self.state, days)

    async def wrong_claims(self, alias: str, limit: int) -> list[dict[str, Any]]:
        from benchwarmers.bench.evidence.wrong import wrong_claims

        return await wrong_claims(self.state, alias, limit)

    async def price_list(self) -> dict[str, ListPrice]:
        from benchwarmers.bench.evidence.cost import price_list

        return await price_list(self.state)

    async def cost_report(self, days: int | None) -> dict[str, Any]:
        from benchwarmers.bench.evidence.cost import cost_report

        return await cost_report(self.state, days=days)


class Alerts:
    """The alerts the bench raised (bench/admin/alerts.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def list_alerts(self, *, include_acknowledged: bool = False) -> list[dict[str, Any]]:
        from benchwarmers.bench.admin import alerts

        return await alerts.list_alerts(self.state, include_acknowledged=include_acknowledged)

    async def acknowledge(self, alert_id: int, *, actor: str | None = None) -> dict[str, Any]:
        from benchwarmers.bench.admin import alerts

        return await alerts.acknowledge(self.state, alert_id, actor=actor)


class Changes:
    """The changes log (bench/admin/changes.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def list_changes(self, *, limit: int = 100, subject: str | None = None) -> list[dict[str, Any]]:
        from benchwarmers.bench.admin.changes import list_changes

        return await list_changes(self.state, limit=limit, subject=subject)


class Allowances:
    """What the providers' free allowances leave today (bench/admin/allowances.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def by_model(self) -> dict[str, list[dict[str, Any]]]:
        from benchwarmers.bench.admin.allowances import model_allowances

        return await model_allowances(self.state)

    async def by_scope(self) -> dict[tuple[str, str], int]:
        from benchwarmers.bench.admin.allowances import remaining_by_scope

        return await remaining_by_scope(self.state)


class Discovery:
    """Models the catalog knows that are not on the roster yet, and adding one (bench/upkeep/discover.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def discover(
        self,
        *,
        free: bool = False,
        vision: bool = False,
        min_context: int | None = None,
        provider: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        from benchwarmers.bench.upkeep.discover import discover

        return await discover(
            self.state, free=free, vision=vision, min_context=min_context, provider=provider, limit=limit
        )

    async def add(self, target: str, *, actor: str | None = None) -> dict[str, Any]:
        from benchwarmers.bench.upkeep.discover import add

        return await add(self.state, target, actor=actor)


class EndpointEdits:
    """An endpoint edited in place, and tried (bench/admin/endpoint_edit.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def edit_endpoint(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        api_key: str | None = None,
        free_tier: bool | None = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        from benchwarmers.bench.admin.endpoint_edit import edit_endpoint

        return await edit_endpoint(
            self.state,
            name,
            base_url=base_url,
            api_key_env=api_key_env,
            api_key=api_key,
            free_tier=free_tier,
            actor=actor,
        )

    async def try_endpoint(self, name: str) -> dict[str, Any]:
        from benchwarmers.bench.admin.endpoint_edit import try_endpoint

        return await try_endpoint(self.state, name)


class Figures:
    """The figures `/metrics` reads from the store (bench/notify/figures.py)."""

    def __init__(self, state: BenchState) -> None:
        self.state = state

    async def scrape(self) -> list[_Read]:
        from benchwarmers.bench.notify.figures import scrape_figures

        return await scrape_figures(self.state)
