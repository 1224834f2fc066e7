"""notifications: Apprise targets (their URLs sealed like provider keys) and one delivery row per
alert and target, claimed by the process that sends it

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 02:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notify_targets",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(80), nullable=False, unique=True),
        sa.Column("url_enc", sa.LargeBinary(), nullable=False),
        sa.Column("label", sa.String(300), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("after_alert", sa.Integer(), nullable=False),
    )
    op.create_table(
        "notify_deliveries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("alert_id", sa.Integer(), sa.ForeignKey("alerts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("target_id", sa.Integer(), sa.ForeignKey("notify_targets.id", ondelete="CASCADE"), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.Float(), nullable=False),
        sa.Column("claim", sa.String(32), nullable=True),
        sa.Column("claimed_until", sa.Float(), nullable=True),
        sa.Column("sent_at", sa.Float(), nullable=True),
        sa.Column("gave_up_at", sa.Float(), nullable=True),
        sa.Column("last_error", sa.String(200), nullable=True),
        sa.UniqueConstraint("alert_id", "target_id"),
    )
    op.create_index("ix_notify_deliveries_due", "notify_deliveries", ["sent_at", "due_at"])


def downgrade() -> None:
    op.drop_index("ix_notify_deliveries_due", table_name="notify_deliveries")
    op.drop_table("notify_deliveries")
    op.drop_table("notify_targets")
