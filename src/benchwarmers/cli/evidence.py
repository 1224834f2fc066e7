"""`benchwarmers leaderboard`, `report`, `advise` and `role`: what the verdicts say."""

from __future__ import annotations

import time
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from benchwarmers.bench.bounds import DECISION, MERGER, PRIMARY, REPORT_DAYS
from benchwarmers.cli.common import console, fail, hint, piped, print_json, table, with_bench

if TYPE_CHECKING:
    from benchwarmers.bench.services import Bench


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _span(interval: list[float] | None, signed: bool = False) -> str:
    if interval is None:
        return "–"
    low, high = interval
    if signed:
        return f"{low:+.2f} … {high:+.2f}"
    return f"{low:.0%}–{high:.0%}"


def _useful(model: dict[str, Any]) -> str:
    if not model["verdicts"]:
        return "–"
    return f"{model['rate']:.0%} ({model['useful']}/{model['verdicts']})"


def _best_line(board: dict[str, Any]) -> str:
    shape = board["shape"]
    if board["primary"] is None:
        return f"best for {shape}: none yet (no verdicts on a model that can sit)"
    doubt = _doubt(board["best"]) if board["primary_by"] == "evidence" else ""
    line = f"best for {shape}: {board['primary']} ({board['primary_by']}{doubt})"
    if board["pinned"] and board["primary_by"] != "pinned":
        line += f"; pinned {board['pinned']} is not used: it is gone, disabled or retiring"
    return line


def _doubt(best: dict[str, Any] | None) -> str:
    """'; P(best) = 0.83; tied with Y, Z' for the evidence's best (bench/evidence/posterior.py)."""
    if best is None:
        return ""
    parts = [] if best["p_best"] is None else [f"P(best) = {best['p_best']:.2f}"]
    if not best["separated"]:
        parts.append("tied with " + ", ".join(best["tied"]))
    return "".join(f"; {p}" for p in parts)


def _best_cell(entry: dict[str, Any]) -> str:
    """The report's best model: `X`, or `X (P(best) = 0.62; tied with Y)` when not separated."""
    best = entry["best_detail"]
    if best is None:
        return "–"
    doubt = _doubt(best).removeprefix("; ")
    return f"{best['alias']} ({doubt})" if doubt and not best["separated"] else best["alias"]


@with_bench
async def leaderboard(
    bench: Bench,
    shape: str = typer.Option(None, "--shape", help="one shape only"),
    days: float = typer.Option(None, "--days", help="only seats from the last DAYS days (default: all)"),
    human_only: bool = typer.Option(False, "--human-only", help="count only verdicts people gave, not the suite's"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Rank models per shape: useful rate with its 95% interval, errors by class, empties, seconds, maturity."""
    from benchwarmers.bench.evidence import board as evidence

    found = await evidence.leaderboard(bench.state, shape=shape, days=days, human_only=human_only)
    boards = [b.public() for b in found]
    if as_json:
        print_json(boards)
        return
    if not boards:
        hint("no evidence yet: ask a collection, then judge the seats (benchwarmers verdict)")
        return
    columns = ["rank", "model", "useful", "95% interval", "verdicts", "seats", "errors", "empty", "median s",
               "p90 s", "maturity"]  # fmt: skip
    if piped():
        # Piped: one table, a shape on every row (as `awk` and `sort` need); what is said of each board goes
        # to stderr.
        table(None, ["shape", *columns], [(b["shape"], *row) for b in boards for row in _board_rows(b)])
        for board in boards:
            hint(f"{_title(board)}; {_best_line(board)}")
        hint(RANKS)
        return
    for board in boards:
        table(_title(board), columns, _board_rows(board))
        console.print(_best_line(board), markup=False)
        for m in board["models"]:
            if m["changed"]:
                now = m["current"]
                console.print(
                    f"{m['alias']}: standing changed {_day(m['changed']['at'])}: {m['changed']['why']}; "
                    f"now {now['useful']}/{now['verdicts']} useful, all-time {m['useful']}/{m['verdicts']}",
                    markup=False,
                )
            if m["listing_changed"]:
                console.print(
                    f"{m['alias']}: possibly changed {_day(m['listing_changed']['at'])}: "
                    f"{m['listing_changed']['what']} (acknowledge the alert to clear this)",
                    markup=False,
                )
    hint(RANKS)


def _title(board: dict[str, Any]) -> str:
    return f"{board['shape']} · {board['judged_panels']} judged of {board['panels']} panels"


def _board_rows(board: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            _rank(m["rank_range"]),
            m["alias"],
            _useful(m),
            _span(m["interval"]) if m["verdicts"] else "–",
            _verdicts(m),
            m["seats"],
            _errors(m),
            f"{m['empties']} · {m['truncated']} cut" if m["truncated"] else m["empties"],
            _seconds(m["median_seconds"]),
            _seconds(m["p90_seconds"]),
            m["maturity"],
        )
        for m in board["models"]
    ]


RANKS = (
    "rank: ordered by the 95% interval's low end, as the router picks; models whose intervals overlap share "
    "ranks (1–3: anywhere from 1st to 3rd). errors: failed seats of all seats, by class. seconds: over answered "
    "seats. Pairwise (Bradley–Terry) strengths are in --json."
)


def _day(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def _rank(found: list[int] | None) -> str:
    if found is None:
        return "–"
    best, worst = found
    return str(best) if best == worst else f"{best}–{worst}"


def _errors(model: dict[str, Any]) -> str:
    if not model["errors"]:
        return "0"
    kinds = ", ".join(f"{n} {kind}" for kind, n in model["errors_by_kind"].items())
    return f"{model['errors']} ({model['error_rate']:.0%}: {kinds})"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _verdicts(model: dict[str, Any]) -> str:
    """`12`, or `12 (suite 8)` when the suite gave some of them."""
    suite = model.get("sources", {}).get("suite", 0)
    return f"{model['verdicts']} (suite {suite})" if suite else str(model["verdicts"])


@with_bench
async def advise(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Advice per collection and shape: explorers that beat a member, failing members, thin evidence."""
    from benchwarmers.bench.evidence.advice import advice_report

    data = await advice_report(bench.state)
    if as_json:
        print_json(data)
        return
    if not data["advice"]:
        console.print(
            "no advice: no explorer beats a member, no member keeps failing, every shape has evidence", markup=False
        )
        return
    limits = data["thresholds"]
    table(
        f"advice · swaps at P ≥ {limits['advise_p']:g} with {limits['min_verdicts']} verdicts each",
        ["collection", "shape", "kind", "advice"],
        [(f"bench/{a['collection']}", a["shape"] or "–", a["kind"], a["text"]) for a in data["advice"]],
    )
    if data["auto_swap"]:
        hint(
            f"auto_swap is on for {', '.join(data['auto_swap'])}: the bench makes a swap itself at "
            f"P ≥ {data['thresholds']['swap_p']:g} with {data['thresholds']['swap_min_verdicts']} verdicts each"
        )


@with_bench
async def report(
    bench: Bench,
    days: float = typer.Option(REPORT_DAYS, "--days", help="the window, in days"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Honesty reports: explorer exposure, bench vs its best model, verdicts per key, length bias."""
    from benchwarmers.bench.evidence.reports import honesty_report

    data = await honesty_report(bench.state, days)
    if as_json:
        print_json(data)
        return
    shown = data["exposure"]
    table(
        f"explorer seats, last {days:g} days · {shown['explorer_seats']} seats, {shown['eligible_models']} eligible "
        f"models, fair share {_pct(shown['fair_share'])}",
        ["model", "endpoint", "seats", "share", "eligible", "member seats", "flag"],
        [
            (
                m["alias"],
                m["endpoint"],
                m["seats"],
                _pct(m["share"]),
                ("yes" if m["can_explore"] else "member only") if m["eligible"] else "no",
                m["member_seats"],
                "below half fair share" if m["flagged"] else "",
            )
            for m in shown["models"]
        ],
    )
    table(
        "explorer seats per endpoint",
        ["endpoint", "eligible models", "seats", "share", "fair share", "flag"],
        [
            (
                e["endpoint"],
                e["eligible_models"],
                e["seats"],
                _pct(e["share"]),
                _pct(e["fair_share"]),
                "below half fair share" if e["flagged"] else "",
            )
            for e in shown["endpoints"]
        ],
    )
    table(
        "any seat useful vs the best single model",
        [
            "shape",
            "judged panels",
            "any seat useful",
            "95% interval",
            "best model",
            "its rate",
            "95% interval",
            "verdict",
        ],
        [
            (
                b["shape"],
                b["judged_panels"],
                _pct(b["rate"]),
                _span(b["interval"]) if b["judged_panels"] else "–",
                _best_cell(b),
                _pct(b["best_rate"]),
                _span(b["best_interval"]),
                b["verdict"],
            )
            for b in data["bench_vs_best"]
        ],
    )
    keys = data["verdicts_by_key"]
    table(
        f"verdicts per key · {keys['verdicts']} verdicts",
        ["key", "verdicts", "share"],
        [(k["key"], k["verdicts"], _pct(k["share"])) for k in keys["keys"]],
    )
    table(
        "useful rate vs answer length (split at the median)",
        ["shape", "median chars", "short", "long", "difference", "z", "warning"],
        [
            (
                e["shape"],
                f"{e['median_length']:g}",
                f"{_pct(e['short']['rate'])} of {e['short']['verdicts']}",
                f"{_pct(e['long']['rate'])} of {e['long']['verdicts']}",
                "–" if e["difference"] is None else f"{e['difference']:+.0%}",
                f"{e['z']:.2f}",
                "length bias" if e["warning"] else "",
            )
            for e in data["length_bias"]
        ],
    )
    for warning in data["warnings"]:
        console.print(f"warning: {warning}", markup=False)
    if not data["warnings"]:
        console.print("no warnings", markup=False)


# -- roles ------------------------------------------------------------------------------------

roles = typer.Typer(
    help="Pinned roles: the primary model per shape, the default merger, the decision model asked first.",
    no_args_is_help=True,
)


class Role(StrEnum):
    primary = PRIMARY
    merger = MERGER
    decision = DECISION


def _shape_and_alias(role: Role, given: list[str]) -> tuple[str | None, str]:
    if len(given) == 2:
        return given[0], given[1]
    if len(given) == 1 and role is not Role.primary:
        return None, given[0]
    usage = {
        Role.primary: "SHAPE ALIAS",
        Role.merger: "[SHAPE] ALIAS (no shape: every shape)",
        Role.decision: "ALIAS",
    }
    raise fail(f"role set {role.value} takes {usage[role]}")


@roles.command("set")
@with_bench
async def role_set(
    bench: Bench,
    role: Role = typer.Argument(..., help="primary (per shape), merger (per shape or every shape) or decision"),
    given: list[str] = typer.Argument(..., metavar="[SHAPE] ALIAS", help="the shape, then the model on the roster"),
) -> None:
    """Pin a model as a role: `primary SHAPE ALIAS`, `merger [SHAPE] ALIAS`, `decision ALIAS`."""
    from benchwarmers.bench.evidence import roles as roles_admin

    shape, alias = _shape_and_alias(role, given)
    result = await roles_admin.set_role(bench.state, role.value, shape, alias)
    label = roles_admin.role_label(role.value, result["shape"])
    if not result["changed"]:
        console.print(f"{alias} is already the {label}; nothing changed", markup=False)
        return
    was = result["before"]
    console.print(f"pinned {alias} as {label}" + (f" (was {was})" if was else ""), markup=False)


@roles.command("clear")
@with_bench
async def role_clear(
    bench: Bench,
    role: Role = typer.Argument(..., help="primary, merger or decision"),
    shape: str = typer.Argument(None, help="the shape (a merger's default: every shape; decision: none)"),
) -> None:
    """Unpin a role: the evidence (or the merge rules, or the decision models' order) decides again."""
    from benchwarmers.bench.evidence import roles as roles_admin

    result = await roles_admin.clear_role(bench.state, role.value, shape)
    label = roles_admin.role_label(role.value, result["shape"])
    console.print(f"cleared the {label} (was {result['alias']}); {roles_admin.after_clear(role.value)}", markup=False)


def _shown_shape(row: dict[str, Any]) -> str:
    from benchwarmers.bench.snapshot import EVERY_SHAPE

    if row["role"] == DECISION:
        return "–"
    return "every shape" if row["shape"] == EVERY_SHAPE else row["shape"]


@roles.command("list")
@with_bench
async def role_list(bench: Bench, as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the pinned roles."""
    from benchwarmers.bench.evidence import roles as roles_admin

    pinned = await roles_admin.list_roles(bench.state)
    if as_json:
        print_json(pinned)
        return
    if not pinned:
        console.print("no roles pinned: the evidence picks the primary for every shape", markup=False)
        return
    table(None, ["role", "shape", "alias"], [(r["role"], _shown_shape(r), r["alias"]) for r in pinned])


def _read_roles_file(file: Path) -> Any:
    """A roles file's data: TOML unless it ends in .json."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise fail(f"{file} cannot be read: {exc.strerror or exc}") from None
    if file.suffix.lower() == ".json":
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise fail(f"{file} is not JSON: {exc.msg}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise fail(f"{file} is not TOML: {exc}") from None


@roles.command("import")
@with_bench
async def role_import(
    bench: Bench,
    file: Path = typer.Argument(..., help="a roles file, TOML (.toml) or JSON (.json); see examples/roles.toml"),
    replace: bool = typer.Option(False, "--replace", help="also unpin every role the file does not name"),
) -> None:
    """Pin every role a file names, in one transaction (all or nothing)."""
    from benchwarmers.bench.evidence import roles as roles_admin

    result = await roles_admin.import_roles(bench.state, _read_roles_file(file), replace=replace)
    console.print(
        f"imported: {result['created']} pinned, {result['updated']} changed, {result['unchanged']} unchanged"
        + (f", {result['cleared']} cleared" if replace else ""),
        markup=False,
    )


@roles.command("export")
@with_bench
async def role_export(
    bench: Bench,
    file: Path = typer.Argument(None, help="write here, as JSON when it ends in .json (default: TOML on stdout)"),
) -> None:
    """Write every pinned role as a roles file (`role import` reads it back)."""
    from benchwarmers.bench.evidence import roles as roles_admin

    data = await roles_admin.export_roles(bench.state)
    as_json = file is not None and file.suffix.lower() == ".json"
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n" if as_json else roles_admin.roles_toml(data)
    if file is None:
        console.file.write(text)
        return
    file.write_text(text)
    pins = len(data[PRIMARY]) + len(data[MERGER]) + (DECISION in data)
    console.print(f"exported {pins} role(s) to {file}", markup=False)
