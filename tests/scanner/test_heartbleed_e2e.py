"""Heartbleed (CVE-2014-0160): a server whose TLS library (OpenSSL 1.0.1 to 1.0.1f) answers a heartbeat request for
more payload than the request carries by reading past it, into its own memory. SSL Labs, testssl.sh and nmap look
for it; the scan did not, since OpenSSL 3 has no heartbeats. The grading handshake now offers heartbeats (as a
custom extension, mode peer_not_allowed_to_send), and a server that answers with its own is asked by hand, before
any key is exchanged, with a request whose declared payload is only the request's own padding (no byte of the
server's memory is asked for), then a well-formed one.

Servers: tlslite-ng with heartbeats (which discards a malformed request, as RFC 6520 4 says), and the same with the
answer OpenSSL 1.0.1f gave (tests/fixtures/legacy_tls.py: no maintained library bleeds any more)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.factories import make_snapshot
from tests.fixtures.legacy_tls import BLED_MEMORY, TlsliteServer
from tests.fixtures.pki import Pki
from websec_app.scanner import scan
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.settings import Settings

PAGE = b"<!doctype html><title>An appliance of 2013</title><p>Still serving."


@pytest.fixture
def bleeding(pki: Pki, dns_server) -> Iterator[TlsliteServer]:
    server = TlsliteServer(pki, "bleeding.test", ["aes128gcm", "aes128"], page=PAGE, heartbeat="bleeding")
    dns_server.set("bleeding.test", "A", "127.0.0.1", ttl=60)
    yield server
    server.close()


async def test_a_server_that_reads_past_a_heartbeat_request_is_heartbleed(
    bleeding: TlsliteServer, scan_settings: Settings
) -> None:
    body = (await scan(f"https://bleeding.test:{bleeding.port}/", scan_settings)).to_dict()
    tls = body["tls"]
    notes = {f["check"]: f.get("note") for f in tls["findings"]}
    assert notes["tls.heartbleed"] == (
        "the server answered a heartbeat request that declared 16 bytes of payload and carried none with 16 bytes: "
        "it reads past the request, into its own memory when asked for more"
    )
    assert tls["heartbeat"]["offered"] is True and tls["heartbeat"]["heartbleed"] == "vulnerable"
    assert body["grade"] == "F" and {"outcome": "tls.heartbleed", "max_grade": "F"} in body["grading"]["caps"]
    assert body["status_code"] == 200  # the page itself is graded as ever
    # what the server would have given away is nowhere in the report
    assert BLED_MEMORY[:20].decode() not in str(body)


async def test_a_server_with_correct_heartbeats_is_asked_and_not_flagged(pki: Pki, scan_settings: Settings) -> None:
    server = TlsliteServer(pki, "heartbeat.test", ["aes128gcm"], heartbeat="correct")
    try:
        tls = await fetch_tls("heartbeat.test", server.port, "127.0.0.1", scan_settings)
    finally:
        server.close()
    assert tls.heartbeat is not None and tls.heartbeat.verdict == "safe"
    result = check_tls(make_snapshot(url=f"https://heartbeat.test:{server.port}/", tls=tls))
    assert "tls.heartbleed" not in {f.outcome for f in result.findings}
    assert result.details["heartbeat"] == {
        "offered": True,
        "heartbleed": "safe",
        "detail": "the server answered a well-formed heartbeat and not the other",
    }


async def test_a_server_without_heartbeats_is_not_asked(pki: Pki, best_site, scan_settings: Settings) -> None:
    """No current server has heartbeats: nothing more is asked of it (no connection is added to a scan)."""
    plain = TlsliteServer(pki, "plain.test", ["aes128gcm"])
    try:
        tls = await fetch_tls("plain.test", plain.port, "127.0.0.1", scan_settings)
    finally:
        plain.close()
    assert tls.failure is None and tls.heartbeat is None
    body = (await scan(best_site.url, scan_settings)).to_dict()  # real OpenSSL 3, TLS 1.3
    assert "heartbeat" not in body["tls"]
