"""seat frees_at: when the model of a seat that was not called (paced, cooling) may be called again

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 09:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("frees_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("frees_at")
