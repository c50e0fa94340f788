"""Hostile targets: whatever a server sends (or withholds), the scan stays within its limits
and ends with a clear result: a report, or a one-sentence error. Never a crash, never a hang."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fixtures import catalog
from tests.fixtures.odd_certs import odd_curve_certificate, server_context, unreadable_name_certificate
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, SiteFactory, Stall, TlsConfig
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
    assert body["cookies"]["count"] == 176  # the cookies Chromium keeps: past 180 it evicts the 31 oldest at a time
    (too_many,) = [f for f in body["cookies"]["findings"] if f["check"] == "cookie.too_many"]
    assert too_many["note"] == (
        "Chromium keeps at most 180 cookies for a site and evicts the least recently set past that: the cookies of "
        "124 of these Set-Cookie lines are evicted, so they were not graded: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 "
        "and 114 more"
    )
    assert body["grade"] in {"A+", "A", "B", "C", "D", "F"}


async def test_invalid_utf8_and_nul_bytes_in_the_page_are_graded(site_factory, scan_settings) -> None:
    page = b"<html><head><script src='http://x.test/a.js'>\xff\xfe\x00</script></head><body>\x80\x81</body>"
    site = site_factory(catalog.simple_site(site_factory.unique_host("bad-bytes"), body=page))
    body = (await scan(site.url, fast(scan_settings))).to_dict()
    assert body["page_analysis"]["status"] == "bad"  # the active mixed-content script is still found


# -- certificates OpenSSL accepts and cryptography refuses (the hostile-target audit) ----------------------------


def _unreadable_tls(host: str, directory: Path) -> TlsConfig:
    der, key = unreadable_name_certificate(host)
    return TlsConfig(context=server_context(directory, [der], key))


async def test_a_certificate_the_parser_refuses_is_a_tls_finding_not_a_failed_scan(
    site_factory: SiteFactory, tmp_path: Path, scan_settings: Settings
) -> None:
    """Given a leaf whose subject O is a PrintableString holding "_", the scan used to end in a ValueError."""
    host = site_factory.unique_host("badname-scan")
    site = site_factory(catalog.simple_site(host, tls=_unreadable_tls(host, tmp_path)))
    body = (await scan(site.url, fast(scan_settings))).to_dict()
    assert [f["check"] for f in body["tls"]["findings"]] == ["tls.handshake_failed"]
    assert body["tls"]["error"].startswith("the server's certificate could not be read: ")
    assert body["tls"]["protocol"] == "TLSv1.3"


async def test_a_sent_certificate_on_a_curve_the_parser_lacks_is_graded(
    site_factory: SiteFactory, pki: Pki, tmp_path: Path, scan_settings: Settings
) -> None:
    """Given an extra certificate on secp112r1 (cryptography raises UnsupportedAlgorithm for its key), the scan
    used to end in that exception."""
    host = site_factory.unique_host("oddcurve-scan")
    issued = pki.issue("valid", (host,))
    key = serialization.load_pem_private_key(issued.key_path.read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    chain = [c.public_bytes(serialization.Encoding.DER) for c in issued.chain] + [odd_curve_certificate()]
    tls = TlsConfig(context=server_context(tmp_path, chain, key, seclevel0=True))
    body = (await scan(site_factory(catalog.simple_site(host, tls=tls)).url, fast(scan_settings))).to_dict()
    assert body["tls"]["trusted"] is True
    assert [(c["key_type"], c["key_size"]) for c in body["tls"]["chain"]] == [("EC", 256), ("EC", 256), ("EC", 112)]
    assert all(
        f["check"] != "check.error"
        for section in body.values()
        if isinstance(section, dict)
        for f in section.get("findings", [])
    )


async def test_an_mta_sts_policy_host_whose_certificate_the_parser_refuses_is_a_finding(
    site_factory: SiteFactory, tmp_path: Path, scan_settings: Settings
) -> None:
    """The policy host's handshake is a side task of the scan: its certificate must not sink the scan either."""
    host = site_factory.unique_host("badname-sts")
    mail = (
        (host, "MX", f"10 mx.{host}"),
        (f"mx.{host}", "A", "127.0.0.9"),
        (f"_mta-sts.{host}", "TXT", '"v=STSv1; id=1"'),
    )
    site = site_factory(catalog.simple_site(host, dns=mail))
    policy = Response(200, [("Content-Type", "text/plain")], f"version: STSv1\r\nmode: enforce\r\nmx: mx.{host}\r\n")
    routes = {"/.well-known/mta-sts.txt": policy}
    site_factory(
        catalog.simple_site(f"mta-sts.{host}", routes=routes, tls=_unreadable_tls(f"mta-sts.{host}", tmp_path))
    )
    body = (await scan(site.url, fast(scan_settings))).to_dict()
    note = next(f["note"] for f in body["dns"]["findings"] if f["check"] == "dns.mta_sts_invalid")
    assert note.startswith("the policy host has no working HTTPS (the server's certificate could not be read: ")
