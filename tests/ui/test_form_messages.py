"""Every form says in the page what is wrong with a field (issue 15): next to the field, tied to it for screen
readers (`aria-invalid`, `aria-describedby` naming the message, a live region), not the browser's bubble
(the forms are `novalidate`); a refusal from the server is shown in the page too."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from .conftest import App, open_page
from .test_purchase_endings import shoot


def expect_field_message(field: Locator, text: str) -> None:
    """`field` is marked invalid and described by a visible message containing `text`."""
    expect(field).to_have_attribute("aria-invalid", "true")
    described_by = (field.get_attribute("aria-describedby") or "").split()
    messages = [field.page.locator(f"#{name}") for name in described_by]
    error = next(m for m in messages if (m.get_attribute("id") or "").endswith("-error"))
    expect(error).to_contain_text(text)
    expect(error).to_be_visible()
    expect(error).to_have_attribute("aria-live", "polite")


def expect_valid(field: Locator) -> None:
    expect(field).to_have_attribute("aria-invalid", "false")


def test_the_home_scan_form_says_the_address_is_missing(page: Page, app: App) -> None:
    open_page(page, app.path("/"))
    url = page.get_by_label("Website address")
    expect_valid(url)

    page.get_by_test_id("free-submit").click()

    expect_field_message(url, "Enter the address of the website")
    assert page.evaluate("document.activeElement.validationMessage") in ("", None)  # no browser bubble

    # Typing an address and scanning again clears the message (the scan then says what it found)
    url.fill("ftp://example.com")
    page.get_by_test_id("free-submit").click()
    expect_valid(url)
    expect(page.get_by_role("alert")).to_contain_text("Unsupported URL scheme")  # the server's refusal, in the page


def test_the_one_time_scan_form_checks_address_and_token(page: Page, app: App) -> None:
    open_page(page, app.path("/one-time-scan"))

    page.get_by_role("button", name="Run my full scan").click()
    expect_field_message(page.get_by_label("Website address"), "Enter the address of the website")
    expect_field_message(page.get_by_label("One-time token"), "Enter your one-time token")
    shoot(page, "form-errors-one-time-scan")

    page.get_by_label("Website address").fill("example.com")
    page.get_by_label("One-time token").fill("wsc_not_a_scan_token")
    page.get_by_role("button", name="Run my full scan").click()
    expect_valid(page.get_by_label("Website address"))
    expect_field_message(page.get_by_label("One-time token"), "starts with wst_")

    # A well-formed token the server does not know: its refusal is shown in the page
    page.get_by_label("One-time token").fill("wst_unknown_token_value")
    page.get_by_role("button", name="Run my full scan").click()
    expect(page.get_by_role("alert")).to_contain_text("does not exist")


def test_the_compliance_form_checks_every_field(page: Page, app: App) -> None:
    open_page(page, app.path("/compliance-report"))

    page.get_by_role("button", name="Generate and email the report").click()
    expect_field_message(page.get_by_label("Compliance report token"), "Enter your compliance report token")
    expect_field_message(page.get_by_label("Website address"), "Enter the address of the website")
    expect_field_message(page.get_by_label("Email the report to"), "Enter your email address")
    shoot(page, "form-errors-compliance")

    page.get_by_label("Compliance report token").fill("wsc_unknown_token_value")
    page.get_by_label("Website address").fill("example.com")
    page.get_by_label("Email the report to").fill("not an address")
    page.get_by_role("button", name="Generate and email the report").click()
    expect_valid(page.get_by_label("Compliance report token"))
    expect_field_message(page.get_by_label("Email the report to"), "not an email address")

    page.get_by_label("Email the report to").fill("audit@example.com")
    page.get_by_role("button", name="Generate and email the report").click()
    expect_valid(page.get_by_label("Email the report to"))
    expect(page.get_by_role("alert")).to_contain_text("does not exist")


def test_the_checkout_form_checks_email_and_website(page: Page, app: App) -> None:
    open_page(page, app.path("/checkout/compliance-report?currency=USD"))

    page.get_by_test_id("pay").click()
    expect_field_message(page.get_by_label("Email address"), "Enter your email address")
    expect_field_message(page.get_by_label("Website to assess"), "Enter the address of the website")
    shoot(page, "form-errors-checkout")

    page.get_by_label("Email address").fill("buyer@")
    page.get_by_label("Website to assess").fill("http://127.0.0.1:1/")
    page.get_by_test_id("pay").click()
    expect_field_message(page.get_by_label("Email address"), "not an email address")

    # The server refuses the website (a private address): said next to the field, and nothing was started
    page.get_by_label("Email address").fill("buyer@example.com")
    page.get_by_label("Website to assess").fill("gopher://example.com")
    page.get_by_test_id("pay").click()
    expect_valid(page.get_by_label("Email address"))
    expect_field_message(page.get_by_label("Website to assess"), "Unsupported URL scheme")
    assert re.search(r"/checkout/compliance-report", page.url)


def test_the_pro_sign_in_checks_the_key(page: Page, app: App) -> None:
    open_page(page, app.path("/pro"))

    page.get_by_role("button", name="Sign in").click()
    expect_field_message(page.get_by_label("API key"), "Enter your API key")

    page.get_by_label("API key").fill("not-a-key")
    page.get_by_role("button", name="Sign in").click()
    expect_field_message(page.get_by_label("API key"), "starts with wsk_")

    page.get_by_label("API key").fill("wsk_not_a_real_key_at_all")
    page.get_by_role("button", name="Sign in").click()
    expect_valid(page.get_by_label("API key"))
    expect(page.get_by_role("alert")).to_contain_text("This API key is not valid")
