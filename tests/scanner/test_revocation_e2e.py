"""A certificate its CA has revoked was graded valid unless the server stapled the CA's answer: Firefox refuses it
(CRLite), and SSL Labs asks the CA. The scan now asks the CA's OCSP responder, else its CRL, for a trusted leaf the
server staples nothing for (fetch/revocation.py), and judges the answer (checks/_revocation.py): tls.cert_revoked
(40, F) when the CA says so, nothing when it confirms the certificate, and "could not be checked" in the details when
its answer proves nothing (a forged or stale CRL, a failed or oversized download, a slow CA).

The CA's servers are plain-HTTP fixture sites on loopback; the OCSP responses and CRLs are signed by the test
intermediate (or, to forge one, another key)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509 import ocsp

from tests.factories import make_snapshot
from tests.fixtures.ocsp_staples import PyOpenSslServer, staple
from tests.fixtures.pki import Pki
from tests.fixtures.revocation import OCSP_TYPE, crl, serve
from tests.fixtures.sites import Huge, Request, Response, RunningSite, Site, SiteFactory, Stall, TlsConfig
from websec_app.clock import clock_for
from websec_app.scanner import scan
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch import revocation
from websec_app.scanner.fetch import tls as tls_fetch
from websec_app.scanner.fetch.revocation import crl_urls, fetch_revocation, staple_answers
from websec_app.scanner.fetch.tls import fetch_tls, guarded_download
from websec_app.settings import Settings

PAGE = Response(200, [("Content-Type", "text/html")], b"<!doctype html><title>Shop</title>")
KEY_COMPROMISE = x509.ReasonFlags.key_compromise


@pytest.fixture(autouse=True)
def _no_crl_kept() -> Iterator[None]:
    """Each test starts as a fresh process does: no CRL kept from another test's scans (fetch/revocation.py)."""
    revocation.CRL_CACHE.clear()
    yield
    revocation.CRL_CACHE.clear()


def _site(
    sites: SiteFactory, pki: Pki, host: str, *, ocsp_url: str | None = None, crl_url: str | None = None
) -> tuple[RunningSite, x509.Certificate]:
    """A site whose leaf names the CA's OCSP responder and CRL given."""
    issued = pki.issue("valid", (host,), ocsp_url=ocsp_url, crl_url=crl_url)
    site = sites(Site(names=(host,), default=PAGE, tls=TlsConfig(context=issued.server_context())))
    return site, issued.certificate


async def _tls(url: str, settings: Settings) -> tuple[dict[str, Any], dict[str, str]]:
    body = (await scan(url, settings)).to_dict()
    return body, {f["check"]: f.get("note") or "" for f in body["tls"]["findings"]}


async def test_a_certificate_its_crl_lists_is_revoked_and_failed(pki: Pki, own_sites, scan_settings) -> None:
    url = "http://crl-listed.pki.test/intermediate.crl"
    site, leaf = _site(own_sites, pki, "revoked-crl.test", crl_url=url)
    ca = serve(own_sites, url, crl(pki, {leaf.serial_number: KEY_COMPROMISE, 12345: None}))
    body, notes = await _tls(site.url, scan_settings)
    assert notes["tls.cert_revoked"] == f"the CA's CRL ({url}) lists it as revoked on 2026-11-20 (key_compromise)"
    assert "tls.cert_valid" not in notes  # browsers refuse it: not a "valid, trusted certificate"
    assert body["tls"]["revocation"] == {
        "method": "crl", "url": url, "status": "revoked", "note": notes["tls.cert_revoked"]
    }  # fmt: skip
    assert body["grade"] == "F" and {"outcome": "tls.cert_revoked", "max_grade": "F"} in body["grading"]["caps"]
    assert [r.path for r in ca.requests] == ["/intermediate.crl"]


async def test_a_certificate_its_current_crl_does_not_list_is_confirmed(pki: Pki, own_sites, scan_settings) -> None:
    url = "http://crl-clean.pki.test/intermediate.crl"
    site, _ = _site(own_sites, pki, "clean-crl.test", crl_url=url)
    serve(own_sites, url, crl(pki, {12345: KEY_COMPROMISE}))
    body, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_revoked" not in notes
    assert body["tls"]["revocation"]["status"] == "good"
    assert body["tls"]["revocation"]["note"] == f"the CA's CRL ({url}, issued 2026-11-22 06:00 UTC) does not list it"


@pytest.mark.parametrize(
    ("status", "verdict"), [(ocsp.OCSPCertStatus.REVOKED, "revoked"), (ocsp.OCSPCertStatus.GOOD, "good")]
)
async def test_the_ocsp_responder_is_asked_first(
    status: ocsp.OCSPCertStatus, verdict: str, pki: Pki, own_sites, scan_settings
) -> None:
    responder, crl_url = f"http://ocsp-{verdict}.pki.test", f"http://crl-{verdict}.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, f"ocsp-{verdict}.test", ocsp_url=responder, crl_url=crl_url)
    answering = serve(own_sites, responder, staple(pki, leaf, status), OCSP_TYPE)
    listing = serve(own_sites, crl_url, crl(pki))
    body, notes = await _tls(site.url, scan_settings)
    assert body["tls"]["revocation"]["method"] == "ocsp" and body["tls"]["revocation"]["status"] == verdict
    assert ("tls.cert_revoked" in notes) is (verdict == "revoked")
    if verdict == "revoked":
        said = f"the CA's OCSP responder ({responder}) says it was revoked on 2026-11-20 (key_compromise)"
        assert notes["tls.cert_revoked"] == said
    assert listing.requests == []  # the responder answered: no CRL downloaded
    (request,) = answering.requests  # RFC 6960 A.1: GET {url}/{url-encoded base64 of the DER request}
    asked = ocsp.load_der_ocsp_request(base64.b64decode(unquote(request.path.lstrip("/"))))
    assert asked.serial_number == leaf.serial_number


@pytest.mark.parametrize("refusal", ["405", "path-mangled"])
async def test_a_responder_that_refuses_the_get_form_is_asked_by_post(
    refusal: str, pki: Pki, own_sites, scan_settings
) -> None:
    """RFC 6960 A.1: a responder must take POST, and may refuse GET: some answer GET with 405, and a web server in
    front of one can decode the "%2F" of the base64 in the path and answer a body that is no OCSP response. The
    scan then POSTs the same request (application/ocsp-request), and the CRL is not needed."""
    responder, crl_url = f"http://ocsp-post-{refusal}.pki.test", f"http://crl-post-{refusal}.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, f"ocsp-post-{refusal}.test", ocsp_url=responder, crl_url=crl_url)
    revoked = staple(pki, leaf, ocsp.OCSPCertStatus.REVOKED)

    def responding(request: Request) -> Response:
        if request.method != "POST":
            return Response(405) if refusal == "405" else Response(200, [("Content-Type", "text/html")], b"<h1>OK")
        if request.header("Content-Type") != "application/ocsp-request":
            return Response(415)
        asked = ocsp.load_der_ocsp_request(request.body)
        return Response(200, [OCSP_TYPE], revoked if asked.serial_number == leaf.serial_number else b"")

    answering = serve(own_sites, responder, responding)
    listing = serve(own_sites, crl_url, crl(pki))
    body, notes = await _tls(site.url, scan_settings)
    assert body["tls"]["revocation"]["method"] == "ocsp"
    said = f"the CA's OCSP responder ({responder}) says it was revoked on 2026-11-20 (key_compromise)"
    assert notes["tls.cert_revoked"] == said
    assert [request.method for request in answering.requests] == ["GET", "POST"]
    assert listing.requests == []


async def test_a_responder_that_refuses_both_forms_gives_way_to_the_crl(pki: Pki, own_sites, scan_settings) -> None:
    responder, crl_url = "http://ocsp-refusing.pki.test", "http://crl-refusing.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, "ocsp-refusing.test", ocsp_url=responder, crl_url=crl_url)
    answering = serve(own_sites, responder, Response(403))
    serve(own_sites, crl_url, crl(pki, {leaf.serial_number: None}))
    body, notes = await _tls(site.url, scan_settings)
    assert [request.method for request in answering.requests] == ["GET", "POST"]
    assert body["tls"]["revocation"]["method"] == "crl" and "tls.cert_revoked" in notes


@pytest.mark.parametrize("stapled", ["expired", "try-later", "current"])
async def test_the_ca_is_asked_past_a_staple_that_does_not_answer_for_the_leaf(
    stapled: str, pki: Pki, own_sites, scan_settings
) -> None:
    """Browsers set aside a staple that is not a current answer for the certificate (a stale one a server kept
    serving while its responder was down, a tryLater); the CA was not asked then, and a revoked certificate went
    unseen. A current staple is the answer: the CA is not asked again. (One for another certificate alone cannot be
    served here: the OpenSSL of pyOpenSSL's wheel staples only responses that match the server's certificate.)"""
    host, url = f"staple-{stapled}.test", f"http://crl-staple-{stapled}.pki.test/int.crl"
    issued = pki.issue("valid", (host,), crl_url=url)
    leaf = issued.certificate
    served = {
        "expired": staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=-timedelta(minutes=30)),
        "try-later": ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.TRY_LATER).public_bytes(
            Encoding.DER
        ),
        "current": staple(pki, leaf, ocsp.OCSPCertStatus.GOOD),
    }[stapled]
    listing = serve(own_sites, url, crl(pki, {leaf.serial_number: KEY_COMPROMISE}))
    server = PyOpenSslServer(issued.chain_path.read_bytes(), issued.key_path.read_bytes(), served)
    try:
        tls = await fetch_tls(host, server.port, "127.0.0.1", scan_settings)
    finally:
        server.close()
    outcomes = {f.outcome for f in check_tls(make_snapshot(url=f"https://{host}/", tls=tls)).findings}
    assert tls.ocsp_staple == served
    if stapled == "current":
        assert tls.revocation is None and listing.requests == []
        assert "tls.cert_revoked" not in outcomes
    else:
        assert tls.revocation is not None and tls.revocation.method == "crl"
        assert {"tls.cert_revoked", "tls.ocsp_staple_invalid"} <= outcomes


def test_only_a_current_successful_staple_for_the_leaf_answers_for_it(pki: Pki) -> None:
    leaf = pki.issue("valid", ("answered.test",)).certificate
    other = pki.issue("valid", ("other.test",)).certificate
    assert staple_answers(staple(pki, leaf), leaf, pki.now)
    assert staple_answers(staple(pki, leaf, ocsp.OCSPCertStatus.REVOKED), leaf, pki.now)  # an answer, revoked
    assert not staple_answers(staple(pki, other), leaf, pki.now)
    assert not staple_answers(staple(pki, leaf, next_update=-timedelta(minutes=1)), leaf, pki.now)
    assert not staple_answers(b"not an OCSP response", leaf, pki.now)


async def test_a_responder_that_fails_gives_way_to_the_crl(pki: Pki, own_sites, scan_settings) -> None:
    responder, crl_url = "http://ocsp-down.pki.test", "http://crl-after.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, "ocsp-down.test", ocsp_url=responder, crl_url=crl_url)
    serve(own_sites, responder, Response(500, body=b"busy"))
    serve(own_sites, crl_url, crl(pki, {leaf.serial_number: None}))
    _, notes = await _tls(site.url, scan_settings)
    assert notes["tls.cert_revoked"] == f"the CA's CRL ({crl_url}) lists it as revoked on 2026-11-20 (no reason given)"


@pytest.mark.parametrize(
    ("shape", "said"),
    [
        ("forged", "the CRL at {url} is not signed by the certificate's issuer"),
        ("stale", "the CRL at {url} expired on 2026-11-21 12:00 UTC"),
        ("garbage", "the CRL at {url} cannot be parsed"),
        ("huge", "{url} answered more than 8192 KiB"),
        ("missing", "{url} answered 404"),
    ],
)
async def test_an_answer_that_proves_nothing_is_said_and_not_graded(
    shape: str, said: str, pki: Pki, own_sites, scan_settings
) -> None:
    url = f"http://crl-{shape}.pki.test/int.crl"
    site, _ = _site(own_sites, pki, f"crl-{shape}.test", crl_url=url)
    served = {
        "forged": crl(pki, signer=ec.generate_private_key(ec.SECP256R1())),
        "stale": crl(pki, last_update=-timedelta(days=8), next_update=-timedelta(hours=24)),
        "garbage": b"-----BEGIN X509 CRL-----\nnot a CRL\n-----END X509 CRL-----\n",
        "huge": Huge(size=9 * 1024 * 1024),
        "missing": Response(404, body=b"gone"),
    }[shape]
    serve(own_sites, url, served)
    body, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_revoked" not in notes and "tls.cert_valid" in notes
    assert body["tls"]["revocation"]["status"] == "unknown"
    assert body["tls"]["revocation"]["note"].startswith(said.format(url=url))


async def test_a_shard_of_a_sharded_ca_counts_only_at_its_own_url(pki: Pki, own_sites, scan_settings) -> None:
    """Let's Encrypt shards its CRLs, each naming its URL (Issuing Distribution Point): the leaf's own shard is read,
    and another shard served at its URL (genuine, signed, listing none of its revocations) proves nothing."""
    own, other = "http://crl-shard.pki.test/7.crl", "http://crl-shard.pki.test/8.crl"
    site, leaf = _site(own_sites, pki, "crl-shard.test", crl_url=own)
    served = {"/7.crl": crl(pki, {leaf.serial_number: KEY_COMPROMISE}, shard=own)}
    serve(own_sites, own, lambda request: Response(200, body=served.get(request.path, crl(pki, shard=other))))
    _, notes = await _tls(site.url, scan_settings)
    assert notes["tls.cert_revoked"] == f"the CA's CRL ({own}) lists it as revoked on 2026-11-20 (key_compromise)"

    served["/7.crl"] = crl(pki, shard=other)  # the wrong shard at the leaf's URL, asked afresh (another process)
    revocation.CRL_CACHE.clear()
    body, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_revoked" not in notes and body["tls"]["revocation"]["status"] == "unknown"
    assert body["tls"]["revocation"]["note"] == (
        f"the CRL at {own} does not cover the certificate: it is the CRL of another distribution point ({other})"
    )


async def test_a_stale_crl_that_lists_the_certificate_still_revokes_it(pki: Pki, own_sites, scan_settings) -> None:
    """RFC 5280 5.3.1: a revocation is for good; only an unlisted certificate needs a current CRL."""
    url = "http://crl-stale-listed.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, "crl-stale-listed.test", crl_url=url)
    serve(own_sites, url, crl(pki, {leaf.serial_number: KEY_COMPROMISE}, next_update=-timedelta(hours=1)))
    _, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_revoked" in notes


async def test_a_slow_ca_costs_the_question_not_the_tls_section(
    pki: Pki, own_sites, scan_settings, monkeypatch
) -> None:
    monkeypatch.setattr(revocation, "REVOCATION_SECONDS", 0.5)
    url = "http://crl-stall.pki.test/int.crl"
    site, _ = _site(own_sites, pki, "crl-stall.test", crl_url=url)
    serve(own_sites, url, Stall(max_seconds=5))
    body, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_valid" in notes
    assert body["tls"]["revocation"] == {
        "method": "crl", "url": url, "status": "unknown", "note": f"{url}: no answer within 0.5 seconds"
    }  # fmt: skip


async def test_a_question_that_fails_unforeseen_costs_the_answer_not_the_tls_section(
    pki: Pki, own_sites, scan_settings, monkeypatch
) -> None:
    async def broken(*args: object) -> None:
        raise RuntimeError("a certificate detail no parser foresaw")

    monkeypatch.setattr(tls_fetch, "fetch_revocation", broken)
    site, _ = _site(own_sites, pki, "crl-broken.test", crl_url="http://crl-broken.pki.test/int.crl")
    body, notes = await _tls(site.url, scan_settings)
    assert "tls.cert_valid" in notes and body["tls"]["trusted"] is True
    assert body["tls"]["revocation"]["status"] == "unknown"
    assert body["tls"]["revocation"]["note"] == (
        "the CA could not be asked: RuntimeError: a certificate detail no parser foresaw"
    )


async def test_the_guard_refuses_a_revocation_url_at_an_internal_address(pki: Pki, dns_server, scan_settings) -> None:
    """The URLs come from the site's certificate: as untrusted as a redirect (SSRF)."""
    dns_server.set("crl-internal.pki.test", "A", "10.0.0.1", ttl=60)
    url = "http://crl-internal.pki.test/int.crl"
    leaf = pki.issue("valid", ("internal-crl.test",), crl_url=url)
    guarded = Settings(**{**scan_settings.__dict__, "allow_private_targets": False})
    answer = await fetch_revocation(
        leaf.certificate.public_bytes(Encoding.DER),
        pki.intermediate_cert.public_bytes(Encoding.DER),
        guarded_download(guarded),
        pki.now,
    )
    assert answer is not None and answer.body is None and answer.failure is not None
    assert answer.failure.startswith(
        "Refusing to scan: crl-internal.pki.test resolves to a private or reserved address"
    )


async def test_a_crl_downloaded_once_answers_the_next_scans_until_it_is_due(pki: Pki, own_sites, scan_settings) -> None:
    """One CA's CRL answers for every site it issued: the next scans of this process read it from CRL_CACHE, for 30
    minutes of the scan's clock at most, and never past its nextUpdate."""
    url = "http://crl-kept.pki.test/int.crl"
    site, leaf = _site(own_sites, pki, "crl-kept.test", crl_url=url)
    ca = serve(own_sites, url, crl(pki, next_update=timedelta(hours=6)))
    for _ in range(3):
        body, _notes = await _tls(site.url, scan_settings)
        assert body["tls"]["revocation"]["status"] == "good"
    assert len(ca.requests) == 1

    # on the scans' clock, which starts at WEBSEC_CLOCK_START and runs on from there (not pki.now's fixed instant)
    scanned_at = clock_for(scan_settings)()
    leaf_der, issuer_der = leaf.public_bytes(Encoding.DER), pki.intermediate_cert.public_bytes(Encoding.DER)
    download = guarded_download(scan_settings)
    for minutes, downloads in ((29, 1), (31, 2), (32, 2)):
        answer = await fetch_revocation(leaf_der, issuer_der, download, scanned_at + timedelta(minutes=minutes))
        assert answer is not None and answer.body is not None and len(ca.requests) == downloads


def test_the_crl_cache_keeps_until_next_update_and_within_its_bytes(pki: Pki) -> None:
    cache = revocation.CrlCache(max_bytes=3000)
    soon = crl(pki, next_update=timedelta(minutes=10))
    cache.put("http://a/1.crl", soon, pki.now)
    assert cache.get("http://a/1.crl", pki.now + timedelta(minutes=9)) == soon
    assert cache.get("http://a/1.crl", pki.now + timedelta(minutes=10)) is None  # due: asked again
    cache.put("http://a/garbage.crl", b"not a CRL", pki.now)
    assert cache.get("http://a/garbage.crl", pki.now) is None
    cache.put("http://a/stale.crl", crl(pki, next_update=-timedelta(hours=1)), pki.now)
    assert cache.get("http://a/stale.crl", pki.now) is None  # past its nextUpdate already: never kept
    listing = crl(pki, dict.fromkeys(range(1, 40)))  # ~1.4 KB each: two fit in 3,000 bytes
    for name in ("x", "y", "z"):
        cache.put(f"http://a/{name}.crl", listing, pki.now)
    assert [cache.get(f"http://a/{n}.crl", pki.now) is not None for n in "xyz"] == [False, True, True]


def test_only_http_full_name_distribution_points_are_read(pki: Pki) -> None:
    points = x509.CRLDistributionPoints(
        [
            x509.DistributionPoint([x509.UniformResourceIdentifier("ldap://ldap.ca.test/cn=crl")], None, None, None),
            x509.DistributionPoint(
                [x509.UniformResourceIdentifier("http://ca.test/some.crl")],
                None,
                frozenset({x509.ReasonFlags.key_compromise}),
                None,
            ),
            x509.DistributionPoint([x509.UniformResourceIdentifier("http://ca.test/all.crl")], None, None, None),
        ]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(pki.intermediate_cert.subject)
        .issuer_name(pki.intermediate_cert.subject)
        .public_key(pki.intermediate_key.public_key())
        .serial_number(1)
        .not_valid_before(pki.now)
        .not_valid_after(pki.now)
        .add_extension(points, critical=False)
        .sign(pki.intermediate_key, hashes.SHA256())
    )
    assert crl_urls(certificate) == ["http://ca.test/all.crl"]
