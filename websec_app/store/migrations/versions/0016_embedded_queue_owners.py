"""embedded queue owners

Embedded (SQLite), each process keeps its job queue in memory, and each one's ticker sweeps the jobs a
stopped process left open. With several processes on one SQLite file (`serve-api --workers 2`), a sweep
that only knew its own queue ended the jobs a live sibling held and was going to run (an async batch
waiting its turn there longer than a wait budget): failed, units given back, then run anyway.

`scan_jobs.queue_id`: the queue (a process's, random per start) that created and holds the job.
`embedded_queues.alive_until`: each queue's lease, moved on by its process's ticker at each tick (three
ticks ahead, at least a minute). A sweep ends a job only when its queue is unknown, its own (and not
holding it), or past its lease. PostgreSQL writes neither (its queue is procrastinate's table).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-30 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scan_jobs") as batch:
        batch.add_column(sa.Column("queue_id", sa.String(length=32), nullable=True))
    op.create_table(
        "embedded_queues",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("alive_until", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_embedded_queues")),
    )


def downgrade() -> None:
    op.drop_table("embedded_queues")
    with op.batch_alter_table("scan_jobs") as batch:
        batch.drop_column("queue_id")
