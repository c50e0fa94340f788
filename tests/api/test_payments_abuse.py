"""Issue 12, hostile clients: paid work and payments that cannot be abused.

Each test reproduces an attack measured on the service before issue 12: unpaid tokens holding scan slots,
one paid token buying many scans, verify-one-time handing a token to whoever presents a payment id, email
addresses with control characters, a sandbox that gives reports away, refunds and disputes that leave what
was bought usable, and webhook de-duplication on an unsigned header. The real SDKs run against the local
stand-ins (tests/fixtures/providers/), so signatures are really verified.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FakeScanner, FrozenClock
from tests.api.payment_helpers import (
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
)
from tests.fixtures.providers import RazorpayStandIn, StripeStandIn
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import PaymentService
from websec_app.services.prices import Product
from websec_app.settings import Settings
from websec_app.store import Database, find_compliance_token

BUYER = "buyer@example.com"
LOOPBACK = "127.0.0.1"


def _paid_razorpay_compliance_token(service: PaymentService, razorpay_api: RazorpayStandIn) -> str:
    start = service.start_checkout(Product.COMPLIANCE_REPORT, "razorpay", BUYER, url="shop.test")
    payment, signature = razorpay_api.pay_order(start.reference)
    service.confirm_razorpay_payment(order_id=start.reference, payment_id=payment["id"], signature=signature)
    assert start.token is not None
    return start.token


# --- 1. paid work is claimed before it is done ----------------------------------------------------------


async def test_an_unpaid_token_is_refused_without_taking_a_scan_slot(
    make_api: Callable[..., FastAPI], settings: Settings, scanner: FakeScanner
) -> None:
    # Given the one scan slot taken by a slow free scan and no room to queue
    scanner.gate = asyncio.Event()
    api = make_api(settings=settings.with_overrides(max_concurrent_scans=1, scan_queue=0))
    async with client_for(api, ip=LOOPBACK) as client:
        pay = (await client.post("/api/compliance-report/pay", json={**_PAY, "provider": "razorpay"})).json()
        running = asyncio.create_task(client.post("/api/scan", json={"url": "busy.example"}))
        while not scanner.calls:
            await asyncio.sleep(0.005)

        # When an unpaid token asks for a report
        refused = await client.post(
            "/api/compliance-report/generate", json={"token": pay["token"], "url": "a.example", "email": BUYER}
        )
        scanner.gate.set()
        await running

    # Then it is told the payment is not confirmed (403), not that the scanner is busy: it never queued
    assert refused.status_code == 403 and "has not been confirmed" in refused.json()["error"]


async def test_concurrent_generates_with_one_paid_token_scan_the_target_once(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, scanner: FakeScanner
) -> None:
    token = _paid_razorpay_compliance_token(service, razorpay_api)
    scanner.delay = 0.05
    body = {"token": token, "url": "shop.test", "email": BUYER}

    answers = await asyncio.gather(*(client.post("/api/compliance-report/generate", json=body) for _ in range(20)))

    assert sorted(a.status_code for a in answers).count(200) == 1
    assert {a.status_code for a in answers} == {200, 403}
    assert len(scanner.calls) == 1


async def test_a_reservation_whose_holder_died_runs_out_and_the_token_is_usable_again(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    clock: FrozenClock,
    database: Database,
) -> None:
    from websec_app.store.tokens import COMPLIANCE_LEASE, reserve_compliance_token

    token = _paid_razorpay_compliance_token(service, razorpay_api)
    with database.session() as session:
        reserve_compliance_token(session, token, clock())  # a process that crashed mid-scan
    body = {"token": token, "url": "shop.test", "email": BUYER}

    during = await client.post("/api/compliance-report/generate", json=body)
    clock.advance(seconds=COMPLIANCE_LEASE.total_seconds() + 1)
    after = await client.post("/api/compliance-report/generate", json=body)

    assert during.status_code == 403
    assert after.status_code == 200
    with database.session() as session:
        row = find_compliance_token(session, token)
    assert row is not None and row.used_at is not None


async def test_provider_status_checks_are_cached_per_token_and_limited_per_ip(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn
) -> None:
    def status_calls() -> int:
        return sum(1 for c in razorpay_api.calls if c.path.endswith("/payments") and "/orders/" in c.path)

    before = status_calls()
    one = service.start_checkout(Product.COMPLIANCE_REPORT, "razorpay", BUYER, url="shop.test")
    same_token = [
        await client.post("/api/compliance-report/generate", json={"token": one.token, "url": "a.b", "email": BUYER})
        for _ in range(10)
    ]
    assert status_calls() - before == 1  # cached: one provider call for ten checks of one token
    assert {r.status_code for r in same_token} == {403}

    others = []
    for _ in range(30):
        start = service.start_checkout(Product.COMPLIANCE_REPORT, "razorpay", BUYER, url="shop.test")
        body = {"token": start.token, "url": "a.b", "email": BUYER}
        others.append(await client.post("/api/compliance-report/generate", json=body))
    limited = [r for r in others if r.status_code == 429]
    assert limited and "error" in limited[0].json() and int(limited[0].headers["Retry-After"]) >= 1
    assert status_calls() - before < 20


async def test_pay_is_rate_limited_per_ip(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    async with client_for(make_api(settings=settings), ip="198.51.100.4") as client:
        answers = [await client.post("/api/compliance-report/pay", json=_PAY) for _ in range(40)]
    async with client_for(make_api(settings=settings), ip="198.51.100.5") as other:
        fresh = await other.post("/api/compliance-report/pay", json=_PAY)

    limited = [a for a in answers if a.status_code == 429]
    assert limited, [a.status_code for a in answers]
    assert set(limited[0].json()) == {"error"} and int(limited[0].headers["Retry-After"]) >= 1
    assert fresh.status_code != 429


_PAY = {"provider": "stripe", "email": BUYER, "url": "example.com"}


# --- 2. verify-one-time ---------------------------------------------------------------------------------


async def test_an_authorized_payment_is_not_paid(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference, status="authorized")

    response = await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER})

    assert response.status_code == 402


async def test_the_token_goes_only_to_the_address_the_order_was_made_for(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference)

    stranger = await client.post(
        "/api/verify-one-time", json={"payment_id": payment["id"], "email": "thief@example.net"}
    )
    owner = await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER.upper()})
    [mail] = mailbox.wait_for(1)

    assert stranger.status_code == 402 and "email" in stranger.json()["error"]
    assert owner.status_code == 200
    assert mail.recipients == (BUYER,) and secret_in(mail, "wst_") == owner.json()["token"]


@pytest.mark.parametrize(
    "payment_id", ["pay_../../orders", "pay_short", "order_AbCdEfGhIjKlMn", "pay_AbCdEfGhIjKlMn/x"]
)
async def test_a_malformed_payment_id_is_400_before_any_provider_call(
    client: httpx.AsyncClient, razorpay_api: RazorpayStandIn, payment_id: str
) -> None:
    calls = len(razorpay_api.calls)

    response = await client.post("/api/verify-one-time", json={"payment_id": payment_id, "email": BUYER})

    assert response.status_code == 400
    assert len(razorpay_api.calls) == calls


# --- 3. email addresses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email", ["a\x00b@c.com", "<a@example.com>", "a@example.com, b@example.com", 'a"b@example.com', "a;b@example.com"]
)
async def test_addresses_with_control_or_header_characters_are_refused(
    make_api: Callable[..., FastAPI], settings: Settings, email: str
) -> None:
    async with client_for(make_api(settings=settings), ip=LOOPBACK) as client:
        pay = await client.post("/api/compliance-report/pay", json={**_PAY, "email": email})
        generate = await client.post(
            "/api/compliance-report/generate", json={"token": "wsc_x", "url": "example.com", "email": email}
        )
        verify = await client.post("/api/verify-one-time", json={"payment_id": "pay_AbCdEfGhIjKlMn", "email": email})

    assert [pay.status_code, generate.status_code, verify.status_code] == [400, 400, 400]


async def test_an_internationalised_address_is_accepted(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    async with client_for(make_api(settings=settings), ip=LOOPBACK) as client:
        pay = await client.post("/api/compliance-report/pay", json={**_PAY, "email": "用户@例子.广告"})

    assert pay.status_code == 200


async def test_the_use_cases_refuse_the_same_addresses(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    from websec_app.services.payments import PaymentNotVerified
    from websec_app.usecases import purchases

    runtime = make_api(settings=settings).state.runtime
    with pytest.raises(PaymentNotVerified):
        await purchases.start_checkout(runtime, Product.ONE_TIME_SCAN, "stripe", "a\x00b@c.com")


# --- 4. the sandbox is safe by default ------------------------------------------------------------------


async def test_without_keys_a_public_base_url_gets_no_sandbox(
    make_api: Callable[..., FastAPI], settings: Settings
) -> None:
    public = settings.with_overrides(base_url="https://websec.example.com")
    async with client_for(make_api(settings=public), ip=LOOPBACK) as client:
        pay = await client.post("/api/compliance-report/pay", json=_PAY)
        page = await client.get("/api/sandbox/checkout/sbx_str_order_x")

    assert pay.status_code == 503
    assert page.status_code == 404


async def test_the_default_sandbox_answers_only_loopback_clients(
    make_api: Callable[..., FastAPI], settings: Settings
) -> None:
    api = make_api(settings=settings)  # base URL http://localhost:3000, WEBSEC_PAYMENTS_SANDBOX unset
    async with client_for(api, ip=LOOPBACK) as local:
        pay = (await local.post("/api/compliance-report/pay", json={**_PAY, "provider": "razorpay"})).json()
    async with client_for(api, ip="203.0.113.50") as remote:
        clicked = await remote.post(f"/api/sandbox/checkout/{pay['order_id']}", data={"action": "pay"})
        generate = await remote.post(
            "/api/compliance-report/generate", json={"token": pay["token"], "url": "example.com", "email": BUYER}
        )

    assert clicked.status_code == 404
    assert generate.status_code == 403


# --- 5. refunds and disputes ----------------------------------------------------------------------------


async def test_a_razorpay_refund_revokes_the_unused_scan_token_once(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, database: Database
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference)
    token = (await client.post("/api/verify-one-time", json={"payment_id": payment["id"], "email": BUYER})).json()[
        "token"
    ]

    refund = razorpay_api.refund(payment["id"])
    first = await deliver(client, "razorpay", refund)
    replay = await deliver(client, "razorpay", refund)
    scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token})

    assert first.json()["outcome"] == "revoked"
    assert replay.json()["outcome"] == "duplicate"
    assert scan.status_code == 403


async def test_a_used_token_stays_used_after_a_refund(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, database: Database
) -> None:
    token = _paid_razorpay_compliance_token(service, razorpay_api)
    done = await client.post("/api/compliance-report/generate", json={"token": token, "url": "a.b", "email": BUYER})
    with database.session() as session:
        row = find_compliance_token(session, token)
        assert row is not None
        used_at, payment_row = row.used_at, row.payment_id

    refunded = await deliver(client, "razorpay", razorpay_api.refund(_provider_payment(database, payment_row)))

    assert done.status_code == 200 and refunded.status_code == 200
    with database.session() as session:
        row = find_compliance_token(session, token)
    assert row is not None and row.used_at == used_at


async def test_a_razorpay_dispute_suspends_the_subscription_key(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "razorpay", BUYER)
    payment, signature = razorpay_api.charge_subscription(start.reference)
    service.confirm_razorpay_subscription(
        subscription_id=start.reference, payment_id=payment["id"], signature=signature
    )
    key = secret_in(mailbox.wait_for(1)[0], "wsk_")
    before = await client.get("/api/verify-key", headers={"X-API-Key": key})

    dispute = razorpay_api.dispute(payment["id"])
    first = await deliver(client, "razorpay", dispute)
    replay = await deliver(client, "razorpay", dispute)
    after = await client.get("/api/verify-key", headers={"X-API-Key": key})

    assert before.status_code == 200
    assert (first.json()["outcome"], replay.json()["outcome"]) == ("suspended", "duplicate")
    assert after.status_code == 403


async def test_a_stripe_refund_revokes_the_scan_token_and_a_dispute_the_compliance_token(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    scan_start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(scan_start.reference)))
    report_start = service.start_checkout(Product.COMPLIANCE_REPORT, "stripe", BUYER, url="shop.test")
    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(report_start.reference)))
    mails = mailbox.wait_for(2)
    scan_token = next(secret_in(m, "wst_") for m in mails if "wst_" in m.text())
    report_token = next(secret_in(m, "wsc_") for m in mails if "wsc_" in m.text())

    refunded = stripe_api.signed(stripe_api.refund(scan_start.reference))
    disputed = stripe_api.signed(stripe_api.dispute(report_start.reference))
    outcomes = [(await deliver(client, "stripe", w)).json()["outcome"] for w in (refunded, disputed, refunded)]
    scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": scan_token})
    report = await client.post(
        "/api/compliance-report/generate", json={"token": report_token, "url": "shop.test", "email": BUYER}
    )

    assert outcomes == ["revoked", "revoked", "duplicate"]
    assert scan.status_code == 403 and report.status_code == 403


async def _stripe_pro_key(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> tuple[str, str, str]:
    """A Stripe Pro subscription, started and its first invoice paid: (subscription id, that invoice, API key)."""
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", BUYER)
    completed = stripe_api.complete_session(start.reference)
    subscription_id, invoice = completed["data"]["object"]["subscription"], completed["data"]["object"]["invoice"]
    await deliver(client, "stripe", stripe_api.signed(completed))
    await deliver(client, "stripe", stripe_api.signed(stripe_api.first_invoice_paid(subscription_id)))
    return subscription_id, invoice, secret_in(mailbox.wait_for(1)[0], "wsk_")


async def test_a_stripe_dispute_suspends_the_subscription_key_and_a_refund_does_not(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    subscription_id, first_invoice, key = await _stripe_pro_key(client, service, stripe_api, mailbox)
    renewal = stripe_api.renew(subscription_id)
    await deliver(client, "stripe", stripe_api.signed(renewal))
    renewal_invoice = renewal["data"]["object"]["id"]

    async def verify() -> httpx.Response:
        return await client.get("/api/verify-key", headers={"X-API-Key": key})

    refunded = await deliver(client, "stripe", stripe_api.signed(stripe_api.refund_invoice(renewal_invoice)))
    after_refund = await verify()
    dispute = stripe_api.signed(stripe_api.dispute_invoice(first_invoice))
    first = await deliver(client, "stripe", dispute)
    replay = await deliver(client, "stripe", dispute)
    after_dispute = await verify()
    again = await deliver(client, "stripe", stripe_api.signed(stripe_api.dispute_invoice(first_invoice)))
    renewed_later = await deliver(client, "stripe", stripe_api.signed(stripe_api.renew(subscription_id)))
    after_all = await verify()

    assert any(c.path == "/v1/invoice_payments" for c in stripe_api.calls)  # the events left `payments` out
    assert refunded.json()["outcome"] == "unchanged" and after_refund.status_code == 200
    assert (first.json()["outcome"], replay.json()["outcome"]) == ("suspended", "duplicate")
    assert after_dispute.status_code == 403 and "is disputed" in after_dispute.json()["error"]
    assert again.json()["outcome"] == "unchanged"  # the same dispute under another event id
    assert renewed_later.json()["outcome"] == "renewed"  # recorded, but a disputed subscription stays suspended
    assert after_all.status_code == 403


async def test_a_stripe_dispute_finds_the_subscription_whatever_order_its_events_arrive_in(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", BUYER)
    completed = stripe_api.complete_session(start.reference)
    subscription_id = completed["data"]["object"]["subscription"]
    invoice_paid = stripe_api.first_invoice_paid(subscription_id, include_payments=True)
    fetched_before = len([c for c in stripe_api.calls if c.path == "/v1/invoice_payments"])

    early = await deliver(client, "stripe", stripe_api.signed(invoice_paid))  # before the checkout is known
    started = await deliver(client, "stripe", stripe_api.signed(completed))
    key = secret_in(mailbox.wait_for(1)[0], "wsk_")
    disputed = await deliver(
        client, "stripe", stripe_api.signed(stripe_api.dispute_invoice(completed["data"]["object"]["invoice"]))
    )
    verify = await client.get("/api/verify-key", headers={"X-API-Key": key})

    assert (early.json()["outcome"], started.json()["outcome"]) == ("ignored", "fulfilled")
    assert disputed.json()["outcome"] == "suspended" and verify.status_code == 403
    # the payload listed the invoice's payments, so Stripe was not asked for them
    assert len([c for c in stripe_api.calls if c.path == "/v1/invoice_payments"]) == fetched_before


async def test_when_stripe_cannot_list_an_invoices_payments_the_event_is_retried(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    subscription_id, _, key = await _stripe_pro_key(client, service, stripe_api, mailbox)
    event = stripe_api.renew(subscription_id)
    renewal, renewal_invoice = stripe_api.signed(event), event["data"]["object"]["id"]

    stripe_api.fail_with = 500
    during_outage = await deliver(client, "stripe", renewal)
    stripe_api.fail_with = None
    retried = await deliver(client, "stripe", renewal)  # Stripe retries an event answered 5xx
    disputed = await deliver(client, "stripe", stripe_api.signed(stripe_api.dispute_invoice(renewal_invoice)))
    verify = await client.get("/api/verify-key", headers={"X-API-Key": key})

    assert during_outage.status_code == 502
    assert retried.json()["outcome"] == "renewed"
    assert disputed.json()["outcome"] == "suspended" and verify.status_code == 403


# --- de-duplication on signed data ----------------------------------------------------------------------


async def test_razorpay_replays_are_recognised_by_the_signed_body_not_the_header(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", BUYER)
    payment, _ = razorpay_api.pay_order(start.reference)
    original = razorpay_api.webhook("payment.captured", payment=payment)
    replayed = type(original)(original.body, {**original.headers, "X-Razorpay-Event-Id": "evt_madeup"}, "evt_madeup")

    first = await deliver(client, "razorpay", original)
    again = await deliver(client, "razorpay", replayed)

    assert first.json()["outcome"] == "fulfilled"
    assert again.json()["outcome"] == "duplicate"


def _provider_payment(database: Database, payment_row: int | None) -> str:
    from websec_app.store.models import Payment

    with database.session() as session:
        row = session.get(Payment, payment_row)
    assert row is not None and row.provider_payment_id is not None
    return row.provider_payment_id
