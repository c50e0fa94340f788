"""No secret reaches the logs during paid flows: not the provider keys, not the webhook secrets, not the
tokens the buyer receives by email (issue 7, "no secrets in logs"). Everything logs at DEBUG here,
including the payment SDKs and the SMTP client, so a secret that any layer logs makes this fail."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.api.payment_helpers import (
    deliver,
    paid_client,  # noqa: F401 - this module's `client` fixture
    secret_in,
)
from tests.fixtures.providers import RazorpayStandIn, StripeStandIn
from tests.payment_fixtures import Mailbox
from websec_app.services.payments import PaymentService
from websec_app.services.prices import Product

BUYER = "buyer@example.com"


async def test_paid_flows_log_no_secret(
    client: httpx.AsyncClient,
    service: PaymentService,
    stripe_api: StripeStandIn,
    razorpay_api: RazorpayStandIn,
    mailbox: Mailbox,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # the root logger: every library's debug output is captured

    # Given a one-time scan bought through Stripe, its token emailed from the webhook and used
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", BUYER)
    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(start.reference)))
    [scan_mail] = mailbox.wait_for(1)
    scan_token = secret_in(scan_mail, "wst_")
    used = await client.post("/api/scan", json={"url": "example.com", "one_time_token": scan_token})
    reused = await client.post("/api/scan", json={"url": "example.com", "one_time_token": scan_token})
    # And a compliance report paid through Stripe, generated with the emailed token
    pay = await client.post("/api/compliance-report/pay", json={"provider": "stripe", "email": BUYER, "url": "a.test"})
    session_id = pay.json()["checkout_url"].rsplit("/", 1)[1]
    await deliver(client, "stripe", stripe_api.signed(stripe_api.complete_session(session_id)))
    compliance_token = secret_in(mailbox.wait_for(2)[-1], "wsc_")
    generated = await client.post(
        "/api/compliance-report/generate", json={"token": compliance_token, "url": "a.test", "email": BUYER}
    )
    # And a Razorpay order plus a forged webhook
    order = await client.post(
        "/api/compliance-report/pay", json={"provider": "razorpay", "email": BUYER, "url": "b.test"}
    )
    forged = await client.post(
        "/api/webhooks/razorpay", content=b'{"event":"payment.captured"}', headers={"X-Razorpay-Signature": "0" * 64}
    )

    # Then the flows worked
    assert (used.status_code, reused.status_code, generated.status_code) == (200, 403, 200)
    assert order.status_code == 200 and forged.status_code == 400
    assert caplog.records, "nothing was logged: the test would prove nothing"
    # And no secret appears anywhere in what was logged
    # aiosmtpd's `mail.log` is the receiving mail server (the test stand-in) logging what it received:
    # the mail carries the token by design. Everything else is ours or a library we call.
    ours = [r for r in caplog.records if not r.name.startswith("mail.log")]
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in ours)
    secrets = {
        "stripe secret key": stripe_api.secret_key,
        "stripe webhook secret": stripe_api.webhook_secret,
        "razorpay key secret": razorpay_api.key_secret,
        "razorpay webhook secret": razorpay_api.webhook_secret,
        "one-time scan token": scan_token,
        "compliance token": compliance_token,
        "razorpay pay token": order.json()["token"],
    }
    leaked = [name for name, value in secrets.items() if value and value in logged]
    assert leaked == []
