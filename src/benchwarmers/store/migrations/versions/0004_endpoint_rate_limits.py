"""endpoint rate limits: the user's limits for an endpoint as a whole, shared by all its models

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("endpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rate_limits", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("endpoints", schema=None) as batch_op:
        batch_op.drop_column("rate_limits")
