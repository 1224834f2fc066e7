"""The request bodies the API reads, and the one error body it sends, as Pydantic models.

A body model checks types (strictly: `"5"` is not 5 and `true` is not 1) and refuses unknown
fields. A collection and a verdict are the bench's own nouns (nouns/), with their rules; the rules
a value must follow beyond its type elsewhere (names, ranges, members on the roster, known shapes)
belong to the bench services, which the CLI shares, so a refusal reads the same from both. Where a
service owns a bound, the model only documents it (`WithJsonSchema`), and the service's message is
the one a caller gets.

`ChatCompletionRequest` documents the chat body and validates nothing: the chat route reads its
body only after the caller is known, and `bench/panels/parse.py` checks it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema, create_model

from benchwarmers.bench.admin.keys import MAX_RPM
from benchwarmers.bench.bounds import KINDS as ENDPOINT_KINDS
from benchwarmers.bench.budget_rules import MAX_BUDGET
from benchwarmers.bench.panels.shapes import KINDS as DECISION_KINDS
from benchwarmers.bench.presets import PRESETS
from benchwarmers.nouns import gateway as gateway_config
from benchwarmers.nouns.collections import Collection, CollectionEdit
from benchwarmers.nouns.collections import Reply as Reply
from benchwarmers.nouns.gateway import GATEWAY_DEFAULTS
from benchwarmers.nouns.verdicts import Verdict


class Body(BaseModel):
    """A JSON object the API reads: every field typed, nothing unknown."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _documented(schema: dict[str, Any]) -> WithJsonSchema:
    """The field's schema as the owning service enforces it (the model checks only the type)."""
    return WithJsonSchema(schema)


Rpm = Annotated[int, _documented({"type": "integer", "minimum": 1, "maximum": MAX_RPM})]
# 0 clears a budget (as null does where null means "no budget"); bench/budget_rules.py checks it.
DailyBudget = Annotated[int, _documented({"type": "integer", "minimum": 0, "maximum": MAX_BUDGET})]
EndpointKind = Annotated[str, _documented({"type": "string", "enum": list(ENDPOINT_KINDS)})]
Preset = Annotated[str, _documented({"type": "string", "enum": sorted(PRESETS)})]
DecisionKind = Annotated[str, _documented({"type": "string", "enum": list(DECISION_KINDS)})]
Tokens = Annotated[int, Field(gt=0)]
FamilyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
NonEmpty = Annotated[str, Field(min_length=1)]


# -- collections ------------------------------------------------------------------------------------

# The collection itself is the body (nouns/collections.py): POST creates one, PUT replaces every field.
CollectionCreate = Collection
CollectionReplace = CollectionEdit


# -- the roster, endpoints, keys ----------------------------------------------------------------------


class ModelPatch(Body):
    """Overrides of what the catalog knows of one roster model; a null or absent field stays as it is."""

    context: Tokens | None = Field(None, description="Context window in tokens.")
    output: Tokens | None = Field(None, description="Most tokens the model writes in one answer.")
    vision: bool | None = Field(None, description="Whether the model takes images.")
    family: FamilyName | None = Field(None, description="The model family (no two explorers share one).")
    free: bool | None = Field(None, description="Whether calls cost nothing (only free models explore).")
    enabled: bool | None = Field(None, description="Whether the model may be seated at all.")
    concurrency: int | None = Field(
        None, ge=1, le=1024, description="Calls at once through the llm client (a local plugin model: 1 unless set)."
    )
    limits: dict[str, int | str] | None = Field(
        None,
        description='Rate-limit windows calls to it are paced under, e.g. {"requests-minute": 20, '
        '"tokens-minute": 6000, "requests-day": 50, "resets-day": "00:00"}; they replace what its provider '
        'announced for the same window, 0 removes one. `resets-day` (UTC "HH:MM") and `resets-month` (a day, '
        '"1") say when the daily and monthly windows reset ("" removes it; unknown: a moving 24 hours / 30 days).',
    )


class EndpointCreate(Body):
    """A provider endpoint: a preset, or a base URL and kind. Give a key by its variable's name."""

    name: str | None = Field(None, description="A name for the endpoint; model aliases start with it.")
    preset: Preset | None = Field(None, description="A known provider; it fills base_url, kind and api_key_env.")
    base_url: str | None = Field(None, description="The OpenAI-compatible base URL (needed without a preset).")
    kind: EndpointKind | None = Field(None, description="How its model listing is read; `openai` by default.")
    api_key_env: str | None = Field(None, description="The environment variable holding the provider key.")
    api_key: str | None = Field(None, description="The provider key itself, stored encrypted; prefer api_key_env.")
    free_tier: bool | None = Field(None, description="Whether the endpoint's free models may be seated.")


class EndpointEdit(Body):
    """What to change on an endpoint; what is left out stays. A new key replaces the stored one."""

    base_url: str | None = Field(None, description="A new OpenAI-compatible base URL.")
    api_key_env: str | None = Field(None, description="Use the key in this environment variable from now on.")
    api_key: str | None = Field(None, description="A new provider key (rotation), stored encrypted.")
    free_tier: bool | None = Field(None, description="Whether the endpoint's free models may be seated.")


class KeyCreate(Body):
    """A gateway key: the reply carries the key once, and only its last four characters after."""

    name: str = Field(description="Written on every panel and verdict the key makes.")
    collections: list[str] | None = Field(
        None, description="The only collections it may call (NAME or bench/NAME); null for all."
    )
    rpm: Rpm | None = Field(None, description="Requests a minute; null for no limit.")
    daily_panels: DailyBudget | None = Field(None, description="Panels a day; after that 429 until the reset.")
    daily_tokens: DailyBudget | None = Field(None, description="Tokens a day its panels' seats may spend.")


class KeyPatch(Body):
    """A gateway key's limits; a null or absent field stays as it is, 0 removes the limit."""

    rpm: Annotated[int, _documented({"type": "integer", "minimum": 0, "maximum": MAX_RPM})] | None = Field(
        None, description="Requests a minute; 0 for no limit."
    )
    daily_panels: DailyBudget | None = Field(None, description="Panels a day; 0 for no budget.")
    daily_tokens: DailyBudget | None = Field(None, description="Tokens a day; 0 for no budget.")


class NotifyTargetCreate(Body):
    """A notification target: an Apprise URL, stored sealed and never shown again (only its scheme and host)."""

    url: Annotated[str, _documented({"type": "string", "minLength": 1, "maxLength": 2000})] = Field(
        description="An Apprise URL: ntfy://TOPIC, slack://..., discord://..., mailto://..., json://HOST/PATH."
    )
    name: str | None = Field(None, description="Its name (lower-case); by default from the URL's scheme and host.")


# -- shapes, decision models, settings ----------------------------------------------------------------


class ShapeBody(Body):
    description: str = Field(description="What requests of this shape are about: decision models choose by it.")


class DecisionModelCreate(Body):
    alias: NonEmpty = Field(description="The roster model that will label shapes.")
    kind: DecisionKind | None = Field(
        None, description="`chat` (asked in JSON, the default) or `choice` (a native decision API)."
    )


def _gateway_field(name: str, default: Any) -> Any:
    # Any JSON value passes here: the gateway settings model (nouns/gateway.py) checks it and
    # says the setting's range in its refusal, the same words the CLI prints. The schema shows it.
    low, high = gateway_config.bounds(name)
    schema: dict[str, Any] = {"type": "integer" if gateway_config.whole(name) else "number"}
    schema.update(minimum=low, maximum=high)
    text = f"{gateway_config.description(name)} ({gateway_config.range_text(name)}; default {default})."
    return (Any, Field(None, description=f"{text} Null leaves it as it is.", json_schema_extra=schema))


# Built from GATEWAY_DEFAULTS: a new setting is in the body (and the document) as soon as it has a default.
GatewaySettingsBody: type[Body] = create_model(
    "GatewaySettingsBody",
    __base__=Body,
    __doc__="Gateway settings to change; the others stay as they are.",
    **{name: _gateway_field(name, default) for name, default in GATEWAY_DEFAULTS.items()},
)


# -- verdicts, discover -------------------------------------------------------------------------------


VerdictBody = Verdict  # nouns/verdicts.py


class DiscoverAdd(Body):
    model: str = Field(description="PROVIDER/MODEL as the discover list gives it.")


# -- the chat request (documented, not validated here) ------------------------------------------------


class _Open(BaseModel):
    """OpenAI's request objects carry more fields than the bench reads: they pass to every seat."""

    model_config = ConfigDict(extra="allow")


class ImageUrl(_Open):
    url: str = Field(description="An https:// URL or a data:image/...;base64, URL; never fetched by the bench.")


class ContentPart(_Open):
    type: str = Field(description="`text` or `image_url` (other parts pass to the seats as sent).")
    text: str | None = None
    image_url: ImageUrl | None = None


class ChatMessage(_Open):
    role: str = Field(description="system, developer, user, assistant or tool.")
    content: str | list[ContentPart] | None = None
    name: str | None = None


class StreamOptions(_Open):
    include_usage: bool | None = Field(None, description="Send a usage chunk before `data: [DONE]`.")


class BenchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    reply: Reply | None = Field(None, description="Override the reply mode: `all`, `merged` or `pick`.")
    with_: list[str] | None = Field(None, alias="with", description="Nominees: roster aliases seated as well.")
    shape: str | None = Field(None, description="The task shape, when the collection fixes none.")


class ChatCompletionRequest(_Open):
    """An OpenAI chat completion request for a collection. Every other OpenAI field (temperature,
    max_tokens, stop, tools, ...) goes to every seat unchanged. Bodies above 20 MB are refused. With
    `tools` or a JSON `response_format` the reply is one seat's own message (the `pick` reply)."""

    model: str = Field(description="A collection: `bench/NAME`, or `bench/NAME:merged` / `:all` / `:pick`.")
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation, as in OpenAI's API.")
    stream: bool | None = Field(None, description="Stream: pings while the seats run, then the reply.")
    n: int | None = Field(None, ge=1, le=1, description="1 or left out: a panel gives one reply (above 1: 400).")
    stream_options: StreamOptions | None = None
    bench: BenchOptions | None = Field(None, description="The bench's own options.")


# -- errors -------------------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    message: str = Field(description="What was wrong, and what to do.")
    type: str = Field(description="OpenAI's error type, e.g. invalid_request_error, authentication_error.")
    param: str | None = Field(description="The field or parameter at fault, if one is.")
    code: str | None = Field(description="A stable code, e.g. invalid_request, model_not_found.")


class ErrorBody(BaseModel):
    """Every error, everywhere: the shape the OpenAI SDKs parse."""

    error: ErrorDetail


class ResponsesText(_Open):
    format: dict[str, Any] | None = Field(
        None, description="`{type: text}`, `{type: json_object}` or `{type: json_schema, name, schema, strict}`."
    )


class ResponsesRequest(_Open):
    """An OpenAI Responses request for a collection, run as the same panel as a chat completion.
    Function tools, `text.format` and `input_image` parts are served; `previous_response_id` is not."""

    model: str = Field(description="A collection: `bench/NAME`, or `bench/NAME:merged` / `:all` / `:pick`.")
    input: str | list[dict[str, Any]] = Field(
        description="A string, or items: messages (input_text, input_image), function_call, function_call_output."
    )
    instructions: str | None = Field(None, description="A system message before the input.")
    tools: list[dict[str, Any]] | None = Field(None, description="Function tools only.")
    text: ResponsesText | None = None
    stream: bool | None = Field(None, description="Stream: pings while the seats run, then the Responses events.")
    bench: BenchOptions | None = Field(None, description="The bench's own options.")


class CountTokensRequest(_Open):
    """A conversation to count, as a Messages request has it (Anthropic's `count_tokens`): the bench's
    own estimate of its size, the one a collection's context windows are checked against."""

    model: str = Field(description="A collection: `bench/NAME` (the count uses its members' learned ratios).")
    messages: list[dict[str, Any]] = Field(
        min_length=1, description="user and assistant messages: text, image, tool_use and tool_result blocks."
    )
    system: str | list[dict[str, Any]] | None = Field(None, description="A string or text blocks.")
    tools: list[dict[str, Any]] | None = Field(None, description="Custom tools: name, description, input_schema.")
    tool_choice: dict[str, Any] | None = Field(None, description="`{type: auto | any | none}` or `{type: tool, name}`.")


class MessagesRequest(CountTokensRequest):
    """An Anthropic Messages request for a collection, run as the same panel as a chat completion. The
    reply is one seat's own message (the `pick` reply) unless the model name or `bench.reply` says
    `all` or `merged`. top_k and thinking are read and dropped; server tools are refused."""

    max_tokens: int | None = Field(None, ge=1, description="The most each seat may write.")
    stream: bool | None = Field(None, description="Stream: ping events while the seats run, then Anthropic's events.")
    stop_sequences: list[str] | None = Field(None, description="Sent to every seat as `stop`.")
    temperature: float | None = None
    top_p: float | None = None
    metadata: dict[str, Any] | None = Field(None, description="Accepted and not sent on: `user_id` is for Anthropic.")
    bench: BenchOptions | None = Field(None, description="The bench's own options.")


class TokenCount(BaseModel):
    input_tokens: int = Field(description="The bench's estimate of the prompt's tokens (it errs high).")


class AnthropicErrorDetail(BaseModel):
    type: str = Field(description="Anthropic's error type, e.g. invalid_request_error, authentication_error.")
    message: str = Field(description="What was wrong, and what to do.")


class AnthropicErrorBody(BaseModel):
    """Every error on the Messages routes: the shape Anthropic's SDKs parse."""

    type: Literal["error"]
    error: AnthropicErrorDetail


DOCUMENTED_MODELS: tuple[type[BaseModel], ...] = (
    ChatCompletionRequest,
    ResponsesRequest,
    MessagesRequest,
    CountTokensRequest,
    ErrorBody,
    AnthropicErrorBody,
)


ERROR_REF = "#/components/schemas/ErrorBody"
STATUS_MEANINGS = {
    400: "Malformed: a parameter or body field is wrong (`param` names it).",
    401: "No credentials, or refused ones (`WWW-Authenticate: Bearer`).",
    403: "Refused: another site's page, a foreign Host, or outside the gateway key's scope.",
    404: "Not found (an unknown name, call or panel).",
    409: "Exists already.",
    413: "The body is over its cap (20 MB for a panel), or the prompt over a member's window.",
    422: "An Idempotency-Key already used with another body (`idempotency_key_reused`).",
    429: "Too many requests (`Retry-After` says when to try again).",
    500: "An unexpected error; the server log has the request id.",
    502: "A provider did not answer as expected.",
    503: "Not available here (a missing optional library, a database away): the message says what to do.",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses for `statuses`, each the one error body."""
    content = {"application/json": {"schema": {"$ref": ERROR_REF}}}
    return {status: {"description": STATUS_MEANINGS[status], "content": content} for status in statuses}
