"""scan history by URL (issue 17)

An index on `scan_records (url, created_at)`: a subscriber's history of one URL (`GET /api/history`) and
the public badge's latest scan of a URL (`GET /api/badge`) are read by URL, newest first.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_scan_records_url_created", "scan_records", ["url", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_scan_records_url_created", table_name="scan_records")
