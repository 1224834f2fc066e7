"""Providers' free tiers: what each gives for free (requests and tokens per window, the daily reset), what
it may do with prompts, and where that was read. The `free_tier` fact source (catalog/facts.py).

The data is `free_tiers.json` beside this module (sources and licence in free_tiers.SOURCES.md), a newer
copy fetched from its public URL when the bench is online (saved at `$BENCHWARMERS_HOME/free-tiers.json`),
and a user's own file (`BENCHWARMERS_FREE_TIERS_FILE`) whose providers replace the others' entries of the
same provider. Every file is validated strictly: a wrong one is refused whole, naming the entry, so a bad
fetch never replaces a good copy. Pure apart from reading and writing those files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from benchwarmers.catalog.modelsdev import write_atomic
from benchwarmers.catalog.pace import Limit, parse_window

if TYPE_CHECKING:  # upstream imports catalog at run time, not the other way round
    from benchwarmers.upstream.listings import FetchJson

FORMAT = 1
MAX_BYTES = 1_000_000  # a free-tier file is a few KB; anything near this is not one
# The window names the pacer reads (catalog/pace.py and issue #35's vocabulary), plus the resets.
_WINDOW = re.compile(r"(requests|tokens)-(minute|hour|day|month)")
_RESETS_DAY = re.compile(r"([01]\d|2[0-3]):([0-5]\d)(?: ([A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*))?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TAG = re.compile(r"^[a-z0-9-]+$")
_FILE_KEYS = {"format", "checked", "licence", "providers"}
_PROVIDER_KEYS = {"provider", "name", "hosts", "source", "checked", "note", "data_use", "data_use_source", "traits"}
_PROVIDER_KEYS |= {"regions", "models"}
_MODEL_KEYS = {"model", "free", "limits", "note", "data_use", "data_use_source", "traits", "source", "checked"}
_PERIOD_WORDS = {"minute": "a minute", "hour": "an hour", "day": "a day", "month": "a month"}


class FreeTierError(ValueError):
    """A free-tier file that does not follow the format; the message names the entry and the field."""


@dataclass(frozen=True)
class FreeTier:
    """What one provider's free tier gives one model, as its entry says (provider-wide fields merged in)."""

    provider: str
    provider_name: str
    model: str  # the entry's id or pattern (`*:free`)
    limits: Mapping[str, Any]  # window → amount, `resets-day` → "HH:MM" or "HH:MM Zone"
    source: str
    checked: str
    free: bool | None = None
    data_use: str | None = None
    data_use_source: str | None = None
    traits: tuple[str, ...] = ()
    regions: str | None = None
    note: str | None = None

    def rate_limits(self, today: dt.date | None = None) -> dict[str, Any]:
        """The `rate_limits` fact: windows as given, `resets-day` as the UTC time of day (a local reset
        is turned into UTC on `today`, so a refresh follows daylight saving); None entries left out."""
        found: dict[str, Any] = {}
        for name, value in self.limits.items():
            if name == "resets-day":
                utc = utc_reset(str(value), today or dt.datetime.now(dt.UTC).date())
                if utc is not None:
                    found[name] = utc
            else:
                found[name] = value
        return found

    def summary(self) -> str:
        """`free: 50 requests a day, 20 requests a minute; prompts may be used for training`."""
        windows = [(n, a) for n, a in self.limits.items() if _WINDOW.fullmatch(n)]
        # The longest window first: a day's allowance is what a free-tier user runs out of.
        order = {"month": 0, "day": 1, "hour": 2, "minute": 3}
        windows.sort(key=lambda w: (order[w[0].split("-")[1]], w[0]))
        parts = [f"{amount:,} {name.split('-')[0]} {_PERIOD_WORDS[name.split('-')[1]]}" for name, amount in windows]
        text = "free: " + (", ".join(parts) if parts else "limits not published here")
        reset = self.limits.get("resets-day")
        if reset:
            text += f" (the day resets at {reset}" + (" UTC)" if " " not in str(reset) else ")")
        if self.data_use:
            text += f"; {self.data_use}"
        return text

    def fact(self) -> dict[str, Any]:
        """The `free_tier` fact: what Discover and `model show` print, with its source and date."""
        fact: dict[str, Any] = {
            "provider": self.provider,
            "summary": self.summary(),
            "source": self.source,
            "checked": self.checked,
            "data_use": self.data_use,
            "data_use_source": self.data_use_source,
            "regions": self.regions,
            "note": self.note,
        }
        return {key: value for key, value in fact.items() if value is not None}

    def facts(self, today: dt.date | None = None) -> dict[str, Any]:
        """The facts the `free_tier` source states of the model (catalog/facts.py names)."""
        facts: dict[str, Any] = {"free_tier": self.fact()}
        limits = self.rate_limits(today)
        if limits:
            facts["rate_limits"] = limits
        if self.free is not None:
            facts["free"] = self.free
        if self.traits:
            facts["tags"] = sorted(self.traits)
        return facts


def utc_reset(value: str, today: dt.date) -> str | None:
    """ "HH:MM" as it is (UTC), or "HH:MM Zone" as the UTC time of that local time on `today`; None for an
    unknown zone (the system has no such zone data: the reset stays unknown, a moving window)."""
    match = _RESETS_DAY.fullmatch(value)
    if match is None:
        return None
    if match.group(3) is None:
        return value
    try:
        zone = ZoneInfo(match.group(3))
    except (ZoneInfoNotFoundError, ValueError):
        return None
    local = dt.datetime.combine(today, dt.time(int(match.group(1)), int(match.group(2))), tzinfo=zone)
    return local.astimezone(dt.UTC).strftime("%H:%M")


# -- the file --------------------------------------------------------------------------------------


def _fail(where: str, what: str) -> FreeTierError:
    return FreeTierError(f"free-tier file: {where}: {what}")


def _text(entry: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise _fail(where, f"`{key}` is required")
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 500:
        raise _fail(where, f"`{key}` must be a non-empty string of at most 500 characters")
    return value.strip()


def _url(entry: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = _text(entry, key, where, required=required)
    if value is not None and not value.startswith("https://"):
        raise _fail(where, f"`{key}` must be an https:// URL (the page the figure was read on)")
    return value


def _date(entry: Mapping[str, Any], where: str, default: str | None = None) -> str:
    value = entry.get("checked", default)
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise _fail(where, "`checked` must be the date the source was read, YYYY-MM-DD")
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise _fail(where, f"`checked` {value!r} is not a date") from None
    return value


def _traits(entry: Mapping[str, Any], where: str) -> tuple[str, ...] | None:
    value = entry.get("traits")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(t, str) and _TAG.match(t) for t in value):
        raise _fail(where, "`traits` must be a list of tags (lower-case letters, digits and '-')")
    return tuple(dict.fromkeys(value))


def _limits(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, '`limits` must be an object such as {"requests-day": 50, "resets-day": "00:00"}')
    checked: dict[str, Any] = {}
    for name, amount in value.items():
        if name == "resets-day":
            if not isinstance(amount, str) or not _RESETS_DAY.fullmatch(amount):
                raise _fail(where, '`resets-day` must be "HH:MM" (UTC) or "HH:MM Area/City"')
        elif not _WINDOW.fullmatch(name):
            raise _fail(where, f"{name!r} is not a window: use requests-<period> or tokens-<period>, "
                        "a period of minute, hour, day or month, or resets-day")  # fmt: skip
        elif isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= 10**12:
            raise _fail(where, f"{name} must be a whole number above 0 (got {amount!r})")
        checked[name] = amount
    return checked


def _unknown(entry: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(entry) - allowed)
    if extra:
        raise _fail(where, f"unknown field(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


@dataclass(frozen=True)
class _Provider:
    provider: str
    hosts: tuple[str, ...]
    tiers: tuple[FreeTier, ...]


def _provider(entry: Any, index: int) -> _Provider:
    where = f"providers[{index}]"
    if not isinstance(entry, Mapping):
        raise _fail(where, "each provider is an object")
    _unknown(entry, _PROVIDER_KEYS, where)
    provider = _text(entry, "provider", where, required=True) or ""
    where = f"provider {provider!r}"
    name = _text(entry, "name", where) or provider
    hosts = entry.get("hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h and " " not in h for h in hosts):
        raise _fail(where, "`hosts` must be a list of host names (host or host:port)")
    source = _url(entry, "source", where, required=True) or ""
    checked = _date(entry, where)
    models = entry.get("models")
    if not isinstance(models, list) or not models:
        raise _fail(where, '`models` must list at least one model entry ({"model": "*"} for all of them)')
    tiers = []
    for position, model in enumerate(models):
        at = f"{where} models[{position}]"
        if not isinstance(model, Mapping):
            raise _fail(at, "each model entry is an object")
        _unknown(model, _MODEL_KEYS, at)
        pattern = _text(model, "model", at, required=True) or ""
        free = model.get("free")
        if free is not None and not isinstance(free, bool):
            raise _fail(at, "`free` must be true or false")
        traits = _traits(model, at)
        tiers.append(
            FreeTier(
                provider=provider,
                provider_name=name,
                model=pattern,
                limits=_limits(model.get("limits", {}), at),
                source=_url(model, "source", at) or source,
                checked=_date(model, at, default=checked),
                free=free,
                data_use=_text(model, "data_use", at) or _text(entry, "data_use", where),
                data_use_source=_url(model, "data_use_source", at) or _url(entry, "data_use_source", where),
                traits=traits if traits is not None else (_traits(entry, where) or ()),
                regions=_text(entry, "regions", where),
                note=_text(model, "note", at) or _text(entry, "note", where),
            )
        )
    return _Provider(provider, tuple(h.lower() for h in hosts), tuple(tiers))


@dataclass(frozen=True)
class FreeTiers:
    """The free tiers of every provider a file lists, looked up by provider (or host) and model id."""

    providers: tuple[_Provider, ...]
    checked: str

    def lookup(self, model_id: str, provider: str | None = None, host: str | None = None) -> FreeTier | None:
        """The free tier of `model_id` at the provider whose `hosts` has `host` (host or host:port), else at
        `provider` (a models.dev id); an exact id first, then the first pattern that matches; else None."""
        entry = self._provider(provider, host)
        if entry is None:
            return None
        wanted = model_id.lower()
        exact = next((t for t in entry.tiers if t.model.lower() == wanted), None)
        return exact or next((t for t in entry.tiers if fnmatch.fnmatchcase(wanted, t.model.lower())), None)

    def _provider(self, provider: str | None, host: str | None) -> _Provider | None:
        if host:
            host = host.lower()
            bare = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
            found = next((p for p in self.providers if host in p.hosts or bare in p.hosts), None)
            if found is not None:
                return found
        return next((p for p in self.providers if provider and p.provider == provider), None)

    def tiers(self) -> list[FreeTier]:
        return [t for p in self.providers for t in p.tiers]

    def over(self, base: FreeTiers) -> FreeTiers:
        """This file's providers, then `base`'s others: a user's file replaces a provider's whole entry."""
        mine = {p.provider for p in self.providers}
        kept = tuple(p for p in base.providers if p.provider not in mine)
        return FreeTiers(self.providers + kept, max(self.checked, base.checked))


def parse(data: Any) -> FreeTiers:
    """A free-tier file's JSON, validated; FreeTierError names what is wrong."""
    if not isinstance(data, Mapping):
        raise _fail("the file", "must be a JSON object with `format`, `checked` and `providers`")
    _unknown(data, _FILE_KEYS, "the file")
    if data.get("format") != FORMAT:
        raise _fail("the file", f"`format` must be {FORMAT} (got {data.get('format')!r})")
    checked = _date(data, "the file")
    providers = data.get("providers")
    if not isinstance(providers, Sequence) or isinstance(providers, str):
        raise _fail("the file", "`providers` must be a list")
    parsed = [_provider(entry, i) for i, entry in enumerate(providers)]
    names = [p.provider for p in parsed]
    if len(set(names)) != len(names):
        raise _fail("the file", f"a provider is listed twice: {sorted({n for n in names if names.count(n) > 1})}")
    return FreeTiers(tuple(parsed), checked)


def read(path: Path) -> FreeTiers:
    """A free-tier file read and validated (OSError when it cannot be read, FreeTierError when it is wrong)."""
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise _fail(str(path), f"is {len(data):,} bytes; a free-tier file is at most {MAX_BYTES:,}")
    try:
        return parse(orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        raise _fail(str(path), f"is not JSON ({exc})") from None


@functools.lru_cache(maxsize=8)
def _read_cached(path: str | None, version: tuple[int, int] | None) -> FreeTiers:
    # `version` (mtime, size) is only a cache key: a refreshed or edited file is read again.
    del version
    if path is None:
        return parse(orjson.loads(files("benchwarmers.catalog").joinpath("free_tiers.json").read_bytes()))
    return read(Path(path))


def _stat(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def shipped() -> FreeTiers:
    """The file shipped with the package."""
    return _read_cached(None, None)


def load(cache_path: Path | None = None, user_path: Path | None = None) -> FreeTiers:
    """The free tiers in use: the fetched copy at `cache_path` when it reads (else the shipped file), with the
    user's file at `user_path` over it. A user's file that cannot be read or is wrong raises (the user
    named it: silence would hide their mistake); a cached copy that is wrong falls back to the shipped one."""
    base = shipped()
    if cache_path is not None:
        with contextlib.suppress(OSError, FreeTierError):
            base = _read_cached(str(cache_path), _stat(cache_path))
    if user_path is None:
        return base
    try:
        mine = _read_cached(str(user_path), _stat(user_path))
    except OSError as exc:
        named = f"free-tier file {user_path} (BENCHWARMERS_FREE_TIERS_FILE)"
        raise FreeTierError(f"{named} cannot be read: {exc}") from None
    return mine.over(base)


async def fetch_live(fetch_json: FetchJson, url: str, cache_path: Path) -> bool:
    """Fetch the free-tier file from `url`, validate it and save it atomically at `cache_path`. True when
    saved; False on any failure (network, not a valid file, disk), keeping the old copy."""
    import asyncio  # loaded by whoever awaits this

    try:
        payload = await fetch_json("GET", url, None)
        parse(payload)
        await asyncio.to_thread(write_atomic, cache_path, orjson.dumps(payload))
    except Exception:
        return False
    return True


def under_headers(free_tier: Any, headers: Any) -> dict[str, Any]:
    """The windows a model's provider announced: what real calls' headers said, and the free-tier file's for
    the windows (and resets) the headers did not name. Headers win window by window, as they are this account's
    own figures; the result goes to pace.known_limits with the user's overrides over it."""
    merged: dict[str, Any] = {}
    for source, windows in (("free_tier", free_tier), ("headers", headers)):
        if not isinstance(windows, Mapping):
            continue
        from_headers: set[str] = set()
        for name, value in windows.items():
            parsed = parse_window(str(name))
            key = Limit(parsed[0], parsed[1], 1).window if parsed else str(name).lower()
            if source == "headers" and key in from_headers and isinstance(value, int) and isinstance(merged[key], int):
                value = min(value, merged[key])  # two header windows of one kind and period: the tighter
            merged[key] = value
            if source == "headers":
                from_headers.add(key)
    return merged
