"""A verdict, defined once: the caller's judgement of one seat, the bench's only evidence.

POST /bench/verdict and POST /api/verdicts read it as their body (the API words a refusal from the
field's schema); the CLI, the MCP server (over HTTP) and the bench's own callers build it with
`parse`, which words a refusal as the bench always has.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, model_validator

from benchwarmers.errors import InvalidRequest

FIELDS = ("call", "useful", "note", "real", "false")
Claims = Annotated[
    list[str], WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]})
]
Note = Annotated[str, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})]


class Verdict(BaseModel):
    """The caller's judgement of one seat: the bench's only evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    call: str = Field(min_length=1, description="The call id of the seat judged, from a panel's bench.seats.")
    useful: bool = Field(description="Whether the answer helped.")
    note: Note = Field("", description="One line on why.")
    real: Claims = Field([], description="The claims that held.")
    false: Claims = Field([], description="The claims that were wrong.")

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """Null (and an empty note or list) is the default: no note, no claims."""
        if not isinstance(data, dict):
            return data
        return {k: v for k, v in data.items() if v is not None or k in ("call", "useful")}

    @classmethod
    def parse(cls, data: Any) -> Verdict:
        """A verdict from what a caller gives, refused in the bench's words (the first fault)."""
        if not isinstance(data, dict):
            raise InvalidRequest('a verdict is a JSON object: {"call", "useful", "note", "real": [], "false": []}')
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _refusal(exc) from None


def _refusal(exc: ValidationError) -> InvalidRequest:
    errors = exc.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    field = next((str(e["loc"][0]) for e in errors if e["type"] != "extra_forbidden"), None)
    if field == "call":
        return InvalidRequest("verdict needs call: the call id of the seat you judge", param="call")
    if field == "useful":
        return InvalidRequest("verdict needs useful: true or false", param="useful")
    if field == "note":
        return InvalidRequest("note must be a string", param="note")
    if field in ("real", "false"):
        return InvalidRequest(f"{field} must be a list of claims (strings)", param=field)
    return InvalidRequest(f"unknown verdict field(s): {', '.join(unknown)}")
