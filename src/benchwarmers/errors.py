"""The one error vocabulary: every refusal carries its HTTP status and OpenAI error type/code.

The server turns these into `{"error": {"message", "type", "param", "code"}}` in one place;
the CLI prints `message` as one line.
"""

from __future__ import annotations

from typing import Any


class BenchError(Exception):
    status = 400
    type = "invalid_request_error"
    code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class InvalidRequest(BenchError):
    status = 400
    code = "invalid_request"


class NotFound(BenchError):
    status = 404
    code = "not_found"


class Conflict(BenchError):
    status = 409
    code = "conflict"


class Unprocessable(BenchError):
    """Well-formed, but it contradicts what the bench already holds (an Idempotency-Key reused)."""

    status = 422
    code = "unprocessable"


class RequestTimeout(BenchError):
    """A request body that did not arrive in time (written by the listener: server/listen.py)."""

    status = 408
    code = "request_timeout"


class TooLarge(BenchError):
    status = 413
    code = "request_too_large"


class Unauthorized(BenchError):
    status = 401
    type = "authentication_error"
    code = "invalid_api_key"


class Forbidden(BenchError):
    status = 403
    type = "permission_error"
    code = "forbidden"


class RateLimited(BenchError):
    status = 429
    type = "rate_limit_error"
    code = "rate_limit_exceeded"


class BudgetExhausted(RateLimited):
    """A daily budget (a collection's, a gateway key's, the suite's) is spent: refused before any model is
    called, with Retry-After at the budget's reset (bench/budgets.py)."""

    code = "budget_exhausted"


class Unavailable(BenchError):
    status = 503
    type = "server_error"
    code = "unavailable"


class UpstreamRefused(BenchError):
    """A provider the user asked about failed (a listing that cannot be read, a decision model that
    does not answer): the bench itself is fine, so 502 and the provider's scrubbed reason."""

    status = 502
    type = "upstream_error"
    code = "upstream_failed"


class StorageFull(Unavailable):
    """The disk holding the bench's data had no room for a write: nothing was recorded, and the same
    request succeeds once room is made (no restart needed). `where` names that disk: the data folder
    with its free space, or the database server's."""

    code = "storage_full"
    RETRY_AFTER = "10"  # seconds: room is made by a person (or a purge), not within a second

    def __init__(self, where: str) -> None:
        super().__init__(
            f"the disk holding the bench's data is full ({where}); nothing was recorded: "
            "free space there and try again",
            headers={"Retry-After": self.RETRY_AFTER},
        )
