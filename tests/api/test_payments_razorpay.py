"""Provider A end to end: the official razorpay SDK against the local Razorpay stand-in, signed webhooks,
and every email delivered to a real SMTP server. One-time scan, compliance report, Pro subscription."""

from __future__ import annotations

import logging

import httpx
import pytest
from sqlmodel import col, select

from tests.api.payment_helpers import (
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
    to,
)
from tests.fixtures.providers import RazorpayStandIn
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import PaymentNotVerified, PaymentService
from websec_app.services.prices import Product
from websec_app.store import Database
from websec_app.store.models import WebhookEvent

BUYER = "buyer@example.com"


def _events(database: Database) -> list[tuple[str, str | None]]:
    with database.session() as session:
        return [(e.event_type, e.outcome) for e in session.exec(select(WebhookEvent).order_by(col(WebhookEvent.id)))]


# --- one-time scan -------------------------------------------------------------------------------


async def test_one_time_scan_paid_verified_emailed_and_used_once(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference)

    verified = await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER})
    again = await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER})
    late_webhook = await deliver(client, "razorpay", razorpay_api.webhook("payment.captured", payment=payment))
    [mail] = mailbox.wait_for(1)
    token = verified.json()["token"]
    first_scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token})
    second_scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token})

    assert start.amount == 9900 and start.currency == "INR" and start.razorpay_options is not None
    assert (
        start.razorpay_options["order_id"] == start.reference and start.razorpay_options["key"] == razorpay_api.key_id
    )
    assert verified.status_code == 200 and verified.json() == {"ok": True, "token": token}
    assert again.status_code == 409
    assert late_webhook.json() == {"received": True, "outcome": "already_fulfilled"}
    assert secret_in(mail, "wst_") == token and mail.recipients == (BUYER,)
    assert first_scan.status_code == 200 and first_scan.json()["pro_locked"] is False
    assert second_scan.status_code == 403
    assert len(mailbox.messages) == 1


async def test_the_checkout_callback_verifies_the_signature_with_the_sdk(
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    worker: object,
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, signature = razorpay_api.pay_order(start.reference)

    with pytest.raises(PaymentNotVerified, match="signature is not valid"):
        service.confirm_razorpay_payment(order_id=start.reference, payment_id=payment["id"], signature="0" * 64)
    confirmation = service.confirm_razorpay_payment(
        order_id=start.reference, payment_id=payment["id"], signature=signature
    )
    replay = service.confirm_razorpay_payment(order_id=start.reference, payment_id=payment["id"], signature=signature)

    assert confirmation.token is not None and confirmation.token.startswith("wst_")
    assert replay.token is None and not replay.newly_fulfilled
    assert len(mailbox.wait_for(1)) == 1


async def test_a_payment_that_is_not_captured_or_not_ours_is_402(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    failed, _ = razorpay_api.pay_order(start.reference, status="failed")
    compliance = service.start_checkout(Product.COMPLIANCE_REPORT, "razorpay", BUYER, url="example.com")
    other_product, _ = razorpay_api.pay_order(compliance.reference)

    responses = [
        await client.post("/api/verify-one-time", json={"payment_id": pid, "email": BUYER})
        for pid in (failed["id"], other_product["id"], "pay_DoesNotExist00")
    ]

    assert [r.status_code for r in responses] == [402, 402, 402]
    assert "not for a one-time scan" in responses[1].json()["error"]


async def test_an_amount_that_is_not_the_price_issues_nothing(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference, amount=100)  # 1 rupee instead of 99

    with caplog.at_level(logging.ERROR):
        verified = await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER})
        hook = await deliver(client, "razorpay", razorpay_api.webhook("payment.captured", payment=payment))

    assert verified.status_code == 402 and "does not match the price" in verified.json()["error"]
    assert hook.status_code == 200 and hook.json()["outcome"] == "amount_mismatch"
    assert "reports 100 INR for one_time_scan, the price is 9900 INR: nothing issued" in caplog.text
    assert _events(database) == [("payment.captured", "amount_mismatch")]
    assert mailbox.messages == []


# --- compliance report ---------------------------------------------------------------------------


async def test_compliance_report_token_usable_after_the_webhook_and_the_pdf_emailed(
    client: httpx.AsyncClient,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
) -> None:
    pay = await client.post(
        "/api/compliance-report/pay", json={"provider": "razorpay", "email": BUYER, "url": "example.com"}
    )
    body = pay.json()
    generate = {"token": body["token"], "url": "example.com", "email": BUYER}
    too_early = await client.post("/api/compliance-report/generate", json=generate)
    payment, _ = razorpay_api.pay_order(body["order_id"])
    webhook = razorpay_api.webhook("payment.captured", payment=payment)

    first = await deliver(client, "razorpay", webhook)
    replay = await deliver(client, "razorpay", webhook)
    report = await client.post("/api/compliance-report/generate", json=generate)
    reuse = await client.post("/api/compliance-report/generate", json=generate)

    assert set(body) == {"order_id", "amount", "key", "token"} and body["amount"] == 24900
    assert body["key"] == razorpay_api.key_id and body["order_id"] in razorpay_api.orders
    assert too_early.status_code == 403 and "has not been confirmed" in too_early.json()["error"]
    assert (first.json()["outcome"], replay.json()["outcome"]) == ("fulfilled", "duplicate")
    assert report.status_code == 200
    assert report.json()["message"] == f"The compliance report for example.com was emailed to {BUYER}."
    assert reuse.status_code == 403 and "already used" in reuse.json()["error"]
    [mail] = mailbox.wait_for(1)
    [(filename, pdf)] = mail.attachments()
    assert filename == "example.com-websec-compliance.pdf" and pdf.startswith(b"%PDF-")
    assert _events(database) == [("payment.captured", "fulfilled")]  # the replay changed nothing


async def test_compliance_token_confirmed_by_asking_razorpay_when_callback_and_webhook_are_missing(
    client: httpx.AsyncClient,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
) -> None:
    body = (
        await client.post("/api/compliance-report/pay", json={"provider": "razorpay", "email": BUYER, "url": "a.test"})
    ).json()
    razorpay_api.pay_order(body["order_id"])

    report = await client.post(
        "/api/compliance-report/generate", json={"token": body["token"], "url": "a.test", "email": BUYER}
    )

    assert report.status_code == 200
    assert mailbox.wait_for(1)[0].attachments()[0][0] == "a.test-websec-compliance.pdf"


# --- Pro subscription ----------------------------------------------------------------------------


async def test_pro_subscription_key_emailed_renewed_halted_and_cancelled(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "razorpay", "pro@example.com")
    subscription = razorpay_api.subscriptions[start.reference]
    first_payment, signature = razorpay_api.charge_subscription(start.reference, email="pro@example.com")

    callback = service.confirm_razorpay_subscription(
        subscription_id=start.reference, payment_id=first_payment["id"], signature=signature
    )
    webhook = await deliver(
        client,
        "razorpay",
        razorpay_api.webhook("subscription.charged", payment=first_payment, subscription=subscription),
    )
    [welcome] = mailbox.wait_for(1)
    key = secret_in(welcome, "wsk_")

    async def key_works() -> int:
        return (await client.get("/api/verify-key", headers={"X-API-Key": key})).status_code

    active = await key_works()
    renewal, _ = razorpay_api.charge_subscription(start.reference)
    renewed = await deliver(
        client, "razorpay", razorpay_api.webhook("subscription.charged", payment=renewal, subscription=subscription)
    )
    after_renewal = await key_works()
    # (the stand-in halts it too: events of one second that disagree are decided by what Razorpay says now)
    halted = await deliver(client, "razorpay", razorpay_api.halt(start.reference))
    after_halt = await key_works()
    recovered_payment, _ = razorpay_api.charge_subscription(start.reference)
    await deliver(
        client,
        "razorpay",
        razorpay_api.webhook("subscription.charged", payment=recovered_payment, subscription=subscription),
    )
    after_recovery = await key_works()
    cancelled = await deliver(
        client, "razorpay", razorpay_api.webhook("subscription.cancelled", subscription=subscription)
    )
    after_cancel = await key_works()

    assert start.amount == 49900 and start.razorpay_options is not None
    assert start.razorpay_options["subscription_id"] == start.reference
    assert subscription["plan_id"] in razorpay_api.plans  # the plan was created through the SDK
    assert callback.message == "Your Pro API key was emailed to pro@example.com."
    assert webhook.json()["outcome"] == "already_fulfilled"  # the callback came first: one key only
    assert (active, after_renewal) == (200, 200) and renewed.json()["outcome"] == "renewed"
    assert halted.json()["outcome"] == "status_changed" and after_halt == 403
    assert after_recovery == 200
    assert cancelled.json()["outcome"] == "status_changed" and after_cancel == 403
    assert len(to(mailbox.messages, "pro@example.com", "API key")) == 1


async def test_a_webhook_with_a_bad_signature_is_400_and_changes_nothing(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    database: Database,
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference)
    forged = razorpay_api.webhook("payment.captured", payment=payment, secret="not-the-secret")
    tampered = razorpay_api.webhook("payment.captured", payment=payment)
    tampered_body = tampered.body.replace(b'"amount":9900', b'"amount":9901')

    responses = [
        await deliver(client, "razorpay", forged),
        await client.post("/api/webhooks/razorpay", content=tampered_body, headers=tampered.headers),
        await client.post("/api/webhooks/razorpay", content=tampered.body),  # no signature header
        # a non-ASCII signature (HTTP headers arrive as Latin-1): hmac.compare_digest raised TypeError, a 500
        await client.post("/api/webhooks/razorpay", content=tampered.body, headers={"X-Razorpay-Signature": b"\xe9"}),
    ]

    assert [r.status_code for r in responses] == [400, 400, 400, 400]
    assert responses[0].json() == {"error": "The webhook signature does not verify."}
    assert _events(database) == []


def test_a_payment_id_with_a_nul_is_refused_before_the_database_is_asked(
    paid_settings, any_database: Database, clock, smtp_server
) -> None:
    # PostgreSQL refuses a NUL in a query string: the lookup ran before the id's format check, a 500 there
    from tests.payment_fixtures import make_service
    from websec_app.services.payments.errors import InvalidPaymentId

    service = make_service(paid_settings, any_database, clock, smtp_server)

    with pytest.raises(InvalidPaymentId):
        service.verify_one_time_payment("pay_\x00AbCdEfGhIjKl", BUYER)
