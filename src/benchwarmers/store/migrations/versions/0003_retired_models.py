"""retired models: a model that kept failing is out of its seats until a probe or the user brings it
back; alerts the bench itself resolved

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retired_at", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("next_probe_at", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("probes", sa.Integer(), nullable=False, server_default=sa.text("0")))
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resolved_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_column("resolved_at")
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_column("probes")
        batch_op.drop_column("next_probe_at")
        batch_op.drop_column("retired_at")
