"""`ClientGone` (bench/panels/run.py): what a panel's seats are cancelled by when its client leaves."""

from __future__ import annotations

import asyncio

from benchwarmers.bench.panels.run import ClientGone


def test_callbacks_run_once_when_the_client_goes_and_a_forgotten_one_never() -> None:
    gone, calls = ClientGone(), []
    gone.on_set(lambda: calls.append("seats"))
    forget = gone.on_set(lambda: calls.append("forgotten"))
    forget()
    assert not gone.is_set() and calls == []
    gone.set()
    gone.set()
    assert gone.is_set() and calls == ["seats"]
    gone.on_set(lambda: calls.append("late"))  # registered after the client left: called at once
    assert calls == ["seats", "late"]


def test_a_client_that_may_retry_has_its_seats_cancelled_only_after_the_linger() -> None:
    async def main() -> list[str]:
        gone, calls, cancelled = ClientGone(linger=0.05), [], asyncio.Event()
        gone.on_set(lambda: (calls.append("seats"), cancelled.set()))
        gone.set()  # the client left: a retry may come for this panel
        assert calls == [] and not gone.is_set()
        await asyncio.wait_for(cancelled.wait(), timeout=5)
        assert gone.is_set()
        return calls

    assert asyncio.run(main()) == ["seats"]


def test_a_panel_that_finished_while_lingering_cancels_nothing_later() -> None:
    async def main() -> None:
        gone, calls = ClientGone(linger=3600), []
        gone.on_set(lambda: calls.append("seats"))
        gone.set()
        gone.done()  # the panel recorded every seat: the hour-long timer is dropped with it
        gone.set()  # a disconnect noticed after the panel was over starts none
        assert calls == [] and not gone.is_set()
        assert not [h for h in asyncio.get_running_loop()._scheduled if not h.cancelled()]  # type: ignore[attr-defined]

    asyncio.run(main())
