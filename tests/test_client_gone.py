"""`ClientGone` (bench/panels/run.py): what a panel's seats are cancelled by when its client leaves."""

from __future__ import annotations

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
