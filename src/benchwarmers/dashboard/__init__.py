"""The dashboard's files: Jinja2 templates and static CSS/JS, shipped inside the package (no CDN,
no build step). `server/rendering.py` renders and serves them; `views.py` shapes data for the templates."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
THEMES = ("dark", "hardwood", "rainforest")
DEFAULT_THEME = "dark"


@lru_cache(maxsize=1)
def asset_version() -> str:
    """A digest of every static file: it is in each asset's URL, so assets can be cached for a year
    and a changed file is fetched at once."""
    digest = hashlib.sha256()
    for path in sorted(p for p in STATIC.rglob("*") if p.is_file()):
        digest.update(path.relative_to(STATIC).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
