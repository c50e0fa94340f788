"""scan jobs (issue 16): `scan_jobs`, `scan_workers`, and on PostgreSQL the task engine's own tables

The task engine (procrastinate, websec_app/jobs) keeps its queue in PostgreSQL: its schema, as shipped by
the pinned version (requirements.txt), is created here so one migration run readies the whole database.
On SQLite (`make run`) the engine runs in memory and needs no table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 15:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "scan_jobs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("client", sa.String(length=64), nullable=True),
        sa.Column("scan_token_id", sa.Integer(), nullable=True),
        sa.Column("reservation", sa.JSON(), nullable=True),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("pdf", sa.LargeBinary(), nullable=True),
        sa.Column("error_status", sa.Integer(), nullable=True),
        sa.Column("error_message", sa.String(length=1024), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scan_jobs")),
    )
    with op.batch_alter_table("scan_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_scan_jobs_status_created_at", ["status", "created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_scan_jobs_api_key_id"), ["api_key_id"], unique=False)
    op.create_table(
        "scan_workers",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scan_workers")),
    )
    with op.batch_alter_table("scan_workers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_scan_workers_heartbeat_at"), ["heartbeat_at"], unique=False)
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from procrastinate.schema import SchemaManager

        # Several statements with `::` casts and `%`: sent as one simple query, untouched by bind parsing.
        cursor = bind.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(SchemaManager.get_schema())


def downgrade() -> None:
    op.drop_table("scan_workers")
    op.drop_table("scan_jobs")
