"""Buying in the browser: every product through the development sandbox, Razorpay and Stripe.

Razorpay: the page loads Checkout.js from checkout.razorpay.com; here the browser gets a stand-in
script instead (Playwright answers that request), whose "payment" is made at the Razorpay stand-in
server (`tests/fixtures/providers/razorpay.py`), which signs it as Razorpay would. The app then checks
the signature and the payment with the stand-in API through the official SDK.

Stripe: the page sends the buyer to the Checkout Session URL the Stripe stand-in returned; Playwright
serves that "hosted checkout" page. Paying sends the signed `checkout.session.completed` webhook to the
app (as Stripe does) and then returns the browser to the success URL; cancelling, to the cancel URL.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from tests.fixtures.providers import RazorpayStandIn, StripeStandIn

from .conftest import App, open_page, screenshot

#: Stands in for https://checkout.razorpay.com/v1/checkout.js: `open()` "pays" at the stand-in (through the
#: test, below) and calls the handler with what Razorpay's checkout gives the page.
RAZORPAY_CHECKOUT_JS = """
window.Razorpay = function (options) {
  this.handlers = {};
  this.on = (name, fn) => { this.handlers[name] = fn; };
  this.open = async () => {
    const reply = await fetch("https://checkout.razorpay.com/__standin/pay", {
      method: "POST",
      body: JSON.stringify({order_id: options.order_id || null, subscription_id: options.subscription_id || null,
                            email: (options.prefill || {}).email || "", key: options.key}),
    });
    const result = await reply.json();
    if (result.dismissed) { options.modal.ondismiss(); return; }
    options.handler(result);
  };
};
"""


#: Reports each `securitypolicyviolation` of every document of the tab to `__websecCsp` (exposed below).
_REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => window.__websecCsp(
  `${event.effectiveDirective} blocked ${event.blockedURI || "(inline)"} at ${event.sourceFile}:${event.lineNumber}`));
"""


def watch_csp(page: Page) -> list[str]:
    """Every Content-Security-Policy violation in this tab from now on: the DOM events and the console errors
    (where Chromium reports a blocked eval() as "Refused to evaluate a string as JavaScript")."""
    seen: list[str] = []

    def report(violation: str) -> None:
        seen.append(violation)

    page.expose_function("__websecCsp", report)
    page.add_init_script(_REPORT_CSP_VIOLATIONS)
    page.on(
        "console",
        lambda message: (
            seen.append(message.text) if message.type == "error" and "Content Security Policy" in message.text else None
        ),
    )
    return seen


@dataclass
class CspViolations:
    """What `watch_csp` saw in a test, and the blocked URLs the test expects (blocked on purpose)."""

    seen: list[str]
    expected: tuple[str, ...] = ()

    def unexpected(self) -> list[str]:
        return [violation for violation in self.seen if not any(url in violation for url in self.expected)]


@pytest.fixture(autouse=True)
def no_csp_violations(page: Page) -> Iterator[CspViolations]:
    """Every checkout runs under the UI's policy (no 'unsafe-eval') without a single violation."""
    violations = CspViolations(watch_csp(page))
    yield violations
    if not page.is_closed():
        page.wait_for_timeout(100)  # reports arrive through the exposed binding, asynchronously
    assert violations.unexpected() == [], violations.seen


def wait_for_email(app: App, needle: str, timeout: float = 10.0) -> str:
    """The first email the app wrote that contains `needle` (the outbox worker writes them in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in app.outbox():
            if needle in message:
                return message
        time.sleep(0.1)
    raise AssertionError(f"no email containing {needle!r}; outbox has {len(app.outbox())}")


def buy(page: Page, app: App, slug: str, currency: str, email: str, url: str | None = None) -> None:
    open_page(page, app.path(f"/checkout/{slug}?currency={currency}"))
    page.get_by_label("Email address").fill(email)
    if url is not None:
        page.get_by_label("Website to assess").fill(url)
    page.get_by_test_id("pay").click()


# --- Razorpay: Checkout.js in the page ---------------------------------------------------------------


@pytest.fixture
def razorpay_checkout(page: Page, razorpay_api: RazorpayStandIn) -> Callable[[bool], None]:
    """Route checkout.razorpay.com to the stand-in; call with False to make the buyer close the window."""
    behaviour = {"pay": True}

    def script(route: Route) -> None:
        route.fulfill(status=200, content_type="application/javascript", body=RAZORPAY_CHECKOUT_JS)

    def pay(route: Route) -> None:
        request = json.loads(route.request.post_data or "{}")
        if not behaviour["pay"]:
            result: dict[str, object] = {"dismissed": True}
        elif request.get("subscription_id"):
            payment, signature = razorpay_api.charge_subscription(request["subscription_id"], email=request["email"])
            result = {
                "razorpay_payment_id": payment["id"],
                "razorpay_subscription_id": request["subscription_id"],
                "razorpay_signature": signature,
            }
        else:
            payment, signature = razorpay_api.pay_order(request["order_id"], email=request["email"])
            result = {
                "razorpay_payment_id": payment["id"],
                "razorpay_order_id": request["order_id"],
                "razorpay_signature": signature,
            }
        route.fulfill(
            status=200,
            content_type="application/json",
            headers={"Access-Control-Allow-Origin": "*"},
            body=json.dumps(result),
        )

    page.route("https://checkout.razorpay.com/v1/checkout.js", script)
    page.route("https://checkout.razorpay.com/__standin/pay", pay)
    return lambda pays: behaviour.update(pay=pays)


def test_the_checkout_page_policy_allows_no_eval(page: Page, app: App) -> None:
    response = page.goto(app.path("/checkout/one-time-scan?currency=INR"))

    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "'unsafe-eval'" not in policy
    assert "https://checkout.razorpay.com" in policy  # Checkout.js itself is allowed by host


def test_razorpay_one_time_scan_then_the_scan(page: Page, app: App, razorpay_checkout, worst_site) -> None:
    buy(page, app, "one-time-scan", "INR", "rzp-scan@example.com")

    result = page.get_by_test_id("checkout-result")
    expect(result).to_contain_text("Payment received")
    expect(page.get_by_test_id("checkout-done")).to_contain_text("rzp-scan@example.com")
    screenshot(page, "checkout-razorpay-done")
    assert "wst_" in wait_for_email(app, "rzp-scan@example.com")

    page.get_by_role("link", name="Start my scan now").click()
    page.wait_for_url(re.compile(r"/one-time-scan#token=wst_"))  # the token in the fragment: no server logs it
    expect(page.get_by_label("One-time token")).to_have_value(re.compile(r"^wst_"))
    page.get_by_label("Website address").fill(worst_site.url)
    page.get_by_role("button", name="Run my full scan").click()
    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    expect(page.get_by_text("Full report")).to_be_visible()


def test_razorpay_subscription_emails_the_key(page: Page, app: App, razorpay_checkout) -> None:
    buy(page, app, "pro", "INR", "rzp-pro@example.com")

    expect(page.get_by_test_id("checkout-result")).to_contain_text("Payment received")
    email = wait_for_email(app, "rzp-pro@example.com")
    key = re.search(r"wsk_[\w-]+", email)
    assert key is not None
    expect(page.get_by_role("link", name="Open the Pro area")).to_be_visible()


def test_razorpay_compliance_report_is_generated_and_emailed(
    page: Page, app: App, razorpay_checkout, worst_site
) -> None:
    buy(page, app, "compliance-report", "INR", "rzp-audit@example.com", url=worst_site.url)

    expect(page.get_by_test_id("checkout-result")).to_contain_text("Payment received")
    # The way on is the compliance form, filled in (issue 15): the buyer checks it and generates the report
    page.get_by_role("link", name="Generate my report").click()
    page.wait_for_url(re.compile(r"/compliance-report#token=wsc_"))
    expect(page.get_by_label("Compliance report token")).to_have_value(re.compile(r"^wsc_"))
    expect(page.get_by_label("Website address")).to_have_value(re.compile(re.escape(worst_site.url)))
    expect(page.get_by_label("Email the report to")).to_have_value("rzp-audit@example.com")
    page.get_by_role("button", name="Generate and email the report").click()
    expect(page.get_by_test_id("compliance-done")).to_contain_text("emailed to rzp-audit@example.com", timeout=30_000)
    assert "application/pdf" in wait_for_email(app, "rzp-audit@example.com")


def test_closing_the_razorpay_window_charges_nothing(page: Page, app: App, razorpay_checkout) -> None:
    razorpay_checkout(False)
    buy(page, app, "one-time-scan", "INR", "rzp-closed@example.com")

    expect(page.get_by_role("alert")).to_contain_text("Nothing was charged")
    expect(page.get_by_test_id("pay")).to_be_enabled()


# --- Stripe: the hosted checkout page, then the webhook and the return -----------------------------------


@pytest.fixture
def stripe_checkout(page: Page, app: App, stripe_api: StripeStandIn) -> None:
    """Serve the stand-in's Checkout Session URLs as Stripe's hosted page: Pay or Cancel."""

    def hosted(route: Route) -> None:
        parts = urlsplit(route.request.url).path.strip("/").split("/")  # checkout/pay/<session>[/<action>]
        session_id = parts[2]
        session = stripe_api.sessions[session_id]
        if len(parts) == 3:
            route.fulfill(
                status=200,
                content_type="text/html",
                body=f"<!doctype html><title>Stripe stand-in</title><h1>Pay {session['amount_total']} "
                f"{session['currency']}</h1><a href='{route.request.url}/pay'>Pay</a> "
                f"<a href='{route.request.url}/cancel'>Cancel</a>",
            )
        elif parts[3] == "pay":
            signed = stripe_api.signed(stripe_api.complete_session(session_id))
            delivered = httpx.post(app.path("/api/webhooks/stripe"), content=signed.body, headers=signed.headers)
            assert delivered.status_code == 200, delivered.text
            route.fulfill(
                status=303, headers={"Location": session["success_url"].replace("{CHECKOUT_SESSION_ID}", session_id)}
            )
        else:
            route.fulfill(status=303, headers={"Location": session["cancel_url"]})

    page.route(re.compile(re.escape(stripe_api.base_url) + r"/checkout/pay/.*"), hosted)


def test_stripe_one_time_scan_returns_to_the_success_page(page: Page, app: App, stripe_checkout) -> None:
    buy(page, app, "one-time-scan", "USD", "stripe-scan@example.com")
    page.get_by_role("link", name="Pay").click()

    page.wait_for_url(re.compile(r"/checkout/success/?\?session_id=cs_"))
    expect(page.get_by_test_id("return-title")).to_have_text("Payment received, thank you")
    expect(page.get_by_test_id("return-text")).to_contain_text(
        "one-time scan token was emailed to stripe-scan@example.com"
    )
    screenshot(page, "checkout-success")
    assert "wst_" in wait_for_email(app, "stripe-scan@example.com")


def test_stripe_subscription_and_compliance_tokens_arrive_by_email(
    page: Page, app: App, stripe_checkout, worst_site
) -> None:
    buy(page, app, "pro", "USD", "stripe-pro@example.com")
    page.get_by_role("link", name="Pay").click()
    expect(page.get_by_test_id("return-text")).to_contain_text("API key was emailed to stripe-pro@example.com")
    assert re.search(r"wsk_[\w-]+", wait_for_email(app, "stripe-pro@example.com"))

    buy(page, app, "compliance-report", "USD", "stripe-audit@example.com", url=worst_site.url)
    page.get_by_role("link", name="Pay").click()
    expect(page.get_by_test_id("return-text")).to_contain_text("compliance report token was emailed")
    token = re.search(r"wsc_[\w-]+", wait_for_email(app, "stripe-audit@example.com"))
    assert token is not None

    # The emailed token generates the report on the compliance page.
    open_page(page, app.path(f"/compliance-report?token={token.group(0)}"))
    page.get_by_label("Website address").fill(worst_site.url)
    page.get_by_label("Email the report to").fill("stripe-audit@example.com")
    page.get_by_role("button", name="Generate and email the report").click()
    expect(page.get_by_test_id("compliance-done")).to_contain_text(
        "emailed to stripe-audit@example.com", timeout=30_000
    )
    screenshot(page, "compliance-report")


def test_cancelling_at_stripe_returns_to_the_cancel_page(page: Page, app: App, stripe_checkout) -> None:
    buy(page, app, "one-time-scan", "USD", "stripe-cancel@example.com")
    page.get_by_role("link", name="Cancel").click()

    page.wait_for_url(re.compile(r"/checkout/cancelled"))
    expect(page.get_by_role("heading", name="Payment cancelled")).to_be_visible()
    expect(page.get_by_role("link", name="Try again")).to_have_attribute("href", "/checkout/one-time-scan")


# --- the development sandbox (no provider keys) ---------------------------------------------------------


def pay_in_sandbox(page: Page) -> str:
    """On the sandbox page: Pay, which returns to the success page as the provider would; the checkout's
    reference (from the sandbox page's URL)."""
    page.wait_for_url(re.compile(r"/api/sandbox/checkout/sbx_"))
    expect(page.get_by_text("SANDBOX: no real money moves")).to_be_visible()
    reference = page.url.rsplit("/", 1)[1]
    page.get_by_role("button", name="Pay (sandbox)").click()
    page.wait_for_url(re.compile(r"/checkout/success"))
    page.wait_for_selector('main[data-ready="true"]')
    expect(page.get_by_test_id("return-title")).to_have_text("Payment received, thank you")
    return reference


def test_sandbox_pricing_page_and_one_time_scan(page: Page, sandbox_app: App) -> None:
    open_page(page, sandbox_app.path("/pricing"))
    expect(page.get_by_test_id("price-one-time-scan")).to_have_text("₹99")
    page.get_by_role("radio", name="$ USD · Stripe").click()
    expect(page.get_by_test_id("price-one-time-scan")).to_have_text("$2.00")
    expect(page.get_by_test_id("price-pro")).to_have_text("$7.00/month")
    screenshot(page, "pricing")
    page.get_by_role("link", name="Buy One-time scan").click()
    page.wait_for_selector('main[data-ready="true"]')
    expect(page.get_by_test_id("sandbox-notice")).to_be_visible()
    page.get_by_label("Email address").fill("sbx-scan@example.com")
    screenshot(page, "checkout")
    page.get_by_test_id("pay").click()

    pay_in_sandbox(page)
    expect(page.get_by_test_id("return-text")).to_contain_text("token was emailed to sbx-scan@example.com")
    email = wait_for_email(sandbox_app, "sbx-scan@example.com")
    token = re.search(r"wst_[\w-]+", email)
    assert token is not None


def test_coming_back_to_the_checkout_does_not_leave_again(page: Page, sandbox_app: App) -> None:
    # Given a buyer sent to the sandbox's page (the checkout page leaves when its state names a URL)
    buy(page, sandbox_app, "one-time-scan", "INR", "sbx-back@example.com")
    page.wait_for_url(re.compile(r"/api/sandbox/checkout/sbx_"))

    # When they come back to the app, and from there to the checkout by the app's own link (no page load)
    open_page(page, sandbox_app.path("/checkout/cancelled?product=one-time-scan"))
    page.get_by_role("link", name="Try again").click()
    page.wait_for_url(re.compile(r"/checkout/one-time-scan$"))
    page.wait_for_timeout(1000)

    # Then the checkout stays: the state forgot the URL when the browser took it
    assert urlsplit(page.url).path == "/checkout/one-time-scan"
    expect(page.get_by_test_id("pay")).to_be_enabled()


def test_sandbox_subscription_key_signs_in_to_pro(page: Page, sandbox_app: App) -> None:
    buy(page, sandbox_app, "pro", "INR", "sbx-pro@example.com")
    pay_in_sandbox(page)
    key = re.search(r"wsk_[\w-]+", wait_for_email(sandbox_app, "sbx-pro@example.com"))
    assert key is not None

    open_page(page, sandbox_app.path("/pro"))
    page.get_by_label("API key").fill(key.group(0))
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("pro-email")).to_have_text("sbx-pro@example.com")
    expect(page.get_by_test_id("pro-usage")).to_have_text("0 / 50")


def test_sandbox_compliance_report(page: Page, sandbox_app: App, worst_site) -> None:
    buy(page, sandbox_app, "compliance-report", "USD", "sbx-audit@example.com", url=worst_site.url)
    pay_in_sandbox(page)
    token = re.search(r"wsc_[\w-]+", wait_for_email(sandbox_app, "sbx-audit@example.com"))
    assert token is not None

    open_page(page, sandbox_app.path(f"/compliance-report?token={token.group(0)}&url={worst_site.url}"))
    page.get_by_label("Email the report to").fill("sbx-audit@example.com")
    page.get_by_role("button", name="Generate and email the report").click()
    expect(page.get_by_test_id("compliance-done")).to_contain_text("emailed to sbx-audit@example.com", timeout=30_000)
