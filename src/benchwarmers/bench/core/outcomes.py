"""What one call of a model gave back: a seat's, a merger's, a decision model's, a probe's or a check's.

Made by the calls, read by every layer above (picking, replying, recording, learning, metrics)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchwarmers.upstream.failures import UpstreamFailure


@dataclass
class SeatOutcome:
    call: str
    seat: str
    alias: str
    endpoint: str
    status: str  # ok | empty | error | paced | cooling | retired (the last three: not called)
    seconds: float
    answer: str = ""
    error: str = ""
    failure: UpstreamFailure | None = None
    usage: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    frees_at: float | None = None  # paced or cooling: when the model may be called again
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {id, type, function: {name, arguments}}
    finish_reason: str | None = None  # as the model gave it; `length` when the answer cap cut it
    truncated_at: int | None = None  # the answer was cut to its first this many bytes (answer_cap_kb)
    stands_in_for: str | None = None  # a stand-in seat: the member whose place it took on this panel
