"""The outbox: stored first, sent by a worker, retried with backoff when the server is down, never sent twice
by competing workers, and whatever a previous process left is sent on the next start."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta

import pytest

from tests.api.fakes import FrozenClock
from tests.fixtures.providers import SmtpSink
from tests.payment_fixtures import Mailbox
from websec_app.services.email import Outbox, OutboxWorker, SmtpTransport
from websec_app.services.email.outbox import backoff
from websec_app.store import Database
from websec_app.store.models import OUTBOX_PENDING, OUTBOX_SENT
from websec_app.store.outbox import QueuedEmail, claim_emails, enqueue_email, outbox_emails

SENDER = "websec <billing@websec.test>"


def _mail(n: int = 1, key: str | None = None) -> QueuedEmail:
    message = f"From: {SENDER}\r\nTo: r{n}@example.com\r\nSubject: mail {n}\r\n\r\nhello {n}\r\n".encode()
    return QueuedEmail("test", f"r{n}@example.com", f"mail {n}", message, key)


def _queue(database: Database, clock: FrozenClock, *mails: QueuedEmail) -> list[int | None]:
    with database.session() as session:
        return [enqueue_email(session, mail, clock()) for mail in mails]


class Recorder:
    """A transport that keeps what it is given (for races, where SMTP would only add time)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.lock = threading.Lock()

    def send(self, sender: str, recipient: str, message: bytes) -> None:
        with self.lock:
            self.sent.append(recipient)


@pytest.fixture
def smtp_outbox(database: Database, clock: FrozenClock, smtp_server: SmtpSink) -> Outbox:
    transport = SmtpTransport.from_url(smtp_server.url, ssl_context=smtp_server.client_context, timeout=5)
    return Outbox(database, transport, sender=SENDER, clock=clock, base_delay=30, max_delay=3600)


def test_an_email_is_stored_then_sent_and_its_message_dropped(
    database: Database, clock: FrozenClock, smtp_outbox: Outbox, mailbox: Mailbox
) -> None:
    _queue(database, clock, _mail(1))
    with database.session() as session:
        assert [r.status for r in outbox_emails(session)] == [OUTBOX_PENDING]

    delivered = smtp_outbox.deliver_due()

    assert (delivered.claimed, delivered.sent) == (1, 1)
    assert [m.recipients for m in mailbox.messages] == [("r1@example.com",)]
    with database.session() as session:
        [row] = outbox_emails(session)
    assert row.status == OUTBOX_SENT and row.message is None and row.attempts == 1


def test_the_mail_server_down_then_up(
    database: Database, clock: FrozenClock, smtp_outbox: Outbox, smtp_server: SmtpSink, mailbox: Mailbox
) -> None:
    _queue(database, clock, _mail(1))
    smtp_server.down()

    first = smtp_outbox.deliver_due()
    clock.advance(seconds=20)
    too_early = smtp_outbox.deliver_due()
    clock.advance(seconds=20)
    second = smtp_outbox.deliver_due()
    with database.session() as session:
        [row] = outbox_emails(session)
    smtp_server.up()
    clock.advance(minutes=2)
    third = smtp_outbox.deliver_due()

    assert (first.failed, too_early.claimed, second.failed) == (1, 0, 1)
    assert row.status == OUTBOX_PENDING and row.attempts == 2 and "Connection refused" in (row.last_error or "")
    assert timedelta(seconds=48) <= row.next_attempt_at - clock.now + timedelta(minutes=2) <= timedelta(seconds=72)
    assert third.sent == 1
    assert [m.message["Subject"] for m in mailbox.messages] == ["mail 1"]


def test_a_transport_that_raises_anything_fails_that_email_only(database: Database, clock: FrozenClock) -> None:
    # Given a batch where the transport trips on one email with something other than a delivery error
    # (smtplib's UnicodeEncodeError on an address it could not encode, once)
    class Trips(Recorder):
        def send(self, sender: str, recipient: str, message: bytes) -> None:
            if recipient == "r1@example.com":
                raise UnicodeEncodeError("ascii", recipient, 0, 1, "ordinal not in range(128)")
            super().send(sender, recipient, message)

    transport = Trips()
    _queue(database, clock, _mail(1), _mail(2))
    outbox = Outbox(database, transport, sender=SENDER, clock=clock, base_delay=30, max_delay=3600)

    delivered = outbox.deliver_due()

    # Then the other email goes, and the one that tripped waits for its retry with the error kept
    assert (delivered.claimed, delivered.sent, delivered.failed) == (2, 1, 1)
    assert transport.sent == ["r2@example.com"]
    with database.session() as session:
        rows = {row.recipient: row for row in outbox_emails(session)}
    assert rows["r1@example.com"].status == OUTBOX_PENDING and "UnicodeEncodeError" in (
        rows["r1@example.com"].last_error or ""
    )
    assert rows["r2@example.com"].status == OUTBOX_SENT


def test_backoff_doubles_up_to_the_cap() -> None:
    delays = [backoff(n, base=30, maximum=3600, jitter=0).total_seconds() for n in (1, 2, 3, 8, 20)]

    assert delays == [30, 60, 120, 3600, 3600]


def test_enqueuing_the_same_key_twice_stores_one_email(database: Database, clock: FrozenClock) -> None:
    ids = _queue(database, clock, _mail(1, key="scan_token:7"), _mail(2, key="scan_token:7"))

    assert ids[0] is not None and ids[1] is None
    with database.session() as session:
        assert len(outbox_emails(session)) == 1


@pytest.mark.parametrize("workers", [4])
def test_competing_workers_send_each_email_once(any_database: Database, clock: FrozenClock, workers: int) -> None:
    _queue(any_database, clock, *(_mail(n) for n in range(40)))
    recorder = Recorder()
    outboxes = [Outbox(any_database, recorder, sender=SENDER, clock=clock, batch=3) for _ in range(workers)]
    barrier = threading.Barrier(workers)

    def drain(outbox: Outbox) -> None:
        barrier.wait()
        while outbox.deliver_due().claimed:
            pass

    threads = [threading.Thread(target=drain, args=(outbox,)) for outbox in outboxes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(recorder.sent) == sorted(f"r{n}@example.com" for n in range(40))


def test_a_claim_of_a_crashed_worker_is_taken_over_when_its_lease_ends(database: Database, clock: FrozenClock) -> None:
    _queue(database, clock, _mail(1))
    with database.session() as session:
        claim_emails(session, "crashed-worker", clock(), lease=timedelta(minutes=5))
    recorder = Recorder()
    survivor = Outbox(database, recorder, sender=SENDER, clock=clock)

    during_lease = survivor.deliver_due()
    clock.advance(minutes=6)
    after_lease = survivor.deliver_due()

    assert (during_lease.claimed, after_lease.sent) == (0, 1)
    assert recorder.sent == ["r1@example.com"]


def test_mail_left_by_a_previous_process_is_sent_when_a_worker_starts(
    database: Database, clock: FrozenClock, smtp_outbox: Outbox, mailbox: Mailbox
) -> None:
    _queue(database, clock, _mail(1), _mail(2))  # queued, then the process died before sending

    worker = OutboxWorker(smtp_outbox, poll_seconds=0.05).start()
    try:
        delivered = mailbox.wait_for(2)
    finally:
        worker.stop()

    assert sorted(m.message["Subject"] for m in delivered) == ["mail 1", "mail 2"]


def test_an_email_held_for_its_request_is_sent_by_it_not_by_a_worker(database: Database, clock: FrozenClock) -> None:
    # Given the compliance report's email, held for the request that queued it, and a worker woken meanwhile
    (email_id,) = _queue(database, clock, dataclasses.replace(_mail(1), held_for=timedelta(minutes=1)))
    assert email_id is not None
    requests_outbox, workers_outbox = Recorder(), Recorder()
    request = Outbox(database, requests_outbox, sender=SENDER, clock=clock)
    worker = Outbox(database, workers_outbox, sender=SENDER, clock=clock)

    # When the worker runs its round first, then the request sends its email
    worker_round = worker.deliver_due()
    sent_by_request = request.deliver_now(email_id)

    # Then the worker left it alone and the request sent it
    assert worker_round.claimed == 0 and sent_by_request
    assert (workers_outbox.sent, requests_outbox.sent) == ([], ["r1@example.com"])


def test_an_email_held_for_a_request_that_never_sends_it_goes_out_after_the_hold(
    database: Database, clock: FrozenClock
) -> None:
    _queue(database, clock, dataclasses.replace(_mail(1), held_for=timedelta(minutes=1)))
    recorder = Recorder()
    worker = Outbox(database, recorder, sender=SENDER, clock=clock)

    during_hold = worker.deliver_due()
    clock.advance(minutes=2)
    after_hold = worker.deliver_due()

    assert (during_hold.claimed, after_hold.sent) == (0, 1) and recorder.sent == ["r1@example.com"]
