"""token reservations and revocations (issue 12)

Compliance tokens are reserved for the length of a scan (`reserved_until`, `reserved_by`); tokens whose
payment was refunded or disputed are revoked (`revoked_at`); a payment row names the subscription it paid
for, so a dispute on a renewal finds the subscription.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("compliance_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reserved_until", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("reserved_by", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(), nullable=True))

    with op.batch_alter_table("scan_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(), nullable=True))

    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("subscription_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_payments_subscription_id_subscriptions"), "subscriptions", ["subscription_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_payments_subscription_id_subscriptions"), type_="foreignkey")
        batch_op.drop_column("subscription_id")

    with op.batch_alter_table("scan_tokens", schema=None) as batch_op:
        batch_op.drop_column("revoked_at")

    with op.batch_alter_table("compliance_tokens", schema=None) as batch_op:
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("reserved_by")
        batch_op.drop_column("reserved_until")
