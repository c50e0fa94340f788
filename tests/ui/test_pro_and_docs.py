"""The Pro area (key in session storage, usage, Pro scan, PDF download, history) and the API docs page."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, expect

from websec_app.store import create_subscription, issue_api_key

from .conftest import App, open_page, screenshot


@pytest.fixture
def pro_key(app: App) -> str:
    with app.database.session() as session:
        subscription = create_subscription(session, email="pro-ui@example.com", now=datetime.now(UTC))
        assert subscription.id is not None
        return issue_api_key(session, subscription.id, datetime.now(UTC)).key


def sign_in(page: Page, app: App, key: str) -> None:
    open_page(page, app.path("/pro"))
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()


def test_a_wrong_key_is_refused(page: Page, app: App) -> None:
    sign_in(page, app, "wsk_this-is-not-a-key")

    expect(page.get_by_role("alert")).to_contain_text("This API key is not valid")
    screenshot(page, "pro-sign-in")


def test_pro_area_usage_scan_and_pdf(page: Page, app: App, pro_key: str, worst_site, tmp_path) -> None:
    sign_in(page, app, pro_key)

    expect(page.get_by_test_id("pro-email")).to_have_text("pro-ui@example.com")
    expect(page.get_by_test_id("pro-usage")).to_have_text("0 / 50")
    expect(page.get_by_test_id("pro-resets")).to_contain_text("UTC")
    # The key lives in this tab's sessionStorage, and never in the address bar.
    assert pro_key in page.evaluate("JSON.stringify(Object.values(window.sessionStorage))")
    assert pro_key not in page.url

    # A Pro scan: the full report, one scan used.
    page.get_by_test_id("pro-submit").locator("xpath=ancestor::form").get_by_label("Website address").fill(
        worst_site.url
    )
    page.get_by_role("button", name="Run Pro scan").click()
    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    expect(page.get_by_text("Full report")).to_be_visible()
    expect(page.get_by_test_id("locked")).to_have_count(0)

    # Back in the Pro area (signed in again from sessionStorage): usage, then a PDF with a client name.
    open_page(page, app.path("/pro"))
    expect(page.get_by_test_id("pro-usage")).to_have_text("1 / 50")
    pdf_form = page.get_by_test_id("pdf-submit").locator("xpath=ancestor::form")
    pdf_form.get_by_label("Website address").fill(worst_site.url)
    pdf_form.get_by_label("Client name (optional)").fill("ACME Ltd")
    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name="Download PDF").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)

    assert download.value.suggested_filename == "worst.test-websec-report.pdf"
    assert saved.read_bytes().startswith(b"%PDF")
    expect(page.get_by_test_id("pro-usage")).to_have_text("2 / 50")
    recent = page.get_by_test_id("pro-recent")
    expect(recent.locator("tbody tr")).to_have_count(2)
    expect(recent.get_by_role("link", name="View").first).to_have_attribute("href", re.compile("^/report/"))
    screenshot(page, "pro")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()
    assert pro_key not in page.evaluate("JSON.stringify(Object.values(window.sessionStorage))")


def test_api_docs_list_every_endpoint_with_curl(page: Page, app: App) -> None:
    open_page(page, app.path("/api-docs"))

    for path in (
        "/api/scan",
        "/api/scan/pro",
        "/api/report/pdf",
        "/api/verify-key",
        "/api/usage",
        "/api/compliance-report/pay",
        "/api/verify-one-time",
        "/api/compliance-report/generate",
    ):
        curl = page.get_by_test_id(f"curl-{path.strip('/').replace('/', '-')}")
        expect(curl).to_contain_text("curl")
        expect(curl).to_contain_text(f"{path}")
    expect(page.get_by_role("link", name=re.compile("OpenAPI reference"))).to_have_attribute("href", "/docs")
    screenshot(page, "api-docs")
