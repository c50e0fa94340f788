# Test cases adapted from the http-state cookie parser suite (Adam Barth, IETF http-state working group), as
# web-platform-tests carries it (cookies/http-state/, BSD-3-Clause) and tough-cookie ships it in one file
# (test/ietf_data/parser.json, MIT: (C) GoInstant, Inc. and other contributors), copied unchanged to
# files/http-state-parser.json, with its licence in files/http-state-parser.LICENSE.
"""websec's cookie jar sends what Chromium sends, on every ported case of the http-state suite.

Given one fixture site answering http://home.example.org/cookie-parser?<case> with the case's exact Set-Cookie
lines (raw bytes, as the suite's server sends them) and a Date of TEST_NOW, when headless Chromium (Debian's 156,
through Playwright) loads it in a browser context whose cookies were cleared and then requests the case's read-back
URL, then the Cookie header the site receives is the one websec's jar (_http_state.websec_sends, judged at the same
Date) sends there. Chromium adjusts an Expires date by the server's Date (CanonicalCookie::ParseExpiration: the
date plus the browser's clock minus the server's), so the 2019 and 2027 dates of the suite fall on the same side of
"now" for both, whatever the machine's clock says. The suite's port 8888 is the fixture's 80: a cookie does not
depend on the port (6265bis 8.5).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.clock import TEST_NOW
from tests.conformance._http_state import SuiteCase, http_date, websec_sends
from tests.conformance.test_http_state import CASES, NOT_PORTED
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SAME, Request, Response, RunningSite, Site, SiteFactory
from tests.scanner.browser import CHROMIUM, CHROMIUM_ARGS, reaching

playwright_async = pytest.importorskip("playwright.async_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: Every host the suite sets cookies from or reads them back at.
NAMES = ("home.example.org", "sibling.example.org", "subdomain.home.example.org", "sibling.home.example.org")
#: The cases served: those ported.
SERVED = {name: case for name, case in CASES.items() if name not in NOT_PORTED}
#: The cases whose response Chromium refuses outright (a NUL in a header line).
REFUSED = {"DISABLED_CHROMIUM0022"}
#: Browser contexts loading cases at once (one case at a time each, its cookies cleared first).
CONTEXTS_AT_ONCE = 4


def on_port_80(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc=parts.hostname or "").geturl()


async def sent_by(tab: Any, site_requests: list[Request], case: SuiteCase) -> tuple[str, bool, Any]:
    """The Cookie header a browser context holding no cookie sends to the case's read-back URL after loading its
    lines in `tab`, whether Chromium refused the response that set them, and the tab to go on with. "commit":
    Chromium stores a response's cookies as its headers arrive, before the page commits."""
    read_back = on_port_80(case.sent_to)
    target = urlsplit(read_back)
    await tab.context.clear_cookies()
    refused = False
    try:
        await tab.goto(case.set_from, wait_until="commit")
    except playwright_async.Error as exc:
        if "ERR_INVALID_HTTP_RESPONSE" not in str(exc):
            raise
        refused = True
        await tab.close()  # it goes on to its error page
        tab = await tab.context.new_page()
    await tab.goto(read_back, wait_until="commit")
    wanted = target.path + (f"?{target.query}" if target.query else "")
    (request,) = [r for r in site_requests if r.target == wanted and r.host == (target.hostname or "").lower()]
    # the fixture reads header bytes as Latin-1: the UTF-8 cookies of the CHARSET cases come back as their bytes
    return (request.header("cookie") or "").encode("latin-1").decode("utf-8"), refused, tab


async def sent_in_chromium(site: RunningSite, pki: Pki) -> dict[str, tuple[str, bool]]:
    """`sent_by` for every served case, in CONTEXTS_AT_ONCE browser contexts of one browser, each case in a context
    whose cookies were cleared: a context a case costs a renderer process start (~0.1 s of CPU), which made this
    test take over a minute."""
    tabs: asyncio.Queue[Any] = asyncio.Queue()

    async def one(case: SuiteCase) -> tuple[str, bool]:
        header, refused, tab = await sent_by(await tabs.get(), site.requests, case)
        tabs.put_nowait(tab)
        return header, refused

    async with playwright_async.async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, *reaching(site, pki)]
        )
        try:
            for _ in range(CONTEXTS_AT_ONCE):
                tabs.put_nowait(await (await browser.new_context()).new_page())
            seen = await asyncio.gather(*(one(case) for case in SERVED.values()))
        finally:
            await browser.close()
    return dict(zip(SERVED, seen, strict=True))


def test_chromium_sends_what_websec_sends(site_factory: SiteFactory, pki: Pki) -> None:
    def set_cookies(request: Request) -> Response:
        cookies = [b"Set-Cookie: " + line.encode() for line in SERVED[request.query].received]
        return Response(200, [("Content-Type", "text/html"), ("Date", http_date(TEST_NOW)), *cookies], "ok")

    site = site_factory(Site(names=NAMES, routes={"/cookie-parser": set_cookies}, http=SAME, tls=None))
    try:
        seen = asyncio.run(sent_in_chromium(site, pki))
    finally:
        site.stop()

    chromium = {name: header for name, (header, _) in seen.items()}
    assert {name for name, (_, refused) in seen.items() if refused} == REFUSED
    ours = {
        name: websec_sends(CASES[name].received, CASES[name].set_from, on_port_80(CASES[name].sent_to), TEST_NOW)
        for name in SERVED
    }
    assert chromium == ours
    # UTF-8 cookies (the CHARSET cases) go back as the bytes they came in, in Chromium as in websec's jar
    assert chromium["CHARSET0002"] == "春节回=家路·春运完全手册" == ours["CHARSET0002"]
    assert chromium["0001"] == "foo=bar", "the control must be sent, or the comparison proves nothing"
