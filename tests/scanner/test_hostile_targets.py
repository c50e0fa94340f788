"""Hostile targets: whatever a server sends (or withholds), the scan stays within its limits
and ends with a clear result: a report, or a one-sentence error. Never a crash, never a hang."""

from __future__ import annotations

import dataclasses
import time

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Response, Stall
from websec_app.scanner import TargetUnreachable, scan
from websec_app.settings import ScanLimits, Settings


def fast(settings: Settings) -> Settings:
    limits = dataclasses.replace(ScanLimits(), connect_seconds=0.8, read_seconds=0.8, total_seconds=6)
    return dataclasses.replace(settings, limits=limits)


async def test_a_server_that_accepts_but_never_completes_the_tls_handshake_is_unreachable(
    site_factory, scan_settings
) -> None:
    # Port 80 speaks plain HTTP and waits for a request that never ends: a TLS ClientHello sent
    # there gets no answer, exactly like a server that never finishes the handshake.
    site = site_factory(catalog.simple_site(site_factory.unique_host("tls-stall"), tls=None, http=Stall()))
    started = time.monotonic()
    with pytest.raises(TargetUnreachable):
        await scan(f"https://{site.host}:80/", fast(scan_settings))
    assert time.monotonic() - started < 6 + 1  # within the scan budget, whatever the server does


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nThis line has no colon\r\n\r\n<html>",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
        b"HTTP/1.1 2000 Weird\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n",
    ],
    ids=["header-without-colon", "conflicting-content-length", "bad-status-code", "300kb-header"],
)
async def test_malformed_responses_are_a_clear_unreachable_error(raw: bytes, site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("malformed"), routes={"/": Response(raw=raw)}))
    with pytest.raises(TargetUnreachable, match="invalid HTTP response"):
        await scan(site.url, fast(scan_settings))


async def test_thousands_of_headers_and_cookies_are_graded_without_trouble(site_factory, scan_settings) -> None:
    headers = [("Set-Cookie", f"c{i}=v; Path=/") for i in range(300)] + [("X-Filler", "x" * 40)] * 500
    site = site_factory(catalog.simple_site(site_factory.unique_host("header-flood"), headers=headers))
    body = (await scan(site.url, fast(scan_settings))).to_dict()
    assert body["cookies"]["count"] == 300
    assert body["grade"] in {"A+", "A", "B", "C", "D", "F"}


async def test_invalid_utf8_and_nul_bytes_in_the_page_are_graded(site_factory, scan_settings) -> None:
    page = b"<html><head><script src='http://x.test/a.js'>\xff\xfe\x00</script></head><body>\x80\x81</body>"
    site = site_factory(catalog.simple_site(site_factory.unique_host("bad-bytes"), body=page))
    body = (await scan(site.url, fast(scan_settings))).to_dict()
    assert body["page_analysis"]["status"] == "bad"  # the active mixed-content script is still found
