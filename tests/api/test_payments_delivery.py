"""Nothing bought is lost: the mail server down then up, a process that dies after the payment, and racing
generate calls that must use a compliance token exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FakeScanner, FrozenClock
from tests.api.payment_helpers import deliver, secret_in
from tests.fixtures.providers import SmtpSink, StripeStandIn
from tests.payment_fixtures import Mailbox, make_service
from websec_app.services.email import OutboxWorker
from websec_app.services.payments import PaymentService
from websec_app.services.prices import Product
from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.models import OUTBOX_PENDING, OUTBOX_SENT
from websec_app.store.outbox import outbox_emails

BUYER = "buyer@example.com"


async def _token_mail_sent(database: Database) -> None:
    """Until the outbox has recorded the token's email as sent: the mail server holds it before the sender has
    finished its conversation (QUIT), and a server taken down in between fails that send and queues it again."""
    for _ in range(200):
        with database.session() as session:
            if [row.status for row in outbox_emails(session)] == [OUTBOX_SENT]:
                return
        await asyncio.sleep(0.02)
    raise AssertionError("the token's email was not recorded as sent")


async def _paid_compliance_token(client: httpx.AsyncClient, stripe_api: StripeStandIn, mailbox: Mailbox) -> str:
    pay = await client.post("/api/compliance-report/pay", json={"provider": "stripe", "email": BUYER, "url": "a.test"})
    session_id = pay.json()["checkout_url"].rsplit("/", 1)[1]
    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(session_id)))
    token = secret_in(mailbox.wait_for(1)[0], "wsc_")
    mailbox.sink.clear()
    return token


async def test_the_mail_server_down_then_up_still_delivers_the_report(
    make_api: Callable[..., FastAPI],
    paid_settings: Settings,
    service: PaymentService,
    worker: OutboxWorker,
    stripe_api: StripeStandIn,
    smtp_server: SmtpSink,
    mailbox: Mailbox,
    clock: FrozenClock,
    database: Database,
) -> None:
    async with client_for(make_api(settings=paid_settings, payments=service)) as client:
        token = await _paid_compliance_token(client, stripe_api, mailbox)
        await _token_mail_sent(database)
        smtp_server.down()
        body = {"token": token, "url": "a.test", "email": BUYER}

        queued = await client.post("/api/compliance-report/generate", json=body)
        reuse = await client.post("/api/compliance-report/generate", json=body)
        await asyncio.sleep(0.3)  # the worker tries again and again: nothing is due before the backoff
        with database.session() as session:
            [pending] = outbox_emails(session, status=OUTBOX_PENDING)
        smtp_server.up()
        clock.advance(minutes=2)  # past the first retry's backoff (30 s +- 20%)
        [mail] = mailbox.wait_for(1)

    assert queued.status_code == 200
    assert "queued for buyer@example.com" in queued.json()["message"]
    assert reuse.status_code == 403  # the token was used when the report was queued, not when it was sent
    assert pending.attempts == 1 and "Connection refused" in (pending.last_error or "")
    assert mail.attachments()[0][0] == "a.test-websec-compliance.pdf"


async def test_a_process_that_dies_after_the_payment_loses_nothing(
    make_api: Callable[..., FastAPI],
    paid_settings: Settings,
    service: PaymentService,
    stripe_api: StripeStandIn,
    smtp_server: SmtpSink,
    mailbox: Mailbox,
    clock: FrozenClock,
    database: Database,
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", "pro@example.com")
    async with client_for(make_api(settings=paid_settings, payments=service)) as client:  # no outbox worker runs
        hook = await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(start.reference)))
    assert hook.json()["outcome"] == "fulfilled" and mailbox.messages == []  # the process "dies" here

    restarted = make_service(paid_settings, database, clock, smtp_server)
    worker = OutboxWorker(restarted.outbox, poll_seconds=0.05).start()
    try:
        [mail] = mailbox.wait_for(1)
    finally:
        worker.stop()

    assert secret_in(mail, "wsk_").startswith("wsk_")


async def test_racing_generate_calls_use_the_token_once(
    make_api: Callable[..., FastAPI],
    paid_settings: Settings,
    service: PaymentService,
    worker: OutboxWorker,
    stripe_api: StripeStandIn,
    scanner: FakeScanner,
    mailbox: Mailbox,
) -> None:
    async with client_for(make_api(settings=paid_settings, payments=service)) as client:
        token = await _paid_compliance_token(client, stripe_api, mailbox)
        scanner.delay = 0.05  # every request is past the token check before any of them queues its report
        body = {"token": token, "url": "a.test", "email": BUYER}

        responses = await asyncio.gather(*(client.post("/api/compliance-report/generate", json=body) for _ in range(6)))
        await asyncio.sleep(0.3)

    assert sorted(r.status_code for r in responses) == [200, 403, 403, 403, 403, 403]
    assert len(mailbox.messages) == 1


async def test_an_internationalised_buyer_gets_the_report(
    make_api: Callable[..., FastAPI],
    paid_settings: Settings,
    service: PaymentService,
    worker: OutboxWorker,
    stripe_api: StripeStandIn,
    mailbox: Mailbox,
) -> None:
    # Given a paid compliance token, and a delivery address whose local part is not ASCII (RFC 6531)
    async with client_for(make_api(settings=paid_settings, payments=service)) as client:
        token = await _paid_compliance_token(client, stripe_api, mailbox)
        body = {"token": token, "url": "a.test", "email": "用户@例子.广告"}

        generated = await client.post("/api/compliance-report/generate", json=body)
        [mail] = mailbox.wait_for(1)

    # Then it is sent over SMTPUTF8 (smtplib raised UnicodeEncodeError: a 500, the token used, the report lost)
    assert generated.status_code == 200 and "emailed to 用户@例子.广告" in generated.json()["message"]
    assert mail.recipients == ("用户@例子.广告",)
    assert mail.attachments()[0][0] == "a.test-websec-compliance.pdf"
