"""Names a person types (models, collections, shapes, endpoints, keys): the close matches offered for
a typo, worded one way in every refusal of the CLI, the API and the dashboard."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from benchwarmers.nouns.naming import collection_name as collection_name  # where it is defined, pydantic-free
from benchwarmers.store.records import CollectionFields


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    choices = list(choices)
    found = difflib.get_close_matches(word, choices, n=n, cutoff=0.5)
    # Also offer choices that merely contain the word (a model id without its endpoint prefix).
    found += [c for c in choices if word and word.lower() in c.lower() and c not in found]
    return found[:n]


def suggest(word: str, choices: Iterable[str], prefix: str = "") -> str:
    """` Did you mean a, b?` for a refusal's message, or "" when nothing is close. Collections are
    matched on their bare names and shown with `prefix="bench/"` (the shared prefix would make every
    name look close)."""
    found = close_matches(word.removeprefix(prefix) if prefix else word, choices)
    return f" Did you mean {', '.join(prefix + name for name in found)}?" if found else ""


def unknown_shape(shape: str, shapes: Iterable[str], what: str = "shape") -> str:
    """The refusal of a shape that is not configured: the close ones, then every one."""
    shapes = list(shapes)
    return f"{what} {shape!r} is not known.{suggest(shape, shapes)} Shapes are: {', '.join(shapes)}"


def catalogue_line(collection: CollectionFields) -> str:
    tags = f" [{', '.join(collection['tags'])}]" if collection["tags"] else ""
    description = collection["description"] or "(no description)"
    return f"bench/{collection['name']}: {description}{tags}"


def catalogue(collections: Iterable[CollectionFields]) -> str:
    """Every collection's name, description and tags, for refusals that must teach a caller to choose."""
    lines = [catalogue_line(c) for c in collections]
    if not lines:
        return "No collections exist yet: create one with `benchwarmers collection add`."
    return "Collections: " + "; ".join(lines)
