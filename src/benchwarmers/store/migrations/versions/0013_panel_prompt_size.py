"""panel prompt size: its characters and kind (code or prose), so the prompt tokens seats reported
teach each model's characters a token again after a restart

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-09 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("panels", schema=None) as batch_op:
        batch_op.add_column(sa.Column("prompt_chars", sa.Integer, nullable=True))
        batch_op.add_column(sa.Column("prompt_kind", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("panels", schema=None) as batch_op:
        batch_op.drop_column("prompt_kind")
        batch_op.drop_column("prompt_chars")
