"""The server's DHE group (Logjam, CVE-2015-4000): its size read from the ServerKeyExchange of one ClientHello
offering only DHE suites, sent on every scan whatever suite the server prefers, and bounded against servers that
lie about it. Real loopback servers (Python's ssl, OpenSSL) with the groups of tests/fixtures/dh_groups.py."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest

from tests.fixtures.dh_groups import MODP_2048, OAKLEY_GROUP_2, SAFE_PRIME_512, dh_params_file
from tests.fixtures.legacy_tls import TlsliteServer
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, RunningSite, Site, SiteFactory, TlsConfig
from tests.scanner.fetch.scripted_server import serve_once
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch import tls as tls_fetch
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.scanner.fetch.tls_probes import DHE_HELLO, probe_dh_group
from websec_app.scanner.grading import Graded, grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import SiteSnapshot, TlsHandshake, dhe_suite


def dhe_only_site(site_factory: SiteFactory, pki: Pki, directory: Path, prime: int) -> RunningSite:
    """The audit's server: TLS 1.2 only, DHE-RSA-AES128-GCM-SHA256 only, with the group `prime`."""
    return dhe_site(site_factory, pki, directory, prime, "DHE-RSA-AES128-GCM-SHA256", ssl.TLSVersion.TLSv1_2)


#: Mozilla's "intermediate" order: ECDHE first, then DHE for the clients without it.
ECDHE_THEN_DHE = (
    "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384"
)


def dhe_site(
    site_factory: SiteFactory,
    pki: Pki,
    directory: Path,
    prime: int,
    ciphers: str,
    maximum_version: ssl.TLSVersion = ssl.TLSVersion.MAXIMUM_SUPPORTED,
) -> RunningSite:
    """A site with an RSA leaf serving `ciphers` (OpenSSL names, the server's order first) and the DH group `prime`."""
    host = site_factory.unique_host("dhe")
    issued = pki.issue("rsa2048", (host,))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.maximum_version = maximum_version
    context.set_ciphers(ciphers + ":@SECLEVEL=0")
    context.load_dh_params(str(dh_params_file(directory, prime)))
    context.load_cert_chain(issued.chain_path, issued.key_path)
    return site_factory(Site(names=(host,), routes={"/": Response(200)}, tls=TlsConfig(context=context)))


def graded(tls: TlsHandshake, snapshot: SiteSnapshot) -> Graded:
    result = check_tls(snapshot)
    return grade([result], default_rulebook(), {"host": tls.host, "domain": tls.host})


def _snapshot(tls: TlsHandshake) -> SiteSnapshot:
    from tests.factories import make_snapshot

    return make_snapshot(url=f"https://{tls.host}/", tls=tls)


async def test_a_1024_bit_group_is_read_and_caps_the_grade_at_b(site_factory, pki, tmp_path, scan_settings) -> None:
    # Given the audit's server: DHE only, RFC 2409's 1024-bit Oakley group 2 (graded A+ 98 before)
    site = dhe_only_site(site_factory, pki, tmp_path, OAKLEY_GROUP_2)

    # When its TLS is fetched and graded
    tls = await fetch_tls(site.host, 443, site.ip, scan_settings)
    report = graded(tls, _snapshot(tls))

    # Then the grading handshake got DHE, and the group read is 1024 bits, from the suite the server chose
    assert tls.cipher == "DHE-RSA-AES128-GCM-SHA256"
    assert tls.dh_group is not None
    assert (tls.dh_group.prime_bits, tls.dh_group.protocol) == (1024, "TLSv1.2")
    assert tls.dh_group.cipher == "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"
    # and the grade is capped at B by tls.weak_dh, which names the size
    findings = {f["check"]: f["note"] for f in report.sections["tls"]["findings"]}
    assert "1024-bit DH group" in findings["tls.weak_dh"]
    assert {(c["outcome"], c["max_grade"]) for c in report.caps} == {("tls.weak_dh", "B")}
    assert report.grade == "B"
    assert report.sections["tls"]["dh_group"]["prime_bits"] == 1024


async def test_a_2048_bit_group_is_read_and_is_no_finding(site_factory, pki, tmp_path, scan_settings) -> None:
    site = dhe_only_site(site_factory, pki, tmp_path, MODP_2048)

    tls = await fetch_tls(site.host, 443, site.ip, scan_settings)
    report = graded(tls, _snapshot(tls))

    assert tls.dh_group is not None and tls.dh_group.prime_bits == 2048
    outcomes = {f["check"] for f in report.sections["tls"]["findings"]}
    assert not outcomes & {"tls.weak_dh", "tls.dh_too_small_for_browsers"}
    assert not report.caps


async def test_a_512_bit_group_is_read_from_a_server_openssl_will_not_even_serve(pki) -> None:
    """OpenSSL 3 refuses to serve (and to accept) DH groups under 1024 bits even at security level 0, so the
    browser-refused tier is served by tlslite-ng; the hand-built hello reads it all the same."""
    server = TlsliteServer(pki, "dh512.test", ["aes128gcm"], versions=((3, 3), (3, 3)))
    server.settings.keyExchangeNames = ["dhe_rsa"]
    server.settings.dhParams = (2, SAFE_PRIME_512)
    try:
        group = await probe_dh_group(("127.0.0.1", server.port, "dh512.test"), 5.0)
    finally:
        server.close()

    assert (group.prime_bits, group.protocol, group.cipher) == (512, "TLSv1.2", "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256")


async def test_a_weak_group_behind_ecdhe_is_read_and_caps_the_grade_at_b(
    site_factory, pki, tmp_path, scan_settings
) -> None:
    """The audit's server: ECDHE first, then DHE with RFC 2409's 1024-bit group. No handshake of the scan gets DHE
    (browsers get ECDHE), but every client without ECDHE gets the 1024-bit group (Logjam; SSL Labs caps at B). It
    was graded A+, its group never looked at and nothing said about it."""
    site = dhe_site(site_factory, pki, tmp_path, OAKLEY_GROUP_2, ECDHE_THEN_DHE)

    tls = await fetch_tls(site.host, 443, site.ip, scan_settings)
    report = graded(tls, _snapshot(tls))

    assert tls.cipher and not dhe_suite(tls.cipher)
    assert not any(dhe_suite(p.cipher) for p in (*tls.protocols, *tls.cipher_probes))
    assert tls.dh_group is not None and (tls.dh_group.prime_bits, tls.dh_group.protocol) == (1024, "TLSv1.2")
    findings = {f["check"]: f["note"] for f in report.sections["tls"]["findings"]}
    assert findings["tls.weak_dh"] == (
        "a 1024-bit DH group with TLS_DHE_RSA_WITH_AES_128_GCM_SHA256 over TLSv1.2 (at least 2048 bits needed)"
    )
    assert {(c["outcome"], c["max_grade"]) for c in report.caps} == {("tls.weak_dh", "B")}


async def test_the_dhe_group_costs_one_connection_and_a_server_without_dhe_has_none(
    site_factory, pki, tmp_path, scan_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an ordinary ECDHE site (TLS 1.2 and 1.3, no DHE suite) and an ECDHE-then-DHE one
    ecdhe = site_factory(Site(names=(site_factory.unique_host("ecdhe"),), routes={"/": Response(200)}))
    both = dhe_site(site_factory, pki, tmp_path, MODP_2048, ECDHE_THEN_DHE)
    real_probe = tls_fetch.probe_dh_group

    async def fetched(running: RunningSite, *, dh_probe: bool) -> tuple[TlsHandshake, int]:
        async def not_sent(target: tuple[str, int, str], timeout: float) -> None:
            return None

        monkeypatch.setattr(tls_fetch, "probe_dh_group", real_probe if dh_probe else not_sent)
        before = running.accepted["https"]
        tls = await fetch_tls(running.host, 443, running.ip, scan_settings)
        return tls, running.accepted["https"] - before

    for running, bits in ((ecdhe, None), (both, 2048)):
        # When each is fetched with and without the DHE hello
        tls, connections = await fetched(running, dh_probe=True)
        _, without = await fetched(running, dh_probe=False)
        # Then the hello costs one connection; the ECDHE site refuses it and has no group, nothing untested
        assert connections == without + 1, running.host
        assert (tls.dh_group.prime_bits if tls.dh_group else None) == bits, running.host
        details = check_tls(_snapshot(tls)).details
        assert not [item for item in details["not_testable"] if "DHE" in item], running.host


async def test_a_refusal_of_the_dhe_hello_is_no_group_unless_a_handshake_got_dhe(
    site_factory, pki, tmp_path, scan_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    ecdhe = site_factory(Site(names=(site_factory.unique_host("nodhe"),), routes={"/": Response(200)}))
    assert await probe_dh_group((ecdhe.ip, 443, ecdhe.host), 5.0) is None  # an alert: the server has no DHE

    # A server whose grading handshake got DHE and that refuses the DHE-only hello: the size is unknown, and said
    dhe = dhe_only_site(site_factory, pki, tmp_path, OAKLEY_GROUP_2)

    async def refused(target: tuple[str, int, str], timeout: float) -> None:
        return None

    monkeypatch.setattr(tls_fetch, "probe_dh_group", refused)
    tls = await fetch_tls(dhe.host, 443, dhe.ip, scan_settings)
    assert tls.dh_group is not None and tls.dh_group.prime_bits is None
    assert (
        "DHE group size: could not be read (the server refused a ClientHello offering only DHE suites, though it "
        "negotiated DHE-RSA-AES128-GCM-SHA256)" in check_tls(_snapshot(tls)).details["not_testable"]
    )


def test_dhe_suites_are_told_from_ecdhe_by_openssl_and_iana_names() -> None:
    for name in (
        "DHE-RSA-AES128-GCM-SHA256",
        "EDH-RSA-DES-CBC3-SHA",
        "EXP-EDH-RSA-DES-CBC-SHA",
        "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
    ):
        assert dhe_suite(name), name
    for name in ("ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"):
        assert not dhe_suite(name), name
    for name in ("AES128-SHA", "ADH-AES128-SHA", "TLS_DH_anon_WITH_AES_128_CBC_SHA", None, ""):
        assert not dhe_suite(name), name


def test_the_dhe_hello_offers_only_dhe_suites_named_as_iana_names_them() -> None:
    import warnings

    with warnings.catch_warnings():  # tlslite/__init__ imports asyncore, deprecated since Python 3.11
        warnings.simplefilter("ignore", DeprecationWarning)
        from tlslite.constants import CipherSuite

    assert DHE_HELLO.version == (3, 3) and DHE_HELLO.lowest == (3, 1)
    codes = [code for code, _ in DHE_HELLO.suites]
    assert len(codes) == len(set(codes)) and {0x009E, 0x009F, 0x0033, 0x0039, 0x0067, 0x006B} <= set(codes)
    for code, name in DHE_HELLO.suites:
        assert name.startswith("TLS_DHE_") and "EXPORT" not in name, name
        assert CipherSuite.ietfNames.get(code, name) == name, hex(code)


# -- servers that lie --------------------------------------------------------------------------------------------

_HANDSHAKE = 22
SERVER_HELLO = (
    b"\x02\x00\x00\x26"  # ServerHello, 38 bytes
    + b"\x03\x03"
    + bytes(32)
    + b"\x00"  # no session id
    + b"\x00\x9e"  # TLS_DHE_RSA_WITH_AES_128_GCM_SHA256
    + b"\x00"
)
CERTIFICATE = b"\x0b\x00\x00\x06" + b"\x00\x00\x03" + b"\x00\x00\x00"  # one empty certificate entry, enough here


def _records(payload: bytes, size: int = 2**14) -> bytes:
    return b"".join(
        bytes([_HANDSHAKE, 3, 3]) + len(chunk).to_bytes(2, "big") + chunk
        for chunk in (payload[i : i + size] for i in range(0, len(payload), size))
    )


def _key_exchange(prime: int, *, declared: int | None = None) -> bytes:
    def vector(value: int) -> bytes:
        raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
        return len(raw).to_bytes(2, "big") + raw

    body = vector(prime) + vector(2) + vector(prime // 3) + b"\x04\x01\x00\x02\xab\xcd"  # sha256/rsa, a signature
    length = len(body) if declared is None else declared
    return b"\x0c" + length.to_bytes(3, "big") + body


async def _probe(answer: bytes):
    server, port = await serve_once(answer)
    async with server:
        return await probe_dh_group(("127.0.0.1", port, "liar.test"), 5.0)


async def test_a_key_exchange_split_over_records_after_a_certificate_is_read() -> None:
    flight = SERVER_HELLO + CERTIFICATE + _key_exchange(OAKLEY_GROUP_2)
    group = await _probe(_records(flight, size=7))  # messages cut across 7-byte records
    assert (group.prime_bits, group.cipher, group.detail) == (1024, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", None)


@pytest.mark.parametrize(
    ("flight", "detail"),
    [
        # a ServerKeyExchange announcing 16 MB: refused at its header, not collected
        (SERVER_HELLO + CERTIFICATE + b"\x0c\xff\xff\xff" + bytes(100), "announced a 16777215-byte ServerKeyExchange"),
        # a Certificate announcing 16 MB: likewise
        (SERVER_HELLO + b"\x0b\xff\xff\xff" + bytes(100), "announced a 16777215-byte Certificate"),
        # dh_p claims 65535 bytes within a 20-byte message
        (SERVER_HELLO + CERTIFICATE + b"\x0c\x00\x00\x14\xff\xff" + bytes(18), "malformed ServerKeyExchange"),
        # a whole message whose dh_Ys is missing
        (SERVER_HELLO + CERTIFICATE + b"\x0c\x00\x00\x07\x00\x02\xff\xfb\x00\x01\x02", "malformed ServerKeyExchange"),
        # straight to ServerHelloDone: no key exchange at all
        (SERVER_HELLO + CERTIFICATE + b"\x0e\x00\x00\x00", "no ServerKeyExchange"),
    ],
    ids=["huge-key-exchange", "huge-certificate", "prime-past-the-end", "no-public-value", "no-key-exchange"],
)
async def test_a_server_lying_about_its_key_exchange_leaves_the_size_unknown(flight: bytes, detail: str) -> None:
    group = await _probe(_records(flight))
    assert group.prime_bits is None
    assert group.detail is not None and detail in group.detail


async def test_a_key_exchange_cut_short_by_a_close_is_unknown() -> None:
    # Given a server that announces a ServerKeyExchange longer than it sends, then closes
    server_answer = _records(SERVER_HELLO + CERTIFICATE + _key_exchange(OAKLEY_GROUP_2, declared=600)[:300])

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(server_answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        group = await probe_dh_group(("127.0.0.1", server.sockets[0].getsockname()[1], "liar.test"), 5.0)

    assert group.prime_bits is None and "closed the connection" in (group.detail or "")


async def test_a_server_that_never_sends_its_key_exchange_is_bounded_by_the_timeout() -> None:
    server, port = await serve_once(_records(SERVER_HELLO + CERTIFICATE))
    async with server:
        group = await probe_dh_group(("127.0.0.1", port, "liar.test"), 1.0)
    assert group.prime_bits is None and group.detail == "no answer within 1 seconds"


async def test_an_empty_handshake_record_is_not_tls() -> None:
    group = await _probe(_records(SERVER_HELLO) + bytes([_HANDSHAKE, 3, 3, 0, 0]) * 1000)
    assert group.prime_bits is None and group.detail == "the server's answer is not TLS"
