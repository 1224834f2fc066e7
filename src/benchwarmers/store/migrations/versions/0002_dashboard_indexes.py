"""dashboard indexes: the owed count and the per model × shape standings read an index, not the seats

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 00:30:00
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        # Covering: counting seats awaiting a verdict never reads a seat row (answers are large).
        batch_op.create_index("ix_seats_status_seat_call", ["status", "seat", "call"], unique=False)
        # Covering: seats, errors, empties and last seated per model × shape, grouped in index order.
        batch_op.create_index(
            "ix_seats_alias_shape_seat_status_created", ["alias", "shape", "seat", "status", "created_at"], unique=False
        )
        # The new index starts with (alias, shape) too: the old one only cost every insert.
        batch_op.drop_index("ix_seats_alias_shape_created")


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index("ix_seats_alias_shape_created", ["alias", "shape", "created_at"], unique=False)
        batch_op.drop_index("ix_seats_alias_shape_seat_status_created")
        batch_op.drop_index("ix_seats_status_seat_call")
