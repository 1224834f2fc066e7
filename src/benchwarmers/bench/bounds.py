"""Defaults, bounds and names a caller shows before any bench is open: the CLI's options and their
help, the server's query bounds. Kept apart from the services they belong to, which load the store
and the upstream clients: `benchwarmers --help` builds every command's options from these alone.
Each module that owns a value imports it from here (its old name there still works)."""

from __future__ import annotations

from benchwarmers.upstream.kinds import ENDPOINT_KINDS

# Endpoint kinds (bench/admin/endpoints.py), as upstream/kinds.py registers them.
KINDS = tuple(ENDPOINT_KINDS)

# `benchwarmers check` (bench/admin/checks.py).
CHECK_TIMEOUT = 30.0  # seconds per call

# What calls would have cost (bench/evidence/cost.py).
GROUPINGS = ("model", "collection", "key")
DEFAULT_DAYS = 30
MAX_DAYS = 36_500

# The dashboard's charts over time (bench/evidence/series.py, SuiteRuns.trend).
DEFAULT_TREND_DAYS = 30
MAX_TREND_DAYS = 366
TREND_RUNS = 20  # suite runs the Suite page's chart shows
MAX_TREND_RUNS = 50  # as many as the runs table lists

# The honesty report's window (bench/evidence/reports.py).
REPORT_DAYS = 30.0

# A model's wrong claims (bench/evidence/wrong.py).
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

# The roles a user pins (bench/evidence/roles.py).
PRIMARY = "primary"  # overrides the pick for a shape (bench/evidence/board.py)
MERGER = "merger"
DECISION = "decision"
