"""`benchwarmers ask`: run a panel through a running bench, like any other caller."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import orjson
import typer

from benchwarmers.cli.common import console, fail, hint, load_settings, print_json, progress_bar, table

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}  # fmt: skip
IMAGE_CAP = 20 * 1024 * 1024  # a bigger file is refused before it is read


def read_prompt(prompt: str | None) -> str:
    """The prompt as given, or stdin's when it is left out or `-` (`git diff | benchwarmers ask bench/x`)."""
    if prompt is not None and prompt != "-":
        return prompt
    if sys.stdin.isatty():
        raise fail("give the prompt as an argument, or pipe it in: echo 'prompt' | benchwarmers ask bench/NAME")
    text = sys.stdin.read()
    if not text.strip():
        raise fail("the prompt read from stdin is empty")
    return text


def image_url(given: str) -> str:
    """An image as the request carries it: a URL (http, https or data:) as is, a file as a data URL."""
    if given.startswith(("http://", "https://", "data:")):
        return given
    path = Path(given).expanduser()
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise fail(f"--image {given}: give a URL or a .png, .jpg, .gif or .webp file")
    try:
        size = path.stat().st_size
        if size > IMAGE_CAP:
            raise fail(f"--image {given}: {size:,} bytes is over the {IMAGE_CAP // (1024 * 1024)} MB this sends")
        data = path.read_bytes()
    except OSError as exc:
        raise fail(f"--image {given}: {exc.strerror or exc}") from None
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def ask(
    model: str = typer.Argument(..., help="a collection, e.g. bench/reviewers"),
    prompt: str = typer.Argument(None, help="one self-contained prompt; left out or `-`: read from stdin"),
    image: list[str] = typer.Option(None, "--image", help="an image FILE or URL to send with the prompt (repeat)"),
    with_: list[str] = typer.Option(None, "--with", help="also seat this model alias (repeat)"),
    merged: bool = typer.Option(False, "--merged", help="ask for one merged answer"),
    shape: str = typer.Option(None, "--shape", help="task shape, e.g. review"),
    as_json: bool = typer.Option(False, "--json", help="print the raw reply"),
) -> None:
    """Ask a collection; show every seat's answer and the call ids to judge."""
    import httpx2

    settings = load_settings()
    if not model.startswith("bench/"):
        model = f"bench/{model}"
    options: dict[str, Any] = {}
    if with_:
        options["with"] = with_
    if merged:
        options["reply"] = "merged"
    if shape:
        options["shape"] = shape
    text = read_prompt(prompt)
    content: Any = text
    if image:
        content = [{"type": "text", "text": text}, *({"type": "image_url", "image_url": {"url": image_url(i)}}
                                                     for i in image)]  # fmt: skip
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": content}]}
    if options:
        body["bench"] = options
    headers = {"content-type": "application/json"}
    if settings.key:
        headers["authorization"] = f"Bearer {settings.key}"
    url = settings.url.rstrip("/") + "/v1/chat/completions"
    try:
        with progress_bar(bar=False, label=f"asking {model}") as progress:
            progress.add_task("ask", total=None)
            with httpx2.Client(timeout=httpx2.Timeout(900, connect=5), trust_env=False) as client:
                response = client.post(url, content=orjson.dumps(body), headers=headers)
    except httpx2.ConnectError:
        raise fail(
            f"no bench is answering at {settings.url}; start one with `benchwarmers serve` or set BENCHWARMERS_URL"
        ) from None
    except httpx2.TimeoutException:
        raise fail(f"the bench at {settings.url} did not answer in time") from None
    try:
        reply = response.json()
    except ValueError:
        raise fail(f"{url} answered {response.status_code} with a body that is not JSON") from None
    if response.status_code != 200:
        error = reply.get("error") if isinstance(reply, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if response.status_code == 401:
            raise fail(_key_refused(message, given=bool(settings.key)))
        raise fail(f"{response.status_code}: {message or response.text[:300]}")
    if as_json:
        print_json(reply)
        return
    show_reply(reply)


def _key_refused(message: str | None, *, given: bool) -> str:
    """A 401 as a CLI user can act on: the server's message speaks of headers, the CLI sends the key
    from BENCHWARMERS_KEY."""
    if not given:
        return (
            "this bench requires a gateway key: set BENCHWARMERS_KEY to yours "
            "(an admin makes one with `benchwarmers key create NAME`)"
        )
    return f"the bench refused BENCHWARMERS_KEY: {message or 'not a valid gateway key'}"


def cut_line(truncated_at: int) -> str:
    return f"(answer cut at {truncated_at:,} bytes by the bench's answer cap: the model wrote more)"


def show_reply(reply: dict[str, Any]) -> None:
    from rich.markdown import Markdown

    bench = reply["bench"]
    console.print(
        f"{bench['collection']} · panel {bench['panel']} · shape {bench['shape']} ({bench['shape_by']})",
        markup=False,
    )
    if bench.get("merger"):
        console.print(Markdown(reply["choices"][0]["message"]["content"]))
    for seat in bench["seats"]:
        console.rule(f"{seat['seat']} · {seat['alias']} · {seat['status']} · {seat['seconds']:.1f}s")
        if seat["status"] == "ok":
            console.print(Markdown(seat["answer"]))
            for call in seat.get("tool_calls") or ():
                function = call.get("function") or {}
                console.print(f"→ tool call {function.get('name')}({function.get('arguments')})", markup=False)
        elif seat["status"] in ("paced", "cooling"):
            console.print(f"not called: {seat['error']}", markup=False)
        else:
            console.print(seat["error"] or "(empty answer)", markup=False)
        if seat.get("truncated_at") is not None:  # ok or empty (a reply cut before its answer began)
            console.print(cut_line(seat["truncated_at"]), markup=False)
    for skip in bench.get("skipped", []):
        console.print(f"skipped {skip['seat']} {skip['alias']}: {skip['why']}", markup=False)
    table(
        "call ids",
        ["call", "alias", "status"],
        [(s["call"], s["alias"], s["status"]) for s in bench["seats"]],
    )
    hint("judge each: benchwarmers verdict CALL --useful|--not-useful [--note ...]")
