"""What every command shares: settings, an open bench, one-line errors, JSON or table output.

Every command module imports this one, and `--help` imports every command module: what only a
command's run needs (the bench and its store, settings, progress bars) is imported when it runs."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchwarmers.errors import BenchError

if TYPE_CHECKING:
    from rich.progress import Progress

    from benchwarmers.settings import Settings

T = TypeVar("T")


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit 1 here; the root command handles a closed pipe for every writer (cli/app.py).
        self.quiet = True
        raise BrokenPipeError


console = _Stdout(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1) -> typer.Exit:
    err_console.print(f"error: {message}", markup=False)
    return typer.Exit(code)


def load_settings() -> Settings:
    from pydantic import ValidationError

    from benchwarmers.settings import Settings

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        raise fail(f"settings: {first.get('msg')}") from None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; bench errors become one line on stderr and exit code 1."""
    import asyncio

    try:
        return asyncio.run(coro)
    except BenchError as exc:
        raise fail(exc.message) from None
    except BrokenPipeError:
        raise  # stdout's reader has gone (`| head`): not an error; the root command ends quietly (cli/app.py)
    except OSError as exc:
        raise fail(f"{type(exc).__name__}: {exc}") from None


def with_bench(func: Callable[..., Awaitable[T]]) -> Callable[..., T]:
    """Decorate `async def cmd(bench, ...)`: opens (and migrates) the bench, closes it after."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        from benchwarmers.bench.services import Bench

        async def main() -> T:
            async with Bench(load_settings(), actor="cli") as bench:
                return await func(bench, *args, **kwargs)

        return run(main())

    # Typer reads the signature: hide the `bench` parameter the decorator supplies.
    # (typeshed does not declare `__signature__` on callables, though inspect reads it.)
    signature = inspect.signature(func)
    first, *rest = signature.parameters.values()
    wrapper.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    # Typer resolves the annotations too, and `Bench` is imported for mypy only (it loads the store).
    wrapper.__annotations__ = {k: v for k, v in func.__annotations__.items() if k != first.name}
    return wrapper


def progress_bar(*, bar: bool = True, label: str = "{task.description}") -> Progress:
    """A progress display on stderr for long work; silent when stderr is not a terminal."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn(label), *([BarColumn()] if bar else []), TimeElapsedColumn()]
    return Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal)


def piped() -> bool:
    """Whether stdout is a pipe or a file (data only, tab-separated), not a person's terminal."""
    return not console.is_terminal


def hint(message: str) -> None:
    """A next step for a person: on stdout at a terminal, on stderr when stdout is piped (data only there)."""
    (console if console.is_terminal else err_console).print(message, markup=False)


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


class Grouped(int):
    """A number shown as 128,000 to a person (a terminal's table, a message) and as 128000 in a piped
    table, so that `awk '$2>50000'` and `sort -n` read it."""

    def __format__(self, spec: str) -> str:
        return f"{int(self):,}" if not spec else int(self).__format__(spec)

    def __str__(self) -> str:
        return f"{self}"


def _cell(value: Any, terminal: bool = True) -> str:
    if isinstance(value, Grouped):
        return str(value) if terminal else str(int(value))
    return "" if value is None else str(value)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A table on a terminal; piped, one tab-separated line per row under a header line (as `gh` does),
    never wrapped, so `| grep`, `| cut -f2` and `| sort` see whole values. The title then goes to stderr.

    Cells are plain text: `xs[i]` or `[purged]` in a claim or a message is shown, not read as markup."""
    if piped():
        if title:
            err_console.print(title, markup=False)
        lines = [columns, *rows]
        sys.stdout.write("".join("\t".join(_flat(_cell(v, terminal=False)) for v in line) + "\n" for line in lines))
        sys.stdout.flush()
        return
    out = Table(title=Text(title) if title else None, show_lines=False, header_style="bold")
    for column in columns:
        out.add_column(column, overflow="fold")
    for row in rows:
        # Cells are text, never markup: an error's "[redacted …]" must not vanish as a style tag.
        out.add_row(*(Text(_cell(v)) for v in row))
    console.print(out)


def _flat(text: str) -> str:
    """One cell on one line: tabs and line breaks become spaces."""
    return " ".join(text.replace("\t", " ").splitlines())


RPM = typer.Option(None, "--rpm", help="requests a minute (0 removes your limit)")
TPM = typer.Option(None, "--tpm", help="tokens a minute (0 removes your limit)")
RPD = typer.Option(None, "--rpd", help="requests a day (0 removes your limit)")
LIMIT = typer.Option(
    None,
    "--limit",
    help="any window as WINDOW=N, e.g. requests-second=5 or tokens-day=1000000, and when the daily or monthly "
    "ones reset: resets-day=00:00 (UTC) or resets-month=1 (repeatable)",
)
RESETS = ("resets-day", "resets-month")


def rate_windows(
    rpm: int | None, tpm: int | None, rpd: int | None, limit: Sequence[str] | None
) -> dict[str, int | str]:
    """`--rpm/--tpm/--rpd/--limit` as the windows the bench stores ({} when none was given)."""
    windows: dict[str, int | str] = {}
    for given in limit or ():
        name, sep, amount = given.partition("=")
        if sep and name.strip() in RESETS:
            windows[name.strip()] = amount.strip()  # checked by the bench: HH:MM or a day of the month
            continue
        if not sep or not amount.strip().isdigit():
            raise fail(f"--limit takes WINDOW=N, e.g. requests-minute=20 (got {given!r})")
        windows[name.strip()] = int(amount)
    for window, value in (("requests-minute", rpm), ("tokens-minute", tpm), ("requests-day", rpd)):
        if value is not None:
            windows[window] = value
    return windows


def describe_limits(limits: dict[str, int | str]) -> str:
    return ", ".join(f"{w} {n:,}" if isinstance(n, int) else f"{w} {n}" for w, n in limits.items()) or "none"
