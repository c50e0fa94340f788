"""Provider B end to end: the official stripe SDK against the local Stripe stand-in, webhooks signed like Stripe
signs them and verified with `stripe.Webhook.construct_event`, every email delivered to a real SMTP server."""

from __future__ import annotations

import time

import httpx
from sqlmodel import col, select

from tests.api.payment_helpers import (
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
    to,
)
from tests.fixtures.providers import StripeStandIn
from tests.fixtures.providers.stripe import decode_form
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import PaymentService
from websec_app.services.prices import Product
from websec_app.store import Database
from websec_app.store.models import WebhookEvent

BUYER = "buyer@example.com"


def _outcomes(database: Database) -> list[str | None]:
    with database.session() as session:
        return [e.outcome for e in session.exec(select(WebhookEvent).order_by(col(WebhookEvent.id)))]


async def test_one_time_scan_token_emailed_from_the_webhook(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    sent = decode_form(stripe_api.calls[-1].body)
    completed = stripe_api.signed(stripe_api.complete_session(start.reference))

    first = await deliver(client, "stripe", completed)
    replay = await deliver(client, "stripe", completed)
    [mail] = mailbox.wait_for(1)
    token = secret_in(mail, "wst_")
    scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token})

    assert start.action == "redirect" and start.checkout_url == stripe_api.sessions[start.reference]["url"]
    assert sent["mode"] == "payment" and sent["customer_email"] == BUYER
    assert sent["line_items"][0]["price_data"] == {
        "currency": "usd",
        "unit_amount": "200",
        "product_data": {"name": "One-time scan", "description": "One full Pro-level scan, valid for 24 hours"},
    }
    assert (first.json()["outcome"], replay.json()["outcome"]) == ("fulfilled", "duplicate")
    assert scan.status_code == 200 and scan.json()["pro_locked"] is False
    assert len(mailbox.messages) == 1


async def test_compliance_report_pay_returns_a_checkout_url_and_the_token_comes_by_email(
    client: httpx.AsyncClient, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    pay = await client.post(
        "/api/compliance-report/pay", json={"provider": "stripe", "email": BUYER, "url": "shop.test"}
    )
    session_id = pay.json()["checkout_url"].rsplit("/", 1)[1]

    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(session_id)))
    [token_mail] = mailbox.wait_for(1)
    token = secret_in(token_mail, "wsc_")
    report = await client.post(
        "/api/compliance-report/generate", json={"token": token, "url": "shop.test", "email": BUYER}
    )
    [_, report_mail] = mailbox.wait_for(2)

    assert pay.status_code == 200 and pay.json() == {"checkout_url": stripe_api.sessions[session_id]["url"]}
    assert stripe_api.sessions[session_id]["metadata"]["url"] == "https://shop.test/"
    assert "Website: https://shop.test/" in token_mail.text()
    assert report.status_code == 200
    assert report_mail.attachments()[0][0] == "shop.test-websec-compliance.pdf"


async def test_pro_subscription_key_emailed_renewed_lapsed_and_cancelled(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.SUBSCRIPTION, "stripe", "pro@example.com")
    sent = decode_form(stripe_api.calls[-1].body)
    completed = stripe_api.complete_session(start.reference)
    subscription_id = completed["data"]["object"]["subscription"]

    started = await deliver(client, "stripe", stripe_api.signed(completed))
    first_invoice = await deliver(client, "stripe", stripe_api.signed(stripe_api.first_invoice_paid(subscription_id)))
    key = secret_in(mailbox.wait_for(1)[0], "wsk_")

    async def key_works() -> int:
        return (await client.get("/api/verify-key", headers={"X-API-Key": key})).status_code

    active = await key_works()
    renewed = await deliver(client, "stripe", stripe_api.signed(stripe_api.renew(subscription_id)))
    after_renewal = await key_works()
    failed = await deliver(client, "stripe", stripe_api.signed(stripe_api.fail_renewal(subscription_id)))
    after_failure = await key_works()
    await deliver(client, "stripe", stripe_api.signed(stripe_api.renew(subscription_id)))
    after_retry = await key_works()
    cancelled = await deliver(client, "stripe", stripe_api.signed(stripe_api.cancel(subscription_id)))
    after_cancel = await key_works()

    assert sent["mode"] == "subscription"
    assert sent["line_items"][0]["price_data"]["recurring"] == {"interval": "month"}
    assert sent["line_items"][0]["price_data"]["unit_amount"] == "700"
    assert started.json()["outcome"] == "fulfilled" and first_invoice.json()["outcome"] == "already_fulfilled"
    assert (active, after_renewal) == (200, 200) and renewed.json()["outcome"] == "renewed"
    assert failed.json()["outcome"] == "status_changed" and after_failure == 403
    assert after_retry == 200
    assert cancelled.json()["outcome"] == "status_changed" and after_cancel == 403
    assert len(to(mailbox.messages, "pro@example.com", "API key")) == 1


async def test_bad_or_stale_signatures_are_400(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, database: Database
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    event = stripe_api.complete_session(start.reference)
    forged = stripe_api.signed(event, secret="whsec_wrong")
    stale = stripe_api.signed(event, timestamp=int(time.time()) - 3600)  # outside the 5-minute tolerance
    good = stripe_api.signed(event)

    responses = [
        await deliver(client, "stripe", forged),
        await deliver(client, "stripe", stale),
        await client.post("/api/webhooks/stripe", content=good.body),  # no Stripe-Signature header
        await client.post(
            "/api/webhooks/stripe",
            content=good.body.replace(b'"amount_total":200', b'"amount_total":2'),
            headers=good.headers,
        ),
        # a non-ASCII signature (HTTP headers arrive as Latin-1): hmac.compare_digest raised TypeError, a 500
        await client.post("/api/webhooks/stripe", content=good.body, headers={"Stripe-Signature": b"t=1,v1=\xe9"}),
    ]

    assert [r.status_code for r in responses] == [400, 400, 400, 400, 400]
    assert _outcomes(database) == []


async def test_an_amount_that_is_not_the_price_issues_nothing(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox, database: Database
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    wrong = stripe_api.signed(stripe_api.complete_session(start.reference, amount=1))

    response = await deliver(client, "stripe", wrong)

    assert response.status_code == 200 and response.json()["outcome"] == "amount_mismatch"
    assert _outcomes(database) == ["amount_mismatch"]
    assert mailbox.messages == []


async def test_an_unpaid_async_checkout_waits_for_its_payment(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    unpaid = stripe_api.complete_session(start.reference, paid=False)
    paid = stripe_api.complete_session(start.reference)
    paid["type"] = "checkout.session.async_payment_succeeded"

    waiting = await deliver(client, "stripe", stripe_api.signed(unpaid))
    succeeded = await deliver(client, "stripe", stripe_api.signed(paid))

    assert (waiting.json()["outcome"], succeeded.json()["outcome"]) == ("ignored", "fulfilled")
    assert len(mailbox.wait_for(1)) == 1


async def test_the_success_page_confirms_a_paid_session_before_its_webhook(
    client: httpx.AsyncClient, service: PaymentService, stripe_api: StripeStandIn, mailbox: Mailbox
) -> None:
    # Given a checkout the buyer paid at Stripe, whose webhook has not arrived yet
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    unpaid = service.confirm_stripe_return(start.reference)
    completed = stripe_api.signed(stripe_api.complete_session(start.reference))

    # When the success page asks Stripe about the session (issue 15), then the webhook comes
    confirmation = service.confirm_stripe_return(start.reference)
    again = service.confirm_stripe_return(start.reference)
    webhook = await deliver(client, "stripe", completed)

    # Then the page got the token (and it scans), the webhook changed nothing, and one email went out
    assert unpaid is None
    assert confirmation is not None and confirmation.newly_fulfilled and confirmation.token is not None
    assert again is not None and not again.newly_fulfilled and again.token is None
    assert webhook.json()["outcome"] == "already_fulfilled"
    scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": confirmation.token})
    assert scan.status_code == 200 and scan.json()["pro_locked"] is False
    [mail] = mailbox.wait_for(1)
    assert secret_in(mail, "wst_") == confirmation.token
    assert service.confirm_stripe_return("cs_../../v1/customers") is None  # not a session id: Stripe not asked
