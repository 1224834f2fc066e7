"""Every environment variable Benchwarmers reads, in one typed table.

Nothing reads the environment at import time: `Settings()` is built by the CLI or the app
factory and passed down.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

DEFAULT_BIND = "127.0.0.1:8123"
# The free-tier file in this repository (catalog/free_tiers.json), fetched with the catalog refresh.
FREE_TIERS_URL = (
    "https://raw.githubusercontent.com/benchwarmers/benchwarmers/main/src/benchwarmers/catalog/free_tiers.json"
)


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """The environment, typed. Field names are ours; aliases are the contract's variable names."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", populate_by_name=True)

    home: Path = Field(default=Path("~/.benchwarmers"), validation_alias=_env("BENCHWARMERS_HOME"))
    database_url: str | None = Field(default=None, validation_alias=_env("BENCHWARMERS_DATABASE_URL"))
    redis_url: str | None = Field(default=None, validation_alias=_env("BENCHWARMERS_REDIS_URL"))
    bind: str = Field(default=DEFAULT_BIND, validation_alias=_env("BENCH_BIND"))
    admin_token: str | None = Field(default=None, validation_alias=_env("BENCHWARMERS_ADMIN_TOKEN"))
    require_keys: bool = Field(default=False, validation_alias=_env("BENCHWARMERS_REQUIRE_KEYS"))
    public_url: str | None = Field(default=None, validation_alias=_env("BENCHWARMERS_PUBLIC_URL"))
    allowed_origins: str = Field(default="", validation_alias=_env("BENCH_ALLOWED_ORIGINS"))
    trusted_proxies: str = Field(default="", validation_alias=_env("BENCHWARMERS_TRUSTED_PROXIES"))
    client: str = Field(default="builtin", validation_alias=_env("BENCH_CLIENT"))
    url: str = Field(default="http://127.0.0.1:8123", validation_alias=_env("BENCHWARMERS_URL"))
    key: str | None = Field(default=None, validation_alias=_env("BENCHWARMERS_KEY"))
    key_env_allow: str = Field(default="", validation_alias=_env("BENCHWARMERS_KEY_ENV_ALLOW"))
    # Free space (MB) in the data folder under which the server raises a low-disk alert; 0: never.
    disk_alert_mb: int = Field(default=500, ge=0, validation_alias=_env("BENCHWARMERS_DISK_ALERT_MB"))
    # Seconds between the server's looks for new alerts to send to the notification targets (bench/notify/).
    notify_every: float = Field(default=10.0, gt=0, le=3600, validation_alias=_env("BENCHWARMERS_NOTIFY_EVERY"))
    # Request bodies held in memory at once, per process (`serve --workers N`: N × this in all). A body
    # that would go beyond it waits up to body_memory_wait seconds, then gets 503 with Retry-After. The
    # floor is the chat route's 20 MB cap, so one body of any size the bench takes always fits.
    body_memory_budget: int = Field(
        default=256 * 1024 * 1024, ge=20_000_000, validation_alias=_env("BENCHWARMERS_BODY_MEMORY_BUDGET")
    )
    body_memory_wait: float = Field(default=5.0, ge=0, le=60, validation_alias=_env("BENCHWARMERS_BODY_MEMORY_WAIT"))
    # A request body must have arrived within this many seconds of its headers (time the bench itself
    # was not reading it, such as waiting for body memory, not counted), else 408 and the connection closes.
    body_deadline: float = Field(default=60.0, gt=0, le=3600, validation_alias=_env("BENCHWARMERS_BODY_DEADLINE"))
    # prometheus_client's own variable: `serve --workers N` sets it; one process counts in memory.
    metrics_dir: Path | None = Field(default=None, validation_alias=_env("PROMETHEUS_MULTIPROC_DIR"))
    # OpenTelemetry's own variables: either one turns traces on (the SDK reads the rest of OTEL_*).
    otlp_endpoint: str | None = Field(
        default=None, validation_alias=_env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    # Providers' free tiers (catalog/free_tiers.py): a file of your own whose providers replace the shipped
    # ones', and where the catalog refresh fetches the newest shipped file from (empty: never fetched).
    free_tiers_file: Path | None = Field(default=None, validation_alias=_env("BENCHWARMERS_FREE_TIERS_FILE"))
    free_tiers_url: str = Field(default=FREE_TIERS_URL, validation_alias=_env("BENCHWARMERS_FREE_TIERS_URL"))

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Code passes field names (Settings(home=...)); the environment counts only by the contract's
        # names. Without this, HOME would be the data folder and DATABASE_URL the database.
        return init_settings, _ContractEnv(settings_cls)

    @field_validator("home", mode="after")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator(
        "admin_token",
        "database_url",
        "redis_url",
        "public_url",
        "key",
        "metrics_dir",
        "otlp_endpoint",
        "free_tiers_file",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("client")
    @classmethod
    def _known_client(cls, value: str) -> str:
        if value not in ("builtin", "llm"):
            raise ValueError("BENCH_CLIENT must be 'builtin' or 'llm'")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, value: str) -> str:
        for entry in (e.strip() for e in value.split(",")):
            try:
                if entry:
                    ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"BENCHWARMERS_TRUSTED_PROXIES: {entry!r} is not an IP address or network "
                    "(give your reverse proxy's address, e.g. 127.0.0.1 or 172.17.0.0/16)"
                ) from None
        return value

    # -- derived values -------------------------------------------------------------------

    def ensure_home(self) -> Path:
        """Create the data folder on first use, readable by its owner only."""
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.home, 0o700)
        return self.home

    @property
    def db_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.home / 'bench.db'}"

    @property
    def origins(self) -> frozenset[str]:
        """Origins answered with CORS: BENCH_ALLOWED_ORIGINS plus the public URL's origin."""
        found = {o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip()}
        if self.public_url:
            found.add(origin_of(self.public_url))
        return frozenset(found)

    @property
    def trusted_proxy_list(self) -> tuple[str, ...]:
        """The peers whose X-Forwarded-For is believed; none unless BENCHWARMERS_TRUSTED_PROXIES says."""
        return tuple(e.strip() for e in self.trusted_proxies.split(",") if e.strip())

    @property
    def key_env_names(self) -> frozenset[str]:
        """Variables an endpoint may name as its key beyond the built-in rule (BENCHWARMERS_KEY_ENV_ALLOW)."""
        return frozenset(name.strip() for name in self.key_env_allow.split(",") if name.strip())

    @property
    def keys_required(self) -> bool:
        return self.require_keys or self.admin_token is not None

    def host_port(self, bind: str | None = None) -> tuple[str, int]:
        return parse_bind(bind or self.bind)


class _ContractEnv(EnvSettingsSource):
    """The environment read by each field's alias only, never by its bare field name."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        self.config = {**self.config, "populate_by_name": False, "validate_by_name": False}


def origin_of(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".rstrip("/")


def parse_bind(bind: str) -> tuple[str, int]:
    """`host[:port]` → (host, port); IPv6 hosts may be bracketed."""
    bind = bind.strip()
    if bind.startswith("["):
        host, _, rest = bind[1:].partition("]")
        port = rest.lstrip(":") or "8123"
    elif bind.count(":") == 1:
        host, port = bind.split(":")
    else:
        host, port = bind, "8123"
    if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValueError(f"bind address {bind!r} is not host[:port] with a port from 1 to 65535")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
