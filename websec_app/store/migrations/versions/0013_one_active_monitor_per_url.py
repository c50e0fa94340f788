"""one active monitor per URL

A partial unique index on `monitors (subscription_id, url) WHERE active`: one active monitor per URL of a
subscription, however many requests race (store/monitors.py add_monitor also counts under a lock). Active
duplicates that a race made before it are stopped first, the oldest of each kept.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        sa.text(
            "UPDATE monitors SET active = :stopped WHERE active AND id NOT IN"
            " (SELECT MIN(id) FROM monitors WHERE active GROUP BY subscription_id, url)"
        ).bindparams(stopped=False)
    )
    op.create_index(
        "uq_monitors_active_url",
        "monitors",
        ["subscription_id", "url"],
        unique=True,
        sqlite_where=sa.text("active"),
        postgresql_where=sa.text("active"),
    )


def downgrade() -> None:
    op.drop_index("uq_monitors_active_url", table_name="monitors")
