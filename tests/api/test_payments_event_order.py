"""Webhooks delivered out of order: Stripe does not guarantee an order (https://docs.stripe.com/webhooks#event-ordering)
and Razorpay retries a failed delivery for hours, so an older event can arrive after a newer one. The provider's
event time (Stripe: the event's `created`; Razorpay: the payload's `created_at`) decides, not the arrival: an event
older than the last one applied to a subscription's status does not change it.

Every event time comes from the test's frozen clock; each case runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest
from sqlmodel import select

from tests.api.fakes import FrozenClock
from tests.api.payment_helpers import (
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
)
from tests.fixtures.providers import RazorpayStandIn, StripeStandIn
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import CheckoutStart, PaymentService
from websec_app.services.prices import Product
from websec_app.store import Database, find_payment
from websec_app.store.models import SUBSCRIPTION_DISPUTED, ScanToken
from websec_app.store.payments import STATUS_DISPUTED, STATUS_PAID, STATUS_REFUNDED
from websec_app.store.purchases import find_provider_subscription

BUYER = "pro@example.com"


@pytest.fixture
def database(any_database: Database) -> Database:
    """This module's cases on both backends (the status update is one conditional statement on each)."""
    return any_database


def _now(clock: FrozenClock) -> int:
    return int(clock().timestamp())


def _at(event: dict[str, Any], clock: FrozenClock) -> dict[str, Any]:
    """A Stripe event that happened at the clock's time."""
    event["created"] = _now(clock)
    return event


def _razorpay_subscriber(
    service: PaymentService, razorpay_api: RazorpayStandIn, mailbox: Mailbox
) -> tuple[CheckoutStart, dict[str, Any], str]:
    """A Razorpay subscription started, its first charge confirmed: the checkout, the provider's subscription and
    the API key emailed."""
    start = service.start_checkout(Product.SUBSCRIPTION, "razorpay", BUYER)
    subscription = razorpay_api.subscriptions[start.reference]
    first, signature = razorpay_api.charge_subscription(start.reference, email=BUYER)
    service.confirm_razorpay_subscription(subscription_id=start.reference, payment_id=first["id"], signature=signature)
    return start, subscription, secret_in(mailbox.wait_for(1)[0], "wsk_")


async def _key_status(client: httpx.AsyncClient, key: str) -> int:
    return (await client.get("/api/verify-key", headers={"X-API-Key": key})).status_code


async def test_stripe_a_failed_renewal_delivered_after_its_successful_retry_does_not_lock_the_subscriber_out(
    client: httpx.AsyncClient,
    service: PaymentService,
    stripe_api: StripeStandIn,
    mailbox: Mailbox,
    clock: FrozenClock,
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", BUYER)
    completed = _at(stripe_api.complete_session(start.reference), clock)
    subscription_id = completed["data"]["object"]["subscription"]
    await deliver(client, "stripe", stripe_api.signed(completed))
    key = secret_in(mailbox.wait_for(1)[0], "wsk_")
    clock.advance(days=30)
    failed = _at(stripe_api.fail_renewal(subscription_id), clock)  # the renewal's first attempt fails
    clock.advance(days=3)
    paid = _at(stripe_api.renew(subscription_id), clock)  # Stripe's retry succeeds

    on_time = await deliver(client, "stripe", stripe_api.signed(paid))
    late = await deliver(client, "stripe", stripe_api.signed(failed))
    after_late_failure = await _key_status(client, key)
    clock.advance(days=30)
    next_failure = await deliver(
        client, "stripe", stripe_api.signed(_at(stripe_api.fail_renewal(subscription_id), clock))
    )
    after_next_failure = await _key_status(client, key)

    assert on_time.json()["outcome"] == "renewed"
    assert late.json()["outcome"] == "unchanged"
    assert after_late_failure == 200
    assert next_failure.json()["outcome"] == "status_changed" and after_next_failure == 403  # newer still counts


async def test_razorpay_a_pending_delivered_after_the_charge_that_settled_it_does_not_lock_the_subscriber_out(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    clock: FrozenClock,
) -> None:
    start, subscription, key = _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=30)
    pending = razorpay_api.webhook("subscription.pending", subscription=dict(subscription), created_at=_now(clock))
    clock.advance(days=1)
    renewal, _ = razorpay_api.charge_subscription(start.reference, email=BUYER)
    charged = razorpay_api.webhook(
        "subscription.charged", payment=renewal, subscription=dict(subscription), created_at=_now(clock)
    )

    on_time = await deliver(client, "razorpay", charged)
    late = await deliver(client, "razorpay", pending)

    assert on_time.json()["outcome"] == "renewed"
    assert late.json()["outcome"] == "unchanged"
    assert await _key_status(client, key) == 200


async def test_razorpay_an_old_months_charge_retried_after_a_halt_records_the_payment_but_does_not_reactivate(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
) -> None:
    start, subscription, key = _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=30)
    month_two, _ = razorpay_api.charge_subscription(start.reference, email=BUYER)
    charged = razorpay_api.webhook(
        "subscription.charged", payment=month_two, subscription=dict(subscription), created_at=_now(clock)
    )
    clock.advance(days=33)
    halted = razorpay_api.webhook("subscription.halted", subscription=dict(subscription), created_at=_now(clock))

    halt = await deliver(client, "razorpay", halted)
    after_halt = await _key_status(client, key)
    retried = await deliver(client, "razorpay", charged)  # month two's event, retried by Razorpay only now
    after_retry = await _key_status(client, key)
    with database.session() as session:
        recorded = find_payment(session, "razorpay", provider_payment_id=month_two["id"])
    clock.advance(days=1)
    recovery, _ = razorpay_api.charge_subscription(start.reference, email=BUYER)
    recovered = await deliver(
        client,
        "razorpay",
        razorpay_api.webhook(
            "subscription.charged", payment=recovery, subscription=dict(subscription), created_at=_now(clock)
        ),
    )

    assert halt.json()["outcome"] == "status_changed" and after_halt == 403
    assert retried.json()["outcome"] == "unchanged" and after_retry == 403
    assert recorded is not None and recorded.status == STATUS_PAID  # the money came: the payment is kept
    assert recovered.json()["outcome"] == "renewed" and await _key_status(client, key) == 200


async def test_razorpay_a_dispute_that_came_before_a_late_charge_suspends_the_subscription_when_the_charge_comes(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
) -> None:
    start, subscription, key = _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=30)
    month_two, _ = razorpay_api.charge_subscription(start.reference, email=BUYER)
    charged = razorpay_api.webhook(
        "subscription.charged", payment=month_two, subscription=dict(subscription), created_at=_now(clock)
    )
    clock.advance(days=33)
    halted = razorpay_api.webhook("subscription.halted", subscription=dict(subscription), created_at=_now(clock))

    disputed = await deliver(client, "razorpay", razorpay_api.dispute(month_two["id"]))  # before its charge
    await deliver(client, "razorpay", halted)
    late_charge = await deliver(client, "razorpay", charged)  # older than the halt: changes no status
    with database.session() as session:
        recorded = find_payment(session, "razorpay", provider_payment_id=month_two["id"])
        pro = find_provider_subscription(session, "razorpay", start.reference)

    assert disputed.json()["outcome"] == "reversal_pending"
    assert late_charge.json()["outcome"] == "reversed_before"
    assert recorded is not None and recorded.status == STATUS_DISPUTED
    assert pro is not None and pro.status == SUBSCRIPTION_DISPUTED  # the key stays off until an operator settles it
    assert await _key_status(client, key) == 403


# --- a refund or dispute that arrives before the capture --------------------------------------------------


def _scan_tokens_of(database: Database, provider: str, reference: str) -> tuple[str | None, int]:
    with database.session() as session:
        payment = find_payment(session, provider, provider_order_id=reference)
        assert payment is not None
        tokens = session.exec(select(ScanToken).where(ScanToken.payment_id == payment.id)).all()
        return payment.status, len(tokens)


async def test_razorpay_a_refund_before_the_capture_leaves_the_capture_nothing_to_issue(
    client: httpx.AsyncClient, service: PaymentService, razorpay_api: RazorpayStandIn, database: Database
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "razorpay", "buyer@example.com")
    payment, _ = razorpay_api.pay_order(start.reference)
    as_captured = copy.deepcopy(payment)
    captured = razorpay_api.webhook("payment.captured", payment=as_captured)
    refund = razorpay_api.refund(payment["id"])

    refunded = await deliver(client, "razorpay", refund)
    late_capture = await deliver(client, "razorpay", captured)
    redelivered = await deliver(client, "razorpay", razorpay_api.webhook("order.paid", payment=as_captured))

    assert refunded.json()["outcome"] == "reversal_pending"
    assert late_capture.json()["outcome"] == "reversed_before"
    assert redelivered.json()["outcome"] == "reversed_before"
    assert _scan_tokens_of(database, "razorpay", start.reference) == (STATUS_REFUNDED, 0)


async def test_stripe_a_refund_before_checkout_completed_leaves_the_checkout_nothing_to_issue(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, database: Database
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", "buyer@example.com")
    completed = stripe_api.complete_session(start.reference)
    refund = stripe_api.refund(start.reference)

    refunded = await deliver(client, "stripe", stripe_api.signed(refund))
    late_completion = await deliver(client, "stripe", stripe_api.signed(completed))
    returned = service.confirm_stripe_return(start.reference)  # the buyer is back on the success page

    assert refunded.json()["outcome"] == "reversal_pending"
    assert late_completion.json()["outcome"] == "reversed_before"
    assert returned is None or returned.token is None
    assert _scan_tokens_of(database, "stripe", start.reference) == (STATUS_REFUNDED, 0)
