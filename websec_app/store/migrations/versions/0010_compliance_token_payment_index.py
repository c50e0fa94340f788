"""compliance tokens by payment

An index on `compliance_tokens (payment_id)`: a refund or dispute webhook revokes the unused compliance
tokens of its payment (store/purchases.py), which read the whole table without it. (`scan_tokens.payment_id`
is unique, so indexed already.)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_compliance_tokens_payment_id", "compliance_tokens", ["payment_id"])


def downgrade() -> None:
    op.drop_index("ix_compliance_tokens_payment_id", table_name="compliance_tokens")
