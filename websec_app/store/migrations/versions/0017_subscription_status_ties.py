"""subscription status ties

Providers time their events in whole seconds, so two events of one subscription can share a second and still
disagree (Stripe's `invoice.payment_failed` and the `invoice.paid` of the retry that follows at once). Such a
tie is decided by asking the provider for the subscription's status now (services/payments/fulfilment.py).

`subscriptions.status_unconfirmed`: the provider could not be asked, so the status is provisional (active)
until an event of that second comes again and it can be. `subscriptions.status_version`: counts the writes of
the status, so the provider's answer is written only if nothing wrote the status while it was being asked.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-01 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status_unconfirmed", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("status_version", sa.Integer(), server_default=sa.text("0"), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_column("status_version")
        batch_op.drop_column("status_unconfirmed")
