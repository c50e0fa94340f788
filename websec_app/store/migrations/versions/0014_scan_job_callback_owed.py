"""scan job callback owed

`scan_jobs.callback_owed_at`: set in the transaction that ends a job with a callback_url, cleared when the
receiver took the callback (2xx) or its attempts were used up. A job ended while it is set still owes its
callback: a retried copy of the job's task, or the upkeep before each monitor tick, queues it again, so a
worker that dies between a job's end and queueing its callback loses nothing (issue 16: "callbacks
retried with backoff"). A partial index keeps the upkeep's look-up to the few rows that owe one: a job
without a callback (every free scan) never enters it.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-30 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scan_jobs") as batch:
        batch.add_column(sa.Column("callback_owed_at", sa.DateTime(), nullable=True))
    op.create_index(
        "ix_scan_jobs_callback_owed_at",
        "scan_jobs",
        ["callback_owed_at"],
        sqlite_where=sa.text("callback_owed_at IS NOT NULL"),
        postgresql_where=sa.text("callback_owed_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_scan_jobs_callback_owed_at", table_name="scan_jobs")
    with op.batch_alter_table("scan_jobs") as batch:
        batch.drop_column("callback_owed_at")
