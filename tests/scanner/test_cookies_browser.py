"""The cookies check grades the cookies Chromium keeps, and only those.

Given one fixture site answering every case's path with that case's exact Set-Cookie lines (over HTTPS,
and over HTTP on port 80), when headless Chromium (Debian's, through Playwright) loads each case in a fresh
browser context, then the cookies Chromium stores (CDP Network.getAllCookies: name, host-only or domain,
path, Secure, HttpOnly) are exactly the cookies the check grades for the same lines: a line it calls
refused or a deletion is one Chromium did not store. A third-party frame on another site is checked for
the one case where partitioning could matter (Partitioned without Secure).

Chromium finds the names through --host-resolver-rules and accepts the test certificate through
--ignore-certificate-errors-spki-list. Sync Playwright must not run inside the test's event loop, so the
tests are synchronous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SAME, Request, Response, RunningSite, Site, SiteFactory, TlsConfig, html
from tests.scanner.browser import chromium_for_site
from websec_app.scanner.checks.cookies import check_cookies

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser


#: One stored cookie: name, the domain it is kept for ("." first when it is not host-only), path, Secure,
#: HttpOnly.
Stored = tuple[str, str, str, bool, bool]

#: A public suffix (PSL private section) the site also answers as.
PUBLIC_SUFFIX = "herokuapp.com"

#: (origin, Set-Cookie lines of one response); {domain} stands for the site's name, its pages are loaded from
#: www.{domain}.
CASES: list[tuple[str, tuple[str, ...]]] = [
    ("https://www.{domain}", ("sid=1; Secure; HttpOnly; SameSite=Lax",)),  # the control: stored as written
    ("https://www.{domain}", ("sid=1; HttpOnly; SameSite=Lax",)),  # the control: no Secure, still stored
    # CHIPS: Partitioned needs Secure; without it Chromium 156 stores nothing, over HTTPS or HTTP
    ("https://www.{domain}", ("sid=abc; HttpOnly; SameSite=Lax; Partitioned",)),
    ("https://www.{domain}", ("p=1; Partitioned",)),
    ("https://www.{domain}", ("p=1; SameSite=None; Partitioned",)),
    ("http://www.{domain}", ("sid=abc; HttpOnly; SameSite=Lax; Partitioned",)),
    ("https://www.{domain}", ("p=1; Secure; SameSite=None; Partitioned",)),  # with Secure: stored (partitioned)
    # One cookie set twice in one response: the last line replaces the first (RFC 6265bis 5.7)
    ("https://www.{domain}", ("sid=a; Path=/", "sid=b; Path=/; Secure; HttpOnly; SameSite=Lax")),
    ("https://www.{domain}", ("sid=b; Path=/; Secure; HttpOnly; SameSite=Lax", "sid=a; Path=/")),
    # ...unless path, host-only flag or partition tell them apart
    ("https://www.{domain}", ("sid=a; Path=/", "sid=b; Path=/app; Secure")),
    ("https://www.{domain}", ("sid=a; Path=/", "sid=b; Path=/; Domain={domain}; Secure")),
    ("https://www.{domain}", ("sid=a; Path=/", "sid=b; Path=/; Secure; Partitioned")),
    # a line Chromium refuses replaces nothing
    ("https://www.{domain}", ("sid=a; Path=/; Secure", "sid=b; Path=/; Domain=other.example")),
    # Domain: the last one counts, and an empty one leaves the cookie host-only (RFC 6265bis 5.7)
    ("https://www.{domain}", ("sid=1; Domain={domain}; Secure",)),
    ("https://www.{domain}", ("sid=1; Domain={domain}; Domain=; Secure",)),
    ("https://www.{domain}", ("sid=1; Domain=; Secure",)),
    ("https://www.{domain}", ("sid=1; Domain=.; Secure",)),  # refused (InvalidDomain)
    # a public suffix as Domain: host-only from the suffix itself, refused from a name under it
    (f"https://{PUBLIC_SUFFIX}", (f"sid=1; Domain={PUBLIC_SUFFIX}; Secure; HttpOnly; SameSite=Lax",)),
    (f"https://www.{PUBLIC_SUFFIX}", (f"sid=1; Domain={PUBLIC_SUFFIX}; Secure",)),
]


def graded(url: str, lines: Sequence[str]) -> list[Stored]:
    """The cookies the check grades as stored for these lines, in Chromium's terms."""
    host = urlsplit(url).hostname or ""
    details = check_cookies(make_snapshot(url, headers=[("Set-Cookie", line) for line in lines])).details
    return sorted(
        (c["name"], "." + c["domain"] if c["domain"] else host, c["path"], c["secure"], c["httponly"])
        for c in details["cookies"]
        if not c["rejected"] and not c["deletes"]
    )


def stored_by(browser: Any, url: str, *, framed_by: str | None = None) -> list[Stored]:
    """What a fresh Chromium context keeps after loading `url` (in an iframe of `framed_by` if given)."""
    context = browser.new_context()
    try:
        tab = context.new_page()
        if framed_by is None:
            tab.goto(url)
        else:
            tab.goto(f"{framed_by}?frame={url}")  # "load" waits for the frame too
        cdp = context.new_cdp_session(tab)
        cookies = cdp.send("Network.getAllCookies")["cookies"]
    finally:
        context.close()
    return sorted((c["name"], c["domain"], c["path"], c["secure"], c["httpOnly"]) for c in cookies)


def case_lines(host: str) -> list[tuple[str, ...]]:
    return [tuple(line.replace("{domain}", host) for line in lines) for _, lines in CASES]


def case_urls(host: str) -> list[str]:
    return [f"{origin.replace('{domain}', host)}/case{n}" for n, (origin, _) in enumerate(CASES)]


def start_site(site_factory: SiteFactory) -> RunningSite:
    """<host> and www.<host> answer /case<N> with the lines of CASES[N], over HTTPS and HTTP; <other>.test
    answers /frame with a page framing the URL of its query."""
    host = site_factory.unique_host("cookiejar")
    other = site_factory.unique_host("cookiejar-top")
    routes: dict[str, Any] = {
        f"/case{n}": Response(200, [("Content-Type", "text/html"), *(("Set-Cookie", line) for line in lines)], "ok")
        for n, lines in enumerate(case_lines(host))
    }

    def frame(request: Request) -> Response:
        return html(f'<iframe src="{request.query.removeprefix("frame=")}"></iframe>')

    routes["/frame"] = frame
    names = (host, f"www.{host}", other, PUBLIC_SUFFIX, f"www.{PUBLIC_SUFFIX}")
    return site_factory(Site(names=names, routes=routes, tls=TlsConfig(cert="service"), http=SAME))


def test_chromium_stores_exactly_the_cookies_the_check_grades(site_factory: SiteFactory, pki: Pki) -> None:
    site = start_site(site_factory)
    urls = case_urls(site.host)
    try:
        with chromium_for_site(site, pki) as browser:
            seen = {url: stored_by(browser, url) for url in urls}
    finally:
        site.stop()

    assert seen == {url: graded(url, lines) for url, lines in zip(urls, case_lines(site.host), strict=True)}
    assert seen[urls[0]] and seen[urls[1]], "the controls must be stored, or the comparison proves nothing"


def test_a_third_party_frame_stores_no_partitioned_cookie_without_secure(site_factory: SiteFactory, pki: Pki) -> None:
    # Given the Partitioned-without-Secure line, and the same with Secure as the control, loaded in an
    # iframe of another site (where CHIPS partitions cookies)
    site = start_site(site_factory)
    top = f"https://{site.names[2]}/frame"
    without, control = (
        CASES.index(("https://www.{domain}", (line,)))
        for line in ("p=1; SameSite=None; Partitioned", "p=1; Secure; SameSite=None; Partitioned")
    )
    try:
        with chromium_for_site(site, pki) as browser:
            refused = stored_by(browser, f"https://www.{site.host}/case{without}", framed_by=top)
            kept = stored_by(browser, f"https://www.{site.host}/case{control}", framed_by=top)
    finally:
        site.stop()

    # Then Chromium keeps nothing for it there either, and the control is kept
    assert refused == []
    assert kept == [("p", f"www.{site.host}", "/", True, False)]
