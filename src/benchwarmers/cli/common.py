"""What every command shares: settings, an open bench, one-line errors, JSON or table output."""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import orjson
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from benchwarmers.bench.services import Bench
from benchwarmers.errors import BenchError
from benchwarmers.settings import Settings

T = TypeVar("T")
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1) -> typer.Exit:
    err_console.print(f"error: {message}", markup=False)
    return typer.Exit(code)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        raise fail(f"settings: {first.get('msg')}") from None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; bench errors become one line on stderr and exit code 1."""
    try:
        return asyncio.run(coro)
    except BenchError as exc:
        raise fail(exc.message) from None
    except OSError as exc:
        raise fail(f"{type(exc).__name__}: {exc}") from None


def with_bench(func: Callable[..., Awaitable[T]]) -> Callable[..., T]:
    """Decorate `async def cmd(bench, ...)`: opens (and migrates) the bench, closes it after."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        async def main() -> T:
            async with Bench(load_settings(), actor="cli") as bench:
                return await func(bench, *args, **kwargs)

        return run(main())

    # Typer reads the signature: hide the `bench` parameter the decorator supplies.
    # (typeshed does not declare `__signature__` on callables, though inspect reads it.)
    signature = inspect.signature(func)
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    return wrapper


def progress_bar(*, bar: bool = True, label: str = "{task.description}") -> Progress:
    """A progress display on stderr for long work; silent when stderr is not a terminal."""
    columns = [SpinnerColumn(), TextColumn(label), *([BarColumn()] if bar else []), TimeElapsedColumn()]
    return Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal)


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Cells are plain text: `xs[i]` or `[purged]` in a claim or a message is shown, not read as markup."""
    out = Table(title=Text(title) if title else None, show_lines=False, header_style="bold")
    for column in columns:
        out.add_column(column, overflow="fold")
    for row in rows:
        # Cells are text, never markup: an error's "[redacted …]" must not vanish as a style tag.
        out.add_row(*(Text("" if v is None else str(v)) for v in row))
    console.print(out)
