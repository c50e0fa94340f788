"""Redirect chains followed as a browser follows them: cookies set along the way go with the later hops, a
URL asked again is asked anew, and only the redirect limit ends a loop (Fetch Standard 4.4)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from tests.fixtures.sites import Drip, Redirect, Request, Response, RunningSite, Site, SiteFactory, html, text
from websec_app.scanner import scan
from websec_app.scanner.errors import TargetUnreachable
from websec_app.scanner.fetch.http import MAX_CHAIN_COOKIES, SharedFetches, fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import FetchChain
from websec_app.settings import ScanLimits, Settings

FAILSAFE_SECONDS = 60  # only so a regression fails instead of hanging the suite


def limited(settings: Settings, **limits: float) -> Settings:
    return dataclasses.replace(settings, limits=dataclasses.replace(ScanLimits(), **limits))


async def chain_for(url: str, settings: Settings, *, main: bool = False, shared: bool = False) -> FetchChain:
    pinner = Pinner(Resolver(settings), settings)
    fetches = SharedFetches() if shared else None
    async with make_client(pinner, settings) as client:
        try:
            work = fetch_chain(client, pinner, url, settings.limits, raise_on_first_hop=main, shared=fetches)
            return await asyncio.wait_for(work, FAILSAFE_SECONDS)
        finally:
            if fetches is not None:
                await fetches.aclose()


def cookie_gate(request: Request) -> Redirect | Response:
    """A consent or bot gate: the first visit sets a cookie and redirects to the very same URL."""
    if "seen=1" in (request.header("cookie") or ""):
        return html("<p>welcome</p>")
    return Redirect("https://{host}/", status=302, headers=[("Set-Cookie", "seen=1; Path=/; Secure")])


async def test_a_cookie_gate_redirecting_to_itself_is_scanned_as_a_browser_loads_it(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose / sets a cookie and redirects to itself, and serves the page once the cookie comes back
    host = site_factory.unique_host("cookie-gate")
    site = site_factory(Site(names=(host,), routes={"/": cookie_gate}, http=Redirect("https://{host}/")))

    # When it is scanned
    report = await scan(site.url, scan_settings)

    # Then the page is reached with the cookie, and the http:// form's https hops read the main chain's answers:
    # two https requests for the page (the CORS probes, with an Origin, come on top)
    body = report.to_dict()
    assert (report.status_code, body["final_url"]) == (200, site.url)
    assert [f["check"] for f in body["redirection"]["findings"]] == ["redirect.to_https"]
    page_requests = [r for r in site.requests if r.scheme == "https" and r.path == "/" and not r.header("origin")]
    assert [r.header("cookie") for r in page_requests] == [None, "seen=1"]


async def test_a_preview_cookie_the_user_gives_goes_with_the_cookies_the_gate_sets(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given the cookie gate, scanned with the user's own cookie (`scan --header 'Cookie: preview=1'`)
    host = site_factory.unique_host("preview-gate")
    site = site_factory(Site(names=(host,), routes={"/": cookie_gate}, http=Redirect("https://{host}/")))

    # When it is scanned
    report = await scan(site.url, scan_settings, request_headers=(("Cookie", "preview=1"),))

    # Then the gate's cookie joined the user's, and the page was reached
    assert (report.status_code, report.to_dict()["final_url"]) == (200, site.url)
    page_requests = [r for r in site.requests if r.scheme == "https" and r.path == "/" and not r.header("origin")]
    assert [r.header("cookie") for r in page_requests] == ["preview=1", "preview=1; seen=1"]


async def test_a_cookie_gate_on_the_scanned_chain_gets_its_cookie_back(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a plain-HTTP gate that sets a cookie and redirects to the same URL
    def gate(request: Request) -> Redirect | Response:
        if request.header("cookie") == "seen=1":
            return text("welcome")
        return Redirect("/", status=302, headers=[("Set-Cookie", "seen=1; Path=/")])

    site = site_factory(Site(names=(site_factory.unique_host("http-gate"),), tls=None, http=gate))

    # When the scanned URL's chain follows it, sharing its requests with the scan's other chains
    chain = await chain_for(site.http_url, scan_settings, main=True, shared=True)

    # Then the second request carried the cookie, and got the page
    assert [r.status_code for r in chain.responses] == [302, 200]
    assert [r.header("cookie") for r in site.requests] == [None, "seen=1"]


async def test_a_cookie_set_in_utf8_goes_back_as_the_bytes_it_came_in(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a gate that sets a cookie whose value is UTF-8 (a name, a JSON blob) and lets in who sends it back
    value = "Jürgen·春节".encode()

    def gate(request: Request) -> Redirect | Response:
        # the fixture reads header bytes as latin-1 text: the cookie's bytes, one character each
        if b"who=" + value in [pair.strip() for pair in (request.header("cookie") or "").encode("latin-1").split(b";")]:
            return text("welcome")
        return Redirect("/", status=302, headers=[b"Set-Cookie: who=" + value + b"; Path=/"])

    site = site_factory(Site(names=(site_factory.unique_host("utf8-gate"),), tls=None, http=gate))

    # When the scanned URL's chain follows it
    chain = await chain_for(site.http_url, scan_settings, main=True)

    # Then the second request carried the cookie byte for byte, as Chromium sends it (the http-state CHARSET cases,
    # tests/conformance/test_http_state_browser.py), and got the page: the jar kept ASCII alone, and the gate
    # redirected until the limit
    assert [r.status_code for r in chain.responses] == [302, 200]

    # And so with the user's own Cookie header (`scan --header 'Cookie: preview=1'`), which joins the jar's in httpx's
    # request hook, where the header's bytes are read back as text and written again
    report = await scan(site.http_url, scan_settings, request_headers=(("Cookie", "preview=1"),))
    assert report.status_code == 200
    assert site.requests[-1].header("cookie").encode("latin-1") == b"preview=1; who=" + value  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def loop_site(site_factory: SiteFactory) -> RunningSite:
    host = site_factory.unique_host("self-loop")
    return site_factory(Site(names=(host,), tls=None, http={"/": Redirect("/"), "/page": text("ok")}))


@pytest.mark.parametrize("shared", [False, True], ids=["alone", "shared"])
async def test_a_redirect_to_itself_is_asked_anew_until_the_redirect_limit(
    shared: bool, loop_site: RunningSite, scan_settings: Settings
) -> None:
    # Given a URL that always redirects to itself, and a limit of 3 redirects
    settings = limited(scan_settings, max_redirects=3)
    before = len(loop_site.requests_to("/"))

    # When it is fetched as a side chain
    chain = await chain_for(loop_site.http_url, settings, shared=shared)

    # Then each hop was a request of its own, and the limit ended the chain
    assert chain.failure is not None and chain.failure.kind == "too_many_redirects"
    assert len(chain.responses) == 4
    assert len(loop_site.requests_to("/")) - before == 4


async def test_a_redirect_loop_on_the_scanned_url_is_unreachable_after_the_limit(
    loop_site: RunningSite, scan_settings: Settings
) -> None:
    with pytest.raises(TargetUnreachable, match="more than 3 redirects"):
        await chain_for(loop_site.http_url, limited(scan_settings, max_redirects=3), main=True, shared=True)


def _cookie_echo(request: Request) -> Response:
    return text(request.header("cookie") or "(none)")


async def test_cookies_go_on_only_where_a_browsers_jar_sends_them(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given http://host/ setting a host-only cookie, a Domain cookie, a Secure one and one for another path,
    # and redirecting to http://www.host/ and then back to http://host/echo
    host = site_factory.unique_host("cookie-scope")
    first = Redirect(
        "http://www.{host}/",
        status=302,
        headers=[
            ("Set-Cookie", "host_only=1"),
            ("Set-Cookie", f"domain_wide=1; Domain={host}"),
            ("Set-Cookie", "secure_only=1; Secure"),
            ("Set-Cookie", "elsewhere=1; Path=/elsewhere"),
        ],
    )

    def by_host(request: Request) -> Redirect | Response:
        if request.host == f"www.{host}":
            return Redirect(f"http://{host}/echo", status=302)
        return first if request.path == "/" else _cookie_echo(request)

    site = site_factory(Site(names=(host, f"www.{host}"), tls=None, http=by_host))

    # When the chain is followed
    chain = await chain_for(site.http_url, scan_settings)

    # Then www.host got only the Domain cookie, and host/echo both of its own, never the Secure or other-path ones
    assert chain.failure is None and chain.final is not None
    www = [r for r in site.requests if r.host == f"www.{host}"]
    assert [r.header("cookie") for r in www] == ["domain_wide=1"]
    assert sorted(chain.final.body.decode().split("; ")) == ["domain_wide=1", "host_only=1"]


async def test_a_flood_of_cookies_is_kept_within_the_jars_bounds(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a redirect setting 300 cookies and one of 5,000 bytes
    flood = [("Set-Cookie", f"c{i}=1") for i in range(300)]
    huge = ("Set-Cookie", "huge=" + "x" * 5000)
    host = site_factory.unique_host("cookie-flood")
    site = site_factory(
        Site(names=(host,), tls=None, http={"/": Redirect("/echo", headers=[huge, *flood]), "/echo": _cookie_echo})
    )

    # When the chain is followed
    chain = await chain_for(site.http_url, scan_settings)

    # Then the next hop carries at most the jar's bound, and never the oversized cookie
    assert chain.final is not None and chain.final.status_code == 200
    sent = chain.final.body.decode().split("; ")
    assert len(sent) == MAX_CHAIN_COOKIES
    assert not any(cookie.startswith("huge=") for cookie in sent)


def _stalled_redirect(to: str) -> Drip:
    """A 301 announcing a 1,000-byte body that never comes (the server holds the connection for 10 minutes)."""
    return Drip(status=301, headers=[("Location", to), ("Content-Length", "1000")], chunk=b"", interval=0.2)


async def test_redirects_whose_bodies_stall_are_followed_on_their_headers(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given three redirects whose bodies stall for longer than the scan's whole budget (20 s; 8 s to read a body)
    host = site_factory.unique_host("stalled-301")
    routes = {
        "/": _stalled_redirect("/1"),
        "/1": _stalled_redirect("/2"),
        "/2": _stalled_redirect("/page"),
        "/page": html("<p>page</p>"),
    }
    site = site_factory(Site(names=(host,), routes=routes, http=Redirect("https://{host}/")))

    # When it is scanned with the normal budget
    report = await scan(site.url, scan_settings)

    # Then each redirect was followed once, on its headers, and the page behind them was graded
    assert (report.status_code, report.to_dict()["final_url"]) == (200, f"https://{host}/page")
    asked = [r.path for r in site.requests if r.scheme == "https" and not r.header("origin")]
    assert asked[:4] == ["/", "/1", "/2", "/page"]


async def test_a_redirects_body_that_comes_with_it_is_read_and_its_connection_kept(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a kept-alive server whose redirect carries a small body, and one whose redirect's body stalls
    host = site_factory.unique_host("moved-body")
    moved = Response(301, [("Location", "/page"), ("Content-Type", "text/html")], b"<p>moved</p>")
    site = site_factory(
        Site(
            names=(host,),
            tls=None,
            keep_alive=True,
            http={"/": moved, "/stall": _stalled_redirect("/page"), "/page": text("ok")},
        )
    )

    # When both are followed
    whole = await chain_for(site.http_url, scan_settings)
    cut = await chain_for(site.url_for("/stall", "http"), scan_settings)

    # Then the first redirect's body was read whole and the page came on the same connection;
    # the stalled one was followed without its body, and says so
    assert [r.status_code for r in whole.responses] == [301, 200]
    assert (whole.responses[0].body, whole.responses[0].body_note) == (b"<p>moved</p>", None)
    assert [r.status_code for r in cut.responses] == [301, 200]
    assert cut.responses[0].body_truncated and "followed without waiting" in (cut.responses[0].body_note or "")
    assert site.accepted["http"] == 1 + 2  # one connection for the first chain; the stalled one cannot be reused
