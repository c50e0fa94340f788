"""A response header value holding a form feed or vertical tab is read as sent, as Chromium 156 reads it, instead
of making the page unscannable (scanner/fetch/_h11_field_values.py); a NUL still refuses the response, as in
Chromium."""

from __future__ import annotations

import asyncio

import h11
import pytest
from h11 import _readers

from tests.factories import make_snapshot
from tests.fixtures.sites import Site, SiteFactory, html
from websec_app.scanner.checks.cross_origin import check_cross_origin
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.errors import ScanError
from websec_app.scanner.fetch import _h11_field_values
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import FetchChain
from websec_app.settings import Settings

FAILSAFE_SECONDS = 60  # only so a regression fails instead of hanging the suite


async def page(url: str, settings: Settings) -> FetchChain:
    pinner = Pinner(Resolver(settings), settings)
    async with make_client(pinner, settings) as client:
        work = fetch_chain(client, pinner, url, settings.limits, raise_on_first_hop=True)
        return await asyncio.wait_for(work, FAILSAFE_SECONDS)


def test_the_lenient_pattern_is_installed_on_the_h11_it_was_written_for() -> None:
    assert h11.__version__.startswith(_h11_field_values.SUPPORTED)
    assert _h11_field_values.INSTALLED
    assert _readers.header_field_re.pattern == _h11_field_values.lenient_header_field()


async def test_a_form_feed_or_vertical_tab_in_a_header_value_is_kept_and_graded(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a page whose X-Content-Type-Options ends in a vertical tab and whose COOP is wrapped in form feeds
    lines = [b"X-Content-Type-Options: nosniff\x0b", b"Cross-Origin-Opener-Policy: \x0csame-origin\x0c"]
    site = site_factory(Site(names=(site_factory.unique_host("control"),), routes={"/": html("x", headers=lines)}))

    # When websec fetches it as a scan fetches its page
    chain = await page(site.url, scan_settings)

    # Then the page arrives with both values as sent, and neither is taken for the policy (Chromium 156 applies
    # neither: tests/conformance/test_wpt_headers_browser.py)
    assert chain.final is not None
    assert chain.final.headers.get_all("X-Content-Type-Options") == ("nosniff\x0b",)
    assert chain.final.headers.get_all("Cross-Origin-Opener-Policy") == ("\x0csame-origin\x0c",)
    snapshot = make_snapshot(chain.final.url, headers=list(chain.final.headers))
    assert [f.outcome for f in check_headers(snapshot).findings if f.subject == "X-Content-Type-Options"] == [
        "xcto.invalid"
    ]
    assert [f.outcome for f in check_cross_origin(snapshot).findings][0] == "coop.invalid"


async def test_a_nul_in_a_header_value_still_refuses_the_response(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a page with a NUL in a header value, whose whole response Chromium refuses (ERR_INVALID_HTTP_RESPONSE)
    routes = {"/": html("x", headers=[b"X-Content-Type-Options: nosniff\x00"])}
    site = site_factory(Site(names=(site_factory.unique_host("nul"),), routes=routes))

    # When websec fetches it, then it refuses it too
    with pytest.raises(ScanError):
        await page(site.url, scan_settings)
