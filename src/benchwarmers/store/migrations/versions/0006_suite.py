"""the suite: verdict sources (human | suite), suite runs and their graded results

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 16:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(16), nullable=False, server_default=sa.text("'human'")))
    op.create_table(
        "suite_runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("target", sa.String(300), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
    )
    op.create_table(
        "suite_results",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("suite_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("task", sa.String(80), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("alias", sa.String(300), nullable=False),
        sa.Column("unit_alias", sa.String(300), nullable=True),
        sa.Column("panel_id", sa.String(40), nullable=False),
        sa.Column("call", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=True),
        sa.Column("rate_limited", sa.Boolean(), nullable=False),
        sa.Column("graded", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("run_id", "task", "attempt", "alias"),
    )
    op.create_index("ix_suite_results_run", "suite_results", ["run_id", "task"])


def downgrade() -> None:
    op.drop_index("ix_suite_results_run", table_name="suite_results")
    op.drop_table("suite_results")
    op.drop_table("suite_runs")
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.drop_column("source")
