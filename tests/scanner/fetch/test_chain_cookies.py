"""A redirect chain's cookie jar (fetch/http.py ChainCookies) stores and sends what a browser's does: the cookies
records/cookies.py says a browser refuses are never sent, and the rest go back to their domain and path only
(RFC 6265bis 5.7, 5.8.3; Chromium 156)."""

from __future__ import annotations

import http.cookiejar

import pytest

from tests.fixtures.sites import Redirect, Request, Response, Site, SiteFactory, text
from websec_app.scanner.fetch.http import ChainCookies, fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import HeaderList, HttpResponse
from websec_app.settings import Settings


def redirect_setting(url: str, *lines: str, date: str | None = None) -> HttpResponse:
    """A 302 from `url` with these Set-Cookie lines (and a Date header when given)."""
    headers = [("Location", "/next"), *(("Set-Cookie", line) for line in lines)]
    if date is not None:
        headers.append(("Date", date))
    return HttpResponse(url=url, status_code=302, headers=HeaderList(tuple(headers)))


def jar_after(*responses: HttpResponse) -> ChainCookies:
    cookies = ChainCookies()
    for response in responses:
        cookies.take(response)
    return cookies


@pytest.mark.parametrize(
    ("set_by", "line", "asked"),
    [
        # the __Host- prefix forbids Domain (6265bis 4.1.3.2): browsers refuse the cookie
        ("https://example.com/", "__Host-x=1; Domain=example.com; Path=/; Secure", "https://www.example.com/"),
        ("https://example.com/", "__Host-x=1; Domain=example.com; Path=/; Secure", "https://example.com/"),
        # __Secure- needs Secure from an https response
        ("http://example.com/", "__Secure-y=2", "http://example.com/"),
        # CHIPS: Partitioned needs Secure
        ("https://example.com/", "p=1; Partitioned", "https://example.com/"),
        # a Domain that is a public suffix (github.io) is refused: it would reach every other user's site
        ("https://alice.github.io/", "ps=1; Domain=github.io", "https://bob.github.io/"),
        ("https://alice.github.io/", "ps=1; Domain=github.io", "https://alice.github.io/"),
        # the last Domain counts, and an empty one leaves the cookie host-only
        ("https://a.example.com/", "e=1; Domain=example.com; Domain=", "https://b.example.com/"),
    ],
    ids=[
        "host-prefix-to-www",
        "host-prefix-to-itself",
        "secure-prefix-over-http",
        "partitioned-without-secure",
        "public-suffix-to-bob",
        "public-suffix-to-alice",
        "empty-domain-last",
    ],
)
def test_a_cookie_browsers_refuse_or_keep_for_its_host_is_not_sent(set_by: str, line: str, asked: str) -> None:
    # Given a redirect from `set_by` setting the cookie
    cookies = jar_after(redirect_setting(set_by, line))

    # Then a request to `asked` carries no cookie
    assert cookies.header_for(asked) is None


def test_a_cookie_without_a_name_is_kept_and_sent_as_its_value_as_chromium_does() -> None:
    # Given lines without a name (6265bis 5.6: a cookie of an empty name; Chromium 156 stores it, the http-state
    # suite's cases 0027 and NAME0033 in tests/conformance/), the second replacing the first, and one that would
    # read back as another cookie ("=a=b", which Chromium refuses)
    cookies = jar_after(redirect_setting("https://example.com/", "gate", "passed; Path=/", "=a=b", "sid=1"))

    # Then the request back carries the nameless one as its bare value, before the named one set after it
    assert cookies.header_for("https://example.com/") == "passed; sid=1"


def test_a_cookie_whose_last_domain_is_empty_goes_back_to_its_own_host() -> None:
    cookies = jar_after(redirect_setting("https://a.example.com/", "e=1; Domain=example.com; Domain="))
    assert cookies.header_for("https://a.example.com/") == "e=1"


def test_a_domain_cookie_goes_to_the_domain_and_the_names_under_it_only() -> None:
    # Given www.example.com setting a cookie for example.com
    cookies = jar_after(redirect_setting("https://www.example.com/", "d=1; Domain=.Example.com"))

    # Then it goes to example.com and its subdomains, not to a name that merely ends the same way
    sent = {
        host: cookies.header_for(f"https://{host}/") for host in ("example.com", "a.b.example.com", "badexample.com")
    }
    assert sent == {"example.com": "d=1", "a.b.example.com": "d=1", "badexample.com": None}


@pytest.mark.parametrize(
    ("path", "sent"),
    [("/docs", True), ("/docs/", True), ("/docs/a/b?q=1", True), ("/docsx", False), ("/", False), ("/Docs", False)],
)
def test_a_cookie_goes_under_its_path_as_6265bis_path_match_says(path: str, sent: bool) -> None:
    cookies = jar_after(redirect_setting("https://example.com/", "d=1; Path=/docs"))
    assert cookies.header_for(f"https://example.com{path}") == ("d=1" if sent else None)


def test_without_a_path_a_cookie_goes_under_the_directory_of_the_url_that_set_it() -> None:
    cookies = jar_after(redirect_setting("https://example.com/shop/cart", "q=1"))
    sent = {path: cookies.header_for(f"https://example.com{path}") for path in ("/shop", "/shop/list", "/", "/shopx")}
    assert sent == {"/shop": "q=1", "/shop/list": "q=1", "/": None, "/shopx": None}


def test_cookies_are_sent_longest_path_first_then_oldest_first() -> None:
    cookies = jar_after(
        redirect_setting("https://example.com/", "a=1; Path=/", "b=2; Path=/x/y", "c=3; Path=/x", "d=4; Path=/")
    )
    assert cookies.header_for("https://example.com/x/y/z") == "b=2; c=3; a=1; d=4"


def test_a_secure_cookie_goes_over_https_only() -> None:
    cookies = jar_after(redirect_setting("https://example.com/", "s=1; Secure", "p=2"))
    assert (cookies.header_for("https://example.com/"), cookies.header_for("http://example.com/")) == (
        "s=1; p=2",
        "p=2",
    )


def test_a_cookie_set_again_replaces_the_first_in_its_place_and_a_past_expiry_deletes_it() -> None:
    # Given three cookies, the first set again and the last deleted two ways on a later hop
    cookies = jar_after(
        redirect_setting("https://example.com/", "a=1", "b=2", "c=3", "d=4"),
        redirect_setting(
            "https://example.com/next",
            "a=new",
            "c=; Max-Age=0",
            "d=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
        ),
    )

    # Then a keeps its place with its new value, and c and d are gone
    assert cookies.header_for("https://example.com/") == "a=new; b=2"


def test_an_expiry_in_the_past_of_the_responses_date_deletes_the_cookie() -> None:
    cookies = jar_after(
        redirect_setting("https://example.com/", "a=1", "b=2"),
        redirect_setting(
            "https://example.com/", "a=; Expires=Sun, 22 Nov 2026 11:00:00 GMT", date="Sun, 22 Nov 2026 12:00:00 GMT"
        ),
    )
    assert cookies.header_for("https://example.com/") == "b=2"


def test_plain_http_cannot_overwrite_a_secure_cookie() -> None:
    # 6265bis 5.7 step 16 ("leave secure cookies alone"; Chromium's strict secure cookies)
    cookies = jar_after(
        redirect_setting("https://example.com/", "sid=good; Secure"),
        redirect_setting("http://example.com/", "sid=evil"),
    )
    assert (cookies.header_for("https://example.com/"), cookies.header_for("http://example.com/")) == (
        "sid=good",
        None,
    )


#: One cookie of each kind a browser sends or keeps across sites, set by https://www.example.com/.
ACROSS_SITES = (
    "strict=1; Secure; SameSite=Strict",
    "lax=1; Secure; SameSite=Lax",
    "unset=1; Secure",
    "unknown=1; Secure; SameSite=Sometimes",
    "none=1; Secure; SameSite=None",
    "insecure=1; SameSite=None",
    "chips=1; Secure; SameSite=None; Partitioned",
    "domain=1; Secure; SameSite=None; Domain=example.com",
)
EVERY_COOKIE = "strict=1; lax=1; unset=1; unknown=1; none=1; insecure=1; chips=1; domain=1"


@pytest.mark.parametrize(
    ("origin", "sent"),
    [
        # the same site: a sibling subdomain, the domain itself, another port (the port is no part of a site)
        ("https://api.example.com", EVERY_COOKIE),
        ("https://example.com", EVERY_COOKIE),
        ("https://www.example.com:8443", EVERY_COOKIE),
        # other sites: SameSite=None with Secure only, not Partitioned (the site's own partition)
        ("https://evil.test", "none=1; domain=1"),
        ("https://www.example.com.websecprobeexample.com", "none=1; domain=1"),
        ("http://www.example.com", "none=1; domain=1"),  # schemeful same-site: http:// is another site
        ("null", "none=1; domain=1"),  # a sandboxed iframe: the same site as nothing
    ],
)
def test_a_request_from_another_sites_page_carries_only_the_cookies_browsers_send_across_sites(
    origin: str, sent: str
) -> None:
    # Given the site's own redirect setting one cookie of each kind
    cookies = jar_after(redirect_setting("https://www.example.com/", *ACROSS_SITES))

    # Then a request from a page of `origin` (a CORS probe) carries what Chromium sends from it
    # (tests/scanner/test_cors_cookies_browser.py holds the rule to Chromium), and the site's own request all
    assert cookies.header_for("https://www.example.com/", from_origin=origin) == sent
    assert cookies.header_for("https://www.example.com/") == EVERY_COOKIE
    assert cookies.names_for("https://www.example.com/", from_origin=origin) == tuple(
        pair.split("=")[0] for pair in sent.split("; ")
    )


async def test_the_scan_clients_own_store_neither_reads_nor_sends_a_cookie(
    site_factory: SiteFactory, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a site whose /set sets three cookies, and whose /echo says what Cookie it got
    def echo(request: Request) -> Response:
        return text(request.header("cookie") or "(none)")

    cookies = [("Set-Cookie", f"c{i}=1; Path=/") for i in range(3)]
    routes = {"/set": Response(200, cookies, b"set"), "/echo": echo, "/": Redirect("/echo")}
    site = site_factory(Site(names=(site_factory.unique_host("no-client-jar"),), tls=None, http=routes))
    parsed: list[object] = []
    monkeypatch.setattr(http.cookiejar.CookieJar, "make_cookies", lambda *args: parsed.append(args) or [])

    # When one client asks /set, then /echo (on a chain of its own, which starts with no cookie)
    pinner = Pinner(Resolver(scan_settings), scan_settings)
    async with make_client(pinner, scan_settings) as client:
        await fetch_chain(client, pinner, site.url_for("/set", "http"), scan_settings.limits)
        echoed = await fetch_chain(client, pinner, site.http_url, scan_settings.limits)

    # Then no Set-Cookie was parsed outside the chains' own jars, and none went to the other request
    assert parsed == []
    assert echoed.final is not None and echoed.final.body == b"(none)"
