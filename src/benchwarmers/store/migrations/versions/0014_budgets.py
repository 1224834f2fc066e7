"""budgets: a daily budget of panels and of tokens per collection and per gateway key, and the
indexes that count a collection's or a caller's panels since the day's reset

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 02:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("collections", "gateway_keys"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("daily_panels", sa.Integer, nullable=True))
            batch_op.add_column(sa.Column("daily_tokens", sa.Integer, nullable=True))
    op.create_index("ix_panels_collection_created_at", "panels", ["collection", "created_at"])
    op.create_index("ix_panels_caller_created_at", "panels", ["caller", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_panels_caller_created_at", table_name="panels")
    op.drop_index("ix_panels_collection_created_at", table_name="panels")
    for table in ("gateway_keys", "collections"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("daily_tokens")
            batch_op.drop_column("daily_panels")
