"""Hostile `Location` headers: a malformed redirect ends the chain with a recorded failure that
names the problem, or, on the scanned URL's own chain, a 502-class TargetUnreachable. Never a 500.

The fuzz test serves each generated `Location` from a loopback site. Its pinner refuses every
address outside 127.0.0.0/8, so whatever the generated URL names, nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress

import idna
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.clock import TEST_NOW
from tests.fixtures.sites import Request, Response, RunningSite, Site, SiteFactory
from websec_app.scanner.checks.redirection import check_redirection
from websec_app.scanner.errors import ScanError, TargetRefused, TargetUnreachable
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import FetchChain, SiteSnapshot
from websec_app.scanner.target import parse_target
from websec_app.settings import ScanLimits, Settings


class LoopbackOnlyPinner(Pinner):
    """The real pinner, plus a refusal of anything outside loopback: a fuzzed URL cannot reach the world."""

    async def _resolve_and_guard(self, host: str) -> tuple[str, ...]:
        addresses = await super()._resolve_and_guard(host)
        for address in addresses:
            if not ipaddress.ip_address(address).is_loopback:
                raise TargetRefused(f"test guard: {address} is not loopback")
        return addresses


class Mirror:
    """A site whose `/` answers 302 with whatever Location the test sets, byte for byte."""

    def __init__(self) -> None:
        self.location = b"/"

    def __call__(self, request: Request) -> Response:
        if request.path != "/":
            return Response(200, [("Content-Type", "text/plain")], b"landed")
        head = (
            b"HTTP/1.1 302 Found\r\nLocation: " + self.location + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        return Response(raw=head)


@pytest.fixture(scope="module")
def mirror(site_factory: SiteFactory) -> tuple[RunningSite, Mirror]:
    handler = Mirror()
    site = site_factory(Site(names=(site_factory.unique_host("mirror"),), tls=None, http=handler))
    return site, handler


def fast(settings: Settings) -> Settings:
    limits = dataclasses.replace(ScanLimits(), connect_seconds=0.5, read_seconds=0.5, total_seconds=5, max_redirects=2)
    return dataclasses.replace(settings, limits=limits)


async def chain_for(url: str, settings: Settings, *, main: bool) -> FetchChain:
    pinner = LoopbackOnlyPinner(Resolver(settings), settings)
    async with make_client(pinner, settings) as client:
        return await asyncio.wait_for(fetch_chain(client, pinner, url, settings.limits, raise_on_first_hop=main), 30)


#: Locations browsers refuse too (or that pass a limit of the scanner's own), and the problem named.
BAD_LOCATIONS = [
    (b"http://mirror.test:99999/", "invalid port"),
    (b"http://mirror.test:0/", "invalid port"),
    (b"http://mirror.test:-1/", "invalid port"),
    (b"http://mirror.test:8o/", "invalid port"),
    (b"http://[::1/", "not a valid URL"),
    (b"http://xn--a.test/", "not a valid host name"),
    (b"http://a..b.test/", "not a valid host name"),
    (b"http://" + b"a" * 64 + b".test/", "not a valid host name"),
    (b"http://a%2Fb.test/", "no host name may have ('/')"),  # forbidden once percent-decoded (URL Standard 3.5)
    (b"/" + b"a" * 5000, "longer than"),
    (b"ftp://mirror.test/", "scheme 'ftp'"),
    (b"javascript:alert(1)", "scheme 'javascript'"),
    (b"file:///etc/passwd", "scheme 'file'"),
]


@pytest.mark.parametrize(("location", "problem"), BAD_LOCATIONS)
async def test_a_malformed_location_ends_a_side_chain_with_a_failure_naming_the_problem(
    location: bytes, problem: str, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    site, handler = mirror
    handler.location = location
    chain = await chain_for(site.http_url, fast(scan_settings), main=False)
    assert len(chain.responses) == 1 and chain.responses[0].status_code == 302
    assert chain.failure is not None and chain.failure.kind == "bad_redirect"
    assert problem in chain.failure.message


@pytest.mark.parametrize(("location", "problem"), BAD_LOCATIONS)
async def test_a_malformed_location_on_the_scanned_chain_is_unreachable_502(
    location: bytes, problem: str, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    site, handler = mirror
    handler.location = location
    with pytest.raises(TargetUnreachable, match="redirects to an invalid address") as raised:
        await chain_for(site.http_url, fast(scan_settings), main=True)
    assert raised.value.http_status == 502
    assert problem in str(raised.value)


#: Locations browsers follow, and the request-target the next hop asks for: each as Chromium 156 sent it.
#: {host}: the mirror's name; {host%}: the same with its first letter percent-encoded.
FOLLOWED_LOCATIONS = [
    (b"/\xc3\xa0-propos", "/%C3%A0-propos"),  # UTF-8, as Chromium and Firefox read a Location
    (b"/caf\xe9", "/caf%C3%A9"),  # not UTF-8: read as Latin-1
    (b"/a\\b", "/a/b"),  # a backslash is a slash in an http(s) path
    (b"/x\\y?a\\b", "/x/y?a\\b"),  # ... but not in the query
    (b"http:\\\\{host}\\bs", "/bs"),
    (b"  /lead", "/lead"),  # leading and trailing spaces and controls stripped
    (b"/a\tb", "/ab"),  # tabs (and newlines) dropped
    (b"/x y", "/x%20y"),  # spaces, controls, DEL and non-ASCII percent-encoded
    (b"/x\x01y", "/x%01y"),
    (b"/x\x7fy?q=\x7f", "/x%7Fy?q=%7F"),
    (b"/x\xc2\x85y", "/x%C2%85y"),  # U+0085 NEL, a C1 control, sent as UTF-8
    (b"/x\xc2\xa0y", "/x%C2%A0y"),  # U+00A0 NO-BREAK SPACE
    (b'/p"<>`{}|^ ?q="<>\'` {}|#frag x', "/p%22%3C%3E%60%7B%7D%7C%5E%20?q=%22%3C%3E%27`%20{}|"),
    (b"http://{host%}/host-decoded", "/host-decoded"),  # the host percent-decoded before IDNA
    (b"http://user:pw@{host}/userinfo", "/userinfo"),  # allowed for navigations; nothing sent from it
]


def _filled(location: bytes, site: RunningSite) -> bytes:
    encoded_first = "".join(f"%{byte:02X}" for byte in site.host[:1].encode())
    return location.replace(b"{host%}", (encoded_first + site.host[1:]).encode()).replace(b"{host}", site.host.encode())


@pytest.mark.parametrize(("location", "target"), FOLLOWED_LOCATIONS)
async def test_a_location_browsers_follow_is_followed_to_the_url_they_load(
    location: bytes, target: str, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    site, handler = mirror
    handler.location = _filled(location, site)
    chain = await chain_for(site.http_url, fast(scan_settings), main=True)
    assert [r.status_code for r in chain.responses] == [302, 200]
    landed = site.requests[-1]
    assert (landed.target, landed.host) == (target, site.host)
    assert landed.header("authorization") is None


@pytest.mark.parametrize(
    "location",
    [b"http://%30.%30.%30.%30:22/", b"http:\\\\0.0.0.0:22\\", b"http://user:pw@0.0.0.0:22/", b"http://0.0.0.0\t:22/"],
)
async def test_a_repaired_location_is_guarded_like_any_other(
    location: bytes, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    # Given a Location that, repaired as browsers repair it, names 0.0.0.0 (refused even with private targets allowed)
    site, handler = mirror
    handler.location = location
    before = len(site.requests)

    # When it is followed, on a side chain and on the scanned chain
    chain = await chain_for(site.http_url, fast(scan_settings), main=False)
    with pytest.raises(TargetRefused, match=r"redirects to http://0\.0\.0\.0:22/.*unspecified"):
        await chain_for(site.http_url, fast(scan_settings), main=True)

    # Then the guard refused it: nothing was sent past the redirects
    assert chain.failure is not None and chain.failure.kind == "refused" and "unspecified" in chain.failure.message
    assert len(site.requests) - before == 2


@pytest.mark.parametrize("location", [b"", b" \t "])
async def test_an_empty_location_is_no_redirect_and_its_response_is_the_page(
    location: bytes, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    # Given a 302 whose Location is blank
    site, handler = mirror
    handler.location = location

    # When it is fetched, as a side chain and as the scanned URL's chain
    side = await chain_for(site.http_url, fast(scan_settings), main=False)
    main = await chain_for(site.http_url, fast(scan_settings), main=True)

    # Then, as in Chromium, nothing is followed: the 302 is the page
    for chain in (side, main):
        assert chain.failure is None
        assert [r.status_code for r in chain.responses] == [302]
        assert chain.final is not None and not chain.final.is_redirect


async def test_several_different_location_headers_are_followed_by_no_browser(
    mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    # Given a redirect with two different Location headers (the mirror writes the value, then a second line)
    site, handler = mirror
    handler.location = b"/landed\r\nLocation: /elsewhere"

    # When it is followed, on a side chain and on the scanned chain
    chain = await chain_for(site.http_url, fast(scan_settings), main=False)
    with pytest.raises(TargetUnreachable, match="several different Location headers") as raised:
        await chain_for(site.http_url, fast(scan_settings), main=True)

    # Then neither is followed, as in Chromium (ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION)
    assert [r.status_code for r in chain.responses] == [302]
    assert chain.failure is not None and chain.failure.kind == "bad_redirect"
    assert "several different Location headers (also '/elsewhere')" in chain.failure.message
    assert raised.value.http_status == 502


async def test_the_same_location_header_twice_is_followed(
    mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    site, handler = mirror
    handler.location = b"/landed\r\nLocation: /landed"
    chain = await chain_for(site.http_url, fast(scan_settings), main=True)
    assert [r.status_code for r in chain.responses] == [302, 200]
    assert site.requests[-1].target == "/landed"


async def test_a_utf8_host_name_in_a_location_is_followed_to_its_idna_name(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site named bücher-N.test (published under its IDNA name), and a redirect to it written in UTF-8
    name = site_factory.unique_host("bücher")
    ascii_name = idna.encode(name, uts46=True).decode()
    landing = site_factory(Site(names=(ascii_name,), tls=None, http=Response(200, [], b"landed")))
    start = site_factory(
        Site(
            names=(site_factory.unique_host("to-idn"),),
            tls=None,
            http=Response(301, [b"Location: http://" + name.encode() + b"/"]),
        )
    )

    # When the chain is followed
    chain = await chain_for(start.http_url, fast(scan_settings), main=True)

    # Then it reached the site by its IDNA name
    assert [r.status_code for r in chain.responses] == [301, 200]
    assert chain.final_url == f"http://{ascii_name}/"
    assert [r.host for r in landing.requests] == [ascii_name]


_PREFIXES = [
    "http://",
    "https://",
    "http:\\\\",
    "http:/",
    "//",
    "/",
    "",
    "\\\\",
    "HtTp://",
    "ftp://",
    "data:",
    "h\tttp://",
]
_HOSTS = [
    "{host}", "{ip}", "127.0.0.1", "[::1]", "[::1", "[fe80::1%25lo]", "localhost", "xn--", "xn--a", "a..b",
    "ex\u0430mple.test", "\u0130.test", "\uff11\uff12\uff17.0.0.1", "0x7f.1", "2130706433", "%41.test",
    "a" * 64, "b" * 300 + ".test", "-a-.test", "nx.test", "\u200b.test", "host.test.", "[v1.x]",
]  # fmt: skip
_PORTS = ["", ":", ":0", ":1", ":80", ":65535", ":65536", ":-1", ":99999999999999999999", ":8o", ":\u0661"]
_SEGMENTS = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30)


@st.composite
def locations(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=60))
    return (
        draw(st.sampled_from(_PREFIXES))
        + draw(st.sampled_from(_HOSTS) | _SEGMENTS)
        + draw(st.sampled_from(_PORTS))
        + draw(_SEGMENTS)
    )


@given(location=locations(), main=st.booleans())
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
def test_fuzzed_locations_never_raise_anything_but_a_scan_error(
    location: str, main: bool, mirror: tuple[RunningSite, Mirror], scan_settings: Settings
) -> None:
    site, handler = mirror
    handler.location = location.replace("{host}", site.host).replace("{ip}", site.ip).encode("utf-8")
    settings = fast(scan_settings)
    try:
        chain = asyncio.run(chain_for(site.http_url, settings, main=main))
    except ScanError as exc:
        assert main, f"a side chain raised {exc!r}"
        assert exc.http_status in (400, 502)
        return
    # What the checks read from a chain cannot raise either.
    snapshot = SiteSnapshot(target=parse_target(site.http_url), main=chain, http_upgrade=chain, fetched_at=TEST_NOW)
    check_redirection(snapshot)
    _ = snapshot.final_target_host
