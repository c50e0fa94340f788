"""Scan quotas: the Pro monthly counter and the free per-client daily counter.

Both are exact under concurrency. A unit is *reserved* with one conditional update,
`UPDATE ... SET used = used + 1 WHERE ... AND used < :limit RETURNING used`, which the
database serialises per row: with one unit left and twenty racing requests, exactly one
update matches. SQLite takes its write lock for the whole transaction; PostgreSQL
re-checks the WHERE clause against the committed row after waiting on the row lock
(READ COMMITTED, see "UPDATE" in the PostgreSQL manual, section 13.2.1).

A scan that then fails without a report *refunds* its reservation, so a failed scan
costs nothing and a successful one costs exactly one unit. While a scan runs, its unit
counts as used, so a racing request may see 429 for a unit that a failing scan is about
to give back; the reverse (two successes for one unit) cannot happen.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import Engine, bindparam
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, delete, select, update

from ._sql import Reader, first_row, insert_ignoring_conflicts
from .models import FreeScanCounter, MonthlyUsage
from .periods import day_period, month_period


@dataclass(frozen=True)
class Reservation:
    """One unit taken from a counter; hand it back with `refund` if the scan fails."""

    counter: Literal["monthly", "free"]
    owner: str  # subscription id, or the free-scan client key
    period: str
    used: int  # the counter after this reservation
    limit: int

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)


def reserve_monthly_scan(
    session: Session, subscription_id: int, now: datetime, limit: int, *, commit: bool = True
) -> Reservation | None:
    """Take one scan from this month's quota, or None when it is used up. `commit=False`: the caller commits
    the unit together with what holds it (a job row), so no crash between two commits can lose it."""
    taken = reserve_monthly_scans(session, subscription_id, now, limit, 1, commit=commit)
    return taken if isinstance(taken, Reservation) else None


#: Read on every `GET /api/usage`: built once (see `keys._KEY_LOOKUP`).
_MONTHLY_USED = sa_select(col(MonthlyUsage.used)).where(
    col(MonthlyUsage.subscription_id) == bindparam("subscription_id"), col(MonthlyUsage.period) == bindparam("period")
)


def monthly_scans_used(session: Reader, subscription_id: int, now: datetime) -> int:
    params = {"subscription_id": subscription_id, "period": month_period(now)}
    row = first_row(session, _MONTHLY_USED, params)
    return int(row[0] or 0) if row is not None else 0


def reserve_free_scan(session: Session, client: str, now: datetime, limit: int) -> Reservation | None:
    """Take one free scan from today's (UTC) allowance of `client`, or None when it is used up."""
    day = day_period(now)
    if insert_ignoring_conflicts(session, FreeScanCounter, {"client": client, "day": day, "used": 0}):
        _prune_past_days_once_a_day(session, day)
    used = session.exec(
        update(FreeScanCounter)
        .where(
            col(FreeScanCounter.client) == client, col(FreeScanCounter.day) == day, col(FreeScanCounter.used) < limit
        )
        .values(used=col(FreeScanCounter.used) + 1)
        .returning(col(FreeScanCounter.used))
    ).scalar_one_or_none()
    session.commit()
    if used is None:
        return None
    return Reservation("free", client, day, used, limit)


#: engine -> the last day this process pruned that database's free-scan counters (gone with the engine).
_pruned_through: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()
_pruned_lock = threading.Lock()


def _prune_past_days_once_a_day(session: Session, today: str) -> None:
    """Delete the counters of past days, at most once per day per process and database.

    A counter only matters on its own UTC day; without this the table keeps one row per client per day
    forever. It runs inside the first reservation of a new client of the day (the transaction is already
    writing), so no scheduler is needed; other processes doing the same delete nothing or wait briefly.
    A refund for a reservation of a past day then finds no row and changes nothing, which is right: that
    allowance is over.
    """
    if prune_due_today(session.get_bind().engine, today):
        session.exec(delete(FreeScanCounter).where(col(FreeScanCounter.day) < today))


def prune_due_today(engine: Engine, today: str) -> bool:
    """True the first time this process asks for `engine`'s database on `today` (it then prunes the past
    days' counters), False after: one record for both ways of reserving (this one, store/hot_rows)."""
    with _pruned_lock:
        if _pruned_through.get(engine) == today:
            return False
        _pruned_through[engine] = today
        return True


def free_scans_used(session: Session, client: str, now: datetime) -> int:
    used = session.exec(
        select(FreeScanCounter.used).where(FreeScanCounter.client == client, FreeScanCounter.day == day_period(now))
    ).first()
    return used or 0


def refund(session: Session, reservation: Reservation) -> None:
    """Give a reserved unit back (to the period it was taken from, even if a new one began)."""
    if reservation.counter == "monthly":
        session.exec(
            update(MonthlyUsage)
            .where(
                col(MonthlyUsage.subscription_id) == int(reservation.owner),
                col(MonthlyUsage.period) == reservation.period,
                col(MonthlyUsage.used) > 0,
            )
            .values(used=col(MonthlyUsage.used) - 1)
        )
    else:
        session.exec(
            update(FreeScanCounter)
            .where(
                col(FreeScanCounter.client) == reservation.owner,
                col(FreeScanCounter.day) == reservation.period,
                col(FreeScanCounter.used) > 0,
            )
            .values(used=col(FreeScanCounter.used) - 1)
        )
    session.commit()


def reserve_monthly_scans(
    session: Session, subscription_id: int, now: datetime, limit: int, count: int, *, commit: bool = True
) -> Reservation | int:
    """Take `count` scans of this month's quota at once (a batch, issue 16), or none: then the number
    left is returned instead. One conditional update, exact under concurrency (see the module's docstring);
    each unit is refunded on its own (`refund` gives back one)."""
    period = month_period(now)
    insert_ignoring_conflicts(session, MonthlyUsage, {"subscription_id": subscription_id, "period": period, "used": 0})
    used = session.exec(
        update(MonthlyUsage)
        .where(
            col(MonthlyUsage.subscription_id) == subscription_id,
            col(MonthlyUsage.period) == period,
            col(MonthlyUsage.used) + count <= limit,
        )
        .values(used=col(MonthlyUsage.used) + count)
        .returning(col(MonthlyUsage.used))
    ).scalar_one_or_none()
    if used is None:
        left = monthly_scans_used(session, subscription_id, now)
        session.commit()
        return max(limit - left, 0)
    if commit:
        session.commit()
    return Reservation("monthly", str(subscription_id), period, used, limit)
