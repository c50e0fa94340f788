"""The Pro area (key in session storage, usage, Pro scan, PDF download, history) and the API docs page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.clock import TEST_NOW
from websec_app.store import create_subscription, issue_api_key

from .conftest import App, open_page, screenshot
from .test_checkout import CspViolations, no_csp_violations

__all__ = ["no_csp_violations"]  # autouse (tests/ui/test_checkout.py): no page of this module violates its CSP

REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
#: Every operation of the spec (section 4), as /docs and /redoc list them.
OPERATIONS = (
    ("post", "/api/scan"),
    ("post", "/api/scan/pro"),
    ("post", "/api/report/pdf"),
    ("get", "/api/verify-key"),
    ("get", "/api/usage"),
    ("post", "/api/compliance-report/pay"),
    ("post", "/api/verify-one-time"),
    ("post", "/api/compliance-report/generate"),
)


@pytest.fixture
def pro_key(app: App) -> str:
    with app.database.session() as session:
        subscription = create_subscription(session, email="pro-ui@example.com", now=TEST_NOW)
        assert subscription.id is not None
        return issue_api_key(session, subscription.id, TEST_NOW).key


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


def test_swagger_ui_lists_every_operation_with_everything_from_this_origin(page: Page, app: App) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    response = page.goto(app.path("/docs"))

    assert response is not None and "cdn.jsdelivr.net" not in response.headers["content-security-policy"]
    for method, path in OPERATIONS:
        operation = page.locator(f".opblock-{method} .opblock-summary-path[data-path='{path}']")
        expect(operation).to_be_visible()
    # Swagger UI works: an operation opens and shows its "Try it out" (which fetches from this origin).
    page.locator(".opblock-summary-path[data-path='/api/health']").click()
    expect(page.get_by_role("button", name="Try it out")).to_be_visible()
    assert [url for url in requested if not url.startswith(app.url)] == []
    assert any("/api/docs-assets/swagger-ui-bundle.js" in url for url in requested)
    screenshot(page, "swagger-ui")


def test_redoc_lists_every_operation_with_everything_from_this_origin(
    page: Page, app: App, no_csp_violations: CspViolations
) -> None:
    # ReDoc 2.5 draws Redocly's logo from cdn.redoc.ly in its sidebar (hard-coded, no option to turn it off):
    # the docs policy blocks it like any other host, and ReDoc drops the image when it fails to load.
    no_csp_violations.expected = (REDOCLY_LOGO,)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    page.goto(app.path("/redoc"))

    expect(page.get_by_role("heading", name=re.compile("websec API"))).to_be_visible()
    for _, path in OPERATIONS:
        expect(page.get_by_text(path, exact=True).first).to_be_attached()
    expect(page.get_by_alt_text("redocly logo")).to_have_count(0)
    assert [url for url in requested if not url.startswith((app.url, "blob:")) and url != REDOCLY_LOGO] == []


def test_the_pricing_page_promises_the_remediation_plan_the_compliance_pdf_has(page: Page, app: App) -> None:
    """The compliance PDF's plan goes by points lost (tests/services/test_pdf.py), not by severity."""
    open_page(page, app.path("/pricing"))

    offer = page.get_by_test_id("offer-compliance-report")

    expect(offer).to_contain_text("A remediation plan, the problems that cost the most points first")
    expect(offer).not_to_contain_text("severity")
