"""Monitors (issue 17): a subscriber's sites re-scanned daily or weekly, and each scheduled run.

A run is a `monitor_runs` row, unique per (monitor, due time): scheduling inserts the due run and moves the
monitor's `next_run_at` in one transaction, so a run is never scheduled twice, by however many processes,
and never lost (a process that stops after scheduling leaves the row `queued`; the next tick hands it out
again). A run's quota unit is taken once and recorded on the row, so a retried run (its worker killed)
neither counts twice nor loses the unit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, UniqueConstraint, exists, text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, col, select

from ._sql import insert_ignoring_conflicts
from .coltypes import UTCDateTime
from .models import StoreModel
from .quotas import Reservation, refund

#: How often a monitor runs.
INTERVALS: dict[str, timedelta] = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}
#: Monitors a subscription may have at once.
MAX_MONITORS = 10

RUN_QUEUED = "queued"
RUN_RUNNING = "running"
RUN_DONE = "done"
RUN_UNREACHABLE = "unreachable"
RUN_SKIPPED_QUOTA = "skipped_quota"
RUN_FAILED = "failed"
#: Not run: the monitor was deleted after the run was scheduled, or the subscription is no longer active
#: (spec 5: an active Pro subscription) or has no active key.
RUN_SKIPPED = "skipped"
RUN_ENDED = (RUN_DONE, RUN_UNREACHABLE, RUN_SKIPPED_QUOTA, RUN_FAILED, RUN_SKIPPED)
#: A run claimed this long ago and still `running` was abandoned (its worker died): it may be claimed again.
RUN_CLAIM_SECONDS = 600
#: Claims a run gets: one whose worker died this many times (a scan that kills its worker) is ended failed,
#: its unit given back, instead of being handed out again every RUN_CLAIM_SECONDS for good.
MAX_RUN_ATTEMPTS = 3


def _utc(nullable: bool = False) -> Column:  # type: ignore[type-arg]
    return Column(UTCDateTime(), nullable=nullable)


class Monitor(StoreModel, table=True):
    __tablename__ = "monitors"
    __table_args__ = (
        Index("ix_monitors_active_next_run_at", "active", "next_run_at"),
        # One active monitor per URL of a subscription, however many requests race (migration 0013).
        Index(
            "uq_monitors_active_url",
            "subscription_id",
            "url",
            unique=True,
            sqlite_where=text("active"),
            postgresql_where=text("active"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(sa_column=Column(Integer, ForeignKey("subscriptions.id"), nullable=False, index=True))
    url: str = Field(max_length=2048)
    interval: str = Field(max_length=8)
    callback_url: str | None = Field(default=None, max_length=2048)
    #: The key that made it: its callback secret signs the monitor's webhooks.
    api_key_id: int | None = Field(default=None)
    active: bool = Field(default=True)
    created_at: datetime = Field(sa_column=_utc())
    next_run_at: datetime = Field(sa_column=_utc())
    #: Runs in a row that could not reach the site (the second in a row alerts).
    unreachable_in_row: int = Field(default=0)
    #: The month ("2026-11") whose used-up quota the owner was told of (once a month).
    quota_notice_period: str | None = Field(default=None, max_length=7)
    #: The certificate expiry threshold (14, then 3 days) already alerted for the current certificate.
    certificate_alerted_days: int | None = Field(default=None)


class MonitorRun(StoreModel, table=True):
    __tablename__ = "monitor_runs"
    __table_args__ = (
        UniqueConstraint("monitor_id", "due_at"),
        Index("ix_monitor_runs_status_due_at", "status", "due_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    monitor_id: int = Field(sa_column=Column(Integer, ForeignKey("monitors.id"), nullable=False))
    due_at: datetime = Field(sa_column=_utc())
    status: str = Field(default=RUN_QUEUED, max_length=16)
    claimed_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    attempts: int = Field(default=0)
    #: quotas.Reservation as a dict, once taken (a retried run reuses it).
    reservation: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: The run's report, and the one it was compared with (None for a monitor's first), with `alerts` stored
    #: in the transaction that keeps the report in the history (`note_kept_run`): a run retried after that
    #: scans nothing again, keeps nothing twice, and sends the alert it owes.
    report_id: str | None = Field(default=None, max_length=32)
    previous_report_id: str | None = Field(default=None, max_length=32)
    #: Why an alert went (or, while the run is running with its report kept, goes) out ([] when none does),
    #: and the error of a failed or unreachable run.
    alerts: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    error: str | None = Field(default=None, max_length=500)


# --- a subscriber's monitors -----------------------------------------------------------------------------


class TooManyMonitors(Exception):
    pass


class AlreadyMonitored(Exception):
    """The subscription monitors this URL already (a second monitor would spend scans on the same site)."""


def add_monitor(
    session: Session,
    *,
    subscription_id: int,
    api_key_id: int | None,
    url: str,
    interval: str,
    callback_url: str | None,
    now: datetime,
) -> Monitor:
    """A new monitor, first run due at once. Raises AlreadyMonitored for a URL the subscription monitors, and
    TooManyMonitors past MAX_MONITORS (both counted under a write lock, so two concurrent requests cannot
    both make the eleventh; the partial unique index on active (subscription, url) backs the second rule)."""
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}")
    _lock_subscription(session, subscription_id)
    active = session.exec(
        select(Monitor.url).where(Monitor.subscription_id == subscription_id, col(Monitor.active))
    ).all()
    if url in active:
        session.rollback()
        raise AlreadyMonitored(url)
    if len(active) >= MAX_MONITORS:
        session.rollback()
        raise TooManyMonitors(f"a subscription has at most {MAX_MONITORS} monitors")
    monitor = Monitor(
        subscription_id=subscription_id,
        api_key_id=api_key_id,
        url=url,
        interval=interval,
        callback_url=callback_url,
        created_at=now,
        next_run_at=now,
    )
    session.add(monitor)
    try:
        session.commit()
    except IntegrityError:  # uq_monitors_active_url: another request made it at the same moment
        session.rollback()
        raise AlreadyMonitored(url) from None
    session.refresh(monitor)
    return monitor


def _lock_subscription(session: Session, subscription_id: int) -> None:
    """Serialise the subscription's monitor changes until the transaction ends. PostgreSQL: the
    subscription's row FOR UPDATE. SQLite has no row locks and FOR UPDATE is a no-op there; pysqlite starts
    its transaction only at the first write, so two requests would both count before either inserts: take
    the database's write lock first (BEGIN IMMEDIATE; writers queue on the busy timeout)."""
    from .models import Subscription

    connection = session.connection()
    if connection.dialect.name == "sqlite":
        if not connection.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        return
    session.exec(select(Subscription).where(Subscription.id == subscription_id).with_for_update()).first()


def monitors_of(session: Session, subscription_id: int) -> list[Monitor]:
    return list(
        session.exec(
            select(Monitor).where(Monitor.subscription_id == subscription_id, Monitor.active).order_by(col(Monitor.id))
        )
    )


def remove_monitor(session: Session, *, subscription_id: int, monitor_id: int) -> bool:
    """Stop a monitor (its runs stay in the history); False when it is not this subscription's."""
    done = session.exec(
        update(Monitor)
        .where(col(Monitor.id) == monitor_id, col(Monitor.subscription_id) == subscription_id, col(Monitor.active))
        .values(active=False)
        .returning(col(Monitor.id))
    ).first()
    session.commit()
    return done is not None


def last_runs(session: Session, monitor_ids: Sequence[int]) -> dict[int, MonitorRun]:
    """The latest run of each monitor that has one."""
    latest: dict[int, MonitorRun] = {}
    if not monitor_ids:
        return latest
    rows = session.exec(
        select(MonitorRun).where(col(MonitorRun.monitor_id).in_(list(monitor_ids))).order_by(col(MonitorRun.due_at))
    )
    for run in rows:
        latest[run.monitor_id] = run
    return latest


# --- scheduling ------------------------------------------------------------------------------------------


def _next_after(due: datetime, interval: timedelta, now: datetime) -> datetime:
    """The first due time on the monitor's grid at least half an interval after `now`, the run scheduled now:
    missed periods (a cluster down for days, a subscription paused) become one catch-up run, not a burst, and
    a catch-up run made late is not followed by the grid's next point minutes later (a daily run at 11:59 and
    another at 12:00, two scans for one day). A run on time (the tick comes every minute) is not affected."""
    following = due + interval
    if following <= now:
        skipped = (now - following) // interval + 1
        following += interval * skipped
    if following - now < interval / 2:
        following += interval
    return following


def _entitled() -> Any:
    """SQL: the monitor's subscription may run it: active (spec 5), with an active API key (a rotated key
    keeps the monitors; a subscription whose keys were all revoked has none)."""
    from .models import SUBSCRIPTION_ACTIVE, ApiKey, Subscription

    return exists().where(
        col(Subscription.id) == col(Monitor.subscription_id), col(Subscription.status) == SUBSCRIPTION_ACTIVE
    ) & exists().where(col(ApiKey.subscription_id) == col(Monitor.subscription_id), col(ApiKey.active))


def schedule_due_runs(session: Session, now: datetime, limit: int = 500) -> list[int]:
    """Insert the run of every monitor due by `now` and move the monitors on; the new runs' ids.

    PostgreSQL: the due monitors are locked with SKIP LOCKED, so concurrent schedulers split them; the
    unique (monitor, due time) makes a run once even if two got the same monitor. Monitors of a subscription
    that is not active (or has no active key) are left as they are: they run again if it becomes active.
    """
    query = (
        select(Monitor)
        .where(col(Monitor.active), col(Monitor.next_run_at) <= now, _entitled())
        .order_by(col(Monitor.next_run_at))
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    created: list[int] = []
    for monitor in session.exec(query).all():
        due = monitor.next_run_at
        if insert_ignoring_conflicts(
            session, MonitorRun, {"monitor_id": monitor.id, "due_at": due, "status": RUN_QUEUED, "alerts": []}
        ):
            run_id = session.exec(
                select(MonitorRun.id).where(MonitorRun.monitor_id == monitor.id, MonitorRun.due_at == due)
            ).one()
            if run_id is not None:
                created.append(run_id)
        monitor.next_run_at = _next_after(due, INTERVALS[monitor.interval], now)
        session.add(monitor)
    session.commit()
    return created


def waiting_runs(session: Session, now: datetime, limit: int = 500) -> list[int]:
    """Runs scheduled but not ended: queued, or running past their claim (their worker died). The tick
    hands them out again, so a run scheduled by a process that stopped is not lost."""
    rows = session.exec(select(MonitorRun.id).where(_claimable(now)).order_by(col(MonitorRun.due_at)).limit(limit))
    return [int(run_id) for run_id in rows if run_id is not None]


def _claimable(now: datetime) -> Any:
    """Queued, or running past its claim (its worker died) with attempts left."""
    stale = now - timedelta(seconds=RUN_CLAIM_SECONDS)
    return (col(MonitorRun.status) == RUN_QUEUED) | (
        (col(MonitorRun.status) == RUN_RUNNING)
        & (col(MonitorRun.claimed_at) < stale)
        & (col(MonitorRun.attempts) < MAX_RUN_ATTEMPTS)
    )


#: What the usecase layer does for a run abandoned after its report was kept (`end_exhausted_runs`): queue its
#: owed alert in the caller's transaction; returns a note for the run's error and the monitor's new state.
OwedAlert = Callable[[Session, MonitorRun, Monitor], tuple[str, dict[str, Any]]]


def end_exhausted_runs(
    session: Session, now: datetime, limit: int = 500, *, owed_alert: OwedAlert | None = None
) -> list[int]:
    """End the runs abandoned mid-run MAX_RUN_ATTEMPTS times; their ids.

    One that kept no report ends failed, its unit given back. One whose report was kept (`note_kept_run`: the
    scan happened and is in the history) ends done: its report_id and alert reasons stay, its unit stays
    used, and `owed_alert` (when given) queues its alert in the same transaction as the run's end, so it
    goes once."""
    stale = now - timedelta(seconds=RUN_CLAIM_SECONDS)
    rows = session.exec(
        select(MonitorRun)
        .where(
            col(MonitorRun.status) == RUN_RUNNING,
            col(MonitorRun.claimed_at) < stale,
            col(MonitorRun.attempts) >= MAX_RUN_ATTEMPTS,
        )
        .limit(limit)
    ).all()
    ended: list[int] = []
    for run in rows:
        assert run.id is not None
        abandoned = f"the run was abandoned {run.attempts} times (its worker stopped)"
        if run.report_id is not None:
            monitor = session.get(Monitor, run.monitor_id)
            note, changes = "its alert was not sent", dict[str, Any]()
            if owed_alert is not None and monitor is not None:
                note, changes = owed_alert(session, run, monitor)
            done = finish_run(
                session,
                run.id,
                status=RUN_DONE,
                now=now,
                report_id=run.report_id,
                alerts=run.alerts,
                error=f"{abandoned} after its report was kept: {note}",
                monitor_changes=changes,
            )
        else:
            give_back = Reservation(**run.reservation) if run.reservation else None
            done = finish_run(
                session,
                run.id,
                status=RUN_FAILED,
                now=now,
                error=f"{abandoned}: given up",
                # A failed run is not an unreachable one: the unreachable runs around it are not in a row.
                monitor_changes={"unreachable_in_row": 0},
                give_back=give_back,
            )
        if done:
            ended.append(run.id)
    return ended


def monitor_state(session: Session, monitor_id: int) -> tuple[bool, bool]:
    """(the monitor is active, its subscription is entitled to run it)."""
    row = session.exec(select(col(Monitor.active), _entitled()).where(col(Monitor.id) == monitor_id)).one()
    return bool(row[0]), bool(row[1])


@dataclass(frozen=True)
class ClaimedRun:
    run: MonitorRun
    monitor: Monitor


def claim_run(session: Session, run_id: int, now: datetime) -> ClaimedRun | None:
    """Take a queued run (or one abandoned mid-run, MAX_RUN_ATTEMPTS claims at most) for this worker; None
    when another has it, it ended or it has no attempts left."""
    claimed = session.exec(
        update(MonitorRun)
        .where(col(MonitorRun.id) == run_id, _claimable(now))
        .values(status=RUN_RUNNING, claimed_at=now, attempts=col(MonitorRun.attempts) + 1)
        .returning(col(MonitorRun.id))
    ).first()
    if claimed is None:
        session.commit()
        return None
    # The monitor may have been deleted, or the subscription ended, since the run was scheduled: checked in
    # the claim's transaction.
    state = session.exec(
        select(col(Monitor.active), _entitled())
        .join(MonitorRun, col(MonitorRun.monitor_id) == col(Monitor.id))
        .where(col(MonitorRun.id) == run_id)
    ).one()
    if not state[0]:
        _skip(session, run_id, now, "the monitor was deleted")
        return None
    if not state[1]:
        _skip(session, run_id, now, "the subscription is not active")
        return None
    session.commit()
    run = session.get(MonitorRun, run_id)
    assert run is not None
    monitor = session.get(Monitor, run.monitor_id)
    assert monitor is not None
    return ClaimedRun(run, monitor)


def _skip(session: Session, run_id: int, now: datetime, why: str) -> None:
    """End a claimed run skipped (no scan, no alert), the unit a previous attempt took given back; commits.

    A run whose report a previous attempt kept (`note_kept_run`) is not skipped: its scan happened and is in
    the history, so it ends done with its report_id and alert reasons, its unit still used. Its alert is not
    sent: the owner deleted the monitor, or the subscription may no longer run it (the error says so)."""
    run = session.get(MonitorRun, run_id)
    assert run is not None
    if run.report_id is not None:
        finish_run(
            session,
            run_id,
            status=RUN_DONE,
            now=now,
            report_id=run.report_id,
            alerts=run.alerts,
            error=f"{why} after its report was kept: its alert was not sent",
        )
        return
    give_back = Reservation(**run.reservation) if run.reservation else None
    finish_run(session, run_id, status=RUN_SKIPPED, now=now, error=why, give_back=give_back)


def note_kept_run(
    session: Session, run_id: int, *, report_id: str, previous_report_id: str | None, alerts: Sequence[str]
) -> None:
    """Store on the running run its kept report, the report it was compared with and its alert reasons. Not
    committed: part of the transaction that keeps the report in the history."""
    session.exec(
        update(MonitorRun)
        .where(col(MonitorRun.id) == run_id)
        .values(report_id=report_id, previous_report_id=previous_report_id, alerts=list(alerts))
    )


def keep_reservation(session: Session, run_id: int, reservation: dict[str, Any]) -> None:
    """Record on the run the unit it took. Not committed: part of the transaction that takes the unit
    (`reserve_monthly_scan(commit=False)`), so no crash between two commits leaves a unit no run holds."""
    session.exec(update(MonitorRun).where(col(MonitorRun.id) == run_id).values(reservation=reservation))


def finish_run(
    session: Session,
    run_id: int,
    *,
    status: str,
    now: datetime,
    report_id: str | None = None,
    alerts: Sequence[str] = (),
    error: str | None = None,
    monitor_changes: dict[str, Any] | None = None,
    give_back: Reservation | None = None,
) -> bool:
    """End a running run once (False when it had ended already), with the monitor's new state and, for a
    run that delivered nothing, its quota unit given back: all in one transaction, so a unit is refunded
    exactly when the run ends without a report."""
    ended = session.exec(
        update(MonitorRun)
        .where(col(MonitorRun.id) == run_id, col(MonitorRun.status) == RUN_RUNNING)
        .values(
            status=status,
            finished_at=now,
            report_id=report_id,
            alerts=list(alerts),
            error=(error or None) and error[:500],
        )
        .returning(col(MonitorRun.monitor_id))
    ).first()
    if ended is None:
        session.rollback()
        return False
    if monitor_changes:
        session.exec(update(Monitor).where(col(Monitor.id) == ended[0]).values(**monitor_changes))
    if give_back is not None:
        refund(session, give_back)  # its commit ends this same transaction: the run's end and the unit together
    else:
        session.commit()
    return True
