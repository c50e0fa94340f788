"""Scanning from the browser: the free scan and its report, refusals, the daily quota, and the one-time token.

Given the app as `make run` serves it and the fixture sites of tests/conftest.py,
when a visitor uses the home page or the one-time scan page,
then they watch the scan progress and land on a report (or read why not).
"""

from __future__ import annotations

import re
import ssl

from playwright.sync_api import Page, expect

from tests.clock import TEST_NOW
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig, server_context
from websec_app.store import issue_scan_token, refund, reserve_free_scan

from .conftest import App, open_page, screenshot


def scan_from_home(page: Page, app: App, url: str) -> None:
    open_page(page, app.path("/"))
    page.get_by_label("Website address").fill(url)
    page.get_by_role("button", name="Scan").click()


def test_home_page_is_ready_for_a_url(page: Page, app: App) -> None:
    open_page(page, app.path("/"))

    expect(page).to_have_title(re.compile("websec"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("protect its visitors")
    expect(page.get_by_label("Website address")).to_be_visible()
    expect(page.get_by_text("Built with Reflex")).to_have_count(0)
    screenshot(page, "home")


def test_the_home_page_paints_fast_and_works_from_the_keyboard(page: Page, app: App, best_site) -> None:
    open_page(page, app.path("/"))
    paint = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1")
    # Prerendered HTML paints before the app's JavaScript runs; generous for a busy 2-core test machine.
    assert 0 < paint < 2500, f"first contentful paint after {paint} ms"

    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    for _ in range(12):  # from the main column, Tab reaches the URL field
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement?.name") == "url":
            break
    expect(page.get_by_label("Website address")).to_be_focused()
    page.keyboard.type(best_site.url)
    page.keyboard.press("Enter")

    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    expect(page.get_by_test_id("grade")).to_have_text("A+")


def test_a_page_reloaded_from_the_browser_cache_still_works(page: Page, app: App) -> None:
    """A reload revalidates the cached page (If-None-Match -> 304): the page must still hydrate. Headers on
    the 304 replace the cached ones, so a 304 must not carry a policy that blocks the page's own scripts."""
    open_page(page, app.path("/pricing"))

    page.reload()

    page.wait_for_selector('main[data-ready="true"]')
    expect(page.get_by_test_id("price-pro")).to_be_visible()


# Notes on `window` when the progress indicator is put on the page. A fast scan (loopback, tens of ms) can show
# it and move on to the report before a test could poll for it, so the page tells instead.
_WATCH_PROGRESS = """() => {
    window.__sawProgress = false;
    const seen = () => { if (document.querySelector('[data-testid="scan-progress"]')) window.__sawProgress = true; };
    new MutationObserver(seen).observe(document.body, {childList: true, subtree: true});
    seen();
}"""


def test_a_free_scan_shows_progress_then_the_graded_report(page: Page, app: App, worst_site) -> None:
    open_page(page, app.path("/"))
    page.evaluate(_WATCH_PROGRESS)
    page.get_by_label("Website address").fill(worst_site.url)
    page.get_by_role("button", name="Scan").click()

    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    assert page.evaluate("() => window.__sawProgress") is True  # the step indicator was shown while scanning
    expect(page.get_by_test_id("grade")).to_have_text("F")
    expect(page.get_by_test_id("score")).to_have_text(re.compile(r"^\d+$"))
    expect(page.get_by_test_id("report-url")).to_have_text("https://worst.test/")
    for section in ("headers", "tls", "dns", "cors", "security_txt", "server_fingerprint", "page_analysis"):
        expect(page.get_by_test_id(f"section-{section}")).to_be_visible()
    # Free: the Pro-only sections are locked and say what unlocking gives; fixes are not shown.
    expect(page.get_by_test_id("section-cookies").get_by_test_id("locked")).to_contain_text("fix for every finding")
    expect(page.get_by_test_id("section-cross_origin").get_by_test_id("locked")).to_be_visible()
    expect(page.get_by_text("How to fix")).to_have_count(0)
    # Worst first: the top list opens with the "bad" findings.
    expect(page.get_by_test_id("top-findings").locator("li").first).to_contain_text("Bad")
    screenshot(page, "report-free")


def test_the_report_link_works_in_another_tab(page: Page, app: App, browser_context, best_site) -> None:
    scan_from_home(page, app, best_site.url)
    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    link = page.get_by_test_id("share-link").input_value()

    other = browser_context.new_page()
    try:
        open_page(other, link)
        expect(other.get_by_test_id("grade")).to_have_text("A+")
        expect(other.get_by_text("No problems found")).to_be_visible()
    finally:
        other.close()
    assert link == page.url


def test_an_unknown_report_link_says_so(page: Page, app: App) -> None:
    open_page(page, app.path("/report/not-a-real-report"))

    expect(page.get_by_test_id("report-missing")).to_contain_text("Report not found")


def test_a_refused_target_explains_why(page: Page, app: App) -> None:
    scan_from_home(page, app, "http://0.0.0.0/")

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("This address cannot be scanned")
    expect(alert).to_contain_text("Only public addresses can be scanned")
    assert "/report/" not in page.url
    screenshot(page, "home-refused")


def test_an_unreachable_site_explains_why(page: Page, app: App) -> None:
    scan_from_home(page, app, "https://nowhere.test/")

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The site could not be reached")
    expect(alert).to_contain_text("Nothing was counted")


def test_a_site_that_requires_a_client_certificate_is_said_to(
    page: Page, app: App, pki: Pki, own_sites: SiteFactory
) -> None:
    """var/screenshots/home-client-certificate-{desktop,phone}.png, looked at by hand."""
    # Given a site that admits only clients presenting a certificate (mutual TLS)
    host = own_sites.unique_host("mtls")
    context = server_context(pki, TlsConfig(), (host,))
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(pki.ca_bundle_path)
    site = own_sites(Site(names=(host,), default=Response(200, body=b"partners only"), tls=TlsConfig(context=context)))

    # When it is scanned from the home page, then the message says what the site requires, not that it is down
    scan_from_home(page, app, site.url)
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The site requires a client certificate")
    expect(alert).to_contain_text(f"Could not reach {site.url}: the server requires a client certificate (mutual TLS)")
    expect(alert).to_contain_text("Scan a page of the site that does not ask for one")
    expect(alert).not_to_contain_text("try again if the site is down")
    screenshot(page, "home-client-certificate")


def test_the_free_quota_message_says_when_it_resets(page: Page, app: App, worst_site) -> None:
    # Given this browser's network (127.0.0.1) has used up today's free scans, through the store like the API
    now = TEST_NOW  # the app under test runs on the same clock (WEBSEC_CLOCK_START)
    taken = []
    with app.database.session() as session:
        while (reservation := reserve_free_scan(session, "127.0.0.1", now, app.free_scans_per_day)) is not None:
            taken.append(reservation)
    try:
        scan_from_home(page, app, worst_site.url)

        alert = page.get_by_role("alert")
        expect(alert).to_contain_text("You have used today's free scans")
        expect(alert).to_contain_text(f"used its {app.free_scans_per_day} free scans for today")
        expect(alert).to_contain_text("midnight UTC")
        expect(alert.get_by_role("link", name="See prices")).to_be_visible()
        screenshot(page, "home-quota")
    finally:
        with app.database.session() as session:
            for reservation in taken:
                refund(session, reservation)


def test_the_emailed_link_runs_a_one_time_scan(page: Page, app: App, worst_site) -> None:
    with app.database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=TEST_NOW).token

    open_page(page, app.path(f"/?one_time_token={token}"))  # the link of the purchase email
    page.wait_for_url(re.compile(r"/one-time-scan\?token="))
    page.wait_for_selector('main[data-ready="true"]')
    expect(page.get_by_label("One-time token")).to_have_value(token)
    screenshot(page, "one-time-scan")
    page.get_by_label("Website address").fill(worst_site.url)
    page.get_by_role("button", name="Run my full scan").click()

    page.wait_for_url(re.compile(r"/report/[\w-]+$"))
    expect(page.get_by_test_id("grade")).to_have_text("F")
    expect(page.get_by_text("Full report")).to_be_visible()
    expect(page.get_by_test_id("locked")).to_have_count(0)
    expect(page.get_by_test_id("section-cookies").get_by_text("How to fix").first).to_be_visible()
    screenshot(page, "report-full")
    # A fix is copied as text, ready to paste into a server configuration.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app.url)
    first_fix = page.get_by_test_id("finding").filter(has=page.get_by_text("How to fix")).first
    first_fix.get_by_role("button", name="Copy fix").click()
    expect(page.get_by_text("Copied to the clipboard")).to_be_visible()
    # The first <pre> is the generic fix; the fix for each server follows it.
    assert page.evaluate("navigator.clipboard.readText()") == first_fix.locator("pre").first.inner_text()

    # The token is single use: the same link again is refused with the time it was used.
    open_page(page, app.path(f"/one-time-scan?token={token}"))
    page.get_by_label("Website address").fill(worst_site.url)
    page.get_by_role("button", name="Run my full scan").click()
    expect(page.get_by_role("alert")).to_contain_text("already used")
