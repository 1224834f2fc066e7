"""seats by time: every worker and host reads the seats recorded since it last looked (seat history)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 15:40:00
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index("ix_seats_created_at", ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index("ix_seats_created_at")
