"""Page analysis resolves each URL against the base in effect where it stands (HTML §4.2.3), as Chromium does.

Given one fixture HTTPS site answering under one name per case, each name serving a page with a relative
script `app.js` and a `<base href="http://<name>/">` before or after it, when headless Chromium (Debian's,
through Playwright) loads it, then the script ran (fetched from the page's https:// origin) exactly where page
analysis finds no mixed content, and was blocked (fetched from the http:// base) where it finds
page.mixed_active. Sync Playwright must not run inside the test's event loop, so the test is synchronous.
"""

from __future__ import annotations

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory, html
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.checks.page import check_page

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

BASE = '<base href="http://{name}/">'
SCRIPT = '<script src="app.js"></script>'
#: case -> (the page's <head> and <body>, whether Chromium 156 runs the script).
CASES: dict[str, tuple[str, bool]] = {
    "script before the base": (f"<head>{SCRIPT}{BASE}</head><body></body>", True),
    "script after the base": (f"<head>{BASE}{SCRIPT}</head><body></body>", False),
    "script in head, base in body": (f"<head>{SCRIPT}</head><body>{BASE}</body>", True),
    "base in head, script in body": (f"<head>{BASE}</head><body>{SCRIPT}</body>", False),
}


def test_a_base_applies_from_where_it_stands(site_factory: SiteFactory, pki: Pki) -> None:
    # Given one name per case, each serving its page
    names = {site_factory.unique_host("base"): case for case in CASES}

    def page(name: str) -> Behaviour:
        return html(f"<!DOCTYPE html><html>{CASES[names[name]][0].replace('{name}', name)}</html>")

    # When Chromium loads each
    script = Response(200, [("Content-Type", "text/javascript")], "window.ran = true")
    ran, _ = pages_in_chromium(
        site_factory, pki, names, page, {"/app.js": script}, over_http=True, evaluate="window.ran === true"
    )

    # Then the script ran where the case says
    expected = {case: runs for case, (_, runs) in CASES.items()}
    assert ran == expected
    # And page analysis finds active mixed content exactly where it did not run
    secure = {}
    for case, (markup, _) in CASES.items():
        body = f"<html>{markup.replace('{name}', 'www.example.com')}</html>"
        outcomes = {f.outcome for f in check_page(make_snapshot("https://www.example.com/", body=body)).findings}
        secure[case] = "page.mixed_active" not in outcomes
    assert secure == expected
