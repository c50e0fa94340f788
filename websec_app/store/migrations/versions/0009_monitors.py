"""monitors (issue 17): `monitors` and their scheduled `monitor_runs`

A run is unique per (monitor, due time): scheduling it twice inserts nothing the second time.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 15:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "monitors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("interval", sa.String(length=8), nullable=False),
        sa.Column("callback_url", sa.String(length=2048), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("next_run_at", sa.DateTime(), nullable=False),
        sa.Column("unreachable_in_row", sa.Integer(), nullable=False),
        sa.Column("quota_notice_period", sa.String(length=7), nullable=True),
        sa.Column("certificate_alerted_days", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscription_id"], ["subscriptions.id"], name=op.f("fk_monitors_subscription_id_subscriptions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitors")),
    )
    with op.batch_alter_table("monitors", schema=None) as batch_op:
        batch_op.create_index("ix_monitors_active_next_run_at", ["active", "next_run_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_monitors_subscription_id"), ["subscription_id"], unique=False)
    op.create_table(
        "monitor_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("monitor_id", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("claimed_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("reservation", sa.JSON(), nullable=True),
        sa.Column("report_id", sa.String(length=32), nullable=True),
        sa.Column("alerts", sa.JSON(), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(["monitor_id"], ["monitors.id"], name=op.f("fk_monitor_runs_monitor_id_monitors")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitor_runs")),
        sa.UniqueConstraint("monitor_id", "due_at", name=op.f("uq_monitor_runs_monitor_id_due_at")),
    )
    with op.batch_alter_table("monitor_runs", schema=None) as batch_op:
        batch_op.create_index("ix_monitor_runs_status_due_at", ["status", "due_at"], unique=False)


def downgrade() -> None:
    op.drop_table("monitor_runs")
    op.drop_table("monitors")
