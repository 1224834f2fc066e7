"""How a person names a collection, NAME or bench/NAME: plain text rules, without pydantic, so the
CLI's start-up can use them."""

from __future__ import annotations


def collection_name(given: str) -> str:
    """A collection as a person names it, NAME or bench/NAME (as `ask` and the API's model take it):
    its bare name, as stored."""
    return given.strip().removeprefix("bench/")
