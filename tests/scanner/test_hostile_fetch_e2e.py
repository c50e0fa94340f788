"""Whole scans of hostile targets (issue 12): a decompression bomb as the page is graded from what
fits, and the report says the page was cut and why; a malformed redirect is a 502, never a 500."""

from __future__ import annotations

import gzip

import pytest

from tests.fixtures import catalog
from tests.fixtures.bombs import chained_gzip_bomb, encoded, gzip_bomb
from tests.fixtures.sites import Redirect, SiteFactory, html
from websec_app.scanner import TargetUnreachable, scan
from websec_app.settings import Settings


def page_findings(body: dict[str, object]) -> dict[str, str]:
    section = body["page_analysis"]
    assert isinstance(section, dict)
    return {f["check"]: f.get("note") or "" for f in section["findings"]}


@pytest.mark.parametrize(
    ("route", "words"),
    [
        (encoded(gzip_bomb(), "gzip"), "decompression bomb"),
        (encoded(chained_gzip_bomb(), "gzip, gzip"), "decompression bomb"),
    ],
    ids=["gzip-bomb", "gzip-gzip-chain"],
)
async def test_a_bomb_as_the_page_is_graded_and_the_report_says_the_body_was_cut(
    route: object, words: str, site_factory: SiteFactory, scan_settings: Settings
) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("bomb-page"), routes={"/": route}))
    report = await scan(site.url, scan_settings)
    body = report.to_dict()
    assert report.status_code == 200 and body["grade"]
    notes = page_findings(body)
    assert "page.body_incomplete" in notes
    assert words in notes["page.body_incomplete"]
    assert body["page_analysis"]["body_note"] == notes["page.body_incomplete"]


async def test_a_small_page_sent_as_gzip_gzip_is_decoded_and_graded(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a page whose body is gzip of gzip (Content-Encoding: gzip, gzip), as Chromium decodes it
    host = site_factory.unique_host("gzip-gzip-page")
    document = catalog.page(host, head='<script src="http://cdn.example/lib.js"></script>').encode()
    route = encoded(gzip.compress(gzip.compress(document)), "gzip, gzip")
    site = site_factory(catalog.simple_site(host, routes={"/": route}))

    # When it is scanned, the page is read whole: its plain-HTTP script is found
    notes = page_findings((await scan(site.url, scan_settings)).to_dict())
    assert "page.mixed_active" in notes and "page.body_incomplete" not in notes


async def test_a_backslash_redirect_is_followed_as_browsers_follow_it(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose / redirects with backslashes for slashes (URL Standard: the same as slashes in http(s))
    host = site_factory.unique_host("backslash")
    site = site_factory(
        catalog.simple_site(host, routes={"/": Redirect("https:\\\\{host}\\page"), "/page": html("<p>page</p>")})
    )

    # When it is scanned, the page behind the redirect is what is graded
    report = await scan(site.url, scan_settings)
    assert (report.status_code, report.to_dict()["final_url"]) == (200, f"https://{host}/page")


async def test_a_redirect_to_a_url_browsers_refuse_too_is_unreachable_with_a_clear_sentence(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("bad-port"), routes={"/": Redirect("http://127.0.0.1:99999/")})
    )
    with pytest.raises(TargetUnreachable, match=r"redirects to an invalid address.*invalid port") as raised:
        await scan(site.url, scan_settings)
    assert raised.value.http_status == 502
