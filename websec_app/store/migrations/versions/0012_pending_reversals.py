"""pending reversals

`pending_reversals`: a refund or dispute whose payment is not settled here yet (the capture webhook comes
later: providers deliver in any order). Kept by the provider's payment ids; the settlement that follows
checks it and issues nothing, or takes back what it issued (services/payments/fulfilment.py).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pending_reversals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("provider_payment_id", sa.String(length=128), nullable=False),
        sa.Column("dispute", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_reversals")),
        sa.UniqueConstraint("provider", "provider_payment_id", name="uq_pending_reversals_provider_id"),
    )


def downgrade() -> None:
    op.drop_table("pending_reversals")
