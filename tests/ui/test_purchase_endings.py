"""Every purchase ends where the bought thing is used (issue 15), in the browser, through the development
sandbox and through the Stripe and Razorpay stand-ins: the success page (or the in-page confirmation) leads to
`/pro`, to the one-time scan page or to the compliance form, with the token filled in from the link's fragment;
and the token is then used from there: the scan runs, the report is generated.

Stripe confirms by webhook and emails the token, so its success page leads to the page and the email's link
fills the token in; Razorpay (and the sandbox playing it) confirms on the buyer's return, so the page itself
carries the token on.
"""

from __future__ import annotations

import email
import email.policy
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from tests.fixtures.providers import StripeStandIn

from .conftest import ROOT, App, at_each_width, open_page
from .test_checkout import (  # noqa: F401 - fixtures, used by name
    buy,
    no_csp_violations,
    pay_in_sandbox,
    razorpay_checkout,
    stripe_checkout,
    wait_for_email,
)

SHOTS = ROOT / "var" / "screenshots" / "purchase-endings"
#: The widths the pages are looked at (issue 15): a small phone and a laptop.


def shoot(page: Page, name: str) -> list[Path]:
    """Full-length screenshots at 375 and 1280 px wide: var/screenshots/purchase-endings/<name>-<width>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def shot(width: str) -> Path:
        path = SHOTS / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return at_each_width(page, shot)


def email_link(app: App, recipient: str, page_path: str) -> str:
    """The link to `page_path` in the text part of the email to `recipient`."""
    raw = wait_for_email(app, recipient)
    message = email.message_from_string(raw, policy=email.policy.default)
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    found = re.search(re.escape(app.url + page_path) + r"\S*", text)
    assert found is not None, text
    return found.group(0)


def run_one_time_scan(page: Page, site_url: str) -> None:
    page.get_by_label("Website address").fill(site_url)
    page.get_by_role("button", name="Run my full scan").click()
    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    expect(page.get_by_text("Full report")).to_be_visible()


def generate_report(page: Page, recipient: str) -> None:
    page.get_by_role("button", name="Generate and email the report").click()
    expect(page.get_by_test_id("compliance-done")).to_contain_text(f"emailed to {recipient}", timeout=30_000)


# --- the sandbox (make run without provider keys) -------------------------------------------------------


def test_sandbox_inr_one_time_scan_ends_on_the_scan_page_with_its_token(
    page: Page, sandbox_app: App, worst_site
) -> None:
    # Given a one-time scan bought in INR: the sandbox plays Razorpay and sends the buyer back
    buy(page, sandbox_app, "one-time-scan", "INR", "endsandboxinrscan@example.com")
    pay_in_sandbox(page)

    # Then the success page confirmed the payment and leads to the scan, the token in the link's fragment
    expect(page.get_by_test_id("return-text")).to_contain_text("emailed to endsandboxinrscan@example.com")
    next_step = page.get_by_role("link", name="Start my scan now")
    expect(next_step).to_have_attribute("href", re.compile(r"^/one-time-scan#token=wst_"))
    shoot(page, "success-sandbox-inr-one-time-scan")
    next_step.click()

    # And the scan page has the token filled in, and it scans
    page.wait_for_url(re.compile(r"/one-time-scan#token=wst_"))
    expect(page.get_by_label("One-time token")).to_have_value(re.compile(r"^wst_"))
    shoot(page, "one-time-scan-filled")
    run_one_time_scan(page, worst_site.url)


def test_sandbox_inr_compliance_report_ends_on_the_filled_form(page: Page, sandbox_app: App, worst_site) -> None:
    buy(page, sandbox_app, "compliance-report", "INR", "endsandboxaudit@example.com", url=worst_site.url)
    pay_in_sandbox(page)

    next_step = page.get_by_role("link", name="Generate my report")
    expect(next_step).to_have_attribute("href", re.compile(r"^/compliance-report#token=wsc_.*&url=.*&email="))
    shoot(page, "success-sandbox-inr-compliance")
    next_step.click()

    page.wait_for_url(re.compile(r"/compliance-report#token=wsc_"))
    expect(page.get_by_label("Compliance report token")).to_have_value(re.compile(r"^wsc_"))
    expect(page.get_by_label("Website address")).to_have_value(re.compile(re.escape(worst_site.url)))
    expect(page.get_by_label("Email the report to")).to_have_value("endsandboxaudit@example.com")
    shoot(page, "compliance-form-filled")
    generate_report(page, "endsandboxaudit@example.com")


def test_sandbox_inr_subscription_ends_in_the_pro_area(page: Page, sandbox_app: App) -> None:
    buy(page, sandbox_app, "pro", "INR", "endsandboxpro@example.com")
    pay_in_sandbox(page)

    expect(page.get_by_test_id("next-note")).to_contain_text("API key from your email")
    page.get_by_role("link", name="Open the Pro area").click()
    page.wait_for_url(re.compile(r"/pro$"))
    key = re.search(r"wsk_[\w-]+", wait_for_email(sandbox_app, "endsandboxpro@example.com"))
    assert key is not None
    page.get_by_label("API key").fill(key.group(0))
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("pro-email")).to_have_text("endsandboxpro@example.com")


def test_sandbox_usd_one_time_scan_ends_on_the_scan_page_through_the_email(
    page: Page, sandbox_app: App, worst_site
) -> None:
    # Given a one-time scan bought in USD: the sandbox plays Stripe (webhook, then the success URL)
    buy(page, sandbox_app, "one-time-scan", "USD", "endsandboxusd@example.com")
    pay_in_sandbox(page)

    # Then the success page leads to the scan page and says how the token gets there
    expect(page.get_by_role("link", name="Start my scan now")).to_have_attribute("href", "/one-time-scan")
    expect(page.get_by_test_id("next-note")).to_contain_text("link in your email")
    shoot(page, "success-sandbox-usd-one-time-scan")

    # And the email's link opens it with the token filled in
    open_page(page, email_link(sandbox_app, "endsandboxusd@example.com", "/one-time-scan"))
    expect(page.get_by_label("One-time token")).to_have_value(re.compile(r"^wst_"))
    run_one_time_scan(page, worst_site.url)


# --- the provider stand-ins ------------------------------------------------------------------------------


@pytest.mark.usefixtures("stripe_checkout")
def test_stripe_one_time_scan_ends_on_the_scan_page_through_the_email(page: Page, app: App, worst_site) -> None:
    buy(page, app, "one-time-scan", "USD", "endstripescan@example.com")
    page.get_by_role("link", name="Pay").click()

    page.wait_for_url(re.compile(r"/checkout/success/?\?session_id=cs_"))
    expect(page.get_by_test_id("return-title")).to_have_text("Payment received, thank you")
    expect(page.get_by_role("link", name="Start my scan now")).to_have_attribute("href", "/one-time-scan")
    shoot(page, "success-stripe-one-time-scan")

    open_page(page, email_link(app, "endstripescan@example.com", "/one-time-scan"))
    expect(page.get_by_label("One-time token")).to_have_value(re.compile(r"^wst_"))
    run_one_time_scan(page, worst_site.url)


@pytest.mark.usefixtures("stripe_checkout")
def test_stripe_compliance_report_ends_on_the_filled_form_through_the_email(page: Page, app: App, worst_site) -> None:
    buy(page, app, "compliance-report", "USD", "endstripeaudit@example.com", url=worst_site.url)
    page.get_by_role("link", name="Pay").click()
    page.wait_for_url(re.compile(r"/checkout/success/?\?session_id=cs_"))
    expect(page.get_by_role("link", name="Generate my report")).to_have_attribute("href", "/compliance-report")

    link = email_link(app, "endstripeaudit@example.com", "/compliance-report")
    assert "#token=wsc_" in link and "?" not in link  # the token never in a query a server would log
    open_page(page, link)
    expect(page.get_by_label("Compliance report token")).to_have_value(re.compile(r"^wsc_"))
    expect(page.get_by_label("Website address")).to_have_value(re.compile(re.escape(worst_site.url)))
    expect(page.get_by_label("Email the report to")).to_have_value("endstripeaudit@example.com")
    generate_report(page, "endstripeaudit@example.com")


@pytest.fixture
def stripe_without_webhook(page: Page, stripe_api: StripeStandIn) -> dict[str, bool]:
    """Stripe's hosted page whose Pay returns the buyer without any webhook (it never comes, here). With
    `{"paid_on_return": False}` the session is still unpaid when the buyer is back; the test pays it later."""
    behaviour = {"paid_on_return": True}

    def hosted(route: Route) -> None:
        parts = route.request.url.split("/checkout/pay/", 1)[1].split("/")  # <session>[/pay]
        session = stripe_api.sessions[parts[0]]
        if len(parts) == 1:
            route.fulfill(status=200, content_type="text/html", body=f"<a href='{route.request.url}/pay'>Pay</a>")
            return
        if behaviour["paid_on_return"]:
            stripe_api.complete_session(parts[0])
        success = session["success_url"].replace("{CHECKOUT_SESSION_ID}", parts[0])
        route.fulfill(status=303, headers={"Location": success})

    page.route(re.compile(re.escape(stripe_api.base_url) + r"/checkout/pay/.*"), hosted)
    return behaviour


def test_stripe_return_before_the_webhook_carries_the_token_to_the_scan(
    page: Page, app: App, worst_site, stripe_without_webhook: dict[str, bool]
) -> None:
    # Given a buyer back from Stripe before its webhook: the success page asks Stripe and fulfils
    buy(page, app, "one-time-scan", "USD", "endstripeearly@example.com")
    page.get_by_role("link", name="Pay").click()
    page.wait_for_url(re.compile(r"/checkout/success/?\?session_id=cs_"))
    expect(page.get_by_test_id("return-title")).to_have_text("Payment received, thank you")

    # Then it leads to the scan page with the token, which scans
    next_step = page.get_by_role("link", name="Start my scan now")
    expect(next_step).to_have_attribute("href", re.compile(r"^/one-time-scan#token=wst_"))
    shoot(page, "success-stripe-before-webhook")
    next_step.click()
    expect(page.get_by_label("One-time token")).to_have_value(re.compile(r"^wst_"))
    run_one_time_scan(page, worst_site.url)


def test_a_pending_stripe_return_asks_stripe_again_while_it_waits(
    page: Page, app: App, stripe_api: StripeStandIn, stripe_without_webhook: dict[str, bool]
) -> None:
    # Given a buyer back from Stripe while the payment is still being confirmed, and no webhook ever
    stripe_without_webhook["paid_on_return"] = False
    buy(page, app, "compliance-report", "USD", "endstripepending@example.com", url="https://worst.test/")
    page.get_by_role("link", name="Pay").click()
    page.wait_for_url(re.compile(r"/checkout/success/?\?session_id=cs_"))
    expect(page.get_by_test_id("return-title")).to_have_text("Payment being confirmed")
    shoot(page, "success-stripe-pending")

    # When Stripe then has the payment
    session_id = re.search(r"session_id=(cs_\w+)", page.url)
    assert session_id is not None
    stripe_api.complete_session(session_id.group(1))

    # Then the waiting page finds out from Stripe itself and leads to the filled compliance form
    expect(page.get_by_test_id("return-title")).to_have_text("Payment received, thank you", timeout=15_000)
    expect(page.get_by_role("link", name="Generate my report")).to_have_attribute(
        "href", re.compile(r"^/compliance-report#token=wsc_.*&url=https%3A%2F%2Fworst.test%2F&email=endstripepending")
    )


@pytest.mark.usefixtures("stripe_checkout")
def test_stripe_subscription_ends_in_the_pro_area(page: Page, app: App) -> None:
    buy(page, app, "pro", "USD", "endstripepro@example.com")
    page.get_by_role("link", name="Pay").click()

    expect(page.get_by_test_id("return-text")).to_contain_text("API key was emailed")
    page.get_by_role("link", name="Open the Pro area").click()
    page.wait_for_url(re.compile(r"/pro$"))
    expect(page.get_by_label("API key")).to_be_visible()
    assert email_link(app, "endstripepro@example.com", "/pro") == app.url + "/pro"


@pytest.mark.usefixtures("razorpay_checkout")
def test_razorpay_subscription_ends_in_the_pro_area(page: Page, app: App) -> None:
    buy(page, app, "pro", "INR", "endrazorpaypro@example.com")

    expect(page.get_by_test_id("checkout-result")).to_contain_text("Payment received")
    shoot(page, "done-razorpay-subscription")
    page.get_by_role("link", name="Open the Pro area").click()
    page.wait_for_url(re.compile(r"/pro$"))
    expect(page.get_by_label("API key")).to_be_visible()
