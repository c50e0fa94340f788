"""subscription status event time

`subscriptions.status_event_at`: the provider's time of the newest event applied to a subscription's status.
Providers deliver events out of order (Stripe guarantees no order, Razorpay retries for hours), so an event
older than that one must not change the status (store/purchases.py). Nullable: existing rows have none yet,
and the first timed event sets it.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status_event_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_column("status_event_at")
