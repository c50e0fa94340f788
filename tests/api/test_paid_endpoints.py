"""The one-time products' endpoints: validation, errors, and the development sandbox behind them.

With no provider keys in development the sandbox serves both providers, so these run without any
server. The real SDKs against local stand-ins are in tests/api/test_payments_*.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI
from sqlmodel import select

from tests.api.conftest import client_for
from tests.api.fakes import FakeScanner
from websec_app.scanner import TargetUnreachable
from websec_app.services.payments import PaymentService
from websec_app.settings import Settings
from websec_app.store import Database, find_compliance_token
from websec_app.store.models import Payment

PAY = {"provider": "razorpay", "email": "buyer@example.com", "url": "example.com"}


@pytest.fixture
async def client(api: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client on this machine: the default sandbox answers loopback clients only (issue 12)."""
    async with client_for(api, ip="127.0.0.1") as http:
        yield http


def _service(api: FastAPI) -> PaymentService:
    service = api.state.runtime.payments
    assert isinstance(service, PaymentService)
    return service


# --- production without keys --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/compliance-report/pay", PAY),
        ("/api/compliance-report/pay", {**PAY, "provider": "stripe"}),
        ("/api/verify-one-time", {"payment_id": "pay_AbCdEfGhIjKlMn", "email": "a@example.com"}),
    ],
)
async def test_in_production_without_keys_payments_are_503(
    make_api: Callable[..., FastAPI], settings: Settings, path: str, body: dict[str, str]
) -> None:
    production = settings.with_overrides(environment="production")
    async with client_for(make_api(settings=production)) as client:
        response = await client.post(path, json=body)

    assert response.status_code == 503
    assert "not available on this server" in response.json()["error"]


async def test_the_sandbox_is_refused_in_production(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    production = settings.with_overrides(environment="production")
    async with client_for(make_api(settings=production)) as client:
        response = await client.get("/api/sandbox/checkout/sbx_raz_order_x")

    assert response.status_code == 404


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
async def test_pay_validates_its_body(client: httpx.AsyncClient, body: dict[str, str], message: str) -> None:
    response = await client.post("/api/compliance-report/pay", json=body)

    assert response.status_code == 400
    assert response.json() == {"error": message}


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("127.0.0.1", "Refusing to scan: 127.0.0.1 is a loopback address."),
        ("http://10.0.0.1/", "Refusing to scan: 10.0.0.1 is a private address."),
        ("http://[::1]/", "Refusing to scan: ::1 is a loopback address."),
        ("http://2130706433/", "Refusing to scan: 127.0.0.1 is a loopback address."),
        ("169.254.169.254", "Refusing to scan: 169.254.169.254 is the cloud metadata service"),
        ("http://localhost:8080/", "Refusing to scan: localhost is a loopback name."),
    ],
)
async def test_pay_refuses_a_target_no_scan_could_reach_before_anything_is_bought(
    client: httpx.AsyncClient, database: Database, url: str, message: str
) -> None:
    """Spec 7: a private or loopback target is a 400, here before the buyer pays for a report whose scan
    would refuse it (names are checked by the scan itself: where they point may change)."""
    response = await client.post("/api/compliance-report/pay", json={**PAY, "url": url})

    assert response.status_code == 400
    assert response.json()["error"].startswith(message)
    with database.session() as session:
        assert session.exec(select(Payment)).first() is None


@pytest.mark.parametrize("provider", ["razorpay", "stripe"])
@pytest.mark.parametrize("url", ["", "   "])
async def test_pay_without_a_url_is_400_before_anything_is_bought(
    client: httpx.AsyncClient, database: Database, provider: str, url: str
) -> None:
    """Spec 7: an invalid URL is a 400, an empty one too; not the 402 of a payment the provider refused."""
    response = await client.post("/api/compliance-report/pay", json={**PAY, "provider": provider, "url": url})

    assert response.status_code == 400
    assert response.json() == {"error": "A URL is required"}
    with database.session() as session:
        assert session.exec(select(Payment)).first() is None


async def test_verify_one_time_needs_a_payment_id(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/verify-one-time", json={"payment_id": "", "email": "a@example.com"})

    assert response.status_code == 400
    assert response.json() == {"error": "The field 'payment_id' must not be empty."}


# --- the sandbox: every step of a purchase, no provider -----------------------------------------


async def test_sandbox_pay_with_provider_a_has_the_spec_fields_and_a_sandbox_page(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/compliance-report/pay", json=PAY)

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"order_id", "amount", "key", "token", "checkout_url", "sandbox"}
    assert body["amount"] == 24900 and body["sandbox"] is True and body["token"].startswith("wsc_")
    assert body["order_id"].startswith("sbx_") and body["checkout_url"].endswith(body["order_id"])
    page = await client.get(body["checkout_url"].removeprefix("http://localhost:3000"))
    assert page.status_code == 200
    assert "SANDBOX: no real money moves" in page.text and "₹249" in page.text


async def test_sandbox_pay_with_provider_b_returns_a_checkout_url(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/compliance-report/pay", json={**PAY, "provider": "stripe"})

    assert response.status_code == 200
    assert set(response.json()) == {"checkout_url", "sandbox"}


async def test_a_sandbox_payment_makes_the_token_usable_once(
    client: httpx.AsyncClient, api: FastAPI, database: Database
) -> None:
    pay = (await client.post("/api/compliance-report/pay", json=PAY)).json()
    body = {"token": pay["token"], "url": "example.com", "email": "buyer@example.com"}
    before = await client.post("/api/compliance-report/generate", json=body)

    clicked = await client.post(f"/api/sandbox/checkout/{pay['order_id']}", data={"action": "pay"})
    first = await client.post("/api/compliance-report/generate", json=body)
    second = await client.post("/api/compliance-report/generate", json=body)

    assert before.status_code == 403 and "has not been confirmed" in before.json()["error"]
    # The sandbox captures, then sends the browser back as Razorpay does; the generate endpoint asks it (issue 15)
    assert clicked.status_code == 303 and "razorpay_payment_id=pay_" in clicked.headers["location"]
    assert first.status_code == 200
    assert first.json() == {
        "ok": True,
        "message": "The compliance report for example.com was emailed to buyer@example.com.",
    }
    assert second.status_code == 403 and "already used" in second.json()["error"]
    [eml] = list((_service(api).settings.outbox_dir).glob("*.eml"))  # no SMTP server: .eml files
    assert b"example.com-websec-compliance.pdf" in eml.read_bytes()


async def test_generate_with_an_unknown_token_is_403(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/compliance-report/generate", json={"token": "wsc_nope", "url": "example.com", "email": "a@example.com"}
    )

    assert response.status_code == 403
    assert response.json() == {
        "error": "This compliance report token does not exist. Check that it was copied completely."
    }


async def test_a_scan_that_fails_leaves_the_token_usable(
    client: httpx.AsyncClient, scanner: FakeScanner, database: Database
) -> None:
    pay = (await client.post("/api/compliance-report/pay", json=PAY)).json()
    await client.post(f"/api/sandbox/checkout/{pay['order_id']}", data={"action": "pay"})
    scanner.errors["down.example"] = TargetUnreachable("down.example did not answer")

    unreachable = await client.post(
        "/api/compliance-report/generate", json={"token": pay["token"], "url": "down.example", "email": "b@example.com"}
    )
    delivered = await client.post(
        "/api/compliance-report/generate", json={"token": pay["token"], "url": "a.com", "email": "b@example.com"}
    )

    assert unreachable.status_code == 502
    assert delivered.status_code == 200
    with database.session() as session:
        row = find_compliance_token(session, pay["token"])
    assert row is not None and row.used_at is not None


async def test_a_report_that_cannot_be_rendered_is_500_and_keeps_the_token(
    client: httpx.AsyncClient, api: FastAPI, monkeypatch: pytest.MonkeyPatch, database: Database
) -> None:
    from websec_app.services.payments import compliance_report
    from websec_app.services.pdf import PdfRenderError

    def broken(*args: object, **kwargs: object) -> bytes:
        raise PdfRenderError("font missing")

    pay = (await client.post("/api/compliance-report/pay", json=PAY)).json()
    await client.post(f"/api/sandbox/checkout/{pay['order_id']}", data={"action": "pay"})
    monkeypatch.setattr(compliance_report, "render_compliance_pdf", broken)

    response = await client.post(
        "/api/compliance-report/generate", json={"token": pay["token"], "url": "a.com", "email": "b@example.com"}
    )

    assert response.status_code == 500
    assert response.json() == {"error": "The compliance report could not be generated. Your token is still valid."}
    with database.session() as session:
        row = find_compliance_token(session, pay["token"])
    assert row is not None and row.used_at is None
