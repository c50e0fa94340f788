"""The CORS probes carry the cookies Chromium sends with a credentialed fetch() from a page of their origin.

Given one fixture site whose / redirects to /page setting cookies of every SameSite kind (and /page setting
more, and letting every origin read it with credentials), when it is scanned, and when headless Chromium loads
/ in a regular profile and then, from a page of each origin, runs `fetch("https://<host>/page",
{credentials: "include"})`, then each probe sent the Cookie header Chromium sent from its origin:

- the look-alike and foreign origins (other sites), the site's own `http://` origin (schemeful same-site: another
  site) and `null` (a sandboxed iframe on another site) get the SameSite=None cookies with Secure only, not a
  Partitioned one;
- a sibling subdomain (the same site, another origin; the scanner sends none) and the page's own origin get them
  all, from the scanner's jar (fetch/http.py ChainCookies) as from Chromium.

Third-party cookies are allowed in the profile, as in Chrome's regular windows (tests/scanner/browser.py
`chromium_window_for_site`). Sync Playwright must not run inside the test's event loop, so the tests are
synchronous and run the scan with asyncio.run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.fixtures.pki import Pki
from tests.fixtures.sites import SAME, Redirect, Request, Response, RunningSite, Site, SiteFactory, TlsConfig, html
from tests.scanner.browser import chromium_window_for_site
from websec_app.scanner import scan
from websec_app.scanner.fetch.cors_origins import FOREIGN_ORIGIN, LOOKALIKE_LABEL
from websec_app.scanner.fetch.http import ChainCookies
from websec_app.scanner.snapshot import HeaderList, HttpResponse
from websec_app.settings import Settings

pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: What the redirect sets ({host}: the site's name). A cookie without SameSite, or with a value browsers do not
#: know, is Lax to Chromium; it was set seconds before, well within Lax-by-default's two minutes (which let it
#: go with a top-level POST, not with a fetch()). SameSite=None without Secure is left out: Chromium stores no
#: such cookie where the jar keeps it for its own chain (Firefox and Safari do), so it would differ on the
#: site's own requests, which are not what these tests are about.
REDIRECT_COOKIES = (
    "strict=1; Secure; SameSite=Strict",
    "lax=1; Secure; SameSite=Lax",
    "unset=1; Secure",
    "none=1; Secure; SameSite=None",
    "bogus=1; Secure; SameSite=Bogus",
    "plain=1",
    "partitioned=1; Secure; SameSite=None; Partitioned",
    "domain=1; Secure; SameSite=None; Domain={host}",
    "elsewhere=1; Secure; SameSite=None; Path=/other",
)
#: What the page itself sets: a visitor who loaded it holds these too.
PAGE_COOKIES = ("sid=abc; Secure; HttpOnly; SameSite=None", "csrftoken=x; Secure; SameSite=Lax")
#: What Chromium sends from another site: the SameSite=None cookies with Secure, partitioned and off-path ones
#: left out.
CROSS_SITE = "none=1; domain=1; sid=abc"


def start_site(site_factory: SiteFactory) -> RunningSite:
    """The site, under its name, www.<name> (a sibling: the same site), the look-alike the scanner sends and its
    foreign origin (other sites), over HTTPS and HTTP. /sandboxed (on any name) frames a sandboxed page that
    fetches /page?from=null."""
    host = site_factory.unique_host("cors-cookies")
    lookalike = f"{host}.{LOOKALIKE_LABEL}{host}"
    foreign = FOREIGN_ORIGIN.removeprefix("https://")
    redirect_lines, page_lines = lines(REDIRECT_COOKIES, host), lines(PAGE_COOKIES, host)

    def page(request: Request) -> Response:
        # It lets every origin read it with credentials, as the sites the probes look for do: each fetch() resolves
        origin = request.header("origin")
        cors = [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true")] if origin else []
        return html("page", headers=[*(("Set-Cookie", line) for line in page_lines), *cors])

    def sandboxed(request: Request) -> Response:
        # A sandboxed iframe without allow-same-origin: its origin is opaque, so its fetch() sends `Origin: null`.
        fetch = f"fetch('https://{host}/page?from=browser', {{credentials: 'include'}})"
        framed = f"<script>{fetch}.finally(() => parent.postMessage(1, '*'))</script>"
        listen = "window.fetched = new Promise(done => addEventListener('message', () => done(true)));"
        return html(f'<script>{listen}</script><iframe sandbox="allow-scripts" srcdoc="{framed}"></iframe>')

    start = Redirect(f"https://{host}/page", 302, [("Set-Cookie", line) for line in redirect_lines])
    routes = {"/": start, "/page": page, "/blank": html("blank"), "/sandboxed": sandboxed}
    names = (host, f"www.{host}", lookalike, foreign)
    return site_factory(Site(names=names, routes=routes, tls=TlsConfig(cert="service"), http=SAME))


def lines(cookies: tuple[str, ...], host: str) -> tuple[str, ...]:
    return tuple(line.replace("{host}", host) for line in cookies)


def sent_by_chromium(site: RunningSite, pki: Pki, profile: Path, origins: Mapping[str, str]) -> dict[str, str | None]:
    """Load the site's / in a regular Chromium profile, then fetch /page with credentials from a page of each of
    `origins` (`null`: from a sandboxed iframe on the foreign origin): the Cookie header each fetch sent, by origin."""
    foreign = FOREIGN_ORIGIN
    with chromium_window_for_site(site, pki, profile) as window:
        tab = window.new_page()
        tab.goto(f"https://{site.host}/")
        for origin in origins.values():
            if origin == "null":
                tab.goto(f"{foreign}/sandboxed")
                assert tab.evaluate("window.fetched")
                continue
            tab.goto(f"{origin}/blank")
            fetch = f"fetch('https://{site.host}/page?from=browser', {{credentials: 'include'}}).then(r => r.status)"
            assert tab.evaluate(fetch) == 200
        stored = {cookie["name"] for cookie in window.cookies()}
    assert len(stored) == len(REDIRECT_COOKIES) + len(PAGE_COOKIES), "Chromium must store every cookie"
    fetched = [r for r in site.requests_to("/page") if r.query == "from=browser"]
    # A same-origin GET sends no Origin: the page's own origin is the one fetch without it
    by_origin = {r.header("origin") or f"https://{site.host}": r.header("cookie") for r in fetched}
    return {origin: by_origin[origin] for origin in origins.values()}


def test_each_probe_carries_the_cookies_chromium_sends_from_its_origin(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings, tmp_path: Path
) -> None:
    site = start_site(site_factory)
    try:
        # When the site is scanned (it echoes every Origin: the foreign probe is sent too)
        asyncio.run(scan(site.url, scan_settings))
        probes = {r.header("origin"): r.header("cookie") for r in site.requests_to("/page") if r.header("origin")}
        # and Chromium fetches the page from each origin the probes sent
        chromium = sent_by_chromium(site, pki, tmp_path / "profile", {origin: origin for origin in probes})
    finally:
        site.stop()

    # Then every probe sent what Chromium sent from its origin: the SameSite=None cookies with Secure
    lookalike = f"https://{site.host}.{LOOKALIKE_LABEL}{site.host}"
    assert set(probes) == {lookalike, FOREIGN_ORIGIN, f"http://{site.host}", "null"}
    assert probes == chromium
    assert set(probes.values()) == {CROSS_SITE}


def test_a_page_of_the_same_site_gets_every_cookie_from_chromium_and_the_jar(
    site_factory: SiteFactory, pki: Pki, tmp_path: Path
) -> None:
    site = start_site(site_factory)
    host = site.host
    origins = {"sibling": f"https://www.{host}", "itself": f"https://{host}", "other site": FOREIGN_ORIGIN}
    try:
        chromium = sent_by_chromium(site, pki, tmp_path / "profile", origins)
    finally:
        site.stop()

    # The jar, fed what the redirect and the page set, asked for a request from each origin
    jar = ChainCookies()
    setting = tuple(("Set-Cookie", line) for line in lines(REDIRECT_COOKIES, host))
    jar.take(HttpResponse(f"https://{host}/", 302, HeaderList((("Location", "/page"), *setting))))
    jar.take(
        HttpResponse(
            f"https://{host}/page", 200, HeaderList(tuple(("Set-Cookie", line) for line in lines(PAGE_COOKIES, host)))
        )
    )
    expected = {origin: jar.header_for(f"https://{host}/page", from_origin=origin) for origin in origins.values()}

    assert chromium == expected
    assert expected[f"https://www.{host}"] == expected[f"https://{host}"] == jar.header_for(f"https://{host}/page")
    assert "strict=1" in (expected[f"https://www.{host}"] or "") and expected[FOREIGN_ORIGIN] == CROSS_SITE
