"""A collection, defined once: its fields, their bounds and the rules between them.

FastAPI reads `Collection` (POST) and `CollectionEdit` (PUT) as request bodies, the CLI builds them,
and the admin service checks the rest against the roster and the shapes (members and the merger on
the roster, a known shape): those need the config, so they are not shape rules and live there.

A type error is a `ValidationError` (the API words it from the field's schema, `parse` words it as
the CLI always has); a value of the right type that breaks a rule raises `InvalidRequest` at once,
the first rule broken, in the order a person reads the fields.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, create_model, model_validator

from benchwarmers.errors import InvalidRequest
from benchwarmers.nouns.budgets import MAX_BUDGET, check_budget
from benchwarmers.nouns.naming import collection_name

NAME = re.compile(r"^[a-z0-9-]+$")
TAG = re.compile(r"^[a-z0-9-]+$")
MAX_NAME = 64
MAX_DESCRIPTION = 300
MAX_TAGS = 8
SEAT_LIMIT = 20  # max_explorers and max_calls, as the gateway's own settings allow
REPLIES = ("all", "merged", "pick")
TAG_FIELDS = ("tags", "require_tags", "exclude_tags")
SEAT_FIELDS = ("max_explorers", "max_calls")
SWITCHES = ("auto_swap", "stand_ins")
BUDGETS = ("daily_panels", "daily_tokens")
NAME_RULE = "Lower-case letters, digits and '-', at most 64 characters."


def _nullable(schema: dict[str, Any]) -> WithJsonSchema:
    """The field as the document shows it: null is accepted (it means the default) beside the value."""
    return WithJsonSchema({"anyOf": [schema, {"type": "null"}]})


Description = Annotated[str, _nullable({"type": "string", "maxLength": MAX_DESCRIPTION})]
Tags = Annotated[
    list[str],
    _nullable({"type": "array", "maxItems": MAX_TAGS, "items": {"type": "string", "pattern": "^[a-z0-9-]+$"}}),
]
Aliases = Annotated[list[str], _nullable({"type": "array", "items": {"type": "string"}})]
Reply = Literal["all", "merged", "pick"]
SeatCount = Annotated[int | None, _nullable({"type": "integer", "minimum": 0, "maximum": SEAT_LIMIT})]
Switch = Annotated[bool, _nullable({"type": "boolean"})]
# 0 clears a budget (as null does); nouns/budgets.py checks it.
DailyBudget = Annotated[int | None, _nullable({"type": "integer", "minimum": 0, "maximum": MAX_BUDGET})]


class Collection(BaseModel):
    """A collection, served as the model `bench/<name>`."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str = Field(description=NAME_RULE)
    description: Description = Field("", description="What the collection is for: callers choose a collection by it.")
    tags: Tags = Field([], description="Up to eight one-word tags (lower-case letters, digits, '-').")
    members: Aliases = Field([], description="Roster aliases that answer every panel (ENDPOINT/MODEL); at least one.")
    shape: str | None = Field(None, description="Fix the task shape (a known shape); null lets each request decide.")
    reply: Annotated[Reply, _nullable({"type": "string", "enum": list(REPLIES)})] = Field(
        "all",
        description="`all` (every answer, the default), `merged` (one merged answer), `pick` (one seat's message).",
    )
    merger: str | None = Field(None, description="The roster alias that merges answers; null lets the bench pick.")
    max_explorers: SeatCount = Field(None, description="Explorer seats at most; null uses the gateway's.")
    max_calls: SeatCount = Field(None, description="Calls per panel at most; null uses the gateway's.")
    auto_swap: Switch = Field(
        False,
        description="Let the bench swap a member for an explorer itself when the evidence is decisive "
        "(P >= 0.99, 30 verdicts each; logged, reversible); default false.",
    )
    require_tags: Tags = Field(
        [], description="Model tags every seat's model must carry (a model's tags: `model show`)."
    )
    exclude_tags: Tags = Field(
        [],
        description="Model tags no seat's model may carry, member or explorer, e.g. `trains-on-prompts` "
        "(from the providers' free-tier data).",
    )
    daily_panels: DailyBudget = Field(
        None, description="Panels a day it answers; after that 429 until the reset. 0 or null: no budget."
    )
    daily_tokens: DailyBudget = Field(
        None, description="Tokens a day its seats may spend, as they report them. 0 or null: no budget."
    )
    stand_ins: Switch = Field(
        False,
        description="Give a member that is cooling, paced out or retired a stand-in for the panel: the best "
        "eligible model by the evidence on the panel's shape, marked `stands_in_for`; default false.",
    )

    @model_validator(mode="before")
    @classmethod
    def _normalised(cls, data: Any) -> Any:
        """Null means the default; names lose `bench/`, text and tags their spaces, lists their repeats."""
        if not isinstance(data, dict):
            return data
        given = {k: v for k, v in data.items() if v is not None or k == "name"}
        if isinstance(given.get("name"), str):
            given["name"] = collection_name(given["name"])
        if isinstance(given.get("description"), str):
            given["description"] = given["description"].strip()
        for field in (*TAG_FIELDS, "members"):
            value = given.get(field)
            if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                given[field] = list(dict.fromkeys(v.strip() if field != "members" else v for v in value))
        for field in ("shape", "merger"):
            if given.get(field) == "":
                del given[field]
        for field in BUDGETS:
            if type(given.get(field)) is int and given[field] == 0:
                del given[field]  # 0 is no budget, as null is
        return given

    @model_validator(mode="after")
    def _rules(self) -> Collection:
        if not NAME.match(self.name) or len(self.name) > MAX_NAME:
            raise InvalidRequest(
                f"collection name {self.name!r} is not valid: use lower-case letters, digits and '-' (at most 64)",
                param="name",
            )
        if len(self.description) > MAX_DESCRIPTION:
            raise InvalidRequest(
                f"description is {len(self.description)} characters; at most {MAX_DESCRIPTION} are allowed",
                param="description",
            )
        for field in TAG_FIELDS:
            tags: list[str] = getattr(self, field)
            if len(tags) > MAX_TAGS:
                raise InvalidRequest(f"{len(tags)} {field} given; at most {MAX_TAGS} are allowed", param=field)
            for tag in tags:
                if not TAG.match(tag):
                    raise InvalidRequest(f"tag {tag!r} is not one lower-case word (letters, digits, '-')", param=field)
        both = sorted(set(self.require_tags) & set(self.exclude_tags))
        if both:
            raise InvalidRequest(
                f"tag(s) {', '.join(both)} are both required and excluded: no model could sit; drop one",
                param="exclude_tags",
            )
        if not self.members:
            raise InvalidRequest("a collection needs at least one member (--member ALIAS)", param="members")
        for field in SEAT_FIELDS:
            value = getattr(self, field)
            if value is not None and not 0 <= value <= SEAT_LIMIT:
                raise InvalidRequest(f"{field} must be a whole number from 0 to {SEAT_LIMIT}", param=field)
        for field in BUDGETS:
            check_budget(getattr(self, field), field)
        return self

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Collection:
        """A collection from what the CLI, a form or an import file gives: unknown keys are not its
        fields and are left out, and a value of the wrong type is refused in the CLI's words."""
        known = {k: v for k, v in data.items() if k in cls.model_fields}
        try:
            return cls.model_validate(known)
        except ValidationError as exc:
            raise type_refusal(exc, known) from None


def type_refusal(exc: ValidationError, data: dict[str, Any]) -> InvalidRequest:
    """The first field of the wrong type, as the CLI words it (the API words it from the schema)."""
    field = str(exc.errors()[0]["loc"][0])
    value = data.get(field)
    if field == "name":
        name = collection_name(str(value or ""))
        return InvalidRequest(
            f"collection name {name!r} is not valid: use lower-case letters, digits and '-' (at most 64)",
            param="name",
        )
    if field in TAG_FIELDS:
        return InvalidRequest(f"{field} is a list of tags", param=field)
    if field == "reply":
        return InvalidRequest(f"reply must be 'all', 'merged' or 'pick', not {value!r}", param="reply")
    if field in SEAT_FIELDS:
        return InvalidRequest(f"{field} must be a whole number from 0 to {SEAT_LIMIT}", param=field)
    if field in SWITCHES:
        return InvalidRequest(f"{field} must be true or false", param=field)
    if field in BUDGETS:
        check_budget(value, field)
    return InvalidRequest(f"{field}: {exc.errors()[0]['msg']}", param=field)


def _optional(name: str) -> Any:
    info = Collection.model_fields[name]
    annotation: Any = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
    description = (
        "The collection's own name, if given: a collection cannot be renamed." if name == "name" else info.description
    )
    return (annotation | None, Field(None, description=description))


# Every field of a collection, each optional: the whole collection a PUT gives (what is left out is
# cleared), or the changes `collection edit` makes (what is left out stays). The rules apply to the
# collection it makes, once merged (`Collection`).
CollectionEdit: type[BaseModel] = create_model(
    "CollectionEdit",
    __config__=ConfigDict(frozen=True, extra="forbid", strict=True),
    __doc__="Every field of a collection: what is left out is cleared.",
    **{name: _optional(name) for name in Collection.model_fields},
)
