"""The TLS fetch against real servers on loopback: the grading handshake, the probes, and what
Python's ssl cannot show (the chain as sent, a stapled OCSP response, embedded SCTs)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import pkcs7
from cryptography.x509 import ocsp
from cryptography.x509.oid import NameOID

from tests.clock import TEST_NOW
from tests.factories import make_snapshot
from tests.fixtures.ca_issuers import serve_ca_issuers
from tests.fixtures.legacy_tls import HelloServer, TlsliteServer
from tests.fixtures.ocsp_staples import PyOpenSslServer, staple, with_single_responses
from tests.fixtures.odd_certs import (
    long_chain,
    odd_curve_certificate,
    server_context,
    unknown_tls_feature_certificate,
    unreadable_name_certificate,
)
from tests.fixtures.pki import CA_ISSUERS_HOST, INTERMEDIATE_FILE, Pki, _resign_with_sha1, embedded_scts
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from tests.scanner.fetch.scripted_server import serve_once
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch import tls as tls_module
from websec_app.scanner.fetch._legacy_hello import hello_probe
from websec_app.scanner.fetch._tls_client import PROTOCOL_VERSIONS, HandshakeRejected, certifi_bundle, offer_problem
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.scanner.fetch.tls_probes import _ssl3_hello
from websec_app.scanner.scan import run_checks
from websec_app.settings import Settings


def site(site_factory: SiteFactory, prefix: str, **tls: object):
    config = TlsConfig(**tls)  # type: ignore[arg-type]
    return site_factory(Site(names=(site_factory.unique_host(prefix),), routes={"/": Response(200)}, tls=config))


T = TypeVar("T")

LEGACY = ("export", "rc4", "des", "3des")  # the families OpenSSL 3 cannot offer


async def fetch(running, settings: Settings, **kwargs):
    return await fetch_tls(running.host, 443, running.ip, settings, **kwargs)


# -- the grading handshake ------------------------------------------------------------------------------


async def test_a_valid_chain_is_read_as_sent_and_trusted(site_factory, scan_settings) -> None:
    tls = await fetch(site(site_factory, "chain"), scan_settings)
    assert tls.failure is None and tls.trusted and tls.hostname_matches
    assert [c.subject for c in tls.chain] == [
        f"CN={tls.host},O=websec tests",
        "CN=websec Test Intermediate CA,O=websec tests",
    ]
    assert tls.chain[1].is_ca and not tls.chain[0].is_ca
    assert (tls.protocol, tls.chain_complete, tls.missing_issuer) == ("TLSv1.3", True, None)
    assert tls.key_exchange_group  # e.g. x25519
    assert tls.ocsp_staple is None


async def test_a_server_that_sends_only_its_leaf_has_an_incomplete_chain(site_factory, pki, scan_settings) -> None:
    """Given a leaf whose intermediate is not sent but published at its caIssuers URL (as public CAs do),
    then a trusted path exists once it is added: the chain is incomplete, the CA is not unknown."""
    serve_ca_issuers(site_factory, pki)
    tls = await fetch(site(site_factory, "nointer", cert="missing_intermediate"), scan_settings)
    assert len(tls.chain) == 1
    assert tls.chain_complete is False
    assert tls.missing_issuer == "CN=websec Test Intermediate CA,O=websec tests"
    assert tls.untrusted_ca is None
    assert not tls.trusted and tls.verify_error == "unable to get local issuer certificate"


async def test_the_missing_intermediate_is_fetched_through_the_injected_source(
    site_factory, pki, scan_settings
) -> None:
    asked: list[str] = []

    async def source(url: str) -> bytes | None:
        asked.append(url)
        return pki.intermediate_cert.public_bytes(serialization.Encoding.DER)

    tls = await fetch(site(site_factory, "aiainject", cert="missing_intermediate"), scan_settings, ca_issuers=source)
    assert asked == [f"http://{CA_ISSUERS_HOST}/{INTERMEDIATE_FILE}"]
    assert (tls.chain_complete, tls.missing_issuer, tls.untrusted_ca) == (
        False,
        "CN=websec Test Intermediate CA,O=websec tests",
        None,
    )


async def test_a_bundle_at_the_ca_issuers_url_is_searched_for_the_issuer(site_factory, pki, scan_settings) -> None:
    """RFC 5280 4.2.2.1: a certs-only CMS (.p7c) may hold several certificates, in any order (DER sorts the
    SET OF by encoding); Chromium's cert_issuer_source_aia offers each to path building. With the test root
    first, the first certificate alone made an incomplete chain an untrusted CA (F instead of B)."""
    der, pem = serialization.Encoding.DER, serialization.Encoding.PEM
    bundles = {
        "p7c, root first": pkcs7.serialize_certificates([pki.root_cert, pki.intermediate_cert], der),
        "p7c, intermediate first": pkcs7.serialize_certificates([pki.intermediate_cert, pki.root_cert], der),
        "pem, root first": pki.root_cert.public_bytes(pem) + pki.intermediate_cert.public_bytes(pem),
    }
    assert pkcs7.load_der_pkcs7_certificates(bundles["p7c, root first"])[0] == pki.root_cert
    running = site(site_factory, "aiabundle", cert="missing_intermediate")
    for name, body in bundles.items():

        async def source(url: str, body: bytes = body) -> bytes | None:
            return body

        tls = await fetch(running, scan_settings, probes=False, ca_issuers=source)
        assert (tls.chain_complete, tls.untrusted_ca) == (False, None), name
        findings = check_tls(make_snapshot(url=f"https://{tls.host}/", tls=tls)).findings
        assert [f.outcome for f in findings] == ["tls.cert_valid", "tls.chain_incomplete"], name


async def test_an_issuer_found_nowhere_is_an_unknown_ca_not_a_missing_intermediate(site_factory, scan_settings) -> None:
    """Given the leaf's issuer is neither sent, nor in the trust store, nor downloadable, then nothing
    shows that a trusted path exists: we say the CA is unknown and do not guess an incomplete chain."""

    async def nothing(url: str) -> bytes | None:
        return None

    tls = await fetch(site(site_factory, "aiagone", cert="missing_intermediate"), scan_settings, ca_issuers=nothing)
    assert (tls.chain_complete, tls.missing_issuer) == (None, None)
    assert tls.untrusted_ca == "CN=websec Test Intermediate CA,O=websec tests"


async def test_a_leaf_signed_directly_by_an_untrusted_root_is_an_untrusted_ca(site_factory, scan_settings) -> None:
    """A home-made CA: the root signs the leaf, nothing is published. Not an incomplete chain."""
    tls = await fetch(site(site_factory, "homeca", cert="untrusted_root"), scan_settings, probes=False)
    assert not tls.trusted and tls.verify_error == "unable to get local issuer certificate"
    assert (tls.chain_complete, tls.missing_issuer) == (None, None)
    assert tls.untrusted_ca == "CN=websec Untrusted Root CA,O=websec private"


async def test_a_full_chain_to_an_untrusted_root_is_an_untrusted_ca(site_factory, pki, scan_settings) -> None:
    serve_ca_issuers(site_factory, pki)
    tls = await fetch(site(site_factory, "privchain", cert="untrusted_chain"), scan_settings, probes=False)
    assert len(tls.chain) == 2 and not tls.trusted
    assert (tls.chain_complete, tls.missing_issuer) == (None, None)
    assert tls.untrusted_ca == "CN=websec Untrusted Root CA,O=websec private"


async def test_a_sent_chain_with_a_gap_is_incomplete_without_downloading(site_factory, pki, scan_settings) -> None:
    """Given the server sends its leaf and the trusted root but not the intermediate between them,
    then the gap shows in what was sent: incomplete, even when nothing can be downloaded."""
    issued = pki.issue("valid", (site_factory.unique_host("gap"),))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    chain_path = issued.chain_path.with_name(issued.chain_path.name.replace(".chain", ".gap"))
    chain_path.write_bytes(
        b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (issued.certificate, pki.root_cert))
    )
    context.load_cert_chain(chain_path, issued.key_path)

    async def nothing(url: str) -> bytes | None:
        return None

    running = site_factory(Site(names=issued.names, routes={"/": Response(200)}, tls=TlsConfig(context=context)))
    tls = await fetch(running, scan_settings, probes=False, ca_issuers=nothing)
    assert (tls.chain_complete, tls.missing_issuer, tls.untrusted_ca) == (
        False,
        "CN=websec Test Intermediate CA,O=websec tests",
        None,
    )


async def test_a_self_signed_leaf_is_untrusted_but_its_chain_is_complete(site_factory, scan_settings) -> None:
    tls = await fetch(site(site_factory, "selfsig", cert="self_signed"), scan_settings)
    assert (tls.trusted, tls.verify_error, tls.chain_complete) == (False, "self-signed certificate", True)


async def test_the_leafs_own_dates_do_not_make_the_chain_untrusted(site_factory, scan_settings) -> None:
    tls = await fetch(site(site_factory, "expired", cert="expired"), scan_settings)
    assert tls.trusted  # the check grades the expiry itself, once
    assert tls.leaf is not None and tls.leaf.not_after < TEST_NOW


async def test_weak_keys_and_signatures_are_recorded_not_refused(site_factory, scan_settings) -> None:
    rsa = await fetch(site(site_factory, "rsa1024", cert="rsa1024"), scan_settings, probes=False)
    sha1 = await fetch(site(site_factory, "sha1", cert="sha1"), scan_settings, probes=False)
    assert rsa.leaf is not None and (rsa.leaf.key_type, rsa.leaf.key_size, rsa.trusted) == ("RSA", 1024, True)
    assert sha1.leaf is not None and (sha1.leaf.signature_hash, sha1.trusted) == ("sha1", True)
    assert rsa.protocols == () and rsa.cipher_probes == ()  # probes=False: the grading handshake only


async def test_nothing_listening_is_a_recorded_failure(site_factory, scan_settings) -> None:
    running = site_factory(Site(names=(site_factory.unique_host("notls"),), tls=None, http=Response(200)))
    tls = await fetch(running, scan_settings)
    assert tls.failure is not None and tls.failure.kind == "unreachable"
    assert {p.result for p in tls.protocols} <= {"error", "not_testable"}


# -- certificates the parser refuses, chains too long to judge naively (the hostile-target audit) ---------------


def _der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def odd_site(site_factory: SiteFactory, host: str, context: ssl.SSLContext):
    return site_factory(Site(names=(host,), routes={"/": Response(200)}, tls=TlsConfig(context=context)))


def valid_chain(pki: Pki, host: str) -> tuple[list[bytes], ec.EllipticCurvePrivateKey]:
    """The test PKI's valid leaf for `host` and its intermediate, as DER, and the leaf key."""
    issued = pki.issue("valid", (host,))
    key = serialization.load_pem_private_key(issued.key_path.read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return [_der(c) for c in issued.chain], key


async def nothing(url: str) -> bytes | None:
    return None


async def test_a_leaf_the_parser_refuses_is_the_handshakes_failure_not_a_crash(
    site_factory, tmp_path, scan_settings
) -> None:
    """Given a self-signed leaf whose subject O is a PrintableString holding "_" (OpenSSL takes it, cryptography
    raises ValueError), then the verify callback and the chain's copy no longer raise out of the handshake: the
    failure says the certificate could not be read, and what the handshake showed is kept."""
    host = site_factory.unique_host("badname")
    der, key = unreadable_name_certificate(host)
    tls = await fetch(odd_site(site_factory, host, server_context(tmp_path, [der], key)), scan_settings)
    assert tls.failure is not None and tls.failure.kind == "tls"
    assert tls.failure.message.startswith("the server's certificate could not be read: ")
    assert "PrintableString" in tls.failure.message
    assert (tls.protocol, tls.chain) == ("TLSv1.3", ())
    assert {p.name: p.result for p in tls.protocols}["TLSv1.3"] == "accepted"


async def test_a_certificate_with_an_unknown_tls_feature_takes_the_unreadable_certificate_path(
    site_factory, pki, tmp_path, scan_settings
) -> None:
    """Given a certificate whose TLS Feature extension lists 99 (cryptography raises KeyError reading its
    extensions, which only the catch-all around grading caught: 'could not be graded: KeyError: 99', the whole
    section failed), then it is read as unreadable: sent above a valid chain, it ends the chain recorded and is
    named, and the chain is graded; as the leaf, the failure says the certificate could not be read."""
    valid = site_factory.unique_host("feature99-extra")
    der, _ = unknown_tls_feature_certificate("extra.test")
    chain, valid_key = valid_chain(pki, valid)
    tls = await fetch(odd_site(site_factory, valid, server_context(tmp_path, [*chain, der], valid_key)), scan_settings)
    assert tls.failure is None and tls.trusted and tls.hostname_matches and len(tls.chain) == 2
    assert [n for n in tls.not_testable if "could not be read" in n] == [
        "certificate 3 of the chain sent could not be read: an extension holds a value cryptography does not know (99)"
    ]
    assert "tls.handshake_failed" not in {
        f.outcome for f in check_tls(make_snapshot(url=f"https://{valid}/", tls=tls)).findings
    }
    host = site_factory.unique_host("feature99")
    leaf, key = unknown_tls_feature_certificate(host)
    tls = await fetch(odd_site(site_factory, host, server_context(tmp_path, [leaf], key)), scan_settings)
    assert tls.failure is not None and tls.failure.kind == "tls"
    assert tls.failure.message == (
        "the server's certificate could not be read: an extension holds a value cryptography does not know (99)"
    )
    assert (tls.protocol, tls.chain) == ("TLSv1.3", ())


async def test_a_sent_certificate_the_parser_refuses_ends_the_chain_and_is_named(
    site_factory, pki, tmp_path, scan_settings
) -> None:
    host = site_factory.unique_host("badextra")
    chain, key = valid_chain(pki, host)
    extra, _ = unreadable_name_certificate("extra.test")
    tls = await fetch(odd_site(site_factory, host, server_context(tmp_path, [*chain, extra], key)), scan_settings)
    assert tls.failure is None and tls.trusted and tls.hostname_matches and tls.chain_complete
    assert [c.subject for c in tls.chain] == [
        f"CN={host},O=websec tests",
        "CN=websec Test Intermediate CA,O=websec tests",
    ]
    unread = [note for note in tls.not_testable if "could not be read" in note]
    assert len(unread) == 1 and unread[0].startswith("certificate 3 of the chain sent could not be read: ")


async def test_a_sent_certificate_on_a_curve_the_parser_lacks_is_described_by_openssl(
    site_factory, pki, tmp_path, scan_settings
) -> None:
    """Given an extra CA certificate on secp112r1 (cryptography raises UnsupportedAlgorithm, not ValueError, for
    its key), then its key is read as OpenSSL reads it and the rest is graded as usual."""
    host = site_factory.unique_host("oddcurve")
    chain, key = valid_chain(pki, host)
    context = server_context(tmp_path, [*chain, odd_curve_certificate()], key, seclevel0=True)
    tls = await fetch(odd_site(site_factory, host, context), scan_settings, probes=False)
    assert tls.failure is None and tls.trusted and tls.chain_complete
    assert [(c.subject, c.key_type, c.key_size) for c in tls.chain[1:]] == [
        ("CN=websec Test Intermediate CA,O=websec tests", "EC", 256),
        ("CN=websec odd curve CA,O=websec odd", "EC", 112),
    ]


async def _with_loop_stall(work: Awaitable[T]) -> tuple[T, float]:
    """`work`'s result and the longest time the event loop went without running another task meanwhile."""
    stall = 0.0

    async def heartbeat() -> None:
        nonlocal stall
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            stall = max(stall, time.monotonic() - before)

    beat = asyncio.ensure_future(heartbeat())
    try:
        return await work, stall
    finally:
        beat.cancel()


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the chain judge's verifications (each still runs, against the real trust store)."""
    calls: list[int] = []
    real = tls_module._chains_to_trusted_root

    def counted(*args: Any) -> bool:
        calls.append(len(args[2]))  # how many untrusted certificates it was offered
        return real(*args)

    monkeypatch.setattr(tls_module, "_chains_to_trusted_root", counted)
    return calls


async def test_hundreds_of_sent_certificates_above_a_missing_issuer_are_judged_within_bounds(
    site_factory, tmp_path, scan_settings, verifications
) -> None:
    """Given 330 CA certificates above the leaf (96 KB, under OpenSSL's 100 KB) whose top issuer is never sent,
    then only the first few (browsers build paths of 10 to 20 certificates at most) are candidates for a trusted
    path, each verified against as many: unbounded, that was 330 verifications against 330 others, holding the
    event loop for 7.5 s."""
    host = site_factory.unique_host("longchain")
    chain, key = long_chain(host, 330)
    running = odd_site(site_factory, host, server_context(tmp_path, chain, key))
    tls, stall = await _with_loop_stall(fetch(running, scan_settings, probes=False, ca_issuers=nothing))
    assert len(verifications) <= 20
    assert all(offered <= 20 for offered in verifications)
    assert stall < 2.0  # generous: this asserts "never held for seconds" (it was 7.5 s), not a speed
    assert tls.failure is None and len(tls.chain) == 331 and not tls.trusted
    assert tls.chain_complete is None and tls.untrusted_ca is not None


async def test_a_gap_is_still_found_behind_a_certificate_sent_a_hundred_times(
    site_factory, pki, tmp_path, scan_settings, verifications
) -> None:
    """Duplicates are judged once: the trusted root after 100 copies of an untrusted intermediate still shows
    the gap (the intermediate between leaf and root is not sent)."""
    host = site_factory.unique_host("dupchain")
    (leaf, _intermediate), key = valid_chain(pki, host)
    sent = [leaf, *[_der(pki.untrusted_intermediate_cert)] * 100, _der(pki.root_cert)]
    tls = await fetch(odd_site(site_factory, host, server_context(tmp_path, sent, key)), scan_settings, probes=False)
    assert (tls.chain_complete, tls.missing_issuer, tls.untrusted_ca) == (
        False,
        "CN=websec Test Intermediate CA,O=websec tests",
        None,
    )
    assert len(verifications) == 2  # the untrusted intermediate once, then the root


# -- probes -----------------------------------------------------------------------------------------------------


async def test_each_protocol_version_is_probed_on_its_own(site_factory, scan_settings) -> None:
    old = site(site_factory, "tls10", minimum_version=ssl.TLSVersion.TLSv1, maximum_version=ssl.TLSVersion.TLSv1)
    tls = await fetch(old, scan_settings)
    results = {p.name: p.result for p in tls.protocols}
    assert results == {
        "TLSv1.3": "rejected",
        "TLSv1.2": "rejected",
        "TLSv1.1": "rejected",
        "TLSv1": "accepted",
        "SSLv3": "rejected",  # offered with a hand-built ClientHello (OpenSSL 3+ cannot send one)
    }
    assert tls.protocol == "TLSv1"


async def test_nothing_is_left_untestable_what_openssl_cannot_offer_is_offered_by_hand(
    site_factory, scan_settings
) -> None:
    tls = await fetch(site(site_factory, "offer"), scan_settings)
    for probe in tls.protocols:
        version = PROTOCOL_VERSIONS[probe.name]
        assert probe.result != "not_testable", probe
        if offer_problem(version, version, "ALL:@SECLEVEL=0") is not None:  # SSL 3.0 on OpenSSL 3+
            assert probe.result == "rejected" and probe.detail, probe  # the server's alert, by name
    assert [p.name for p in tls.cipher_probes if p.result == "not_testable"] == []


@pytest.mark.parametrize(
    ("ciphers", "family", "accepted"),
    [
        ("ECDHE+AESGCM:eNULL:@SECLEVEL=0", "null", True),
        ("ECDHE+AESGCM:AECDH:@SECLEVEL=0", "anonymous", True),
        ("ECDHE+AESGCM:ECDHE+AES+SHA:@SECLEVEL=0", "cbc", True),
        ("ECDHE+AESGCM", "cbc", False),
    ],
)
async def test_a_weak_family_is_found_when_the_server_accepts_it(
    site_factory, scan_settings, ciphers, family, accepted
) -> None:
    tls = await fetch(site(site_factory, f"family-{family}", ciphers=ciphers), scan_settings)
    probe = next(p for p in tls.cipher_probes if p.name == family)
    assert probe.accepted is accepted, probe
    if accepted:
        assert probe.cipher and probe.protocol in ("TLSv1.2", "TLSv1.1", "TLSv1")


async def test_static_rsa_key_exchange_is_found_beside_ecdhe(site_factory, scan_settings) -> None:
    """Debian's default Apache cipher list still accepts TLS_RSA_WITH_* suites: a browser-like client
    gets ECDHE, a client that offers only RSA key exchange gets no forward secrecy (RFC 9325 4.1)."""
    running = site(site_factory, "krsa", cert="rsa2048", ciphers="ECDHE+AESGCM:AES128-GCM-SHA256:AES256-SHA")
    tls = await fetch(running, scan_settings)
    assert tls.cipher and tls.cipher.startswith(("TLS_", "ECDHE-"))
    probe = next(p for p in tls.cipher_probes if p.name == "static_rsa")
    assert probe.accepted and probe.cipher in ("AES128-GCM-SHA256", "AES256-SHA"), probe


async def test_a_server_with_forward_secrecy_only_rejects_the_static_rsa_probe(site_factory, scan_settings) -> None:
    tls = await fetch(site(site_factory, "nokrsa", cert="rsa2048", ciphers="ECDHE+AESGCM"), scan_settings)
    assert next(p for p in tls.cipher_probes if p.name == "static_rsa").result == "rejected"


# -- what the local OpenSSL cannot offer: SSL 3.0, 3DES, RC4, EXPORT, DES (issue 11) ------------------------


@pytest.fixture
def legacy_server(pki: Pki) -> Iterator[Callable[..., TlsliteServer]]:
    servers: list[TlsliteServer] = []

    def start(ciphers: list[str], versions=((3, 1), (3, 3))) -> TlsliteServer:
        servers.append(TlsliteServer(pki, "legacy.test", ciphers, versions))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


async def test_a_real_server_that_accepts_3des_is_found_sweet32(legacy_server, scan_settings) -> None:
    """tlslite-ng completes handshakes with 3DES; OpenSSL 3 cannot offer it, so it used to be 'not testable'."""
    server = legacy_server(["aes128gcm", "3des"])
    tls = await fetch_tls("legacy.test", server.port, "127.0.0.1", scan_settings)
    results = {p.name: p for p in tls.cipher_probes}
    assert results["3des"].accepted, results["3des"]
    assert results["3des"].cipher and "3DES_EDE_CBC" in results["3des"].cipher
    assert results["3des"].protocol == "TLSv1.2"
    assert {name: results[name].result for name in ("rc4", "export", "des")} == dict.fromkeys(
        ("rc4", "export", "des"), "rejected"
    )
    assert [p.name for p in (*tls.protocols, *tls.cipher_probes) if p.result == "not_testable"] == []


def _key_usage_site(site_factory, pki: Pki, prefix: str, kind: str, key_usage: tuple[str, ...], ciphers: str = ""):
    """A site serving a test leaf of `kind` whose Key Usage sets only `key_usage`; with `ciphers`, TLS 1.2 and
    those suites only."""
    host = site_factory.unique_host(prefix)
    issued = pki.issue(kind, (host,), key_usage=key_usage)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if ciphers:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(ciphers)
    context.load_cert_chain(issued.chain_path, issued.key_path)
    return site_factory(Site(names=(host,), routes={"/": Response(200)}, tls=TlsConfig(context=context)))


async def test_a_key_usage_that_forbids_the_key_exchange_is_read_and_caps_at_f(
    site_factory, pki, scan_settings
) -> None:
    """OpenSSL completes the handshake with a leaf whose Key Usage lacks digitalSignature (its ssl_server purpose
    takes keyEncipherment or keyAgreement alone), Chromium does not (ERR_SSL_KEY_USAGE_INCOMPATIBLE): the fetch
    records the bits and the check judges them against the exchange negotiated."""
    cases = [
        ("ku-ecdsa-encipher", "valid", ("key_encipherment",), "", ["tls.cert_key_usage"]),
        ("ku-ecdsa-agree", "valid", ("key_agreement",), "", ["tls.cert_key_usage"]),
        ("ku-rsa-encipher", "rsa2048", ("key_encipherment",), "", ["tls.cert_key_usage"]),
        # RSA key exchange needs keyEncipherment, and has it: what Chromium loads
        ("ku-rsa-kx", "rsa2048", ("key_encipherment",), "AES128-GCM-SHA256", ["tls.cert_valid"]),
        ("ku-rsa-kx-sign", "rsa2048", ("digital_signature",), "AES128-GCM-SHA256", ["tls.cert_key_usage"]),
    ]
    for prefix, kind, key_usage, ciphers, expected in cases:
        running = _key_usage_site(site_factory, pki, prefix, kind, key_usage, ciphers)
        tls = await fetch(running, scan_settings, probes=False)
        assert tls.trusted and tls.leaf is not None and tls.leaf.key_usage == key_usage, prefix
        result = check_tls(make_snapshot(url=f"https://{tls.host}/", tls=tls))
        assert [f.outcome for f in result.findings if f.outcome.startswith("tls.cert")] == expected, prefix
        assert result.details["certificate"]["key_usage"] == [
            {"key_encipherment": "keyEncipherment", "key_agreement": "keyAgreement"}.get(bit, "digitalSignature")
            for bit in key_usage
        ]
    usual = await fetch(site(site_factory, "ku-usual"), scan_settings, probes=False)
    assert usual.leaf is not None and usual.leaf.key_usage == ("digital_signature",)


def _dated_leaf_site(site_factory, pki: Pki, directory: Path, prefix: str, not_before: datetime, not_after: datetime):
    """A site serving a leaf of the test intermediate valid from `not_before` to `not_after`, and its intermediate."""
    host = site_factory.unique_host(prefix)
    key = ec.generate_private_key(ec.SECP256R1())
    context, _ = algorithm_context(pki, directory, host, key, valid=(not_before, not_after))
    return site_factory(Site(names=(host,), routes={"/": Response(200)}, tls=TlsConfig(context=context)))


async def test_a_long_lived_certificate_from_the_operator_bundle_is_a_warning_not_an_f(
    site_factory, scan_settings, pki: Pki, tmp_path
) -> None:
    """BR 6.3.2 / Chrome's ERR_CERT_VALIDITY_TOO_LONG exempt a chain to a locally installed root: the test root
    comes from WEBSEC_CA_BUNDLE, not the public store, so an 830-day certificate is a warning only. One issued
    before 2020-09-01 is judged alike (Chromium's HasTooLongValidity has no date; it was graded valid)."""
    for prefix, not_before, not_after in (
        ("longlived", TEST_NOW - timedelta(days=30), TEST_NOW + timedelta(days=800)),
        ("issued-2020-08-31", datetime(2020, 8, 31, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC)),
    ):
        running = _dated_leaf_site(site_factory, pki, tmp_path, prefix, not_before, not_after)
        tls = await fetch(running, scan_settings)
        assert tls.trusted and tls.public_root is False
        findings = check_tls(make_snapshot(url=f"https://{tls.host}/", tls=tls)).findings
        assert [f.outcome for f in findings if f.outcome.startswith("tls.cert")] == [
            "tls.cert_lifetime_long_local_root"
        ], prefix
    # a 90-day leaf is not looked up at all (no read of the public store for ordinary scans)
    assert (await fetch(site(site_factory, "shortlived"), scan_settings)).public_root is None


def test_a_path_ending_at_a_public_root_is_told_from_a_local_one(pki: Pki, tmp_path, monkeypatch) -> None:
    leaf = pki.issue("service", ["public.test"])
    der = leaf.certificate.public_bytes(serialization.Encoding.DER)
    info = tls_module.parse_certificate(der)
    certifi_root = x509.load_pem_x509_certificate(certifi_bundle().read_bytes()).public_bytes(
        serialization.Encoding.DER
    )
    local = pki.root_cert.public_bytes(serialization.Encoding.DER)  # the test CA, in the operator's bundle only
    # A root only the system's default bundle holds (Debian's has public roots certifi lacks: DigiCert Global
    # Root CA, GlobalSign Root CA, ...) is public too: browsers trust it so, and refuse its long-lived leaves
    system_only = pki.untrusted_root_cert  # a root no other store holds, put in the system's default bundle
    (tmp_path / "system.pem").write_bytes(system_only.public_bytes(serialization.Encoding.PEM))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "system.pem"))
    shake = tls_module.Handshake("TLSv1.3", None, None, None, (der,), (der, certifi_root), (), None)
    assert tls_module._public_root(shake, info, TEST_NOW) is True
    system_der = system_only.public_bytes(serialization.Encoding.DER)
    assert tls_module._public_root(replace(shake, verified_chain=(der, system_der)), info, TEST_NOW) is True
    assert tls_module._public_root(replace(shake, verified_chain=(der, local)), info, TEST_NOW) is False


async def test_tls10_and_11_accepted_only_with_3des_are_found(legacy_server, scan_settings) -> None:
    """OpenSSL 3 offers no 3DES, so its TLS 1.0/1.1 probes are refused (insufficient security) by a server that
    speaks them with 3DES alone; the hand-built fallback at each version finds them (they were 'rejected')."""
    server = legacy_server(["aes128gcm", "3des"])
    tls = await fetch_tls("legacy.test", server.port, "127.0.0.1", scan_settings)
    results = {p.name: p for p in tls.protocols}
    assert (results["TLSv1.1"].result, results["TLSv1.1"].protocol) == ("accepted", "TLSv1.1"), results
    assert (results["TLSv1"].result, results["TLSv1"].protocol) == ("accepted", "TLSv1"), results
    assert "3DES_EDE_CBC" in (results["TLSv1"].cipher or "")
    findings = {f.outcome: f.note for f in check_tls(make_snapshot(url="https://legacy.test/", tls=tls)).findings}
    assert findings["tls.legacy_protocols"] == "accepts TLS 1.1, TLS 1.0"


async def test_a_version_refused_as_a_version_gets_no_fallback_hello(legacy_server, scan_settings) -> None:
    server = legacy_server(["aes128gcm", "3des"], versions=((3, 3), (3, 3)))
    tls = await fetch_tls("legacy.test", server.port, "127.0.0.1", scan_settings)
    results = {p.name: p for p in tls.protocols}
    assert results["TLSv1"].result == results["TLSv1.1"].result == "rejected"
    assert "protocol version" in (results["TLSv1"].detail or ""), results


async def test_a_real_server_that_accepts_rc4_is_found(legacy_server, scan_settings) -> None:
    server = legacy_server(["aes128", "rc4"])
    tls = await fetch_tls("legacy.test", server.port, "127.0.0.1", scan_settings)
    rc4 = next(p for p in tls.cipher_probes if p.name == "rc4")
    assert rc4.accepted and rc4.cipher and "RC4_128" in rc4.cipher, rc4


async def test_a_real_server_that_accepts_ssl3_is_found(legacy_server, scan_settings) -> None:
    server = legacy_server(["aes128", "3des"], versions=((3, 0), (3, 3)))
    tls = await fetch_tls("legacy.test", server.port, "127.0.0.1", scan_settings)
    ssl3 = next(p for p in tls.protocols if p.name == "SSLv3")
    assert (ssl3.result, ssl3.protocol) == ("accepted", "SSLv3"), ssl3


@pytest.mark.parametrize(
    ("family", "suite", "name"),
    [
        ("export", 0x0003, "TLS_RSA_EXPORT_WITH_RC4_40_MD5"),
        ("export", 0x0008, "TLS_RSA_EXPORT_WITH_DES40_CBC_SHA"),
        ("des", 0x0009, "TLS_RSA_WITH_DES_CBC_SHA"),
        ("3des", 0xC012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"),
    ],
)
async def test_a_server_hello_choosing_a_legacy_suite_is_an_acceptance(scan_settings, family, suite, name) -> None:
    server = HelloServer((3, 1), [suite])
    try:
        tls = await fetch_tls("hello.test", server.port, "127.0.0.1", scan_settings)
    finally:
        server.close()
    results = {p.name: p for p in tls.cipher_probes}
    assert (results[family].result, results[family].cipher, results[family].protocol) == ("accepted", name, "TLSv1")
    assert all(p.result == "rejected" for p in tls.cipher_probes if p.name != family and p.name in LEGACY), tls


async def test_legacy_probes_of_a_modern_server_are_rejected_not_untestable(site_factory, scan_settings) -> None:
    tls = await fetch(site(site_factory, "modern"), scan_settings)
    assert {p.name: p.result for p in tls.protocols}["SSLv3"] == "rejected"
    assert {p.name: p.result for p in tls.cipher_probes if p.name in LEGACY} == dict.fromkeys(LEGACY, "rejected")


async def test_a_legacy_probe_that_gets_no_answer_is_bounded(scan_settings) -> None:
    """A server that accepts the connection and never answers: the probe ends at the connect timeout."""
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        limits = replace(scan_settings.limits, connect_seconds=0.5, read_seconds=0.5)
        quick = scan_settings.with_overrides(limits=limits)
        started = time.monotonic()
        tls = await fetch_tls("silent.test", listener.getsockname()[1], "127.0.0.1", quick)
        assert time.monotonic() - started < 5
    finally:
        listener.close()
    assert {p.result for p in tls.cipher_probes if p.name in LEGACY} == {"error"}


async def test_a_server_hello_announcing_megabytes_is_rejected_at_once() -> None:
    """Given a ServerHello whose 3-byte length announces 16 MB (`02 FF FF FF`), then the probe refuses it after
    the first record, instead of collecting 16 MB (the audit's server then sent them; this one sends nothing more,
    so waiting for them would run into the timeout)."""
    record = b"\x16\x03\x00\x40\x00" + b"\x02\xff\xff\xff" + bytes(2**14 - 4)
    server, port = await serve_once(record, hold=True)
    async with server:
        with pytest.raises(HandshakeRejected, match="announced a 16777215-byte ServerHello"):
            await hello_probe("SSLv3", _ssl3_hello(), ("127.0.0.1", port, "bloat.test"), 5.0)


async def test_a_server_hello_split_over_several_records_is_read() -> None:
    body = b"\x03\x00" + bytes(range(32)) + b"\x00" + b"\x00\x2f" + b"\x00"  # SSL 3.0, no session, suite 0x002F
    message = b"\x02" + len(body).to_bytes(3, "big") + body
    records = b"".join(
        b"\x16\x03\x00" + len(part).to_bytes(2, "big") + part for part in (message[:3], message[3:20], message[20:])
    )
    server, port = await serve_once(records, hold=False)
    async with server:
        probe = await hello_probe("SSLv3", _ssl3_hello(), ("127.0.0.1", port, "split.test"), 5.0)
    assert (probe.result, probe.protocol, probe.cipher) == ("accepted", "SSLv3", "0x002F")


# -- OCSP staples and SCTs (Python's ssl server can do neither: a small pyOpenSSL server) ----------------------


@pytest.fixture
def stapling_server(pki: Pki) -> Iterator[tuple[PyOpenSslServer, x509.Certificate]]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = TEST_NOW
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "staple.test")]))
        .issuer_name(pki.intermediate_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("staple.test")]), critical=False)
        .add_extension(embedded_scts(1, datetime(2026, 9, 1, tzinfo=UTC)), critical=False)
        .sign(pki.intermediate_key, hashes.SHA256())
    )
    staple = (
        ocsp.OCSPResponseBuilder()
        .add_response(
            cert=leaf,
            issuer=pki.intermediate_cert,
            algorithm=hashes.SHA1(),
            cert_status=ocsp.OCSPCertStatus.GOOD,
            this_update=now - timedelta(hours=1),
            next_update=now + timedelta(days=3),
            revocation_time=None,
            revocation_reason=None,
        )
        .responder_id(ocsp.OCSPResponderEncoding.HASH, pki.intermediate_cert)
        .sign(pki.intermediate_key, hashes.SHA256())
        .public_bytes(serialization.Encoding.DER)
    )
    chain = leaf.public_bytes(serialization.Encoding.PEM) + pki.intermediate_cert.public_bytes(
        serialization.Encoding.PEM
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    server = PyOpenSslServer(chain, key_pem, staple)
    yield server, leaf
    server.close()


async def test_a_stapled_ocsp_response_and_embedded_scts_are_recorded(stapling_server, scan_settings) -> None:
    server, leaf = stapling_server
    tls = await fetch_tls("staple.test", server.port, "127.0.0.1", scan_settings, probes=False)
    assert tls.failure is None and tls.trusted and tls.hostname_matches
    assert tls.ocsp_staple is not None
    assert ocsp.load_der_ocsp_response(tls.ocsp_staple).serial_number == leaf.serial_number
    assert tls.leaf is not None and len(tls.leaf.embedded_scts) == 1
    assert tls.leaf.embedded_scts[0].timestamp == datetime(2026, 9, 1, tzinfo=UTC)


async def test_a_staple_listing_several_certificates_is_judged_for_the_leaf(pki: Pki, scan_settings) -> None:
    """RFC 6960 4.2.1: the server staples one response for two certificates, the leaf's revoked. The scan's TLS
    check judges the leaf's entry (it crashed on cryptography's ValueError for several SingleResponses)."""
    issued = pki.issue("valid", ["multi-staple.test"])
    other = pki.issue("valid", ["other-staple.test"]).certificate
    both = with_single_responses(pki, staple(pki, other), staple(pki, issued.certificate, ocsp.OCSPCertStatus.REVOKED))
    server = PyOpenSslServer(issued.chain_path.read_bytes(), issued.key_path.read_bytes(), both)
    try:
        tls = await fetch_tls("multi-staple.test", server.port, "127.0.0.1", scan_settings, probes=False)
    finally:
        server.close()
    [result] = [r for r in run_checks(make_snapshot("https://multi-staple.test/", tls=tls)) if r.section == "tls"]
    assert [f.outcome for f in result.findings] == ["tls.ocsp_revoked"]  # refused by browsers: not "valid, trusted"
    assert result.details["ocsp_stapling"]["signature_verified"] is True


def _cross_signed_with_sha1(pki: Pki, certificate: x509.Certificate) -> x509.Certificate:
    """`certificate`'s subject and key, issued with SHA-1 by a legacy root no store holds: the cross-signed copy
    of a root that servers send for old clients."""
    legacy_key = ec.generate_private_key(ec.SECP256R1())
    legacy = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "websec Legacy Root")])
    cross = (
        x509.CertificateBuilder()
        .subject_name(certificate.subject)
        .issuer_name(legacy)
        .public_key(certificate.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(pki.now - timedelta(days=3000))
        .not_valid_after(pki.now + timedelta(days=3000))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(legacy_key, hashes.SHA256())
    )
    return _resign_with_sha1(cross, legacy_key)


async def test_a_sha1_certificate_sent_off_the_verified_path_is_not_judged(pki: Pki, scan_settings) -> None:
    """The server sends its leaf, the intermediate and a SHA-1 cross-signed copy of the trusted root. The verifier
    stops at the root in the store, as Chromium does (which loads the page): the copy is on no path, so no
    tls.weak_signature (it capped the grade at F)."""
    issued = pki.issue("valid", ["cross-sha1.test"])
    cross = _cross_signed_with_sha1(pki, pki.root_cert)
    pem = serialization.Encoding.PEM
    chain_pem = b"".join(c.public_bytes(pem) for c in (*issued.chain, cross))
    server = PyOpenSslServer(chain_pem, issued.key_path.read_bytes(), None)
    try:
        tls = await fetch_tls("cross-sha1.test", server.port, "127.0.0.1", scan_settings, probes=False)
    finally:
        server.close()
    assert tls.trusted and [c.signature_hash for c in tls.chain] == ["sha256", "sha256", "sha1"]
    assert [c.subject for c in tls.verified_path] == [c.subject.rfc4514_string() for c in issued.chain]
    findings = check_tls(make_snapshot("https://cross-sha1.test/", tls=tls)).findings
    assert [f.outcome for f in findings] == ["tls.cert_valid"]


def _algorithm_site(site_factory, pki: Pki, directory: Path, prefix: str, key, curve: str | None = None):
    """A site whose leaf (issued by the test intermediate) has `key`, and whose ECDHE groups are `curve` alone
    when given."""
    host = site_factory.unique_host(prefix)
    context, _ = algorithm_context(pki, directory, host, key, curve)
    return site_factory(Site(names=(host,), routes={"/": Response(200)}, tls=TlsConfig(context=context)))


def algorithm_context(
    pki: Pki,
    directory: Path,
    host: str,
    key,
    curve: str | None = None,
    valid: tuple[datetime, datetime] | None = None,
) -> tuple[ssl.SSLContext, x509.Certificate]:
    """A server context for `host` whose leaf (issued by the test intermediate) has `key`, is valid for `valid`
    (from a day before the test PKI's now for 90 days when not given), and whose ECDHE groups are `curve` alone
    when given (Python's ssl: OpenSSL's SSL_CTX_set1_groups_list); and the leaf."""
    not_before, not_after = valid or (pki.now - timedelta(days=1), pki.now + timedelta(days=90))
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(pki.intermediate_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(pki.intermediate_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (directory / f"{host}.pem").write_bytes(leaf.public_bytes(pem) + pki.intermediate_cert.public_bytes(pem))
    (directory / f"{host}.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / f"{host}.pem", directory / f"{host}.key")
    if curve is not None:
        context.set_ecdh_curve(curve)
    return context, leaf


async def test_a_server_reachable_only_with_algorithms_chrome_lacks_fails_the_grading_handshake(
    site_factory, pki: Pki, tmp_path, scan_settings
) -> None:
    """Chrome offers the groups X25519MLKEM768, X25519, P-256 and P-384 and no Ed25519 or P-521 signature: a server
    with an Ed25519 or a P-521 leaf, or ECDHE on P-521 only, fails in it (ERR_SSL_VERSION_OR_CIPHER_MISMATCH,
    tests/scanner/test_tls_algorithms_browser.py). The grading handshake offered OpenSSL's defaults, so these were
    graded A+; now it fails as Chrome's does, and the note says the server needs what browsers lack. P-384 works."""
    cases = {
        "alg-ed25519": (ed25519.Ed25519PrivateKey.generate(), None),
        "alg-p521-leaf": (ec.generate_private_key(ec.SECP521R1()), None),
        "alg-p521-group": (ec.generate_private_key(ec.SECP256R1()), "secp521r1"),
    }
    for prefix, (key, curve) in cases.items():
        running = _algorithm_site(site_factory, pki, tmp_path, prefix, key, curve)
        tls = await fetch(running, scan_settings)
        findings = check_tls(make_snapshot(url=f"https://{tls.host}/", tls=tls)).findings
        assert [f.outcome for f in findings] == ["tls.handshake_failed"], prefix
        assert "The server completes a TLSv1.3 handshake only with a key exchange group or signature algorithm " in (
            findings[0].note or ""
        ), prefix
    for prefix, curve in (("alg-p384-leaf", None), ("alg-p384-group", "secp384r1")):
        key = ec.generate_private_key(ec.SECP384R1())
        running = _algorithm_site(site_factory, pki, tmp_path, prefix, key, curve)
        tls = await fetch(running, scan_settings, probes=False)
        assert [f.outcome for f in check_tls(make_snapshot(url=f"https://{tls.host}/", tls=tls)).findings] == [
            "tls.cert_valid"
        ], prefix
        if curve is not None:
            assert tls.key_exchange_group == curve


# -- the scan's clock ---------------------------------------------------------------------------------


async def test_the_chain_is_judged_at_the_scans_clock_not_the_machines(site_factory, scan_settings) -> None:
    """OpenSSL verifies at the scan's "now" (WEBSEC_CLOCK_START here), so a scan's trust verdict and its date
    findings agree, and a test's certificates mean the same on any calendar day."""
    running = site(site_factory, "clocked")
    today = await fetch(running, scan_settings)
    # The test CAs are valid for two decades after the suite's clock; 25 years on, they have expired.
    later = await fetch(running, scan_settings.with_overrides(clock_start=TEST_NOW + timedelta(days=25 * 365)))
    assert today.trusted and today.verify_error is None
    assert not later.trusted
    assert later.verify_error == "certificate has expired (CN=websec Test Root CA,O=websec tests)"


def test_an_embedded_sct_dated_past_year_9999_is_skipped_not_the_certificate() -> None:
    """RFC 6962 §3.2: an SCT's timestamp is any uint64 of milliseconds; cryptography raises ValueError for one
    past year 9999, which made the whole certificate unreadable ("could not be read", no TLS grade)."""

    def sct(milliseconds: int) -> bytes:  # RFC 6962 §3.2 SignedCertificateTimestamp, v1, empty extensions
        body = b"\x00" + b"\x11" * 32 + struct.pack(">Q", milliseconds) + b"\x00\x00" + b"\x04\x03\x00\x02ab"
        return struct.pack(">H", len(body)) + body

    scts = sct(2**64 - 1) + sct(1_788_220_800_000)  # then 2026-09-01
    listed = struct.pack(">H", len(scts)) + scts
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sct.test")])
    oid = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")  # embedded SCT list, an OCTET STRING of the TLS list
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(datetime(2026, 1, 1))
        .not_valid_after(datetime(2027, 1, 1))
        .add_extension(x509.UnrecognizedExtension(oid, b"\x04" + bytes([len(listed)]) + listed), critical=False)
        .sign(key, hashes.SHA256())
    )
    info = tls_module.parse_certificate(certificate.public_bytes(serialization.Encoding.DER))
    assert [s.timestamp for s in info.embedded_scts] == [datetime(2026, 9, 1, tzinfo=UTC)]
