"""What a route needs, as FastAPI dependencies: who is calling, the bench, and its JSON body.

The guards sit on the routers, not on the routes: every route of an `admin_router()` (`/api/...`)
or a `pages_router()` (the dashboard) runs `admin_for` first, and every route of a
`gateway_router()` (`/v1/...`, `/bench/...`) runs `caller_for` first, so a route added to one is
guarded without asking (tests/server/test_route_guards.py walks every route to hold that). A route that
needs to know who is calling takes `Admin` or `GatewayCaller`: FastAPI runs a dependency once per
request and hands its result to everyone who asks.

A body is read by `JsonBody`, after the guard and within its cap (a refused caller gets nothing
read, and a huge body is refused while it arrives, never parsed), then checked against its model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any, Generic, TypeVar

from fastapi import APIRouter, Depends
from fastapi.dependencies.models import Dependant
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute, RouteContext
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from benchwarmers.bench.caller import Caller
from benchwarmers.bench.services import Bench
from benchwarmers.server.auth import admin_for, caller_for
from benchwarmers.server.body import parse_json_object, read_body
from benchwarmers.server.schemas import error_responses
from benchwarmers.server.validation import body_refusal

M = TypeVar("M", bound=BaseModel)


async def bench_of(request: Request) -> Bench:
    # async on purpose: FastAPI runs a plain `def` dependency in a worker thread, a hop per request.
    bench: Bench = request.app.state.bench
    return bench


BenchDep = Annotated[Bench, Depends(bench_of)]
Admin = Annotated[str, Depends(admin_for)]  # the name written in the changes log
GatewayCaller = Annotated[Caller, Depends(caller_for)]


def admin_router() -> APIRouter:
    """`/api/...`: when keys are required, the dashboard's token as a bearer or its session cookie, else 401."""
    return APIRouter(dependencies=[Depends(admin_for)], responses=error_responses(401, 403))


def pages_router() -> APIRouter:
    """The dashboard's pages: without a session (when gateway keys are required) a 303 to /login."""
    login: dict[int | str, dict[str, Any]] = {
        303: {"description": "To /login, when gateway keys are required and there is no session."}
    }
    return APIRouter(
        dependencies=[Depends(admin_for)],
        default_response_class=HTMLResponse,
        responses={**login, **error_responses(403)},
    )


def gateway_router() -> APIRouter:
    """`/v1/...` and `/bench/...`: a gateway key when keys are required, else every caller is `local`."""
    return APIRouter(dependencies=[Depends(caller_for)], responses=error_responses(401, 403, 429))


class JsonBody(Generic[M]):
    """A dependency reading a JSON object of at most `cap` bytes into `model` (400 naming the field)."""

    def __init__(self, model: type[M], cap: int) -> None:
        self.model = model
        self.cap = cap

    async def __call__(self, request: Request) -> M:
        data = parse_json_object(await read_body(request, cap=self.cap))
        try:
            return self.model.model_validate(data)
        except ValidationError as exc:
            raise body_refusal(self.model, exc) from None


# -- what the OpenAPI document reads off a route ----------------------------------------------------------


def _dependencies(dependant: Dependant) -> Iterator[Dependant]:
    for dependency in dependant.dependencies:
        yield dependency
        yield from _dependencies(dependency)


def _calls(route: APIRoute | RouteContext) -> list[Callable[..., Any] | None]:
    return [dependency.call for dependency in _dependencies(route.dependant)]


def guard_of(route: APIRoute | RouteContext) -> str | None:
    """`admin` or `gateway`: the guard a route runs, if any."""
    calls = _calls(route)
    if admin_for in calls:
        return "admin"
    if caller_for in calls:
        return "gateway"
    return None


def body_of(route: APIRoute | RouteContext) -> JsonBody[Any] | None:
    """The route's `JsonBody`, if it reads one."""
    return next((call for call in _calls(route) if isinstance(call, JsonBody)), None)


ADMIN_BODY_CAP = 256 * 1024  # the admin API's bodies: a collection, an endpoint, the settings


def admin_body(model: type[Any], cap: int = ADMIN_BODY_CAP) -> Any:
    """`JsonBody(model, cap)` as a route's dependency: `Annotated[Model, admin_body(Model)]`."""
    return Depends(JsonBody(model, cap))
