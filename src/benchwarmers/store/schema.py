"""The database schema (SQLAlchemy Core). Alembic migrations under `migrations/` create it.

Times are epoch seconds (float) so SQLite and PostgreSQL store and compare them the same way.
JSON columns hold lists and small objects; nothing here is SQLite-only.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

endpoints = Table(
    "endpoints",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("base_url", String(500), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("api_key_env", String(128)),
    Column("api_key_enc", LargeBinary),  # Fernet token; never the key in clear
    Column("api_key_last4", String(4)),
    Column("free_tier", Boolean, nullable=False, default=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("created_at", Float, nullable=False),
    Column("refreshed_at", Float),
    Column("refresh_error", Text),
    # The user's limits for the endpoint as a whole, e.g. {"requests-minute": 20} (bench/pacing.py).
    Column("rate_limits", JSON),
)

models = Table(
    "models",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("alias", String(300), nullable=False, unique=True),
    Column("endpoint_id", Integer, ForeignKey("endpoints.id", ondelete="CASCADE"), nullable=False),
    Column("model_id", String(256), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("gone", Boolean, nullable=False, default=False),
    Column("first_seen", Float, nullable=False),
    Column("last_seen", Float),
    # runtime state learned from real calls
    Column("cooldown_until", Float),
    Column("rate_limited_streak", Integer, nullable=False, default=0),
    Column("failure_streak", Integer, nullable=False, default=0),
    Column("last_error", Text),
    # retired after `failing_after` failed seats in a row: out of its seats until a probe answers
    Column("retired_at", Float),
    Column("next_probe_at", Float),
    Column("probes", Integer, nullable=False, default=0, server_default=text("0")),  # failed probes since
)

# One row per (model, fact, source): the precedence rule picks the effective value.
model_facts = Table(
    "model_facts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("model_pk", Integer, ForeignKey("models.id", ondelete="CASCADE"), nullable=False),
    Column("fact", String(32), nullable=False),
    Column("source", String(32), nullable=False),
    Column("value", JSON),
    Column("learned_at", Float, nullable=False),
    UniqueConstraint("model_pk", "fact", "source"),
)

collections = Table(
    "collections",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("description", String(300), nullable=False, default=""),
    Column("tags", JSON, nullable=False),
    Column("members", JSON, nullable=False),
    Column("shape", String(32)),
    Column("reply", String(8), nullable=False, default="all"),
    Column("merger", String(300)),
    Column("max_explorers", Integer),
    Column("max_calls", Integer),
    # The bench swaps a member for a better explorer itself (bench/evidence/swaps.py).
    Column("auto_swap", Boolean, nullable=False, default=False, server_default=false()),
    # Daily budgets (bench/budgets.py): panels, and tokens the seats reported, a day; None = none (0014).
    Column("daily_panels", Integer),
    Column("daily_tokens", Integer),
    # A cooling, paced-out or retired member's place goes to a stand-in (bench/panels/seating.py, 0015).
    Column("stand_ins", Boolean, nullable=False, default=False, server_default=false()),
    # Model tags every seat's model must carry, and none it may (`trains-on-prompts`); NULL = none (0015).
    Column("require_tags", JSON),
    Column("exclude_tags", JSON),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

changes = Table(
    "changes",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("at", Float, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("subject", String(32), nullable=False),  # endpoint | model | collection | key | setting ...
    Column("name", String(300), nullable=False),
    Column("action", String(16), nullable=False),  # create | update | delete
    Column("before", JSON),
    Column("after", JSON),
    Index("ix_changes_subject_name", "subject", "name"),
)

# Small key/value table: gateway limits, shapes, the config version counter.
settings = Table(
    "settings",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", JSON),
)

gateway_keys = Table(
    "gateway_keys",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("sha256", String(64), nullable=False, unique=True),
    Column("last4", String(4), nullable=False),
    Column("collections", JSON),  # None = every collection
    Column("rpm", Integer),
    Column("daily_panels", Integer),  # daily budgets, as a collection's (migration 0014)
    Column("daily_tokens", Integer),
    Column("created_at", Float, nullable=False),
    Column("last_used_at", Float),
    Column("revoked_at", Float),
)

panels = Table(
    "panels",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("created_at", Float, nullable=False),
    Column("collection", String(64), nullable=False),
    Column("reply", String(8), nullable=False),
    Column("shape", String(32), nullable=False),
    Column("shape_by", String(200), nullable=False),
    Column("caller", String(64), nullable=False),
    Column("request", JSON, nullable=False),  # redacted: images are placeholders
    Column("request_hash", String(64), nullable=False),
    Column("idempotency_key", String(200)),
    Column("skipped", JSON, nullable=False),
    Column("note", Text),
    Column("seconds", Float),
    Column("response", JSON),  # the reply as sent, for replays
    # The prompt's characters and kind (code | prose) when its seats' reported prompt tokens teach
    # their models' characters a token (no images, no tools; migration 0012); else NULL.
    Column("prompt_chars", Integer),
    Column("prompt_kind", String(8)),
    Index("ix_panels_created_at", "created_at"),
    Index("ix_panels_replay", "caller", "request_hash"),
    # A budget counts a collection's or a caller's panels since the day's reset (migration 0014).
    Index("ix_panels_collection_created_at", "collection", "created_at"),
    Index("ix_panels_caller_created_at", "caller", "created_at"),
)

seats = Table(
    "seats",
    metadata,
    Column("call", String(64), primary_key=True),
    Column("panel_id", String(40), ForeignKey("panels.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("seat", String(16), nullable=False),  # member | nominee | explorer | standin | merger | decision
    Column("alias", String(300), nullable=False),
    Column("endpoint", String(64), nullable=False),
    Column("shape", String(32), nullable=False),
    Column("status", String(16), nullable=False),  # ok | empty | error | paced | cooling
    Column("seconds", Float, nullable=False),
    Column("answer", Text, nullable=False),
    Column("error", Text, nullable=False),
    Column("error_kind", String(32)),
    Column("usage", JSON),
    Column("caller", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("frees_at", Float),  # paced or cooling (not called): when the model may be called again
    Column("tool_calls", JSON),  # the function calls it answered with ({id, type, function}), if any
    Column("truncated_at", Integer),  # the answer cap cut the answer to its first this many bytes (0009)
    Column("truncated", String(16)),  # `length`: the answer stopped at its token limit (finish_reason, 0010)
    Column("stands_in_for", String(300)),  # a stand-in seat: the member whose place it took (0015)
    Index("ix_seats_panel", "panel_id"),
    Index("ix_seats_created_at", "created_at"),  # what other processes seated since (migration 0008)
    # The dashboard's counts read these instead of the rows (migration 0002).
    Index("ix_seats_status_seat_call", "status", "seat", "call"),
    Index("ix_seats_alias_shape_seat_status_created", "alias", "shape", "seat", "status", "created_at"),
)

verdicts = Table(
    "verdicts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("call", String(64), ForeignKey("seats.call", ondelete="CASCADE"), nullable=False),
    Column("useful", Boolean, nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("real", JSON, nullable=False),
    Column("false", JSON, nullable=False),
    Column("caller", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("current", Boolean, nullable=False, default=True),  # history keeps replaced ones
    # human | suite: a person's verdict always replaces the suite's, never the other way round
    Column("source", String(16), nullable=False, default="human", server_default=text("'human'")),
    Index("ix_verdicts_call_current", "call", "current"),
)

suite_runs = Table(
    "suite_runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("created_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("target", String(300), nullable=False),  # bench/NAME, or the model aliases asked one by one
    Column("plan", JSON, nullable=False),  # tasks, repeat, judge, models: what resuming needs
)

suite_results = Table(
    "suite_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(40), ForeignKey("suite_runs.id", ondelete="CASCADE"), nullable=False),
    Column("task", String(80), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("alias", String(300), nullable=False),
    Column("unit_alias", String(300)),  # the model asked alone; None for a collection's panel
    Column("panel_id", String(40), nullable=False),
    Column("call", String(64), nullable=False),  # the seat's call id (its verdict's call)
    Column("status", String(16), nullable=False),  # ok | empty | error | paced | cooling | retired | skipped
    Column("seconds", Float, nullable=False),
    Column("tokens", Integer),
    Column("rate_limited", Boolean, nullable=False, default=False),
    Column("graded", JSON),  # None when the seat gave no answer to grade
    # Why the member could not take the task (status `skipped`): window, 413, context; None when it did.
    Column("skipped", String(32)),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("run_id", "task", "attempt", "alias"),
    Index("ix_suite_results_run", "run_id", "task"),
)

alerts = Table(
    "alerts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(32), nullable=False),  # went_paid | retiring | failing | owed | possibly_changed
    Column("subject", String(300), nullable=False),
    Column("message", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("acknowledged_at", Float),  # the user has seen it
    Column("resolved_at", Float),  # the bench saw its cause go away (a probe answered, verdicts came)
    Index("ix_alerts_kind_subject", "kind", "subject"),
)

# Notification targets: Apprise URLs (they hold tokens and passwords, so only sealed, like provider keys).
notify_targets = Table(
    "notify_targets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(80), nullable=False, unique=True),
    Column("url_enc", LargeBinary, nullable=False),  # Fernet token; never the URL in clear
    Column("label", String(300), nullable=False),  # what may be shown: scheme and host only
    Column("created_at", Float, nullable=False),
    Column("after_alert", Integer, nullable=False),  # alerts with a greater id are sent (not the ones before it)
)

# One row per alert and target: claimed atomically by the process that sends it, so it goes out once.
notify_deliveries = Table(
    "notify_deliveries",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("alert_id", Integer, ForeignKey("alerts.id", ondelete="CASCADE"), nullable=False),
    Column("target_id", Integer, ForeignKey("notify_targets.id", ondelete="CASCADE"), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("due_at", Float, nullable=False),  # the next try, at the earliest
    Column("claim", String(32)),  # the sender holding it, until claimed_until
    Column("claimed_until", Float),
    Column("sent_at", Float),
    Column("gave_up_at", Float),  # after the last attempt failed
    Column("last_error", String(200)),  # never the URL
    UniqueConstraint("alert_id", "target_id"),
    Index("ix_notify_deliveries_due", "sent_at", "due_at"),
)

decision_models = Table(
    "decision_models",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("alias", String(300), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),  # chat | choice
    Column("path", String(200)),  # for choice: the API path that answered at onboarding
    Column("created_at", Float, nullable=False),
)

roles = Table(
    "roles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("role", String(32), nullable=False),  # primary
    Column("shape", String(32), nullable=False),
    Column("alias", String(300), nullable=False),
    UniqueConstraint("role", "shape"),
)
