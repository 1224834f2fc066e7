"""The gateway settings model and everything that goes through it: its bounds, the CLI, the admin
API, the Settings form, and settings stored before there were bounds."""

from __future__ import annotations

import logging
import math
from typing import Any

import httpx2
import orjson
import pytest
import typer
import typer.main

from benchwarmers.bench.services import Bench
from benchwarmers.cli.app import app as cli_app
from benchwarmers.errors import InvalidRequest
from benchwarmers.nouns import gateway as gateway_config
from benchwarmers.nouns.gateway import GATEWAY_DEFAULTS, GatewaySettings, check, read_stored
from benchwarmers.store import gateway_settings as setting_rows
from benchwarmers.store.changes import record_change
from tests.support.benchserver import BenchServer
from tests.support.changes import changes

DEFAULTS = {
    "max_explorers": 2,
    "max_calls": 5,
    "explorer_floor": 0.5,
    "epsilon": 0.2,
    "seat_timeout": 120.0,
    "decision_timeout": 5.0,
    "ping_interval": 5.0,
    "replay_window": 600.0,
    "endpoint_concurrency": 64,
    "failing_after": 5,
    "owed_after": 20,
    "owed_days": 7,
    "answer_cap_kb": 1024,
    "retention_days": 0,
    "budget_reset_hour": 0,
    "suite_daily_panels": 0,
}
BOUNDS = {
    "max_explorers": (0, 20),
    "max_calls": (0, 20),
    "explorer_floor": (0, 1),
    "epsilon": (0, 1),
    "seat_timeout": (1, 600),
    "decision_timeout": (0.1, 60),
    "ping_interval": (1, 60),
    "replay_window": (60, 86400),
    "endpoint_concurrency": (1, 1024),
    "failing_after": (1, 100),
    "owed_after": (0, 100_000),
    "owed_days": (0, 365),
    "answer_cap_kb": (16, 16_384),
    "retention_days": (0, 36500),
    "budget_reset_hour": (0, 23),
    "suite_daily_panels": (0, 1_000_000),
}
PING_ZERO = "ping_interval must be from 1 to 60 seconds (got 0)"
CONCURRENCY_ZERO = "endpoint_concurrency must be a whole number from 1 to 1024 (got 0)"


def refused(call: Any) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        call()
    return caught.value


# -- the model -------------------------------------------------------------------------------------


def test_the_model_is_the_defaults_and_every_setting_has_a_range_and_a_description():
    assert GATEWAY_DEFAULTS == DEFAULTS
    assert GatewaySettings().model_dump() == DEFAULTS
    assert {name: gateway_config.bounds(name) for name in gateway_config.FIELDS} == BOUNDS
    for name in gateway_config.FIELDS:
        low, high = BOUNDS[name]
        assert low <= DEFAULTS[name] <= high, name
        assert gateway_config.description(name), name


@pytest.mark.parametrize("name", list(BOUNDS))
def test_each_bound_is_allowed_and_a_step_past_it_is_refused(name):
    low, high = BOUNDS[name]
    for value in (low, high):
        check({name: value})
    step = 1 if isinstance(DEFAULTS[name], int) else 0.01
    for value in (low - step, high + step):
        error = refused(lambda value=value: check({name: value}))
        assert error.param == name
        assert error.message.startswith(f"{name} must be ")
        assert f"from {low} to {high}" in error.message


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"ping_interval": 0}, PING_ZERO),
        ({"ping_interval": 0.0}, PING_ZERO),
        ({"endpoint_concurrency": 0}, CONCURRENCY_ZERO),
        ({"seat_timeout": 0.5}, "seat_timeout must be from 1 to 600 seconds (got 0.5)"),
        ({"seat_timeout": math.inf}, "seat_timeout must be from 1 to 600 seconds (got inf)"),
        ({"seat_timeout": math.nan}, "seat_timeout must be from 1 to 600 seconds (got nan)"),
        ({"replay_window": 1e9}, "replay_window must be from 60 to 86400 seconds (got 1000000000)"),
        ({"epsilon": -0.1}, "epsilon must be from 0 to 1 (got -0.1)"),
        ({"max_calls": 2.5}, "max_calls must be a whole number from 0 to 20 (got 2.5)"),
        ({"max_calls": 2.0}, "max_calls must be a whole number from 0 to 20 (got 2)"),
        ({"max_explorers": True}, "max_explorers must be a whole number from 0 to 20 (got true)"),
        ({"max_explorers": "two"}, 'max_explorers must be a whole number from 0 to 20 (got "two")'),
        ({"failing_after": 0}, "failing_after must be a whole number from 1 to 100 (got 0)"),
        ({"owed_days": 400}, "owed_days must be a whole number from 0 to 365 (got 400)"),
        ({"ping_interval": "5"}, 'ping_interval must be from 1 to 60 seconds (got "5")'),
        ({"ping_interval": 0, "endpoint_concurrency": 0}, f"{PING_ZERO}; {CONCURRENCY_ZERO}"),
    ],
)
def test_a_refusal_names_the_setting_its_range_and_the_value(values, message):
    error = refused(lambda: check(values))
    assert (error.message, error.param) == (message, next(iter(values)))


def test_an_unknown_setting_is_refused_with_the_known_ones():
    error = refused(lambda: check({"colour": 1}))
    assert (error.message, error.param) == (
        "unknown gateway setting(s): colour; expected: max_explorers, max_calls, explorer_floor, epsilon, "
        "seat_timeout, decision_timeout, ping_interval, replay_window, endpoint_concurrency, failing_after, "
        "owed_after, owed_days, answer_cap_kb, retention_days, budget_reset_hour, suite_daily_panels",
        "colour",
    )


def test_stored_settings_read_back_complete_and_in_range(caplog):
    with caplog.at_level(logging.WARNING, logger="benchwarmers.nouns.gateway"):
        read = read_stored({"ping_interval": 0, "seat_timeout": 30, "max_calls": True, "colour": "red"})
    # Out of range or of the wrong kind: the default; unknown: ignored; missing: the default.
    assert read.model_dump() == {**DEFAULTS, "seat_timeout": 30.0}
    assert caplog.messages == [
        f"{PING_ZERO}; using the default, 5",
        "max_calls must be a whole number from 0 to 20 (got true); using the default, 5",
    ]
    assert read_stored(None).model_dump() == DEFAULTS


# -- the CLI ---------------------------------------------------------------------------------------


def test_the_cli_refuses_zero_pings_and_zero_concurrency_with_the_range(cli):
    assert cli("gateway", "set", "--ping-interval", "0") == (1, f"error: {PING_ZERO}\n")
    assert cli("gateway", "set", "--endpoint-concurrency", "0") == (1, f"error: {CONCURRENCY_ZERO}\n")
    # One bad value refuses the whole change.
    assert cli("gateway", "set", "--seat-timeout", "30", "--ping-interval", "0") == (1, f"error: {PING_ZERO}\n")
    code, out = cli("gateway", "show", "--json")
    assert (code, orjson.loads(out)) == (0, DEFAULTS)


def test_a_change_from_the_cli_round_trips(cli):
    assert cli("gateway", "set", "--ping-interval", "2.5", "--endpoint-concurrency", "8") == (
        0,
        "max_explorers 2, max_calls 5, explorer_floor 0.5, epsilon 0.2, seat_timeout 120, decision_timeout 5, "
        "ping_interval 2.5, replay_window 600, endpoint_concurrency 8, failing_after 5, owed_after 20, owed_days 7, "
        "answer_cap_kb 1024, retention_days 0, budget_reset_hour 0, suite_daily_panels 0\n",
    )
    code, out = cli("gateway", "show", "--json")
    assert (code, orjson.loads(out)) == (0, {**DEFAULTS, "ping_interval": 2.5, "endpoint_concurrency": 8})
    code, out = cli("gateway", "show")
    assert code == 0
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    assert next(row for row in rows if row[0] == "ping_interval") == [
        "ping_interval",
        "2.5",
        "5",
        "1–60 s",
        "time between ping comments that keep a streaming panel's connection open while its seats run",
    ]
    assert [row[0] for row in rows] == list(DEFAULTS)


def test_the_set_command_has_one_option_per_setting_with_its_range_in_the_help():
    # `set` joins the gateway group when the group is looked up (cli/gateway.py): reach it through the CLI.
    cli = typer.main.get_command(cli_app)
    gateway = cli.get_command(typer.Context(cli), "gateway")  # type: ignore[attr-defined]
    command = gateway.get_command(typer.Context(gateway), "set")
    options = {p.name: p for p in command.params}
    assert list(options) == list(DEFAULTS)
    assert options["ping_interval"].opts == ["--ping-interval"]
    assert options["ping_interval"].help == (
        "time between ping comments that keep a streaming panel's connection open while its seats run "
        "[1–60 s; default 5]"
    )
    assert options["endpoint_concurrency"].help == (
        "seat calls in flight per endpoint; more wait for a free slot [1–1024; default 64]"
    )


# -- the admin API and the Settings page -----------------------------------------------------------


def error_body(message: str, param: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": "invalid_request"}}


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"ping_interval": 0}, PING_ZERO, "ping_interval"),
        ({"endpoint_concurrency": 0}, CONCURRENCY_ZERO, "endpoint_concurrency"),
        ({"seat_timeout": 30, "endpoint_concurrency": 0}, CONCURRENCY_ZERO, "endpoint_concurrency"),
        ({"epsilon": True}, "epsilon must be from 0 to 1 (got true)", "epsilon"),
        ({"max_calls": "5"}, 'max_calls must be a whole number from 0 to 20 (got "5")', "max_calls"),
    ],
)
def test_the_api_refuses_the_same_values_with_the_same_message(server, body, message, param):
    url = f"{server.url}/api/settings"
    answer = httpx2.put(url, json=body)
    assert (answer.status_code, answer.json()) == (400, error_body(message, param))
    assert httpx2.get(url).json() == DEFAULTS
    assert changes(server, "setting") == []


def test_a_change_through_the_api_round_trips_and_is_logged(server):
    url = f"{server.url}/api/settings"
    changed = {**DEFAULTS, "ping_interval": 2.5, "endpoint_concurrency": 8, "seat_timeout": 30.0}
    answer = httpx2.put(url, json={"ping_interval": 2.5, "endpoint_concurrency": 8, "seat_timeout": 30})
    assert (answer.status_code, answer.json()) == (200, changed)
    assert httpx2.get(url).json() == changed
    # null leaves a setting as it is; a change that changes nothing is not logged.
    assert httpx2.put(url, json={"ping_interval": None, "seat_timeout": 30}).json() == changed
    assert changes(server, "setting") == [("dashboard", "update", "gateway")]


def test_the_settings_form_shows_each_range_and_description(server):
    page = httpx2.get(f"{server.url}/settings").text
    assert (
        '<label>Ping interval <span class="hint">1–60 s, default 5</span><input name="ping_interval" type="number" '
        'min="1" max="60" step="any" value="5" inputmode="decimal" aria-describedby="about-ping_interval"></label>\n'
        '        <p class="hint" id="about-ping_interval">time between ping comments that keep a streaming '
        "panel&#39;s connection open while its seats run</p>"
    ) in page
    assert (
        '<label>Endpoint concurrency <span class="hint">1–1024, default 64</span><input name="endpoint_concurrency" '
        'type="number" min="1" max="1024" step="1" value="64" inputmode="numeric" '
        'aria-describedby="about-endpoint_concurrency"></label>'
    ) in page
    for name in DEFAULTS:
        assert page.count(f'<input name="{name}" type="number"') == 1
        assert f'data-error-for="{name}"' in page


def test_settings_stored_before_the_ranges_are_read_back_in_range(server: BenchServer):
    # As an older version could have stored them (it took 0 for both), with a key no version knows.
    stored = {"ping_interval": 0, "endpoint_concurrency": 0, "seat_timeout": 30, "colour": "red"}

    async def store_raw(bench: Bench) -> None:
        async with bench.state.write() as conn:
            await setting_rows.put_setting(conn, "gateway", stored)
            await record_change(conn, actor="test", subject="setting", name="gateway", action="update", after=stored)

    server.admin(store_raw)
    url = f"{server.url}/api/settings"
    assert httpx2.get(url).json() == {**DEFAULTS, "seat_timeout": 30.0}
    # The next change stores the whole, valid object.
    assert httpx2.put(url, json={"max_calls": 4}).json() == {**DEFAULTS, "seat_timeout": 30.0, "max_calls": 4}

    async def read_raw(bench: Bench) -> Any:
        async with bench.state.read() as conn:
            return await setting_rows.get_setting(conn, "gateway")

    assert server.admin(read_raw) == {**DEFAULTS, "seat_timeout": 30.0, "max_calls": 4}
