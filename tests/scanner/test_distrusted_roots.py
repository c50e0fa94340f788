"""A root the stores still hold whose newer certificates Chrome refuses: Entrust and its AffirmTrust roots (certificates
logged after 2024-11-11, Chrome 131), Chunghwa Telecom and NetLock (after 2025-07-31, Chrome 139). Debian's
ca-certificates, which the scanner trusts beside certifi, still holds all twelve roots (certifi two of them), so a
site with a certificate issued under one in 2025 was graded valid while Chrome shows an error page.

The table (websec_app/scanner/data/distrusted_roots.toml) names each root by the SHA-256 of its SubjectPublicKeyInfo;
the first test holds it to the stores on this machine."""

from __future__ import annotations

import hashlib
import ssl
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import certifi
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.utils import CryptographyDeprecationWarning

from tests.factories import FIXED_NOW, make_certificate, make_handshake, make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from websec_app.scanner import scan
from websec_app.scanner.checks import tls as tls_check
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.data import DistrustedRoot, distrusted_roots
from websec_app.scanner.snapshot import SignedTimestamp
from websec_app.settings import Settings

ENTRUST_G2 = "76ee8590374c715437bbca6bba6028eadde2dc6dbbb8c3f610e851f11d1ab7f5"
HIPKI = "79caaf5347e6e4a94c8e78a98496fc74020f809ede13f220fab6104c8ded329f"


def _spki_sha256(certificate: x509.Certificate) -> str:
    return hashlib.sha256(
        certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    ).hexdigest()


def _name(certificate: x509.Certificate) -> str:
    for oid in (x509.oid.NameOID.COMMON_NAME, x509.oid.NameOID.ORGANIZATIONAL_UNIT_NAME):
        values = certificate.subject.get_attributes_for_oid(oid)
        if values:
            return str(values[0].value)
    return ""


def test_the_table_names_the_roots_the_stores_hold_by_their_keys() -> None:
    bundles = [Path(certifi.where())]
    system = ssl.get_default_verify_paths().cafile
    if system:
        bundles.append(Path(system))
    by_name: dict[str, set[str]] = {}
    for bundle in bundles:
        with warnings.catch_warnings():  # a store's old root with a serial number of 0 or below (RFC 5280 forbids)
            warnings.simplefilter("ignore", CryptographyDeprecationWarning)
            certificates = x509.load_pem_x509_certificates(bundle.read_bytes())
        for certificate in certificates:
            by_name.setdefault(_name(certificate), set()).add(_spki_sha256(certificate))
    table = distrusted_roots()
    present = {key: root for key, root in table.items() if root.name in by_name}
    if not present:
        pytest.skip("neither certifi nor the system's bundle holds any of these roots")
    for key, root in present.items():
        assert key in by_name[root.name], f"{root.name}: the table's key is not the store's"
    assert len(table) == 12 and {root.since for root in table.values()} == {"Chrome 131", "Chrome 139"}


def _findings(
    anchor: str | None, *, scts: tuple[datetime, ...] = (), issued: datetime | None = None, trusted: bool = True
):
    not_before = issued or FIXED_NOW - timedelta(days=30)
    certificate = make_certificate(not_before=not_before, not_after=not_before + timedelta(days=90))
    stamps = tuple(SignedTimestamp(log_id=f"log{n}", timestamp=when) for n, when in enumerate(scts))
    certificate = type(certificate)(**{**certificate.__dict__, "embedded_scts": stamps})
    tls = make_handshake(certificate=certificate, anchor_key=anchor, trusted=trusted)
    return {f.outcome: f.note for f in check_tls(make_snapshot(tls=tls)).findings}


def test_a_certificate_logged_after_the_cutoff_of_its_root_is_refused() -> None:
    notes = _findings(ENTRUST_G2, scts=(datetime(2025, 3, 2, 10, tzinfo=UTC), datetime(2025, 3, 3, tzinfo=UTC)))
    assert notes["tls.cert_distrusted_root"] == (
        "it chains to Entrust Root Certification Authority - G2 (Entrust (with its AffirmTrust roots)), whose "
        "certificates logged after 2024-11-11 are no longer trusted by Chrome 131 and later, and its earliest SCT is "
        "dated 2025-03-02; Firefox distrusts Entrust's certificates issued after 30 November 2024"
    )
    assert "tls.cert_valid" not in notes


def test_a_certificate_logged_before_the_cutoff_is_still_trusted() -> None:
    # the earliest SCT counts (Chrome's constraint), even when a later one comes with it
    notes = _findings(ENTRUST_G2, scts=(datetime(2024, 11, 11, 23, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)))
    assert "tls.cert_distrusted_root" not in notes and "tls.cert_valid" in notes


def test_without_an_sct_the_issue_date_is_judged() -> None:
    notes = _findings(HIPKI, issued=datetime(2025, 9, 1, tzinfo=UTC))
    assert notes["tls.cert_distrusted_root"].endswith("and it was issued on 2025-09-01")
    assert "tls.cert_distrusted_root" not in _findings(HIPKI, issued=datetime(2025, 7, 1, tzinfo=UTC))


def test_other_roots_and_untrusted_chains_are_not_judged_so() -> None:
    assert "tls.cert_distrusted_root" not in _findings("00" * 32, scts=(FIXED_NOW,))
    assert "tls.cert_distrusted_root" not in _findings(None, scts=(FIXED_NOW,))
    assert "tls.cert_distrusted_root" not in _findings(ENTRUST_G2, scts=(FIXED_NOW,), trusted=False)


async def test_a_scan_reads_the_root_it_ends_at_and_judges_it(
    pki: Pki, own_sites: SiteFactory, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end with the test root in the table (its own key, a cutoff before its leaves' SCTs): the fetch names the
    root the verified path ends at, and the grade is capped at F."""
    host = own_sites.unique_host("distrusted")
    issued = pki.issue("valid", (host,))
    context = issued.server_context()
    page = Response(200, [("Content-Type", "text/html")], b"<!doctype html><title>Shop</title>")
    site = own_sites(Site(names=(host,), default=page, tls=TlsConfig(context=context)))
    root_key = _spki_sha256(pki.root_cert)
    cutoff = DistrustedRoot("websec Test Root CA", "the tests", pki.now - timedelta(days=30), "Chrome 131")
    monkeypatch.setattr(tls_check, "distrusted_roots", lambda: {**distrusted_roots(), root_key: cutoff})

    body = (await scan(site.url, scan_settings)).to_dict()
    notes = {f["check"]: f.get("note") for f in body["tls"]["findings"]}
    assert notes["tls.cert_distrusted_root"].startswith(
        "it chains to websec Test Root CA (the tests), whose certificates"
    )
    assert body["grade"] == "F" and {"outcome": "tls.cert_distrusted_root", "max_grade": "F"} in body["grading"]["caps"]
