"""The email outbox: store first, send later, never drop.

An email is inserted in the same transaction as whatever it delivers (a token, an API key, a
report), so a crash can lose neither half. Workers then *claim* due rows with one statement
and send them outside any transaction:

- PostgreSQL: `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)`: concurrent
  workers skip each other's rows instead of waiting for them or taking them twice
  (https://www.postgresql.org/docs/current/sql-select.html#SQL-FOR-UPDATE-SHARE).
- SQLite: the same UPDATE; SQLite runs one writer at a time, and the outer WHERE repeats the
  "still due" condition, so a row claimed by another process in between is not claimed again.

A claim is a lease (`claimed_until`): a worker that dies mid-send leaves a row that becomes
due again when the lease runs out. Delivery is therefore at least once; a crash between the
SMTP server's "250 OK" and `mark_email_sent` can send an email twice, never zero times.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_
from sqlmodel import Session, col, func, select, update

from ._sql import insert_ignoring_conflicts
from .keys import normalise_email
from .models import OUTBOX_PENDING, OUTBOX_SENDING, OUTBOX_SENT, OutboxEmail

#: Longest error text kept per row (the column's size).
_MAX_ERROR = 500


@dataclass(frozen=True)
class QueuedEmail:
    """An email ready to store: the rendered message plus what the outbox needs to know about it."""

    kind: str
    recipient: str
    subject: str
    message: bytes
    #: Same key twice = one email (a webhook replayed, a confirmation reloaded).
    dedupe_key: str | None = None
    #: How long workers leave it to the request that queued it, which sends it at once (`claim_emails` with
    #: its id): otherwise a worker woken by other mail may claim it first, and the request would tell its
    #: user "not sent yet" about an email being sent. Past the hold (that process crashed, say) any worker
    #: sends it.
    held_for: timedelta = timedelta(0)


@dataclass(frozen=True)
class ClaimedEmail:
    id: int
    kind: str
    recipient: str
    message: bytes
    attempts: int  # including this one


def enqueue_email(session: Session, email: QueuedEmail, now: datetime, *, commit: bool = True) -> int | None:
    """Store an email for delivery. Returns its id, or None when its dedupe key was already queued.

    With `commit=False` the insert joins the caller's transaction (the thing the email delivers is
    committed together with it).
    """
    row = OutboxEmail(
        kind=email.kind,
        dedupe_key=email.dedupe_key,
        recipient=normalise_email(email.recipient),
        subject=email.subject[:255],
        message=email.message,
        status=OUTBOX_PENDING,
        attempts=0,
        next_attempt_at=now + email.held_for,
        created_at=now,
    )
    if email.dedupe_key is None:
        session.add(row)
        session.flush()
        email_id = row.id
    else:
        values = row.model_dump(exclude={"id"})
        if not insert_ignoring_conflicts(session, OutboxEmail, values):
            return None
        email_id = session.exec(select(OutboxEmail.id).where(OutboxEmail.dedupe_key == email.dedupe_key)).first()
    if commit:
        session.commit()
    return email_id


def _claim_ran_out(now: datetime) -> ColumnElement[bool]:
    """Left by a worker whose claim ended without a result (it crashed or hung)."""
    return and_(col(OutboxEmail.status) == OUTBOX_SENDING, col(OutboxEmail.claimed_until) < now)


def _due(now: datetime) -> ColumnElement[bool]:
    return or_(
        and_(col(OutboxEmail.status) == OUTBOX_PENDING, col(OutboxEmail.next_attempt_at) <= now), _claim_ran_out(now)
    )


def _unclaimed(now: datetime) -> ColumnElement[bool]:
    """Waiting (whenever it is due) or left by a worker whose claim ran out."""
    return or_(col(OutboxEmail.status) == OUTBOX_PENDING, _claim_ran_out(now))


def claim_emails(
    session: Session,
    worker: str,
    now: datetime,
    *,
    lease: timedelta = timedelta(minutes=5),
    limit: int = 10,
    email_id: int | None = None,
) -> list[ClaimedEmail]:
    """Claim up to `limit` due emails (or just `email_id`, due or held for its request) for `worker`;
    commits the claim."""
    claimable = _due(now) if email_id is None else _unclaimed(now)
    candidates = select(OutboxEmail.id).where(claimable).order_by(col(OutboxEmail.next_attempt_at), col(OutboxEmail.id))
    if email_id is not None:
        candidates = candidates.where(col(OutboxEmail.id) == email_id)
    candidates = candidates.limit(limit).with_for_update(skip_locked=True)  # ignored on SQLite
    rows = session.exec(
        update(OutboxEmail)
        .where(col(OutboxEmail.id).in_(candidates.scalar_subquery()), claimable)
        .values(
            status=OUTBOX_SENDING,
            claimed_by=worker,
            claimed_until=now + lease,
            attempts=col(OutboxEmail.attempts) + 1,
        )
        .returning(
            col(OutboxEmail.id),
            col(OutboxEmail.kind),
            col(OutboxEmail.recipient),
            col(OutboxEmail.message),
            col(OutboxEmail.attempts),
        )
    ).all()
    session.commit()
    return [ClaimedEmail(r[0], r[1], r[2], r[3] or b"", r[4]) for r in sorted(rows, key=lambda r: r[0])]


def mark_email_sent(session: Session, email_id: int, worker: str, now: datetime) -> bool:
    """Delivered: keep the row as a record, drop the message (it may hold a secret)."""
    result = session.exec(
        update(OutboxEmail)
        .where(
            col(OutboxEmail.id) == email_id,
            col(OutboxEmail.claimed_by) == worker,
            col(OutboxEmail.status) == OUTBOX_SENDING,
        )
        .values(status=OUTBOX_SENT, sent_at=now, message=None, claimed_until=None, last_error=None)
    )
    session.commit()
    return result.rowcount == 1


def mark_email_failed(session: Session, email_id: int, worker: str, retry_at: datetime, error: str) -> bool:
    """Not delivered this time: due again at `retry_at`."""
    result = session.exec(
        update(OutboxEmail)
        .where(
            col(OutboxEmail.id) == email_id,
            col(OutboxEmail.claimed_by) == worker,
            col(OutboxEmail.status) == OUTBOX_SENDING,
        )
        .values(
            status=OUTBOX_PENDING,
            next_attempt_at=retry_at,
            claimed_by=None,
            claimed_until=None,
            last_error=error[:_MAX_ERROR],
        )
    )
    session.commit()
    return result.rowcount == 1


def next_email_due_at(session: Session) -> datetime | None:
    """When the earliest pending email is due (the worker sleeps until then)."""
    pending = session.exec(
        select(func.min(OutboxEmail.next_attempt_at)).where(col(OutboxEmail.status) == OUTBOX_PENDING)
    ).first()
    leased = session.exec(
        select(func.min(OutboxEmail.claimed_until)).where(col(OutboxEmail.status) == OUTBOX_SENDING)
    ).first()
    moments = [m for m in (pending, leased) if m is not None]  # aware: min() keeps the column's UTC type
    return min(moments) if moments else None


def outbox_emails(session: Session, *, status: str | None = None) -> list[OutboxEmail]:
    """Rows of the outbox (operators, tests), oldest first."""
    query = select(OutboxEmail).order_by(col(OutboxEmail.id))
    if status is not None:
        query = query.where(OutboxEmail.status == status)
    return list(session.exec(query).all())


__all__ = [
    "ClaimedEmail",
    "QueuedEmail",
    "claim_emails",
    "enqueue_email",
    "mark_email_failed",
    "mark_email_sent",
    "next_email_due_at",
    "outbox_emails",
]
