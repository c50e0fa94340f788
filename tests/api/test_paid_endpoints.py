"""The one-time products' endpoints: validation, errors, tokens and payments (providers are faked here)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FakeFulfilment, FakeGateway, FakeScanner, FrozenClock
from websec_app.scanner import TargetUnreachable
from websec_app.services.payments import VerifiedPayment
from websec_app.store import Database, find_payment, issue_compliance_token, mark_compliance_token_paid

PAY = {"provider": "razorpay", "email": "buyer@example.com", "url": "example.com"}


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def fulfilment() -> FakeFulfilment:
    return FakeFulfilment()


@pytest.fixture
async def paid_client(
    make_api: Callable[..., FastAPI], gateway: FakeGateway, fulfilment: FakeFulfilment
) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(make_api(payments=gateway, fulfilment=fulfilment)) as client:
        yield client


# --- not configured yet -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/compliance-report/pay", PAY),
        ("/api/verify-one-time", {"payment_id": "pay_1", "email": "a@example.com"}),
        ("/api/compliance-report/generate", {"token": "wsc_x", "url": "example.com", "email": "a@example.com"}),
    ],
)
async def test_without_providers_the_paid_endpoints_are_503(
    client: httpx.AsyncClient, path: str, body: dict[str, str]
) -> None:
    response = await client.post(path, json=body)

    assert response.status_code == 503
    assert "not available on this server" in response.json()["error"]


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({**PAY, "provider": "paypal"}, "The field 'provider' is invalid: it must be one of razorpay, stripe."),
        ({**PAY, "email": "not-an-address"}, "The field 'email' is invalid: it is not an email address."),
        ({"provider": "stripe", "url": "example.com"}, "The field 'email' is required."),
        ({**PAY, "url": "gopher://example.com"}, "Unsupported URL scheme 'gopher': only http and https can be scanned"),
    ],
)
async def test_pay_validates_its_body(paid_client: httpx.AsyncClient, body: dict[str, str], message: str) -> None:
    response = await paid_client.post("/api/compliance-report/pay", json=body)

    assert response.status_code == 400
    assert response.json() == {"error": message}


async def test_verify_one_time_needs_a_payment_id(paid_client: httpx.AsyncClient) -> None:
    response = await paid_client.post("/api/verify-one-time", json={"payment_id": "", "email": "a@example.com"})

    assert response.status_code == 400
    assert response.json() == {"error": "The field 'payment_id' must not be empty."}


# --- pay ----------------------------------------------------------------------------------------


async def test_pay_with_provider_a_returns_order_amount_key_and_token(paid_client: httpx.AsyncClient) -> None:
    response = await paid_client.post("/api/compliance-report/pay", json=PAY)

    assert response.status_code == 200
    body = response.json()
    assert body["order_id"] == "order_1" and body["amount"] == 24900 and body["key"] == "rzp_test_key"
    assert body["token"].startswith("wsc_")
    assert "checkout_url" not in body


async def test_pay_with_provider_b_returns_a_checkout_url_only(paid_client: httpx.AsyncClient) -> None:
    response = await paid_client.post("/api/compliance-report/pay", json={**PAY, "provider": "stripe"})

    assert response.status_code == 200
    assert response.json() == {"checkout_url": "https://checkout.example/order_1"}


# --- verify-one-time ----------------------------------------------------------------------------


async def test_a_verified_payment_buys_a_token_that_scans_once(
    paid_client: httpx.AsyncClient, gateway: FakeGateway, fulfilment: FakeFulfilment, database: Database
) -> None:
    gateway.paid_one_time["pay_1"] = VerifiedPayment("razorpay", 9900, "INR", provider_payment_id="pay_1")

    response = await paid_client.post("/api/verify-one-time", json={"payment_id": "pay_1", "email": "b@example.com"})

    assert response.status_code == 200
    token = response.json()["token"]
    assert response.json() == {"ok": True, "token": token}
    assert fulfilment.sent_tokens == [("b@example.com", token)]
    with database.session() as session:
        payment = find_payment(session, "razorpay", provider_payment_id="pay_1")
    assert payment is not None and (payment.amount, payment.currency, payment.status) == (9900, "INR", "paid")
    scan = await paid_client.post("/api/scan", json={"url": "example.com", "one_time_token": token})
    assert scan.status_code == 200 and scan.json()["pro_locked"] is False


async def test_verifying_the_same_payment_twice_is_409(paid_client: httpx.AsyncClient, gateway: FakeGateway) -> None:
    gateway.paid_one_time["pay_1"] = VerifiedPayment("razorpay", 9900, "INR", provider_payment_id="pay_1")
    body = {"payment_id": "pay_1", "email": "b@example.com"}
    await paid_client.post("/api/verify-one-time", json=body)

    response = await paid_client.post("/api/verify-one-time", json=body)

    assert response.status_code == 409
    assert "already issued" in response.json()["error"]


async def test_an_unverified_payment_is_402(paid_client: httpx.AsyncClient) -> None:
    response = await paid_client.post("/api/verify-one-time", json={"payment_id": "pay_x", "email": "b@example.com"})

    assert response.status_code == 402
    assert response.json() == {"error": "The payment pay_x was not found or is not captured."}


async def test_a_failed_token_email_still_returns_the_token(
    paid_client: httpx.AsyncClient, gateway: FakeGateway, fulfilment: FakeFulfilment
) -> None:
    gateway.paid_one_time["pay_1"] = VerifiedPayment("razorpay", 9900, "INR", provider_payment_id="pay_1")
    fulfilment.fail = True

    response = await paid_client.post("/api/verify-one-time", json={"payment_id": "pay_1", "email": "b@example.com"})

    assert response.status_code == 200 and response.json()["token"].startswith("wst_")


# --- generate -----------------------------------------------------------------------------------


async def test_generate_scans_and_sends_the_report_once(
    paid_client: httpx.AsyncClient, gateway: FakeGateway, fulfilment: FakeFulfilment
) -> None:
    token = (await paid_client.post("/api/compliance-report/pay", json=PAY)).json()["token"]
    gateway.paid_orders.add("order_1")
    body = {"token": token, "url": "example.com", "email": "buyer@example.com"}

    first = await paid_client.post("/api/compliance-report/generate", json=body)
    second = await paid_client.post("/api/compliance-report/generate", json=body)

    assert first.status_code == 200
    assert first.json() == {
        "ok": True,
        "message": "The compliance report for example.com was emailed to buyer@example.com.",
    }
    [(email, url, report)] = fulfilment.sent_reports
    assert (email, url, report["pro_locked"]) == ("buyer@example.com", "https://example.com/", False)
    assert second.status_code == 403
    assert "already used" in second.json()["error"]


async def test_generate_before_payment_is_403(paid_client: httpx.AsyncClient) -> None:
    token = (await paid_client.post("/api/compliance-report/pay", json=PAY)).json()["token"]

    response = await paid_client.post(
        "/api/compliance-report/generate", json={"token": token, "url": "example.com", "email": "buyer@example.com"}
    )

    assert response.status_code == 403
    assert "has not been confirmed" in response.json()["error"]


async def test_generate_with_an_unknown_token_is_403(paid_client: httpx.AsyncClient) -> None:
    response = await paid_client.post(
        "/api/compliance-report/generate", json={"token": "wsc_nope", "url": "example.com", "email": "a@example.com"}
    )

    assert response.status_code == 403
    assert response.json() == {
        "error": "This compliance report token does not exist. Check that it was copied completely."
    }


async def test_generate_keeps_the_token_when_the_scan_or_email_fails(
    paid_client: httpx.AsyncClient,
    scanner: FakeScanner,
    fulfilment: FakeFulfilment,
    database: Database,
    clock: FrozenClock,
) -> None:
    with database.session() as session:
        issued = issue_compliance_token(
            session,
            provider="stripe",
            email="b@example.com",
            url="https://a.com/",
            now=clock(),
            provider_order_id="cs_1",
        )
        mark_compliance_token_paid(session, issued.token_id, clock())
    scanner.errors["down.example"] = TargetUnreachable("down.example did not answer")

    unreachable = await paid_client.post(
        "/api/compliance-report/generate", json={"token": issued.token, "url": "down.example", "email": "b@example.com"}
    )
    fulfilment.fail = True
    undelivered = await paid_client.post(
        "/api/compliance-report/generate", json={"token": issued.token, "url": "a.com", "email": "b@example.com"}
    )
    fulfilment.fail = False
    delivered = await paid_client.post(
        "/api/compliance-report/generate", json={"token": issued.token, "url": "a.com", "email": "b@example.com"}
    )

    assert unreachable.status_code == 502
    assert undelivered.status_code == 502
    assert undelivered.json() == {"error": "The compliance report could not be emailed. Your token is still valid."}
    assert delivered.status_code == 200
