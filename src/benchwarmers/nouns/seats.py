"""What a seat is and how it ended, as enums: a `StrEnum` equals its string, so rows, JSON bodies and
the call log keep exactly the words they always had (`seats.seat`, `seats.status`)."""

from __future__ import annotations

from enum import StrEnum


class SeatKind(StrEnum):
    """Why a model call sits on a panel."""

    member = "member"  # on the collection's roster of members
    nominee = "nominee"  # named by the caller (`bench.with`)
    explorer = "explorer"  # picked by the bench to gather evidence
    standin = "standin"  # in the place of a member that is cooling, paced out or retired
    merger = "merger"  # merges the answers (the `merged` reply): not a seat that is judged
    decision = "decision"  # labels the request's shape: not a seat that is judged


class SeatStatus(StrEnum):
    """How a seat's call ended."""

    ok = "ok"  # an answer
    empty = "empty"  # the model answered with nothing
    error = "error"  # the call failed: no answer, so no verdict
    paced = "paced"  # not called: no slot under a rate limit
    cooling = "cooling"  # not called: cooling down after a 429
    retired = "retired"  # not called: it kept failing, until a probe gets an answer


SEATED_KINDS = (SeatKind.member, SeatKind.nominee, SeatKind.explorer, SeatKind.standin)  # judged like any seat
ANSWERED = (SeatStatus.ok, SeatStatus.empty)  # the model answered: the seat may be judged
# Recorded but never called: they say nothing of the model (not seated, judged, owed or a failure).
NOT_CALLED = (SeatStatus.paced, SeatStatus.cooling, SeatStatus.retired)
