"""security.txt on the wire (RFC 9116 §3): the file at /.well-known/security.txt wins only when there is
a file there. A site that answers every path with a page and status 200 (a single-page app's HTML shell,
a "Page not found" text) has its legacy /security.txt asked for too, on the connection already open.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, timedelta
from typing import Any

import pytest

from tests.clock import TEST_NOW
from tests.fixtures import catalog
from tests.fixtures.sites import SAME, Request, Response, Site, html, text
from websec_app.scanner import scan

STAMP = (TEST_NOW + timedelta(days=300)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
SPA_SHELL = html("<!doctype html><html><head><title>App</title></head><body><div id=app></div></body></html>")
SOFT_404S = {
    "spa-shell": SPA_SHELL,
    "text-page-not-found": text("Page not found", 200),
}
WELL_KNOWN = "/.well-known/security.txt"
LEGACY = "/security.txt"


def security_txt_at(path: str) -> Any:
    """A valid file naming the URL it is served from as its Canonical."""

    def handler(request: Request) -> Response:
        body = f"Contact: mailto:security@{request.host}\nExpires: {STAMP}\nCanonical: https://{request.host}{path}\n"
        return text(body)

    return handler


def site_with(host: str, routes: dict[str, Any], default: Response) -> Site:
    page = html("<!doctype html><html><head><title>Home</title></head><body><p>Hello</p></body></html>")
    return Site(names=(host,), routes={"/": page, **routes}, default=default, http=catalog.HTTPS_REDIRECT)


def checks(section: dict[str, Any]) -> set[str]:
    return {f["check"] for f in section["findings"]}


@pytest.mark.parametrize("soft_404", sorted(SOFT_404S))
async def test_given_a_soft_404_at_the_well_known_location_then_the_legacy_file_is_found(
    site_factory, scan_settings, soft_404: str
) -> None:
    # Given a site answering /.well-known/security.txt (and every unknown path) with a page and 200,
    # and serving its real file at the legacy /security.txt
    site = site_factory(
        site_with(
            site_factory.unique_host(f"sectxt-{soft_404}"), {LEGACY: security_txt_at(LEGACY)}, SOFT_404S[soft_404]
        )
    )
    # When it is scanned
    body = (await scan(site.url, scan_settings)).to_dict()
    # Then the legacy file is the one graded: present, with the legacy-location note
    section = body["security_txt"]
    assert checks(section) == {"security_txt.present", "security_txt.legacy_location"}, section
    assert section["url"] == site.url_for(LEGACY)
    assert section["contacts"] == [f"mailto:security@{site.host}"]
    # And each location was asked once
    assert len(site.requests_to(WELL_KNOWN)) == 1 and len(site.requests_to(LEGACY)) == 1


async def test_given_a_file_at_the_well_known_location_then_the_legacy_one_is_not_asked_for(
    site_factory, scan_settings
) -> None:
    site = site_factory(
        site_with(
            site_factory.unique_host("sectxt-well-known"),
            {WELL_KNOWN: security_txt_at(WELL_KNOWN), LEGACY: security_txt_at(LEGACY)},
            SPA_SHELL,
        )
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    assert checks(body["security_txt"]) == {"security_txt.present"}
    assert body["security_txt"]["url"] == site.url_for(WELL_KNOWN)
    assert len(site.requests_to(WELL_KNOWN)) == 1 and site.requests_to(LEGACY) == []


async def test_given_soft_404s_at_both_locations_then_the_file_is_missing(site_factory, scan_settings) -> None:
    # Given a single-page app answering both locations with its shell
    site = site_factory(site_with(site_factory.unique_host("sectxt-none"), {}, SPA_SHELL))
    body = (await scan(site.url, scan_settings)).to_dict()
    # Then there is no security.txt, and the note is about the well-known location
    section = body["security_txt"]
    assert checks(section) == {"security_txt.missing"}
    assert "HTML page" in section["findings"][0]["note"]
    assert section["url"] == site.url_for(WELL_KNOWN)
    assert len(site.requests_to(WELL_KNOWN)) == 1 and len(site.requests_to(LEGACY)) == 1


async def test_on_a_keep_alive_site_the_fallback_costs_no_connection(site_factory, scan_settings) -> None:
    # Given two keep-alive sites: one with its file at the well-known location, one behind a soft 404
    with_file = site_factory(
        replace(
            site_with(site_factory.unique_host("sectxt-ka-file"), {WELL_KNOWN: security_txt_at(WELL_KNOWN)}, SPA_SHELL),
            keep_alive=True,
        )
    )
    fallback = site_factory(
        replace(
            site_with(site_factory.unique_host("sectxt-ka-fallback"), {LEGACY: security_txt_at(LEGACY)}, SPA_SHELL),
            keep_alive=True,
        )
    )
    # When both are scanned
    for site in (with_file, fallback):
        body = (await scan(site.url, scan_settings)).to_dict()
        assert "security_txt.present" in checks(body["security_txt"])
    # Then the legacy location was asked over the connection the well-known one used: one request more,
    # no connection more
    [well_known], [legacy] = fallback.requests_to(WELL_KNOWN), fallback.requests_to(LEGACY)
    assert legacy.client == well_known.client
    assert len(fallback.requests) == len(with_file.requests) + 1
    assert fallback.accepted["https"] == with_file.accepted["https"]


# -- a site reached over http only (RFC 9116 §3: the file MUST be fetched over https) -------------------------


def http_only(host: str, routes: dict[str, Any]) -> Site:
    """A site with nothing listening on its https port, serving `routes` over http."""
    page = html("<!doctype html><html><head><title>Home</title></head><body><p>Hello</p></body></html>")
    return Site(names=(host,), routes={"/": page, **routes}, tls=None, http=SAME)


async def test_on_a_site_reached_over_http_only_a_file_served_there_is_found_and_invalid(
    site_factory, scan_settings
) -> None:
    # Given a site with no https at all, serving a security.txt over http, where researchers can read it
    def file(request: Request) -> Response:
        return text(f"Contact: mailto:security@{request.host}\nExpires: {STAMP}\n")

    site = site_factory(http_only(site_factory.unique_host("sectxt-http-only"), {WELL_KNOWN: file}))
    # When it is scanned
    body = (await scan(f"http://{site.host}/", scan_settings)).to_dict()
    # Then the file is graded, as invalid since it is not served over https (it was "could not be checked":
    # only https://<host>/.well-known/security.txt was asked, and nothing answers there)
    section = body["security_txt"]
    assert checks(section) == {"security_txt.invalid"}, section
    assert "served over plain HTTP" in section["findings"][0]["note"]
    assert section["url"] == f"http://{site.host}{WELL_KNOWN}" and section["contacts"] == [
        f"mailto:security@{site.host}"
    ]
    assert [r.scheme for r in site.requests_to(WELL_KNOWN)] == ["http"]


async def test_on_a_site_reached_over_http_only_without_a_file_the_file_is_missing(site_factory, scan_settings) -> None:
    site = site_factory(http_only(site_factory.unique_host("sectxt-http-none"), {}))
    body = (await scan(f"http://{site.host}/", scan_settings)).to_dict()
    # Then there is none, over https or http (it was "could not be checked", costing nothing)
    section = body["security_txt"]
    assert checks(section) == {"security_txt.missing"}, section
    assert section["findings"][0]["deduction"] == 2
    assert len(site.requests_to(WELL_KNOWN)) == 1 and len(site.requests_to(LEGACY)) == 1


# -- a file larger than the fetch reads (64 KiB): what follows the cut is unknown, not missing --------------------

#: 70 KiB of comment lines: past the 64 KiB the fetch reads of a security.txt (ScanLimits.max_security_txt_bytes)
LONG_COMMENTS = "".join(f"# {n:05} the history of our disclosure programme, kept for the record\n" for n in range(1120))


@pytest.mark.parametrize(
    ("case", "file"),
    [
        ("fields after the cut", LONG_COMMENTS + "Contact: mailto:security@{host}\nExpires: {stamp}\n"),
        ("expires after the cut", "Contact: mailto:security@{host}\n" + LONG_COMMENTS + "Expires: {stamp}\n"),
    ],
)
async def test_given_a_file_larger_than_the_fetch_reads_then_what_follows_the_cut_is_not_graded_missing(
    site_factory, scan_settings, case: str, file: str
) -> None:
    # Given a site serving a valid security.txt whose first 70 KiB are comments, its fields (or its Expires) after
    def handler(request: Request) -> Response:
        return text(file.replace("{host}", request.host or "").replace("{stamp}", STAMP))

    not_found = text("Not found", 404)
    site = site_factory(site_with(site_factory.unique_host("sectxt-large"), {WELL_KNOWN: handler}, not_found))
    assert len(LONG_COMMENTS.encode()) > 70 * 1024
    # When it is scanned
    body = (await scan(site.url, scan_settings)).to_dict()
    # Then the file at the well-known location is graded on what was read: no required field reported missing
    # (the code before: security_txt.missing, "it contains no security.txt fields", and security_txt.invalid,
    # "there is no Expires field"), and a note says it was too large to read whole
    section = body["security_txt"]
    assert checks(section) == {"security_txt.present", "security_txt.lint"}, section
    assert section["url"] == site.url_for(WELL_KNOWN)
    [note] = [f["note"] for f in section["findings"] if f["check"] == "security_txt.lint"]
    assert "larger than the 64 KiB the scanner reads" in note and "RFC 9116" in note
    not_read = "Contact and Expires are" if case == "fields after the cut" else "Expires is"
    assert f"{not_read} not in the part read" in note
    assert site.requests_to(LEGACY) == []
