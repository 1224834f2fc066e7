"""Schemathesis against the bench's own OpenAPI document, in each access mode, over real HTTP.

A real `benchwarmers serve` process (the fake provider behind a two-member collection) answers
whatever `/openapi.json` describes: paths, parameters and, where the document has them, bodies.
Every operation gets schema-valid and schema-violating cases until the mode has had its share of
the total (at least 2,000 over the three modes). The checks: no response is a 5xx (schemathesis'
`not_a_server_error`), and the server's log holds no traceback and no logged error afterwards.
"""

from __future__ import annotations

import math
import random
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.errors import FailureGroup
from schemathesis.schemas import APIOperation

from benchwarmers.bench.services import Bench
from benchwarmers.settings import is_loopback
from tests.fakes.upstream import FakeUpstream
from tests.support.serveprocess import ServeProcess, fake_endpoint, problems_in_log, run_admin

ADMIN_TOKEN = "fuzz-admin-token-5b1e0c7d9a2f4e6b8c0d1e2f3a4b5c6d"
MODES: dict[str, dict[str, str]] = {
    "local": {},
    "require-keys": {"BENCHWARMERS_REQUIRE_KEYS": "1"},
    "admin-token": {"BENCHWARMERS_ADMIN_TOKEN": ADMIN_TOKEN},
}
TOTAL_CASES = 2_000
CASES_PER_MODE = math.ceil(TOTAL_CASES / len(MODES))
ANSWER_WITHIN = 30.0  # seconds; the fake answers at once, so a panel takes milliseconds
MAX_PASSES = 8
# Where Hypothesis runs derandomized (its "ci" profile, on when CI is set) the same cases every
# time, like the rest of the suite; elsewhere new ones each run (the failures carry curl commands).
RUN_SEED = (
    0 if settings.default.derandomize else random.SystemRandom().getrandbits(32)
)  # passes over the operations whose cases are not used up; bounds the run
COLLECTION = "fuzz"
MODELS = ["m1", "m2", "m3"]


@dataclass
class Credentials:
    key: str | None = None  # a gateway key, for /v1 and /bench
    token: str | None = None  # the dashboard's token, for /api: the admin token, or the home's dashboard-token
    session: str | None = None  # the dashboard's session cookie, for the pages

    def headers(self, path: str) -> dict[str, str]:
        bearer = self.token if path.startswith("/api") else self.key
        return {"authorization": f"Bearer {bearer}"} if bearer else {}

    def cookies(self) -> dict[str, str]:
        return {"bw_session": self.session} if self.session else {}


@dataclass
class Tally:
    cases: int = 0
    by_operation: dict[str, int] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    unanswered: list[str] = field(default_factory=list)  # no response within ANSWER_WITHIN, or none at all
    distinct: set[str] = field(default_factory=set)  # the requests sent, as curl commands


def prepare_home(home: Path, fake: FakeUpstream, mode: str) -> Credentials:
    fake_endpoint(home, fake, MODELS)

    async def setup(bench: Bench) -> str | None:
        members = [f"fake/{m}" for m in MODELS[:2]]
        await bench.collections.add_collection({"name": COLLECTION, "members": members, "description": "fuzzing"})
        if mode == "local":
            return None
        key, _record = await bench.keys.create("fuzz-caller-7f3a")
        return key

    key = run_admin(home, setup)
    return Credentials(key=key, token=ADMIN_TOKEN if mode == "admin-token" else None)


def login(server: ServeProcess, credentials: Credentials) -> None:
    response = requests.post(
        f"{server.url}/login", data={"token": credentials.token, "next": "/"}, allow_redirects=False, timeout=10
    )
    assert response.status_code == 303
    credentials.session = response.cookies["bw_session"]


def keep_on_loopback(case: Any, loopback_url: str) -> None:
    """A body that names a provider URL gets the fake's, and a notification target's URL a closed port
    on loopback: the fuzzer must never make the bench call an address beyond loopback (a refresh
    fetches the listing of whatever endpoint was added; a test button posts to the target)."""
    if isinstance(case.body, dict):
        if "base_url" in case.body:
            case.body["base_url"] = loopback_url
        if case.path == "/api/notify" and "url" in case.body:  # a notification target: nothing listens there
            case.body["url"] = "json://127.0.0.1:9/fuzz"
        case.body.pop("preset", None)


@dataclass(frozen=True)
class Targets:
    """Names that exist on the bench, for half of the cases to aim at (random names rarely hit one)."""

    panel: str
    call: str
    alias: str = "fake/m1"


def aim_at_what_exists(case: Any, targets: Targets) -> None:
    """Panels on the real collection, verdicts on a real call, reads of a real panel and model, so
    fuzzed fields reach the code behind the lookups. Nothing is aimed at a DELETE."""
    if isinstance(case.body, dict):
        if case.path in ("/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens"):
            case.body["model"] = f"bench/{COLLECTION}"
        if "call" in case.body:
            case.body["call"] = targets.call
    if case.method.upper() == "DELETE" or not case.path_parameters:
        return
    if "panel_id" in case.path_parameters:
        case.path_parameters["panel_id"] = targets.panel
    if "alias" in case.path_parameters:
        case.path_parameters["alias"] = targets.alias


def first_panel(server: ServeProcess, credentials: Credentials) -> Targets:
    response = requests.post(
        f"{server.url}/v1/chat/completions",
        json={"model": f"bench/{COLLECTION}", "messages": [{"role": "user", "content": "Is 7 prime?"}]},
        headers=credentials.headers("/v1/chat/completions"),
        timeout=30,
    )
    assert response.status_code == 200, response.text
    bench = response.json()["bench"]
    return Targets(panel=bench["panel"], call=bench["seats"][0]["call"])


def strategy(operation: APIOperation) -> Any:
    return operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)


def fuzz_operation(
    operation: APIOperation,
    examples: int,
    server: ServeProcess,
    fake: FakeUpstream,
    credentials: Credentials,
    targets: Targets,
    tally: Tally,
    draw_seed: int,
) -> int:
    """Up to `examples` cases of one operation drawn from `draw_seed`; returns how many ran (fewer:
    its cases ran out)."""
    http = requests.Session()
    ran = 0
    unanswered = False

    @given(case=strategy(operation), aim=st.booleans())
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=False,  # the seed is set per pass
        database=None,
        phases=[Phase.generate],  # no shrinking: every 5xx is collected below, not just the first
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any, aim: bool) -> None:
        nonlocal ran, unanswered
        if unanswered:  # one request this operation left unanswered is the finding; don't wait out more
            return
        ran += 1
        keep_on_loopback(case, fake.base_url)
        if aim:
            aim_at_what_exists(case, targets)
        try:
            response = case.call(
                base_url=server.url,
                session=http,
                headers=credentials.headers(case.path),
                cookies=credentials.cookies(),
                allow_redirects=False,
                timeout=ANSWER_WITHIN,
            )
        except requests.RequestException as exc:
            unanswered = True
            tally.unanswered.append(f"{operation.label} -> {type(exc).__name__}\n  {case.as_curl_command()}")
            return
        tally.statuses[response.status_code] += 1
        tally.distinct.add(case.as_curl_command())
        try:
            case.validate_response(response, checks=[not_a_server_error])
        except FailureGroup:
            tally.server_errors.append(
                f"{operation.label} -> {response.status_code} {response.text[:500]!r}\n  {case.as_curl_command()}"
            )

    try:
        seed(draw_seed)(run)()
    finally:
        http.close()
    return ran


def fuzz(
    server: ServeProcess, fake: FakeUpstream, credentials: Credentials, targets: Targets, target: int, seed_text: str
) -> Tally:
    schema = schemathesis.openapi.from_url(
        f"{server.url}/openapi.json", headers=credentials.headers("/api/openapi"), timeout=10
    )
    operations = [result.ok() for result in schema.get_all_operations()]
    tally = Tally()
    open_ops = list(operations)
    # Each pass draws from its own seed (a pass repeating the last one's cases would add nothing);
    # a pass gives every operation whose cases are not used up an equal share of what is left;
    # one with a finite space (no parameters, no body) runs its few cases and drops out.
    for number in range(MAX_PASSES):
        if tally.cases >= target or not open_ops:
            break
        share = max(5, math.ceil((target - tally.cases) / len(open_ops)))
        still_open = []
        for operation in open_ops:
            draw_seed = zlib.crc32(f"{seed_text} {number} {operation.label}".encode())
            ran = fuzz_operation(operation, share, server, fake, credentials, targets, tally, draw_seed)
            tally.cases += ran
            tally.by_operation[operation.label] = tally.by_operation.get(operation.label, 0) + ran
            if ran >= share:
                still_open.append(operation)
        open_ops = still_open
    return tally


@pytest.mark.parametrize("mode", list(MODES))
def test_fuzzing_the_openapi_document_finds_no_server_error(mode: str, tmp_path: Path) -> None:
    home, log = tmp_path / "home", tmp_path / "serve.log"
    with FakeUpstream(default_latency=0.0) as fake:
        credentials = prepare_home(home, fake, mode)
        server = ServeProcess(home, log, **MODES[mode]).start()
        try:
            if mode == "require-keys":  # the dashboard's token `serve` made in the home
                credentials.token = (home / "dashboard-token").read_text().strip()
            if credentials.token:
                login(server, credentials)
            started = time.monotonic()
            tally = fuzz(
                server, fake, credentials, first_panel(server, credentials), CASES_PER_MODE, f"{RUN_SEED} {mode}"
            )
            seconds = time.monotonic() - started
        finally:
            server.stop()

    ran = (
        f"{mode}, seed {RUN_SEED}: {tally.cases} cases ({len(tally.distinct)} distinct) over "
        f"{len(tally.by_operation)} operations in {seconds:.1f} s"
    )
    print(f"{ran}; statuses {dict(tally.statuses)}")
    assert tally.server_errors == [], ran
    assert tally.unanswered == [], ran
    assert problems_in_log(server.log_text()) == []
    assert tally.cases >= CASES_PER_MODE, tally.by_operation
    # Every operation in the document was called at least once.
    assert all(count > 0 for count in tally.by_operation.values()), tally.by_operation

    async def endpoints(bench: Bench) -> list[dict[str, Any]]:
        return await bench.endpoints.list_endpoints()

    hosts = {urlsplit(row["base_url"]).hostname for row in run_admin(home, endpoints)}
    assert all(host is not None and is_loopback(host) for host in hosts), hosts
