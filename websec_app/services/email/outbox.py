"""Sending what the outbox holds: claim due emails, send them, retry failures with exponential backoff.

The store side (`websec_app.store.outbox`) explains the claim. Here:

- `Outbox.deliver_due()` sends everything due once (one claim, one send per row);
- `Outbox.deliver_now(id)` tries one just-queued email at once (the generate endpoint uses it so
  the buyer usually gets "was emailed" rather than "is queued");
- `OutboxWorker` is a daemon thread that calls `deliver_due()` when woken (`notify_outbox()`, called
  after every enqueue in this process) or when the next retry is due, and every `poll_seconds`
  anyway (emails queued by other processes);
- `outbox_lifespan` runs a worker for the lifetime of an ASGI app (serve-api, Reflex).

A failed send is never dropped: attempt n waits base * 2^(n-1) seconds (with +-20% jitter so
several workers do not retry in step), at most `max_delay`.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from websec_app.clock import clock_for
from websec_app.settings import Settings
from websec_app.store import Database, database_for
from websec_app.store.outbox import (
    ClaimedEmail,
    claim_emails,
    mark_email_failed,
    mark_email_sent,
    next_email_due_at,
)

from .transport import MailDeliveryError, MailTransport, transport_from_settings

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def backoff(attempts: int, *, base: float, maximum: float, jitter: float = 0.2) -> timedelta:
    """Delay before the next try after `attempts` failed ones: base * 2^(attempts-1), capped, jittered."""
    delay = min(maximum, base * (2 ** max(0, attempts - 1)))
    return timedelta(seconds=delay * random.uniform(1 - jitter, 1 + jitter))


@dataclass(frozen=True)
class DeliveryRound:
    claimed: int
    sent: int
    failed: int


class Outbox:
    """Delivery of stored emails through one transport."""

    def __init__(
        self,
        database: Database,
        transport: MailTransport,
        *,
        sender: str,
        clock: Clock = _utc_now,
        base_delay: float = 30.0,
        max_delay: float = 3600.0,
        lease: timedelta = timedelta(minutes=5),
        batch: int = 10,
    ) -> None:
        self.database = database
        self.transport = transport
        self.sender = sender
        self.clock = clock
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.lease = lease
        self.batch = batch
        #: Who holds a claim: unique per Outbox object, readable in the table.
        self.worker_id = f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def _send(self, email: ClaimedEmail) -> bool:
        try:
            self.transport.send(self.sender, email.recipient, email.message)
        except Exception as exc:  # noqa: BLE001 - any failure is this email's, retried; never the batch's or the buyer's
            if not isinstance(exc, MailDeliveryError):
                log.exception("email %s (%s): the transport failed unexpectedly", email.id, email.kind)
            retry_at = self.clock() + backoff(email.attempts, base=self.base_delay, maximum=self.max_delay)
            log.warning(
                "email %s (%s) to %s not delivered (attempt %d, retry at %s): %s",
                email.id,
                email.kind,
                email.recipient,
                email.attempts,
                retry_at.isoformat(timespec="seconds"),
                exc,
            )
            error = str(exc) if isinstance(exc, MailDeliveryError) else f"{type(exc).__name__}: {exc}"
            with self.database.session() as session:
                mark_email_failed(session, email.id, self.worker_id, retry_at, error)
            return False
        with self.database.session() as session:
            mark_email_sent(session, email.id, self.worker_id, self.clock())
        log.info("email %s (%s) delivered to %s", email.id, email.kind, email.recipient)
        return True

    def _deliver(self, claimed: list[ClaimedEmail]) -> DeliveryRound:
        sent = sum(1 for email in claimed if self._send(email))
        return DeliveryRound(len(claimed), sent, len(claimed) - sent)

    def deliver_due(self) -> DeliveryRound:
        """Claim up to `batch` due emails and try each once."""
        with self.database.session() as session:
            claimed = claim_emails(session, self.worker_id, self.clock(), lease=self.lease, limit=self.batch)
        return self._deliver(claimed)

    def deliver_now(self, email_id: int) -> bool:
        """Try one email now; False leaves it to the worker (retried with backoff)."""
        with self.database.session() as session:
            claimed = claim_emails(session, self.worker_id, self.clock(), lease=self.lease, email_id=email_id)
        return self._deliver(claimed).sent == 1

    def seconds_until_due(self) -> float | None:
        with self.database.session() as session:
            due = next_email_due_at(session)
        return None if due is None else (due - self.clock()).total_seconds()


#: Wake-up events of the workers running in this process (set by `notify_outbox`).
_wake_events: set[threading.Event] = set()
_wake_lock = threading.Lock()


def notify_outbox() -> None:
    """Tell this process's workers that an email was queued (they also poll, for other processes)."""
    with _wake_lock:
        for event in _wake_events:
            event.set()


class OutboxWorker:
    """A daemon thread delivering the outbox until `stop()`."""

    def __init__(self, outbox: Outbox, *, poll_seconds: float = 5.0) -> None:
        self.outbox = outbox
        self.poll_seconds = poll_seconds
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> OutboxWorker:
        with _wake_lock:
            _wake_events.add(self._wake)
        self._thread = threading.Thread(target=self._run, name="websec-outbox", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wake.set()
        with _wake_lock:
            _wake_events.discard(self._wake)
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        # First round at start-up: whatever a previous process queued and did not send goes out now.
        while not self._stopping.is_set():
            wait = self.poll_seconds
            try:
                round_ = self.outbox.deliver_due()
                if round_.claimed == self.outbox.batch:
                    continue  # more may be due right away
                due_in = self.outbox.seconds_until_due()
                if due_in is not None:
                    wait = min(self.poll_seconds, max(0.05, due_in))
            except Exception:  # noqa: BLE001 - a database hiccup must not kill delivery for good
                log.exception("outbox delivery round failed; retrying in %.0f s", wait)
            self._wake.wait(wait)
            self._wake.clear()


def outbox_for(settings: Settings, database: Database | None = None, **options: object) -> Outbox:
    """The outbox of these settings: SMTP from `WEBSEC_SMTP_URL`, else .eml files in `var/outbox/`."""
    options.setdefault("clock", clock_for(settings))
    return Outbox(
        database or database_for(settings.resolved_database_url),
        transport_from_settings(settings),
        sender=settings.mail.sender,
        **options,  # type: ignore[arg-type]
    )


@asynccontextmanager
async def outbox_lifespan(outbox: Outbox) -> AsyncIterator[OutboxWorker]:
    """Run a worker for `outbox` while an app runs: `app.register_lifespan_task(outbox_lifespan, outbox=...)`
    (Reflex)."""
    worker = OutboxWorker(outbox).start()
    log.info("outbox worker %s started", worker.outbox.worker_id)
    try:
        yield worker
    finally:
        worker.stop()


__all__ = [
    "DeliveryRound",
    "Outbox",
    "OutboxWorker",
    "backoff",
    "notify_outbox",
    "outbox_for",
    "outbox_lifespan",
]
