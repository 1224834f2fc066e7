"""The records the store writes and reads, typed: collections, panels and seats as rows, and the
call log as its readers see it.

They are TypedDicts, not classes: a row goes to SQLAlchemy and a listing to orjson as the dict it
is, so a JSON body keeps exactly its keys and their order. The row records' keys are the table's
columns (a test holds them to `schema.py`).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class CollectionFields(TypedDict):
    """A collection as the user sets it, validated: what is written, logged and exported. It is
    `nouns.collections.Collection.model_dump()` (the model holds every field's rule), typed for the
    readers that index it."""

    name: str
    description: str
    tags: list[str]
    members: list[str]
    shape: str | None  # None: decided per request
    reply: str  # all | merged | pick
    merger: str | None
    max_explorers: int | None  # None: the gateway's limit
    max_calls: int | None
    auto_swap: bool  # the bench swaps a member for a decisively better explorer itself
    require_tags: list[str]  # a seat's model must carry every one of these model tags
    exclude_tags: list[str]  # and none of these (`trains-on-prompts`): never seated, member or explorer
    daily_panels: int | None  # daily budgets (bench/budgets.py); None: no budget
    daily_tokens: int | None
    stand_ins: bool  # a cooling, paced-out or retired member's place goes to the best eligible model


class Collection(CollectionFields):
    """A stored collection as it is read."""

    created_at: float


class SkippedSeat(TypedDict):
    """A model that would have sat and did not, and why (the reply's and the panel's `skipped`)."""

    seat: str  # member | nominee
    alias: str
    why: str


class PanelRow(TypedDict):
    """A `panels` row."""

    id: str
    created_at: float
    collection: str
    reply: str
    shape: str
    shape_by: str
    caller: str
    request: dict[str, Any]  # redacted: images are placeholders
    request_hash: str
    idempotency_key: str | None
    skipped: list[SkippedSeat]
    note: str | None
    seconds: float | None
    response: Any  # the reply as sent (bench.panels.reply.ChatCompletion), for replays
    prompt_chars: NotRequired[int | None]  # when its seats' usage teaches characters a token
    prompt_kind: NotRequired[str | None]  # code | prose


class SeatRow(TypedDict):
    """A `seats` row: one model call of a panel (a merger or a decision call too)."""

    call: str
    panel_id: str
    position: int
    seat: str  # nouns.seats.SeatKind: member | nominee | explorer | standin | merger | decision
    alias: str
    endpoint: str
    shape: str
    status: str  # nouns.seats.SeatStatus: ok | empty | error | paced | cooling | retired
    seconds: float
    answer: str
    error: str
    error_kind: str | None
    usage: dict[str, Any] | None
    caller: str
    created_at: float
    frees_at: float | None  # paced or cooling: when the model may be called again
    tool_calls: list[dict[str, Any]] | None  # the function calls it answered with
    truncated_at: int | None  # the answer cap cut the answer to its first this many bytes
    truncated: str | None  # `length`: the answer stopped at its token limit (finish_reason: length)
    stands_in_for: str | None  # a stand-in seat: the member whose place it took


class Replay(TypedDict):
    """A recorded reply found for a repeated request."""

    panel: str
    response: Any  # as stored: the ChatCompletion sent the first time
    request_hash: str  # of the body that panel answered: an Idempotency-Key reused on another is refused


class PublicVerdict(TypedDict):
    """The current verdict on a seat, as the call log shows it."""

    useful: bool
    note: str
    real: list[str]
    false: list[str]
    caller: str
    at: float


class LoggedSeat(TypedDict):
    """A seat as the call log lists it, with its current verdict."""

    call: str
    seat: str
    alias: str
    endpoint: str
    status: str
    seconds: float
    answer: str
    error: str
    error_kind: str | None  # the failure's class when status is error (upstream_error, timeout, …)
    frees_at: float | None
    usage: dict[str, Any] | None
    tool_calls: list[dict[str, Any]]
    truncated_at: int | None
    truncated: str | None  # `length`: the answer stopped at its token limit
    stands_in_for: str | None  # a stand-in seat: the member whose place it took
    verdict: PublicVerdict | None


class ListedPanel(TypedDict):
    """A panel as the call log lists it: its seats, the decision call apart, and what is owed."""

    id: str
    created: float
    collection: str
    reply: str
    shape: str
    shape_by: str
    caller: str
    seconds: float | None
    note: str | None
    skipped: list[SkippedSeat]
    request: dict[str, Any]
    seats: list[LoggedSeat]
    decision: LoggedSeat | None
    owed: int  # seats that answered and have no verdict yet
