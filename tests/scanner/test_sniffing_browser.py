"""A body without a Content-Type is HTML to the scanner exactly where Chromium renders it as HTML.

Given one fixture HTTPS site answering each case's path with the case's body and no Content-Type, when
headless Chromium (Debian's, through Playwright) loads it, then `document.contentType` is text/html exactly
for the bodies records/html.is_html takes for HTML (MIME Sniffing §7.1: page analysis, the headers check's
<meta> elements and security.txt all go by it). Sync Playwright must not run inside the test's event loop, so
the test is synchronous.
"""

from __future__ import annotations

import pytest

from tests.factories import make_response
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from tests.scanner.browser import chromium_for_site
from websec_app.scanner.records.html import is_html

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: The opening of a body served without a Content-Type -> whether Chromium 156 renders it as HTML.
SNIFF_CASES: dict[bytes, bool] = {
    b"<!DOCTYPE html>": True,
    b"<div id=app></div>": True,
    b"<P>text": True,
    b"<!-- shell -->": True,
    b"<table><tr><td>x": True,
    b"<html\nlang=en>": True,  # no space or ">" after the tag (MIME Sniffing 7.1 wants one, Chromium does not)
    b"<divx>": True,
    b"\x0b<html>": True,  # a vertical tab is whitespace to Chromium
    b"\x0c <html>": True,
    b"<?xml version='1.0'?><doc/>": False,  # text/xml
    b"\xef\xbb\xbf<!DOCTYPE html>": False,  # a byte order mark is no whitespace: text/plain
    b"Contact: mailto:a@example.com\n": False,
    b"hello <html>": False,
    b" " * 510 + b"<html>": False,  # Chromium reads 512 bytes
}


def test_chromium_renders_as_html_exactly_the_bodies_the_scanner_sniffs_as_html(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one path per body, each served with no Content-Type
    paths = {f"/case-{index}": opening for index, opening in enumerate(SNIFF_CASES)}
    name = site_factory.unique_host("sniff")
    routes = {path: Response(200, [], opening + b"<p>body</p>") for path, opening in paths.items()}
    site = site_factory(Site(names=(name,), routes=routes, tls=TlsConfig(cert="service")))
    try:
        # When Chromium loads each
        with chromium_for_site(site, pki) as browser:
            tab = browser.new_context().new_page()
            rendered = {}
            for path, opening in paths.items():
                tab.goto(f"https://{name}{path}")
                rendered[opening] = tab.evaluate("document.contentType") == "text/html"
    finally:
        site.stop()

    # Then Chromium took for HTML exactly what the scanner takes for HTML
    assert rendered == SNIFF_CASES
    sniffed = {
        opening: is_html(make_response(f"https://{name}/", body=opening + b"<p>body</p>", content_type=None))
        for opening in SNIFF_CASES
    }
    assert sniffed == SNIFF_CASES
