"""The report page shows its evidence: raw headers, redirect chains, TLS tables and the certificate chain,
where the points went, and each fix for the user's own server, copyable, from the mouse or the keyboard.

Given real reports of the fixture sites (scanned in-process, stored through the store like the app does),
when the report page opens them at desktop and phone widths,
then the evidence is there, readable, and the fix tabs and Copy buttons work.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.api.fakes import make_report
from tests.clock import TEST_NOW
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.legacy_tls import TlsliteServer
from tests.fixtures.mail_servers import mail_domain
from tests.fixtures.pki import Pki
from tests.fixtures.revocation import crl, serve
from tests.fixtures.sites import Redirect, RunningSite, Site, SiteFactory, TlsConfig
from tests.reports import impact_report
from websec_app.scanner import ScanReport
from websec_app.scanner.fixes import SERVERS
from websec_app.scanner.scan import scan
from websec_app.settings import Settings
from websec_app.store import save_report
from websec_app.ui.view import report_view

from .conftest import SCREENSHOTS, App, at_each_width, open_page

#: The `fix_snippets` another part of issue 15 adds beside each string `fix`; stand-ins shaped like it.
SNIPPET_PREFIX = {
    "nginx": "add_header",
    "apache": "Header always set",
    "caddy": "header",
    "iis": "<add name=",
    "express": "app.use(helmet(",
    "netlify": "/*\n  ",
    "vercel": '{"headers": [',
    "cloudflare": "Transform Rule: set",
}
#: Long enough to wrap at phone width (a real CSP is longer still).
LONG_VALUE = "default-src 'self'; script-src 'self' https://cdn.example.com " + "https://static.example.org " * 6


def snippets_for(fix: str) -> dict[str, str]:
    return {server: f"{SNIPPET_PREFIX[server]} {server} for: {fix} {LONG_VALUE}" for server in SERVERS}


def with_snippets(node: Any) -> Any:
    """A copy of a report body with `fix_snippets` beside every string `fix`."""
    if isinstance(node, dict):
        copy = {key: with_snippets(value) for key, value in node.items()}
        if isinstance(node.get("fix"), str):
            copy["fix_snippets"] = snippets_for(node["fix"])
        return copy
    if isinstance(node, list):
        return [with_snippets(item) for item in node]
    return node


def scanned(url: str, settings: Settings) -> ScanReport:
    """The scan of `url`. In a thread of its own: Playwright's sync API keeps an event loop running in the
    test thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, scan(url, settings)).result()


@dataclass(frozen=True)
class Reports:
    """Stored report ids: the worst site's (with snippets, and as a free report) and the best site's; a free
    report graded B whose points all went in the sections it locks (a session cookie without flags), and a
    C (no CSP, X-Frame-Options or Referrer-Policy)."""

    worst: str
    worst_free: str
    best: str
    worst_body: dict[str, Any]
    cookie_free: str
    grade_c: str


@pytest.fixture(scope="module")
def reports(
    app: App, scan_settings: Settings, best_site: Any, worst_site: Any, site_factory: SiteFactory
) -> Iterator[Reports]:
    worst_scan = scanned(worst_site.url, scan_settings)
    worst, free = worst_scan.to_dict(), worst_scan.to_dict(pro=False, include_fix=False)
    best = scanned(best_site.url, scan_settings).to_dict()
    # a session cookie for every subdomain, sent cross-site, without Secure or HttpOnly: B, its points all in the
    # locked cookies section (without SameSite=None and Domain the site's HSTS would leave it an A)
    cookie_host = site_factory.unique_host("cookie-only")
    cookie_site = site_factory(
        catalog.best_practices(cookie_host, cookie=f"sid=abc; Path=/; SameSite=None; Domain={cookie_host}")
    )
    cookie_free = scanned(cookie_site.url, scan_settings).to_dict(pro=False, include_fix=False)
    c_site = site_factory(
        catalog.best_practices(
            site_factory.unique_host("grade-c"),
            remove_headers=("Content-Security-Policy", "X-Frame-Options", "Referrer-Policy"),
        )
    )
    grade_c = scanned(c_site.url, scan_settings).to_dict()
    assert (cookie_free["grade"], grade_c["grade"]) == ("B", "C")
    bodies = ((with_snippets(worst), "pro"), (free, "free"), (best, "pro"), (cookie_free, "free"), (grade_c, "pro"))
    with app.database.session() as session:
        ids = [save_report(session, body=body, kind=kind, now=TEST_NOW).id for body, kind in bodies]
    try:
        yield Reports(
            worst=ids[0], worst_free=ids[1], best=ids[2], worst_body=worst, cookie_free=ids[3], grade_c=ids[4]
        )
    finally:
        cookie_site.stop()
        c_site.stop()


@pytest.fixture
def clipboard(browser_context: BrowserContext, app: App) -> Iterator[None]:
    browser_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app.url)
    yield
    browser_context.clear_permissions()


def open_report(page: Page, app: App, report_id: str) -> None:
    open_page(page, app.path(f"/report/{report_id}"))
    expect(page.get_by_test_id("grade")).to_be_visible()


def test_the_raw_headers_of_the_final_response_are_shown_in_wire_order(page: Page, app: App, reports: Reports) -> None:
    open_report(page, app, reports.worst)

    table = page.get_by_test_id("raw-headers")
    expect(table).to_be_visible()
    wire = reports.worst_body["redirection"]["main_chain"][-1]["headers"]
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(wire))
    assert [[c.strip() for c in row.locator("th, td").all_inner_texts()] for row in rows.all()] == wire
    # Both Set-Cookie headers, as sent
    expect(table.get_by_text("sessionid=xyz; Path=/")).to_be_visible()
    expect(table.get_by_text("csrftoken=abc")).to_be_visible()


def test_the_redirect_chains_show_each_hop(page: Page, app: App, reports: Reports) -> None:
    open_report(page, app, reports.best)

    http_chain = page.get_by_test_id("http-chain").get_by_test_id("hop")
    expect(http_chain).to_have_count(2)
    expect(http_chain.nth(0)).to_contain_text("301")
    expect(http_chain.nth(0)).to_contain_text("http://best.test/ → https://best.test/")
    expect(http_chain.nth(1)).to_contain_text("200")
    expect(page.get_by_test_id("main-chain").get_by_test_id("hop")).to_have_count(1)


def test_the_tls_tables_and_certificate_chain_are_shown(page: Page, app: App, reports: Reports) -> None:
    open_report(page, app, reports.worst)

    negotiated = page.get_by_test_id("tls-negotiated")
    expect(negotiated).to_contain_text("TLS 1.3")
    expect(negotiated).to_contain_text("x25519")
    expect(negotiated.locator("tr", has_text="Forward secrecy")).to_contain_text("Yes")
    expect(negotiated.locator("tr", has_text="Secure renegotiation (RFC 5746)")).to_contain_text("Yes")
    expect(negotiated.locator("tr", has_text="Client certificate requested (mutual TLS)")).to_contain_text("No")
    expect(negotiated.locator("tr", has_text="Certificate Transparency (SCTs)").locator("td")).to_have_text(
        "From 2 logs: 2 embedded in the certificate"
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    at_each_width(page, lambda width: negotiated.screenshot(path=str(SCREENSHOTS / f"tls-negotiated-{width}.png")))
    protocols = page.get_by_test_id("tls-protocols")
    expect(protocols.locator("tbody tr")).to_have_count(len(reports.worst_body["tls"]["protocols"]))
    expect(protocols.locator("tr", has_text="TLS 1.0")).to_contain_text("Refused")
    # The worst site accepts CBC suites: that row reads accepted, marked bad; the others refused, good
    weak = page.get_by_test_id("tls-weak-ciphers")
    expect(weak.locator("tr", has_text="CBC")).to_contain_text("Accepted")
    expect(weak.locator("td[data-tone='bad']")).to_have_count(1)
    expect(weak.locator("tr", has_text="RC4")).to_contain_text("Refused")
    chain = page.get_by_test_id("tls-chain").locator("tbody tr")
    expect(chain).to_have_count(2)
    expect(chain.nth(0)).to_contain_text("Site certificate")
    expect(chain.nth(0)).to_contain_text("CN=worst.test")
    expect(chain.nth(1)).to_contain_text("Intermediate CA")
    expect(page.get_by_test_id("tls-certificate")).to_contain_text(
        reports.worst_body["tls"]["certificate"]["sha256_fingerprint"]
    )
    # The fixture leaf (EC) allows its key digitalSignature only: the certificate panel says so
    expect(page.get_by_test_id("tls-certificate").locator("tr", has_text="Key usage")).to_have_text(
        re.compile(r"^\s*Key usage\s*digitalSignature\s*$")
    )
    # and it is for web servers (Extended Key Usage serverAuth)
    expect(page.get_by_test_id("tls-certificate").locator("tr", has_text="Purposes (EKU)")).to_have_text(
        re.compile(r"^\s*Purposes \(EKU\)\s*serverAuth\s*$")
    )


def test_the_score_chart_shows_where_the_points_went(page: Page, app: App, reports: Reports) -> None:
    open_report(page, app, reports.worst)

    body = reports.worst_body
    lost = {name: s["deduction"] for name, s in body.items() if isinstance(s, dict) and s.get("deduction")}
    lost["headers"] = sum(h["deduction"] for h in body["headers"].values() if isinstance(h, dict))
    bars = page.get_by_test_id("score-bar")
    expect(bars).to_have_count(len(lost))
    # Worst first, each bar as wide as its share of 100 points
    assert bars.nth(0).get_attribute("data-section") == max(lost, key=lambda name: lost[name])
    headers_bar = page.locator("[data-testid='score-bar'][data-section='headers']")
    expect(headers_bar).to_contain_text(f"−{lost['headers']} pts")
    # The text alternative says the same in words, and the caps are listed
    text = page.get_by_test_id("score-text")
    expect(text).to_contain_text(f"{sum(lost.values())} points in all, from 100")
    expect(text).to_contain_text("Security headers 54 points")
    expect(page.get_by_test_id("score-cap")).to_have_count(len(body["grading"]["caps"]))


def test_a_free_report_whose_points_went_in_locked_sections_shows_where_they_went(
    page: Page, app: App, reports: Reports
) -> None:
    # Given a free report graded B whose only problems (a session cookie without Secure and HttpOnly) are in a
    # locked section
    open_report(page, app, reports.cookie_free)
    score = int(page.get_by_test_id("score").inner_text())

    # Then "Fix these first" does not say every check passed, and the chart has a bar for the locked sections
    expect(page.get_by_test_id("no-problems")).to_have_text(re.compile(r"^No problems in the sections shown; \d+ more"))
    expect(page.get_by_text("every check passed")).to_have_count(0)
    bar = page.locator("[data-testid='score-bar'][data-section='locked']")
    expect(bar).to_contain_text("Cookies and cross-origin isolation (full report only)")
    expect(bar).to_contain_text(f"−{100 - score} pts")
    expect(page.get_by_test_id("score-chart")).not_to_contain_text("No points lost")
    expect(page.get_by_test_id("score-text")).to_contain_text(f"{100 - score} points in all, from 100")


def test_the_scroll_hint_of_the_certificate_chain_shows_only_where_the_table_scrolls(
    page: Page, app: App, reports: Reports
) -> None:
    open_report(page, app, reports.worst)
    # the chain's own hint (the DNS section's tables have theirs)
    hint = page.get_by_text("As the server sent it").get_by_text("Scroll the table sideways for the rest.")
    chain = page.get_by_test_id("tls-chain")

    seen = at_each_width(page, lambda _: (hint.is_visible(), chain.evaluate("el => el.scrollWidth > el.clientWidth")))

    assert seen == [(True, True), (False, False)]  # 375 px: the table scrolls, and says so; 1280 px: neither


def test_fix_snippets_open_on_the_detected_server_and_copy(
    page: Page, app: App, reports: Reports, clipboard: None
) -> None:
    open_report(page, app, reports.worst)

    # The worst site says `Server: Apache/2.4.41`: every finding's snippets open on Apache httpd
    first = page.get_by_test_id("fix-snippets").first
    expect(first).to_be_visible()
    tabs = first.get_by_role("tab")
    expect(tabs).to_have_count(len(SERVERS))
    assert tabs.nth(0).get_attribute("data-server") == "apache"
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    expect(first.get_by_role("tabpanel")).to_contain_text("Header always set apache")

    # One click to nginx, then its Copy button puts the nginx snippet on the clipboard
    first.get_by_role("tab", name="nginx").click()
    panel = first.get_by_role("tabpanel")
    expect(panel).to_contain_text("add_header nginx")
    panel.get_by_role("button", name="Copy the nginx fix").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("add_header nginx for: ") and copied.endswith(LONG_VALUE)
    expect(page.get_by_text("Copied to the clipboard")).to_be_visible()


def test_fix_tabs_and_copy_buttons_work_from_the_keyboard(
    page: Page, app: App, reports: Reports, clipboard: None
) -> None:
    open_report(page, app, reports.worst)
    first_tab = page.get_by_test_id("fix-snippets").first.get_by_role("tab").first

    # Tab from the top of the page reaches the first fix's selected tab
    for _ in range(200):
        page.keyboard.press("Tab")
        if first_tab.evaluate("el => el === document.activeElement"):
            break
    expect(first_tab).to_be_focused()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none", "no visible focus"

    # The arrow key moves to the next server, Enter selects it
    snippets = page.get_by_test_id("fix-snippets").first
    page.keyboard.press("ArrowRight")
    second = snippets.get_by_role("tab").nth(1)
    expect(second).to_be_focused()
    page.keyboard.press("Enter")
    expect(second).to_have_attribute("aria-selected", "true")
    server = second.get_attribute("data-server")

    # Tab goes into the panel and on to its Copy button; Space copies that server's snippet
    copy = snippets.get_by_role("tabpanel").get_by_role("button", name="Copy")
    for _ in range(3):
        page.keyboard.press("Tab")
        if copy.evaluate("el => el === document.activeElement"):
            break
    expect(copy).to_be_focused()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none", "no visible focus"
    page.keyboard.press(" ")
    assert page.evaluate("navigator.clipboard.readText()").startswith(f"{SNIPPET_PREFIX[str(server)]} {server} for:")


def test_reports_without_snippets_show_none(page: Page, app: App, reports: Reports) -> None:
    for report_id in (reports.best, reports.worst_free):
        open_report(page, app, report_id)
        expect(page.get_by_test_id("section-headers")).to_be_visible()
        expect(page.get_by_test_id("fix-snippets")).to_have_count(0)
    # The free report still shows the evidence (it is no fix)
    expect(page.get_by_test_id("raw-headers")).to_be_visible()
    expect(page.get_by_test_id("tls-protocols")).to_be_visible()


@pytest.mark.parametrize("width", [375, 1280])
def test_the_report_fits_phones_and_desktops(page: Page, app: App, reports: Reports, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_report(page, app, reports.worst)

    # The page itself never scrolls sideways: wide tables scroll inside their own box, long values wrap
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    chain = page.get_by_test_id("tls-chain")
    scrolls = chain.evaluate("el => el.scrollWidth > el.clientWidth")
    assert scrolls == (width < 720), "the certificate chain scrolls inside its box on phones only"
    snippet = page.get_by_test_id("snippet-code").first
    assert snippet.evaluate("el => el.scrollWidth <= el.clientWidth"), "a long snippet wraps"
    header_value = page.get_by_test_id("raw-headers").locator("td").first
    assert header_value.evaluate("el => el.scrollWidth <= el.clientWidth")


@pytest.mark.parametrize("width", [375, 1280])
def test_fix_these_first_shows_each_problems_points_once_on_phones_and_desktops(
    page: Page, app: App, reports: Reports, width: int
) -> None:
    # The heading says the problems come by the points they cost: each row shows them, at any width
    page.set_viewport_size({"width": width, "height": 900})
    open_report(page, app, reports.worst)
    rows = page.get_by_test_id("top-findings").locator("li")
    expect(rows.first).to_be_visible()
    for index in range(rows.count()):
        shown = rows.nth(index).inner_text()  # what is rendered: hidden elements are left out
        assert len(re.findall(r"[-\u2212]\d+ pts?\b", shown)) == 1, shown
    rows.first.screenshot(path=str(SCREENSHOTS / f"top-findings-row-{width}.png"))


def test_screenshots_of_the_report_evidence(page: Page, app: App, reports: Reports) -> None:
    """var/screenshots/report-{worst-snippets,best}-{1280,375}.png, full length, looked at by hand (issue 15)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        for name, report_id in (("report-worst-snippets", reports.worst), ("report-best", reports.best)):
            open_report(page, app, report_id)
            page.get_by_test_id("fix-snippets").or_(page.get_by_test_id("raw-headers")).first.wait_for()
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)


def test_the_csp_rollout_advice_is_shown_with_the_fix_and_never_in_a_free_report(
    page: Page, app: App, reports: Reports
) -> None:
    """The CSP proposal's notes speak of the fix and its snippets: the Pro report shows them once under "How to
    fix", the free one (no fix) nowhere. var/screenshots/csp-fix-note-{pro,free}-{1280,375}.png, looked at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    rollout = "Report-Only first, use the site for a week"
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        # Given the worst site (no CSP) as a Pro report: the advice under its fix, not in what was found
        open_report(page, app, reports.worst)
        csp = page.locator("#finding-headers-0")
        expect(csp.get_by_role("heading")).to_have_text("Content-Security-Policy not set")
        expect(csp.get_by_test_id("fix-note")).to_contain_text(rollout)
        assert csp.inner_text().count(rollout) == 1
        assert page.locator("body").inner_text().count(rollout) == 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        csp.screenshot(path=str(SCREENSHOTS / f"csp-fix-note-pro-{width}.png"))
        # And as a free report: none of the proposal's notes anywhere
        open_report(page, app, reports.worst_free)
        csp = page.locator("#finding-headers-0")
        expect(csp.get_by_role("heading")).to_have_text("Content-Security-Policy not set")
        expect(csp).to_contain_text("Unlock fixes")
        text = page.locator("body").inner_text()
        assert [w for w in (rollout, "Report-Only first", "proposed policy") if w in text] == []
        csp.screenshot(path=str(SCREENSHOTS / f"csp-fix-note-free-{width}.png"))


def shots_fit(page: Page, parts: dict[str, Locator]) -> list[bool]:
    """At each width (phone, desktop): each part photographed to var/screenshots/<name>-<width>.png, and whether the
    page then fits the screen without scrolling sideways."""

    def fits(width: str) -> bool:
        for name, part in parts.items():
            shot_of(page, part, f"{name}-{width}.png")
        return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))

    return at_each_width(page, fits)


def shot_of(page: Page, element: Locator, name: str) -> None:
    """var/screenshots/<name>: `element` cut from a full-page screenshot (an element screenshot of something taller
    than a phone's screen scrolls it under the sticky top bar, which then covers part of it)."""
    box = element.bounding_box()
    assert box is not None
    page_top = box["y"] + page.evaluate("window.scrollY")
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True, clip={**box, "y": page_top})


#: Key Usage bits of a leaf without digitalSignature (Chromium refuses it over TLS 1.3: tls.cert_key_usage), and
#: four of them: the longest value the panel shows, in RFC 5280's names.
UNUSUAL_KEY_USAGE = ("content_commitment", "key_encipherment", "data_encipherment", "key_agreement")


def scanned_then_stopped(url: str, settings: Settings, *sites: RunningSite) -> dict[str, Any]:
    """The report of `url` (`scanned`), the fixture `sites` it needed stopped once it is done, whatever happened."""
    try:
        return scanned(url, settings).to_dict()
    finally:
        for site in sites:
            site.stop()


def stored_for_shots(app: App, *bodies: dict[str, Any]) -> list[str]:
    """Pro reports kept as a scan keeps them, their ids in order, and the screenshots' folder ready."""
    with app.database.session() as session:
        ids = [save_report(session, body=body, kind="pro", now=TEST_NOW).id for body in bodies]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return ids


def test_the_certificate_panel_shows_the_key_usage_the_finding_speaks_of(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, pki: Pki
) -> None:
    """var/screenshots/cert-key-usage-{1280,375}.png (the panel), cert-key-usage-finding-{1280,375}.png and
    cert-key-usage-absent-{1280,375}.png (the panel of a leaf without the extension), looked at by hand."""
    # Given a site whose leaf's Key Usage lacks digitalSignature, scanned and stored, and the same report as if
    # the leaf had no Key Usage extension
    host = site_factory.unique_host("key-usage")
    issued = pki.issue("valid", (host,), key_usage=UNUSUAL_KEY_USAGE)
    context = issued.server_context()
    site = site_factory(catalog.best_practices(host, tls=TlsConfig(context=context)))
    body = scanned_then_stopped(site.url, scan_settings, site)
    assert "tls.cert_key_usage" in [f["check"] for f in body["tls"]["findings"]]
    without_extension = copy.deepcopy(body)
    without_extension["tls"]["certificate"]["key_usage"] = None
    report_id, absent_id = stored_for_shots(app, body, without_extension)

    # When its report opens, then the finding and the certificate panel's Key usage row name the same uses
    open_report(page, app, report_id)
    listed = "nonRepudiation, keyEncipherment, dataEncipherment, keyAgreement"
    finding = page.locator("[data-testid='finding']", has_text="ERR_SSL_KEY_USAGE_INCOMPATIBLE")
    expect(finding).to_contain_text(f"allows {listed}")
    panel = page.get_by_test_id("tls-certificate")
    row = panel.locator("tr", has_text="Key usage")
    expect(row.locator("td")).to_have_text(listed)
    certificate = page.locator("div", has=page.get_by_role("heading", name="Certificate", exact=True)).filter(has=panel)

    def fits(width: str) -> bool:
        shot_of(page, finding, f"cert-key-usage-finding-{width}.png")
        shot_of(page, certificate.last, f"cert-key-usage-{width}.png")
        return bool(
            page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            and row.locator("td").evaluate("el => el.scrollWidth <= el.clientWidth")
            and panel.evaluate("el => el.scrollWidth <= el.clientWidth")
        )

    # at either width, the list wraps inside its cell: neither the page nor the panel scrolls sideways
    assert at_each_width(page, fits) == [True, True]

    # And without the extension the row says every use is allowed
    open_report(page, app, absent_id)
    row = page.get_by_test_id("tls-certificate").locator("tr", has_text="Key usage")
    expect(row.locator("td")).to_have_text("Every use: the certificate has no Key Usage extension")
    certificate = page.locator("div", has=page.get_by_role("heading", name="Certificate", exact=True)).filter(
        has=page.get_by_test_id("tls-certificate")
    )
    at_each_width(page, lambda width: shot_of(page, certificate.last, f"cert-key-usage-absent-{width}.png"))


def test_a_certificate_its_ca_revoked_is_shown_revoked_with_the_cas_words(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, pki: Pki
) -> None:
    """var/screenshots/revoked-finding-{1280,375}.png and revoked-negotiated-{1280,375}.png, looked at by hand."""
    # Given a site whose leaf its CA's CRL lists as revoked, scanned and stored
    host = site_factory.unique_host("revoked")
    crl_url = f"http://crl-{host}/intermediate.crl"
    issued = pki.issue("valid", (host,), crl_url=crl_url)
    context = issued.server_context()
    site = site_factory(catalog.best_practices(host, tls=TlsConfig(context=context)))
    revoked = {issued.certificate.serial_number: x509.ReasonFlags.key_compromise}
    listing = serve(site_factory, crl_url, crl(pki, revoked))
    body = scanned_then_stopped(site.url, scan_settings, site, listing)
    (report_id,) = stored_for_shots(app, body)

    # When its report opens, then the finding says what the CA's CRL says, and the TLS table says it was asked
    open_report(page, app, report_id)
    finding = page.locator("[data-testid='finding']", has_text="The certificate's CA has revoked it")
    expect(finding).to_contain_text(f"the CA's CRL ({crl_url}) lists it as revoked on 2026-11-20 (key_compromise)")
    negotiated = page.get_by_test_id("tls-negotiated")
    expect(negotiated.locator("tr", has_text="Revocation (asked of the CA)")).to_contain_text("Revoked (CRL)")

    assert shots_fit(page, {"revoked-finding": finding, "revoked-negotiated": negotiated}) == [True, True]


def test_an_address_of_the_site_that_takes_no_connections_is_named_in_its_report(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory
) -> None:
    """var/screenshots/address-down-{1280,375}.png (the finding), looked at by hand."""
    # Given a site whose lower A record is an address where nothing listens, scanned and stored
    down = site_factory.down()
    host = site_factory.unique_host("address-down")
    best = catalog.best_practices(host)
    site = site_factory(dataclasses.replace(best, dns=(*best.dns, (host, "A", down.ip))))
    body = scanned_then_stopped(site.url, scan_settings, site, down)
    [report_id] = stored_for_shots(app, body)

    # When its report opens, the finding names the address, what it refused and where the scan went on
    open_report(page, app, report_id)
    finding = page.locator(
        "[data-testid='finding']", has_text="addresses of a host name the site uses takes no connections"
    )
    expect(finding).to_contain_text(f"{down.ip} ({host}) refused connections to ports 80 and 443, and")
    expect(finding).to_contain_text(f"the scan went on at {site.ip}")

    # at either width, without the page scrolling sideways
    assert shots_fit(page, {"address-down": finding}) == [True, True]


def test_the_certificate_of_the_address_scanned_is_shown_beside_the_pages(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory
) -> None:
    """var/screenshots/entry-certificate-{1280,375}.png (the panel) and entry-certificate-finding-{1280,375}.png,
    looked at by hand."""
    # Given example.test serving an expired certificate and redirecting to www.example.test, whose own is right,
    # scanned and stored
    host = site_factory.unique_host("expired-apex")
    www = site_factory(catalog.best_practices(f"www.{host}", dns=False))
    apex = site_factory(
        Site(names=(host,), default=Redirect(f"https://www.{host}/"), tls=TlsConfig(cert="expired"), http=None)
    )
    body = scanned_then_stopped(f"https://{host}/", scan_settings, www, apex)
    [report_id] = stored_for_shots(app, body)

    # When its report opens, the finding names the address, and a panel of its own shows that certificate's dates
    # beside the page's certificate
    open_report(page, app, report_id)
    # (the bad one: the address scanned also accepts CBC suites, a warning naming it too)
    finding = page.locator(
        "[data-testid='finding'][data-status='bad']", has_text=f"{host}, the address scanned, which redirects to"
    )
    expect(finding).to_contain_text("expired on")
    panel = page.get_by_test_id("tls-entry-certificate")
    expect(panel.locator("tr", has_text="Names (SAN)")).to_contain_text(host)
    expect(panel.locator("tr", has_text="Valid until")).to_contain_text(
        body["tls"]["entry_certificate"]["not_after"][:10]
    )
    expect(page.get_by_test_id("tls-certificate").locator("tr", has_text="Names (SAN)")).to_contain_text(f"www.{host}")
    box = page.locator("div", has=page.get_by_role("heading", name="Certificate of the address scanned")).filter(
        has=panel
    )
    expect(box.last).to_contain_text(f"Served by {host}, which redirects to the page")

    assert shots_fit(page, {"entry-certificate-finding": finding, "entry-certificate": box.last}) == [True, True]


def test_the_findings_of_a_policy_that_includes_subdomains_are_shown_with_their_notes(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory
) -> None:
    """var/screenshots/www-without-https-{1280,375}.png, cookie-under-hsts-{1280,375}.png and
    csp-known-services-{1280,375}.png, looked at by hand."""
    # Given a domain with HSTS includeSubDomains whose www refuses HTTPS, whose session cookie lacks Secure, and
    # whose page, without a CSP, loads reCAPTCHA; scanned and stored
    host = site_factory.unique_host("hsts-ui")
    body_html = catalog.page("Sign in", head='<script src="https://www.google.com/recaptcha/api.js" async></script>')
    site = site_factory(
        catalog.best_practices(
            host,
            remove_headers=["Content-Security-Policy"],
            cookie="sessionid=abc; Path=/; HttpOnly; SameSite=Lax",
            body=body_html,
        )
    )
    www = site_factory(Site(names=(f"www.{host}",), tls=None, http=None))
    body = scanned_then_stopped(site.url, scan_settings, site, www)
    [report_id] = stored_for_shots(app, body)

    # When its report opens, then each finding shows its note, and the CSP fix names the service it allows
    open_report(page, app, report_id)
    www_finding = page.locator("[data-testid='finding']", has_text=f"www.{host} answers no HTTPS")
    expect(www_finding.get_by_role("heading")).to_contain_text("www under this domain has no working HTTPS")
    cookie = page.locator("[data-testid='finding']", has_text=f"sessionid: the HSTS policy of {host}")
    expect(cookie.get_by_role("heading")).to_contain_text("A login or session cookie is missing the Secure attribute")
    csp = page.locator("#finding-headers-0")
    expect(csp.get_by_test_id("fix-note")).to_contain_text("It also allows what reCAPTCHA loads while running")

    assert shots_fit(
        page, {"www-without-https": www_finding, "cookie-under-hsts": cookie, "csp-known-services": csp}
    ) == [True, True]


# -- the evidence rows themselves (no browser) --------------------------------------------------------------


def test_a_stored_report_without_the_evidence_fields_shows_none() -> None:
    """Reports stored before the raw headers, the TLS tables or fix_snippets existed."""
    body = make_report().to_dict()
    for hop in body["redirection"].get("main_chain", []):
        hop.pop("headers", None)

    view = report_view(body)

    assert view.evidence.final_headers == [] and view.evidence.weak_ciphers == []
    assert all(f.snippets == [] and f.first_server == "" for s in view.sections for f in s.problems)


def test_the_certificate_rows_say_what_its_key_usage_allows() -> None:
    body = make_report().to_dict()
    leaf = {"subject": "CN=x.test", "key_type": "RSA", "key_size": 2048}

    def key_usage_row(**fields: Any) -> list[str]:
        body["tls"]["certificate"] = {**leaf, **fields}
        return [row.value for row in report_view(body).evidence.certificate if row.name == "Key usage"]

    # RFC 5280's names, as the tls section lists them, after the key
    assert key_usage_row(key_usage=["digitalSignature", "keyEncipherment"]) == ["digitalSignature, keyEncipherment"]
    rows = [row.name for row in report_view(body).evidence.certificate]
    assert rows[rows.index("Key") + 1] == "Key usage"
    # null: the extension is absent, which allows every use
    assert key_usage_row(key_usage=None) == ["Every use: the certificate has no Key Usage extension"]
    assert key_usage_row(key_usage=[]) == ["No use: the extension lists none"]
    # A report stored before the field says nothing either way
    assert key_usage_row() == []


def test_snippets_follow_the_detected_server_and_vanish_with_the_fix() -> None:
    body = with_snippets(make_report().to_dict())
    body["redirection"] = {
        "main_chain": [{"url": "https://x.test/", "status_code": 200, "headers": [["Server", "nginx/1.27"]]}]
    }
    stripped = with_snippets(make_report().to_dict(pro=False, include_fix=False))

    view, free = report_view(body), report_view(stripped)

    csp = next(f for f in view.sections[0].problems if f.title.startswith("Content-Security-Policy"))
    assert [s.server for s in csp.snippets] == ["nginx", *[s for s in SERVERS if s != "nginx"]]
    assert csp.first_server == "nginx" and csp.snippets[0].label == "nginx"
    assert all(f.snippets == [] for s in free.sections for f in s.problems)


def test_probe_rows_say_which_answers_are_good() -> None:
    body = make_report().to_dict()
    body["tls"].update(
        protocols={"TLSv1.3": "rejected", "TLSv1.2": "accepted", "TLSv1": "accepted", "SSLv3": "not_testable"},
        weak_cipher_families={"rc4": "rejected", "3des": "accepted"},
    )

    evidence = report_view(body).evidence

    assert [(p.name, p.outcome, p.tone) for p in evidence.protocols] == [
        ("TLS 1.3", "Refused", "neutral"),
        ("TLS 1.2", "Accepted", "good"),
        ("TLS 1.0", "Accepted", "bad"),
        ("SSL 3.0", "Not testable", "neutral"),
    ]
    assert [(p.outcome, p.tone) for p in evidence.weak_ciphers] == [("Refused", "good"), ("Accepted", "bad")]


def test_the_score_chart_in_words_says_where_the_points_went_and_what_the_caps_did() -> None:
    body = impact_report().to_dict()
    body["grading"].update(uncapped_score=55, caps=[{"outcome": "hsts.weak", "max_grade": "C"}])
    body["score"] = 49

    evidence = report_view(body).evidence

    assert evidence.score_bars[0].section == "headers" and evidence.score_bars[0].percent == 38
    assert evidence.score_text.startswith("Points lost: Security headers 38 points, Cookies 12 points")
    assert evidence.score_text.endswith("Before the grade caps the score was 55; the caps hold it at 49.")
    assert evidence.caps == ["Grade at most C: Strict-Transport-Security too weak"]


def test_a_findings_several_notes_are_listed_one_an_item(page: Page, app: App, reports: Reports) -> None:
    # Given the worst site's CORS reflection, which echoed four origins: one finding, a note for each echo (the
    # first holding a "; " of its own, so that joined into one string they read as one run-on list)
    notes = reports.worst_body["cors"]["findings"][0]["notes"]
    assert len(notes) == 4 and "; " in notes[0]
    open_report(page, app, reports.worst)
    finding = page.get_by_test_id("finding").filter(has_text=notes[1])
    # Then they are listed under "Found:", an item each, in order, at every width
    listed = finding.get_by_test_id("finding-notes")
    expect(listed).to_contain_text("Found:")
    expect(listed.locator("li")).to_have_text(notes)
    # And a finding with one note still shows it after "Found:" on one line
    single = reports.worst_body["security_txt"]["findings"][0]["notes"]
    assert len(single) == 1
    expect(page.get_by_test_id("finding").filter(has_text=single[0]).get_by_test_id("finding-notes")).to_have_count(0)
    expect(page.get_by_text(f"Found: {single[0]}")).to_be_visible()

    def look(width: str) -> None:
        finding.scroll_into_view_if_needed()
        box = finding.bounding_box()
        assert box is not None and box["width"] <= int(width)
        finding.screenshot(path=str(SCREENSHOTS / f"finding-notes-{width}.png"))

    at_each_width(page, look)


def test_a_public_certificate_without_scts_is_shown_as_browsers_refuse_it(
    page: Page,
    app: App,
    scan_settings: Settings,
    site_factory: SiteFactory,
    pki: Pki,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """var/screenshots/unlogged-finding-{1280,375}.png and unlogged-negotiated-{1280,375}.png, looked at by hand."""
    # Given a site whose certificate, from a public root (the test root in the system's bundle), embeds no SCT
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca_bundle_path))
    host = site_factory.unique_host("unlogged")
    issued = pki.issue("valid", (host,), logged_in=0)
    context = issued.server_context()
    site = site_factory(catalog.best_practices(host, tls=TlsConfig(context=context)))
    (report_id,) = stored_for_shots(app, scanned_then_stopped(site.url, scan_settings, site))

    # When its report opens, then the finding says what came with it, and the TLS table says none did
    open_report(page, app, report_id)
    finding = page.locator(
        "[data-testid='finding']", has_text="The certificate comes without the proof of public logging"
    )
    expect(finding).to_contain_text("Chrome and Safari require SCTs from at least 2 different logs")
    negotiated = page.get_by_test_id("tls-negotiated")
    expect(negotiated.locator("tr", has_text="Certificate Transparency (SCTs)")).to_contain_text(
        "None: not embedded in the certificate, sent in the TLS handshake or stapled"
    )

    assert shots_fit(page, {"unlogged-finding": finding, "unlogged-negotiated": negotiated}) == [True, True]


def test_a_heartbleed_server_is_shown_with_what_it_gives_away(
    page: Page, app: App, scan_settings: Settings, pki: Pki, dns_server
) -> None:
    """var/screenshots/heartbleed-finding-{1280,375}.png and heartbleed-negotiated-{1280,375}.png, looked at by hand."""
    # Given an appliance of 2013 whose OpenSSL answers heartbeats with Heartbleed, scanned and stored
    page_html = b"<!doctype html><title>Router admin</title><p>Sign in."
    server = TlsliteServer(pki, "router.test", ["aes128gcm", "aes128"], page=page_html, heartbeat="bleeding")
    dns_server.set("router.test", "A", "127.0.0.1", ttl=60)
    try:
        body = scanned(f"https://router.test:{server.port}/", scan_settings).to_dict()
    finally:
        server.close()
    (report_id,) = stored_for_shots(app, body)

    # When its report opens, then the finding says what leaks and how to fix it, and the TLS table says so too
    open_report(page, app, report_id)
    finding = page.locator(
        "[data-testid='finding']", has_text="The server is vulnerable to Heartbleed (CVE-2014-0160)."
    )
    expect(finding).to_contain_text("the server answered a heartbeat request that declared 16 bytes of payload")
    negotiated = page.get_by_test_id("tls-negotiated")
    expect(negotiated.locator("tr", has_text="Heartbeats (RFC 6520)")).to_contain_text(
        "Offered: vulnerable to Heartbleed (CVE-2014-0160)"
    )

    assert shots_fit(page, {"heartbleed-finding": finding, "heartbleed-negotiated": negotiated}) == [True, True]


def test_a_certificate_of_a_root_chrome_distrusts_is_shown_refused(
    page: Page,
    app: App,
    scan_settings: Settings,
    site_factory: SiteFactory,
    pki: Pki,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """var/screenshots/distrusted-root-finding-{1280,375}.png, looked at by hand."""
    # Given a site whose root is in the table of roots Chrome distrusts (the test root, with a cutoff before its leaf)
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from websec_app.scanner.checks import tls as tls_check
    from websec_app.scanner.data import DistrustedRoot, distrusted_roots

    spki = pki.root_cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    cutoff = DistrustedRoot("websec Test Root CA", "the tests", TEST_NOW - timedelta(days=30), "Chrome 131")
    table = {**distrusted_roots(), hashlib.sha256(spki).hexdigest(): cutoff}
    monkeypatch.setattr(tls_check, "distrusted_roots", lambda: table)
    site = site_factory(catalog.best_practices(site_factory.unique_host("distrusted")))
    (report_id,) = stored_for_shots(app, scanned_then_stopped(site.url, scan_settings, site))

    # When its report opens, then the finding names the root, its cutoff and the certificate's date
    open_report(page, app, report_id)
    finding = page.locator("[data-testid='finding']", has_text="Chrome no longer trusts for new certificates")
    expect(finding).to_contain_text("it chains to websec Test Root CA (the tests)")
    assert shots_fit(page, {"distrusted-root-finding": finding}) == [True, True]


def test_a_mail_server_that_fails_its_dane_records_is_shown_with_the_record_to_publish(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, pki: Pki
) -> None:
    """var/screenshots/dane-mismatch-finding-{1280,375}.png, looked at by hand: a 64-digit key in the fix must stay
    inside the card on a phone."""
    # Given a domain whose MX host presents a key its DNSSEC-signed TLSA records do not name, scanned and stored
    mail = mail_domain(site_factory, pki, "ui-dane", tlsa=lambda served: ["3 1 1 " + "d4" * 32])
    with mail.serving():
        body = scanned(mail.url, mail.settings(scan_settings)).to_dict()
    (report_id,) = stored_for_shots(app, body)

    # When its report opens, then the finding says what DANE senders do, and its fix is the record for the key now
    open_report(page, app, report_id)
    finding = page.locator("[data-testid='finding']", has_text="An MX host fails its own DANE records.")
    expect(finding).to_contain_text("Senders that validate DANE (Postfix, Exim, Microsoft 365) then refuse to deliver")
    expect(finding).to_contain_text(f"_25._tcp.{mail.exchange}. IN TLSA 3 1 1 ")
    assert shots_fit(page, {"dane-mismatch-finding": finding}) == [True, True]


def test_a_web_server_that_fails_its_dane_records_is_shown_with_the_record_to_publish(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, pki: Pki
) -> None:
    """var/screenshots/web-dane-mismatch-finding-{1280,375}.png, looked at by hand: the record in the fix stays inside
    the card on a phone."""
    # Given a site renewed with a new key, its DNSSEC-signed TLSA records still naming the old one, scanned and stored
    host = site_factory.unique_host("ui-webdane")
    issued = pki.issue("valid", (host,))
    site = dataclasses.replace(
        catalog.best_practices(host, tls=TlsConfig(context=issued.server_context())), dnssec=True
    )
    running = site_factory(site)
    site_factory.dns.add(f"_{running.https_port}._tcp.{host}", "TLSA", "3 1 1 " + "d4" * 32)
    body = scanned_then_stopped(running.url, scan_settings, running)
    (report_id,) = stored_for_shots(app, body)

    # When its report opens, then the finding says who refuses the server, and its fix is the record for the key now
    open_report(page, app, report_id)
    finding = page.locator("[data-testid='finding']", has_text="The web server fails its own DANE records.")
    expect(finding).to_contain_text("clients that validate DANE refuse to connect")
    key = hashlib.sha256(
        issued.certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    ).hexdigest()
    expect(finding).to_contain_text(f"_{running.https_port}._tcp.{host}. IN TLSA 3 1 1 {key}")
    # and the connection panel says the same in its DANE row
    row = page.get_by_test_id("tls-negotiated").locator("tr", has_text="DANE (TLSA records)")
    expect(row.locator("td")).to_have_text(f"The certificate matches none of the records at _443._tcp.{host}")
    assert shots_fit(page, {"web-dane-mismatch-finding": finding}) == [True, True]


def test_the_mail_servers_asked_are_listed_under_the_dns_findings(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, pki: Pki
) -> None:
    """var/screenshots/mail-servers-{1280,375}.png, looked at by hand: one row per MX host, the table scrolls
    sideways in its own box on a phone, not the page."""
    # Given a domain whose mail server's certificate expires in ten days, scanned and stored, and one that asked none
    mail = mail_domain(site_factory, pki, "ui-mx", certificate="expiring")
    with mail.serving():
        body = scanned(mail.url, mail.settings(scan_settings)).to_dict()
    none_asked = scanned_then_stopped(
        site_factory(catalog.best_practices(site_factory.unique_host("ui-nomx"))).url, scan_settings
    )
    report_id, without_id = stored_for_shots(app, body, none_asked)

    # When its report opens, then the DNS section lists the host with what it offered and its certificate's days left
    open_report(page, app, report_id)
    table = page.get_by_test_id("dns-mail-servers")
    cells = table.locator("tbody tr").first.locator("th, td")
    expect(cells).to_have_text([mail.exchange, "Yes", "TLS 1.3", f"valid for {mail.exchange}", "9 days"])
    assert shots_fit(page, {"mail-servers": table.locator("xpath=..")}) == [True, True]  # with its heading
    # and a report whose scan asked no mail server shows no such table
    open_report(page, app, without_id)
    expect(page.get_by_test_id("dns-mail-servers")).to_have_count(0)


def test_the_name_servers_asked_are_listed_with_the_one_that_does_not_serve_the_zone(
    page: Page, app: App, scan_settings: Settings, site_factory: SiteFactory, dns_server: AuthDnsServer
) -> None:
    """var/screenshots/name-servers-{1280,375}.png, looked at by hand: a row per name server address asked, the lame
    one marked, the table scrolling sideways in its own box on a phone."""
    # Given a domain that still lists its old DNS provider's server, which holds no zone for it (REFUSED)
    provider = site_factory.unique_host("ui-old-dns")
    dns_server.add(f"ns.{provider}", "A", "127.0.53.2")
    host = site_factory.unique_host("ui-lame")
    running = site_factory(catalog.with_nameservers(catalog.best_practices(host), f"ns.{provider}"))
    # (started and closed in a thread of its own: Playwright's sync API keeps an event loop running in this one)
    with ThreadPoolExecutor(1) as pool:
        old_provider = pool.submit(AuthDnsServer("127.0.53.2", dns_server.port, tld=None).start).result()
        try:
            body = scanned_then_stopped(running.url, scan_settings, running)
        finally:
            pool.submit(old_provider.close).result()
    [report_id] = stored_for_shots(app, body)

    # When its report opens, then the DNS section lists both servers, what each answered and who names it
    open_report(page, app, report_id)
    table = page.get_by_test_id("dns-name-servers")
    rows = table.locator("tbody tr")
    expect(rows.nth(0).locator("th, td")).to_have_text(
        [f"ns.{provider}", "127.0.53.2", "Delegation and NS records", "Does not serve the zone", "Answers REFUSED"]
    )
    expect(rows.nth(1).locator("th, td")).to_have_text(
        [f"ns1.{host}", "127.0.53.1", "Delegation and NS records", "Serves the zone", "Answers with authority"]
    )
    expect(rows.nth(0).locator("td[data-tone]")).to_have_attribute("data-tone", "bad")
    assert shots_fit(page, {"name-servers": table.locator("xpath=..")}) == [True, True]
