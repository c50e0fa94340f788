"""Two status events of one subscription in the same second that disagree. The providers time their events in
whole seconds (Stripe: the event's `created`; Razorpay: the payload's `created_at`), so the time cannot say which
came first; arrival order is no better (Stripe guarantees none, Razorpay retries for hours). Whatever the order
they arrive in, the subscription ends as the provider says it is now (the stand-in answers the SDK's
`GET /v1/subscriptions/<id>` with the status its last step left). When the provider cannot be asked, the second
event is answered 502 and not recorded (the provider delivers it again), the payer keeps a working key meanwhile,
and the delivery that comes again settles it.

Real pairs of one second:
- Stripe: a renewal's `invoice.payment_failed` and the `invoice.paid` of the retry Stripe makes at once when the
  customer updates the card (each with its `customer.subscription.updated`, past_due then active); or an invoice
  paid and another failing in the same second (the subscription ends past_due).
- Razorpay: `subscription.halted` (or `subscription.pending`) when a scheduled retry fails, and the
  `subscription.charged` of the charge Razorpay makes when the customer changes the card at that moment.

Every event time comes from the test's frozen clock; each case runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.api.fakes import FrozenClock
from tests.api.payment_helpers import (
    Signed,
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
)
from tests.fixtures.providers import RazorpayStandIn, StripeStandIn
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import PaymentService
from websec_app.services.payments.razorpay_gateway import signed_event_id
from websec_app.services.prices import Product
from websec_app.store import Database, find_payment
from websec_app.store.models import SUBSCRIPTION_DISPUTED
from websec_app.store.payments import find_webhook_event
from websec_app.store.purchases import find_provider_subscription

BUYER = "pro@example.com"
ACTIVE, LAPSED = 200, 403  # what /api/verify-key answers the subscriber's key


@pytest.fixture
def database(any_database: Database) -> Database:
    """This module's cases on both backends (tests/db_fixtures.any_database)."""
    return any_database


def _now(clock: FrozenClock) -> int:
    return int(clock().timestamp())


async def _key_status(client: httpx.AsyncClient, key: str) -> int:
    return (await client.get("/api/verify-key", headers={"X-API-Key": key})).status_code


def _reads_of(api: StripeStandIn | RazorpayStandIn, subscription_id: str) -> int:
    """How often the SDK asked the stand-in for the subscription."""
    return len([c for c in api.calls if c.method == "GET" and c.path == f"/v1/subscriptions/{subscription_id}"])


def _recorded(database: Database, provider: str, event_id: str) -> bool:
    with database.session() as session:
        return find_webhook_event(session, provider, event_id) is not None


# --- Stripe -----------------------------------------------------------------------------------------------

#: What Stripe Billing does, as the stand-in plays it: each step moves the subscription and returns its event.
STRIPE_STEPS: dict[str, Callable[[StripeStandIn, str], dict[str, Any]]] = {
    "invoice.payment_failed": lambda api, sub: api.fail_renewal(sub),
    "invoice.paid": lambda api, sub: api.renew(sub),
    # an invoice.paid that says what paid it (`payments` included, or the older top-level `payment_intent`), so
    # no call to Stripe lists them first (when Stripe cannot be reached, that listing answers 502 before anything)
    "invoice.paid+payments": lambda api, sub: api.renew(sub, include_payments=True),
    "updated:past_due": lambda api, sub: api.update_status(sub, "past_due"),
    "updated:active": lambda api, sub: api.update_status(sub, "active"),
}


async def _stripe_subscriber(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox, clock: FrozenClock
) -> tuple[str, str]:
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", BUYER)
    completed = stripe_api.complete_session(start.reference)
    completed["created"] = _now(clock)
    await deliver(client, "stripe", stripe_api.signed(completed))
    return completed["data"]["object"]["subscription"], secret_in(mailbox.wait_for(1)[0], "wsk_")


def _stripe_same_second(
    stripe_api: StripeStandIn, subscription_id: str, steps: tuple[str, str], clock: FrozenClock
) -> list[Signed]:
    """The two steps' events, signed, in the order Stripe made them, both in the clock's second."""
    events = [STRIPE_STEPS[step](stripe_api, subscription_id) for step in steps]
    for event in events:
        event["created"] = _now(clock)
    return [stripe_api.signed(event) for event in events]


@pytest.mark.parametrize("arrival", ["as_made", "reversed"])
@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (("invoice.payment_failed", "invoice.paid"), ACTIVE),  # the immediate retry after a card update paid
        (("updated:past_due", "updated:active"), ACTIVE),
        (("invoice.payment_failed", "updated:active"), ACTIVE),
        (("invoice.paid", "invoice.payment_failed"), LAPSED),  # an invoice paid, then another failed
        (("updated:active", "updated:past_due"), LAPSED),
    ],
)
async def test_stripe_two_events_of_one_second_leave_the_key_as_stripe_says_whatever_the_arrival_order(
    client: httpx.AsyncClient,
    service: PaymentService,
    stripe_api: StripeStandIn,
    mailbox: Mailbox,
    clock: FrozenClock,
    steps: tuple[str, str],
    expected: int,
    arrival: str,
) -> None:
    subscription_id, key = await _stripe_subscriber(client, service, stripe_api, mailbox, clock)
    clock.advance(days=30)
    made = _stripe_same_second(stripe_api, subscription_id, steps, clock)
    reads_before = _reads_of(stripe_api, subscription_id)

    answers = [await deliver(client, "stripe", webhook) for webhook in (made if arrival == "as_made" else made[::-1])]

    assert [answer.status_code for answer in answers] == [200, 200]
    assert await _key_status(client, key) == expected
    assert _reads_of(stripe_api, subscription_id) - reads_before == 1  # asked once: by the second, which disagreed


@pytest.mark.parametrize("arrival", ["as_made", "reversed"])
@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (("invoice.payment_failed", "invoice.paid+payments"), ACTIVE),
        (("invoice.paid+payments", "invoice.payment_failed"), LAPSED),
        (("updated:past_due", "updated:active"), ACTIVE),
    ],
)
async def test_stripe_unreachable_the_second_event_is_502_and_unrecorded_the_payer_keeps_the_key_until_it_comes_again(
    client: httpx.AsyncClient,
    service: PaymentService,
    stripe_api: StripeStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
    steps: tuple[str, str],
    expected: int,
    arrival: str,
) -> None:
    subscription_id, key = await _stripe_subscriber(client, service, stripe_api, mailbox, clock)
    clock.advance(days=30)
    first, second = _stripe_same_second(stripe_api, subscription_id, steps, clock)
    if arrival == "reversed":
        first, second = second, first

    on_time = await deliver(client, "stripe", first)
    stripe_api.fail_with = 503
    try:
        during_outage = await deliver(client, "stripe", second)
        meanwhile = await _key_status(client, key)
    finally:
        stripe_api.fail_with = None
    second_id = json.loads(second.body)["id"]
    recorded_during_outage = _recorded(database, "stripe", second_id)
    again = await deliver(client, "stripe", second)  # Stripe retries an event answered 5xx
    settled = await _key_status(client, key)
    replayed = await deliver(client, "stripe", second)

    assert on_time.status_code == 200
    assert during_outage.status_code == 502 and "error" in during_outage.json()
    assert not recorded_during_outage  # so the retry is processed, not taken for a duplicate
    assert meanwhile == ACTIVE  # one of the two said active: the payer keeps the key until Stripe answers
    assert again.status_code == 200 and settled == expected
    assert _recorded(database, "stripe", second_id)
    assert replayed.json()["outcome"] == "duplicate"


# --- Razorpay ---------------------------------------------------------------------------------------------


async def _razorpay_subscriber(
    service: PaymentService, razorpay_api: RazorpayStandIn, mailbox: Mailbox
) -> tuple[str, str]:
    start = service.start_checkout(Product.SUBSCRIPTION, "razorpay", BUYER)
    first, signature = razorpay_api.charge_subscription(start.reference, email=BUYER)
    service.confirm_razorpay_subscription(subscription_id=start.reference, payment_id=first["id"], signature=signature)
    return start.reference, secret_in(mailbox.wait_for(1)[0], "wsk_")


def _razorpay_failure_and_charge(
    razorpay_api: RazorpayStandIn, subscription_id: str, failure: str, clock: FrozenClock
) -> tuple[Signed, Signed, dict[str, Any]]:
    """A scheduled retry fails (pending, or halted when it was the last) and, in the same second, the charge
    Razorpay makes when the customer changes the card succeeds: the two webhooks and the charge's payment."""
    at = _now(clock)
    failed = razorpay_api.fail_charge(subscription_id, created_at=at) if failure == "pending" else None
    failed = failed or razorpay_api.halt(subscription_id, created_at=at)
    payment, _ = razorpay_api.charge_subscription(subscription_id, email=BUYER)
    subscription = dict(razorpay_api.subscriptions[subscription_id])
    charged = razorpay_api.webhook("subscription.charged", payment=payment, subscription=subscription, created_at=at)
    return failed, charged, payment


@pytest.mark.parametrize("arrival", ["as_made", "reversed"])
@pytest.mark.parametrize("failure", ["halted", "pending"])
async def test_razorpay_a_failure_and_a_charge_of_one_second_leave_the_payer_active_whatever_the_arrival_order(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
    failure: str,
    arrival: str,
) -> None:
    subscription_id, key = await _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=33)
    failed, charged, payment = _razorpay_failure_and_charge(razorpay_api, subscription_id, failure, clock)
    reads_before = _reads_of(razorpay_api, subscription_id)

    answers = [
        await deliver(client, "razorpay", webhook)
        for webhook in ((failed, charged) if arrival == "as_made" else (charged, failed))
    ]
    with database.session() as session:
        recorded = find_payment(session, "razorpay", provider_payment_id=payment["id"])

    assert [answer.status_code for answer in answers] == [200, 200]
    assert await _key_status(client, key) == ACTIVE
    assert recorded is not None  # the charge is kept whichever came first
    assert _reads_of(razorpay_api, subscription_id) - reads_before == 1


@pytest.mark.parametrize("arrival", ["as_made", "reversed"])
async def test_razorpay_unreachable_the_second_event_is_502_the_charge_kept_and_the_retry_settles_it(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
    arrival: str,
) -> None:
    subscription_id, key = await _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=33)
    failed, charged, payment = _razorpay_failure_and_charge(razorpay_api, subscription_id, "halted", clock)
    first, second = (failed, charged) if arrival == "as_made" else (charged, failed)

    on_time = await deliver(client, "razorpay", first)
    razorpay_api.fail_with = 503
    try:
        during_outage = await deliver(client, "razorpay", second)
        meanwhile = await _key_status(client, key)
    finally:
        razorpay_api.fail_with = None
    second_id = signed_event_id(json.loads(second.body))
    recorded_during_outage = _recorded(database, "razorpay", second_id)
    with database.session() as session:
        charge_kept = find_payment(session, "razorpay", provider_payment_id=payment["id"]) is not None
    again = await deliver(client, "razorpay", second)  # Razorpay retries a delivery answered 5xx

    assert on_time.status_code == 200
    assert during_outage.status_code == 502 and not recorded_during_outage
    assert charge_kept  # recorded before the 502, whichever came first
    assert meanwhile == ACTIVE
    assert again.status_code == 200 and _recorded(database, "razorpay", second_id)
    assert await _key_status(client, key) == ACTIVE


async def test_razorpay_a_dispute_kept_before_a_charge_answered_502_still_suspends_the_subscription(
    client: httpx.AsyncClient,
    service: PaymentService,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    database: Database,
    clock: FrozenClock,
) -> None:
    subscription_id, key = await _razorpay_subscriber(service, razorpay_api, mailbox)
    clock.advance(days=33)
    failed, charged, payment = _razorpay_failure_and_charge(razorpay_api, subscription_id, "halted", clock)
    disputed = await deliver(client, "razorpay", razorpay_api.dispute(payment["id"]))  # before its charge

    await deliver(client, "razorpay", failed)
    razorpay_api.fail_with = 503
    try:
        during_outage = await deliver(client, "razorpay", charged)
    finally:
        razorpay_api.fail_with = None
    with database.session() as session:
        subscription = find_provider_subscription(session, "razorpay", subscription_id)

    assert disputed.json()["outcome"] == "reversal_pending"
    assert during_outage.status_code == 502
    assert subscription is not None and subscription.status == SUBSCRIPTION_DISPUTED
    assert await _key_status(client, key) == LAPSED
