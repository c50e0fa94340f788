"""Payment test fixtures: provider stand-ins, a real SMTP server, and a payment service wired to them.

Registered by tests/services/conftest.py, and imported by name in tests/api/test_payments*.py.
The stand-ins and the SMTP server are session-wide; each test gets a fresh database, a cleared
mailbox and fresh settings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.fakes import FrozenClock
from tests.fixtures.pki import Pki
from tests.fixtures.providers import RazorpayStandIn, SmtpSink, StripeStandIn
from tests.fixtures.providers.smtp import Delivered
from websec_app.services.email import Outbox, OutboxWorker, SmtpTransport
from websec_app.services.payments import PaymentService
from websec_app.settings import MailSettings, PaymentSettings, Settings
from websec_app.store import Database


@pytest.fixture(scope="session")
def razorpay_api() -> Iterator[RazorpayStandIn]:
    with RazorpayStandIn() as server:
        yield server  # type: ignore[misc]


@pytest.fixture(scope="session")
def stripe_api() -> Iterator[StripeStandIn]:
    with StripeStandIn() as server:
        yield server  # type: ignore[misc]


@pytest.fixture(scope="session")
def smtp_server(pki: Pki) -> Iterator[SmtpSink]:
    sink = SmtpSink(pki).up()
    yield sink
    sink.down()


class Mailbox:
    """What the SMTP server received during one test."""

    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    @property
    def messages(self) -> list[Delivered]:
        with self.sink.lock:
            return list(self.sink.messages)

    def wait_for(self, count: int = 1, timeout: float = 10.0) -> list[Delivered]:
        """Block until `count` messages arrived (the outbox worker runs on its own thread)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.messages) >= count:
                return self.messages
            time.sleep(0.02)
        raise AssertionError(
            f"expected {count} emails, got {len(self.messages)}: {[m.message['Subject'] for m in self.messages]}"
        )


@pytest.fixture
def mailbox(smtp_server: SmtpSink) -> Iterator[Mailbox]:
    smtp_server.up()
    smtp_server.clear()
    yield Mailbox(smtp_server)
    smtp_server.up()  # a test that took it down leaves it running for the next one


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def paid_settings(
    tmp_path: Path, razorpay_api: RazorpayStandIn, stripe_api: StripeStandIn, smtp_server: SmtpSink
) -> Settings:
    """Both providers configured against the stand-ins, mail through the SMTP server."""
    return Settings(
        data_dir=tmp_path,
        base_url="https://websec.test",
        payments=PaymentSettings(
            razorpay_key_id=razorpay_api.key_id,
            razorpay_key_secret=razorpay_api.key_secret,
            razorpay_webhook_secret=razorpay_api.webhook_secret,
            razorpay_base_url=razorpay_api.base_url,
            stripe_secret_key=stripe_api.secret_key,
            stripe_webhook_secret=stripe_api.webhook_secret,
            stripe_api_base=stripe_api.base_url,
        ),
        mail=MailSettings(smtp_url=smtp_server.url, sender="websec <billing@websec.test>"),
    )


def make_service(settings: Settings, database: Database, clock: FrozenClock, sink: SmtpSink) -> PaymentService:
    transport = SmtpTransport.from_url(settings.mail.smtp_url, ssl_context=sink.client_context, timeout=5)
    outbox = Outbox(database, transport, sender=settings.mail.sender, clock=clock, base_delay=30, max_delay=3600)
    return PaymentService(settings, database, outbox, clock=clock)


@pytest.fixture
def service(paid_settings: Settings, database: Database, clock: FrozenClock, smtp_server: SmtpSink) -> PaymentService:
    return make_service(paid_settings, database, clock, smtp_server)


@pytest.fixture
def worker(service: PaymentService) -> Iterator[OutboxWorker]:
    """The outbox worker of `service`, running on its thread for the test."""
    running = OutboxWorker(service.outbox, poll_seconds=0.05).start()
    yield running
    running.stop()


__all__ = [
    "Mailbox",
    "clock",
    "mailbox",
    "make_service",
    "paid_settings",
    "razorpay_api",
    "service",
    "smtp_server",
    "stripe_api",
    "worker",
]
