"""seat truncated_at: the answer cap (answer_cap_kb) cut the answer to its first this many bytes

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 18:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("truncated_at", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("truncated_at")
