"""The development sandbox plays each provider the way it confirms payments (issue 15).

Razorpay is confirmed by the buyer's return: the sandbox's Pay captures a payment and sends the browser back
with its ids and a signature, and `POST /api/verify-one-time` (spec 4.7) then works exactly as with Razorpay
(it answered 503 in the sandbox before: the sandbox could not answer "fetch this payment"). Stripe is
confirmed by its webhook: Pay settles the checkout and sends the browser to the success URL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from websec_app.services.payments import PaymentNotVerified, PaymentService

BUYER = "buyer@example.com"


@pytest.fixture
async def client(api: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client on this machine: the sandbox page answers loopback clients only (issue 12)."""
    async with client_for(api, ip="127.0.0.1") as http:
        yield http


def _service(api: FastAPI) -> PaymentService:
    service = api.state.runtime.payments
    assert isinstance(service, PaymentService)
    return service


async def _pay_one_time_scan(api: FastAPI, client: httpx.AsyncClient) -> dict[str, str]:
    """A one-time scan bought in INR through the sandbox: what Razorpay's redirect carries back."""
    start = _service(api).start_checkout("one_time_scan", "razorpay", BUYER)
    clicked = await client.post(f"/api/sandbox/checkout/{start.reference}", data={"action": "pay"})
    assert clicked.status_code == 303
    location = urlsplit(clicked.headers["location"])
    assert location.path == "/checkout/success"
    return {name: values[0] for name, values in parse_qs(location.query).items()}


async def test_verify_one_time_exchanges_a_sandbox_payment_for_a_token_once(
    client: httpx.AsyncClient, api: FastAPI
) -> None:
    # Given a one-time scan paid in the sandbox (captured, not yet confirmed)
    returned = await _pay_one_time_scan(api, client)
    assert returned["razorpay_payment_id"].startswith("pay_") and returned["razorpay_order_id"].startswith("sbx_")

    # When the buyer's client exchanges the payment id, as after Razorpay's redirect
    body = {"payment_id": returned["razorpay_payment_id"], "email": BUYER.upper()}
    verified = await client.post("/api/verify-one-time", json=body)
    again = await client.post("/api/verify-one-time", json=body)

    # Then it gets a token that scans, once; the second exchange is the documented 409
    assert verified.status_code == 200, verified.text
    token = verified.json()["token"]
    assert verified.json()["ok"] is True and token.startswith("wst_")
    assert again.status_code == 409 and "already issued" in again.json()["error"]
    scan = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token})
    assert scan.status_code == 200 and scan.json()["pro_locked"] is False


async def test_verify_one_time_in_the_sandbox_refuses_what_razorpay_refuses(
    client: httpx.AsyncClient, api: FastAPI
) -> None:
    returned = await _pay_one_time_scan(api, client)

    other_email = await client.post(
        "/api/verify-one-time", json={"payment_id": returned["razorpay_payment_id"], "email": "thief@example.com"}
    )
    never_paid = await client.post("/api/verify-one-time", json={"payment_id": "pay_AbCdEfGhIjKlMn", "email": BUYER})
    malformed = await client.post("/api/verify-one-time", json={"payment_id": "sbx_pay_x", "email": BUYER})

    assert other_email.status_code == 402 and "not made with this email" in other_email.json()["error"]
    assert never_paid.status_code == 402 and "not found or is not captured" in never_paid.json()["error"]
    assert malformed.status_code == 400
    # The refusals issued nothing: the buyer's exchange still works
    verified = await client.post(
        "/api/verify-one-time", json={"payment_id": returned["razorpay_payment_id"], "email": BUYER}
    )
    assert verified.status_code == 200


async def test_the_sandbox_return_is_signed_as_razorpay_signs_it(client: httpx.AsyncClient, api: FastAPI) -> None:
    returned = await _pay_one_time_scan(api, client)
    service = _service(api)

    with pytest.raises(PaymentNotVerified):
        service.confirm_razorpay_payment(
            order_id=returned["razorpay_order_id"],
            payment_id=returned["razorpay_payment_id"],
            signature="0" * 64,
        )
    confirmation = service.confirm_razorpay_payment(
        order_id=returned["razorpay_order_id"],
        payment_id=returned["razorpay_payment_id"],
        signature=returned["razorpay_signature"],
    )

    assert confirmation.token is not None and confirmation.token.startswith("wst_")


async def test_a_second_pay_finds_the_same_captured_payment(client: httpx.AsyncClient, api: FastAPI) -> None:
    start = _service(api).start_checkout("one_time_scan", "razorpay", BUYER)
    first = await client.post(f"/api/sandbox/checkout/{start.reference}", data={"action": "pay"})
    second = await client.post(f"/api/sandbox/checkout/{start.reference}", data={"action": "pay"})

    assert first.headers["location"] == second.headers["location"]
    page = await client.get(f"/api/sandbox/checkout/{start.reference}")
    assert "Return to websec" in page.text and "Pay (sandbox)" not in page.text


async def test_a_stripe_sandbox_payment_returns_to_the_success_page(client: httpx.AsyncClient, api: FastAPI) -> None:
    pay = await client.post(
        "/api/compliance-report/pay", json={"provider": "stripe", "email": BUYER, "url": "example.com"}
    )
    reference = pay.json()["checkout_url"].rsplit("/", 1)[1]

    clicked = await client.post(f"/api/sandbox/checkout/{reference}", data={"action": "pay"})

    assert clicked.status_code == 303
    base = _service(api).settings.base_url
    assert clicked.headers["location"] == f"{base}/checkout/success?session_id={reference}"
    with _service(api).database.session() as session:
        from websec_app.store.purchases import find_checkout

        checkout = find_checkout(session, "stripe", reference)
    assert checkout is not None and checkout.status == "paid"
