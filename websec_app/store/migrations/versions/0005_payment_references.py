"""payment references (issue 12)

`payment_references`: the payment intent or charge of a paid Stripe subscription invoice, kept against the
invoice id its `payments` row is recorded under, so a refund or dispute (which names only the charge and the
payment intent) finds the subscription it paid for.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "payment_references",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("reference", sa.String(length=128), nullable=False),
        sa.Column("provider_payment_id", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_references")),
        sa.UniqueConstraint(
            "provider", "reference", "provider_payment_id", name="uq_payment_references_provider_reference"
        ),
    )


def downgrade() -> None:
    op.drop_table("payment_references")
