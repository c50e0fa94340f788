"""callback secrets shown (issue 16): which API keys have been shown their (derived) callback secret

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 15:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "callback_secrets_shown",
        sa.Column("api_key_id", sa.Integer(), nullable=False),
        sa.Column("shown_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("api_key_id", name=op.f("pk_callback_secrets_shown")),
    )


def downgrade() -> None:
    op.drop_table("callback_secrets_shown")
