"""A server of before RFC 5746 (2010): no renegotiation_info in its ServerHello. Browsers load such a site
(BoringSSL and NSS connect; they only refuse to renegotiate), while OpenSSL 3 refuses it by default ("unsafe legacy
renegotiation disabled"), which graded it unreachable. The scan now reaches it, reads the page and says what is
missing (tls.no_secure_renegotiation), from the handshakes it makes anyway."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.legacy_tls import HelloServer, TlsliteServer
from tests.fixtures.pki import Pki
from websec_app.scanner import scan
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch.tls import fetch_tls

PAGE = b"<!doctype html><title>An old appliance</title><p>Still serving."


@pytest.fixture
def old_server(pki: Pki, dns_server) -> Iterator[TlsliteServer]:
    server = TlsliteServer(pki, "oldtls.test", ["aes128gcm", "aes128"], secure_renegotiation=False, page=PAGE)
    dns_server.set("oldtls.test", "A", "127.0.0.1", ttl=60)
    yield server
    server.close()


async def test_a_server_without_secure_renegotiation_is_reached_and_said_so(old_server, scan_settings) -> None:
    tls = await fetch_tls("oldtls.test", old_server.port, "127.0.0.1", scan_settings)
    assert tls.failure is None and tls.trusted and tls.protocol == "TLSv1.2"
    assert tls.secure_renegotiation is False
    accepted = {p.name: p.secure_renegotiation for p in tls.protocols if p.accepted}
    assert accepted == {"TLSv1.2": None, "TLSv1.1": False, "TLSv1": False}  # TLS 1.2: the grading handshake's
    result = check_tls(_snapshot(tls))
    assert result.details["secure_renegotiation"] is False
    notes = {f.outcome: f.note for f in result.findings}
    assert notes["tls.no_secure_renegotiation"] == "its TLS 1.2 handshake carries no renegotiation_info"
    assert "tls.handshake_failed" not in notes


async def test_the_whole_scan_reads_the_page_and_caps_the_grade(old_server, scan_settings) -> None:
    body = (await scan(f"https://oldtls.test:{old_server.port}/", scan_settings)).to_dict()
    outcomes = {f["check"] for f in body["tls"]["findings"]}
    assert "tls.no_secure_renegotiation" in outcomes and "tls.cert_valid" in outcomes
    assert body["status_code"] == 200 and body["page_analysis"]["html"] is True  # the page itself was read
    assert {"outcome": "tls.no_secure_renegotiation", "max_grade": "A"} in body["grading"]["caps"]


async def test_the_same_server_with_rfc_5746_has_no_finding(pki: Pki, scan_settings) -> None:
    server = TlsliteServer(pki, "newtls.test", ["aes128gcm"])
    try:
        tls = await fetch_tls("newtls.test", server.port, "127.0.0.1", scan_settings)
    finally:
        server.close()
    assert tls.secure_renegotiation is True
    result = check_tls(_snapshot(tls))
    assert result.details["secure_renegotiation"] is True
    assert "tls.no_secure_renegotiation" not in {f.outcome for f in result.findings}


async def test_a_tls_1_3_server_is_judged_on_its_tls_1_2_answer(best_site, scan_settings) -> None:
    """TLS 1.3 has no renegotiation: the grading handshake says nothing, the TLS 1.2 probe does."""
    tls = (await scan(best_site.url, scan_settings)).to_dict()["tls"]
    assert tls["protocol"] == "TLSv1.3" and tls["secure_renegotiation"] is True


async def test_a_hand_built_probe_reads_the_answer_too(scan_settings) -> None:
    """The legacy probes (what OpenSSL 3 cannot offer) read the same extension from the ServerHello; this server
    answers without any."""
    server = HelloServer((3, 3), [0x000A])  # 3DES
    try:
        tls = await fetch_tls("hello.test", server.port, "127.0.0.1", scan_settings, probes=True)
    finally:
        server.close()
    probe = next(p for p in tls.cipher_probes if p.name == "3des")
    assert probe.accepted and probe.secure_renegotiation is False


def _snapshot(tls):
    from tests.factories import make_snapshot

    return make_snapshot(url=f"https://{tls.host}:{tls.port}/", tls=tls)
