"""seat tool_calls: the function calls a seat answered with (a tool call is an answer)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 15:45:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tool_calls", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("tool_calls")
