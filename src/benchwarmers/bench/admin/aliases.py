"""Renaming: the rule a new alias follows, and carrying renamed aliases everywhere they are stored.
`model alias` (bench/admin/models.py) and `endpoint rename` (bench/admin/endpoints.py) use it; each
is one transaction, logged as one change.

An alias is the model's name everywhere the user and the evidence see it, so a rename carries every
stored mention along (see `store/aliases.py`): collections, roles, decision models, the seats the
leaderboard is read from, alerts. The model keeps its endpoint and model id, so a refresh still
finds it by id; only a model the listing newly adds is named ENDPOINT/ID again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from benchwarmers.errors import Conflict, InvalidRequest
from benchwarmers.store import aliases as alias_rows

MAX_ALIAS = 300  # the column's width


# A listing id that is a model file's path (llama.cpp's server lists the path it loaded).
_PATH_ID = re.compile(r"^(?:/|~|\.{1,2}/|[A-Za-z]:[\\/])|\\")
_WEIGHTS = re.compile(r"\.(?:gguf|ggml|bin|safetensors|llamafile)$", re.IGNORECASE)


def listed_alias(endpoint: str, model_id: str) -> str:
    """The alias a listed model is given: ENDPOINT/ID, readable when the id is a file path
    (`/root/.cache/x/SmolLM2-135M-Instruct.Q4_1.gguf` → `ENDPOINT/smollm2-135m-instruct.q4_1`: the
    file's stem, lowercased). The model keeps its real id for calls; the alias only names it."""
    name = model_id
    if _PATH_ID.search(model_id) or _WEIGHTS.search(model_id):
        name = _WEIGHTS.sub("", re.split(r"[\\/]", model_id.rstrip("/\\"))[-1]).lower()
    # What check_alias refuses cannot come from a listing either: no spaces, no empty path parts.
    name = "/".join(part for part in re.sub(r"\s+", "-", name.strip()).split("/") if part)
    return f"{endpoint}/{name or 'model'}"


def check_alias(new: str, endpoint: str, endpoint_names: Iterable[str]) -> None:
    """Refuse an alias the user gives a model of `endpoint` that is malformed, or that starts with
    another endpoint's prefix (it would read as that endpoint's model, and could take the alias that
    endpoint's listing gives one of its own)."""
    if not new or len(new) > MAX_ALIAS:
        raise InvalidRequest(f"an alias has 1 to {MAX_ALIAS} characters (got {len(new)})", param="alias")
    if not new.isprintable() or any(c.isspace() for c in new):
        raise InvalidRequest(f"alias {new!r} has a space or a control character; use none", param="alias")
    if new.startswith("/") or new.endswith("/") or "//" in new:
        raise InvalidRequest(
            f"alias {new!r} is not valid: it may not start or end with '/' or hold '//'", param="alias"
        )
    head, slash, _ = new.partition("/")
    if slash and head != endpoint and head in set(endpoint_names):
        raise InvalidRequest(
            f"alias {new!r} starts with {head}/, the prefix of endpoint {head}, and the model is on {endpoint}; "
            f"use {endpoint}/... or a name whose prefix is no endpoint's",
            param="alias",
        )


async def apply_renames(conn: AsyncConnection, renames: dict[str, str]) -> dict[str, Any]:
    """Rename every alias in `renames` (old → new) wherever it is stored, unless a new one is taken."""
    taken = await alias_rows.taken_aliases(conn, list(renames.values()))
    if taken:
        shown = ", ".join(taken[:5]) + (f" and {len(taken) - 5} more" if len(taken) > 5 else "")
        raise Conflict(
            f"{shown} {'is' if len(taken) == 1 else 'are'} already on the roster; give "
            f"{'that model' if len(taken) == 1 else 'those models'} another alias first "
            "(benchwarmers model alias) or pick another name",
            param="alias",
            code="alias_exists",
        )
    return await alias_rows.rename_aliases(conn, renames)


async def refuse_prefix_taken(conn: AsyncConnection, name: str, endpoint_id: int | None = None) -> None:
    """An endpoint named `name` would have another endpoint's models under its prefix: refused."""
    held = await alias_rows.under_prefix(conn, name, endpoint_id)
    if held:
        raise Conflict(
            f"{', '.join(held[:5])} {'starts' if len(held) == 1 else 'start'} with {name}/ but "
            f"{'is' if len(held) == 1 else 'are'} on another endpoint; give {'it' if len(held) == 1 else 'them'} "
            "another alias first (benchwarmers model alias) or pick another endpoint name",
            param="name",
            code="alias_prefix_taken",
        )
