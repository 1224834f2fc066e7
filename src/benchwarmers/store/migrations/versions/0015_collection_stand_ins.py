"""collection stand_ins, seat stands_in_for: a cooling, paced-out or retired member's place goes to the
best eligible model, and its seat says whom it stands in for; collection tag rules (require_tags,
exclude_tags: model tags its seats must or must not carry)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 02:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stand_ins", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("require_tags", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("exclude_tags", sa.JSON(), nullable=True))
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stands_in_for", sa.String(300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("stands_in_for")
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.drop_column("exclude_tags")
        batch_op.drop_column("require_tags")
        batch_op.drop_column("stand_ins")
