"""monitor run previous report

`monitor_runs.previous_report_id`: the report a run compared its own with, stored with the run's report id
and its alert reasons in the transaction that keeps the report in the history. A run retried after its
worker died past that point (issue 17: alerts "never lost when a process restarts") then scans nothing
again and keeps nothing twice: it rebuilds the diff from the two stored reports and sends the alert.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-30 11:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("monitor_runs") as batch:
        batch.add_column(sa.Column("previous_report_id", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("monitor_runs") as batch:
        batch.drop_column("previous_report_id")
