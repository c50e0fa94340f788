"""End-to-end scans of fixture TLS servers: protocol ranges, cipher lists and certificates made with
`cryptography`, graded with SSL Labs-style caps. Every site is the best-practice site except for
its TLS configuration, so the grade shows what the transport alone costs."""

from __future__ import annotations

import base64
import ssl
from dataclasses import dataclass, field

import pytest

from tests.fixtures import catalog
from tests.fixtures.ca_issuers import serve_ca_issuers
from tests.fixtures.pki import ct_log_id
from tests.fixtures.sites import TlsConfig
from websec_app.scanner import scan

MOZILLA = catalog.MOZILLA_INTERMEDIATE_CIPHERS
TLS10, TLS12 = ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_2


@dataclass(frozen=True)
class Case:
    tls: TlsConfig
    problems: set[str]  # non-good tls outcomes expected, exactly
    caps: set[tuple[str, str]] = field(default_factory=set)  # expected caps from tls outcomes, exactly
    grade: str = "A+"


CASES = {
    "ec256 (valid)": Case(TlsConfig(cert="ec256", ciphers=MOZILLA), set()),
    "rsa2048": Case(TlsConfig(cert="rsa2048", ciphers=MOZILLA), set()),
    "tls12 only": Case(TlsConfig(maximum_version=TLS12, ciphers=MOZILLA), {"tls.no_tls13"}),
    "tls10 only": Case(
        TlsConfig(minimum_version=TLS10, maximum_version=TLS10),
        {"tls.no_modern_protocol", "tls.legacy_protocols", "tls.no_aead"},  # CBC counted once (tls.no_aead)
        {("tls.no_modern_protocol", "F"), ("tls.legacy_protocols", "B"), ("tls.no_aead", "B")},
        "F",
    ),
    "tls10 to tls13": Case(
        TlsConfig(minimum_version=TLS10, ciphers=MOZILLA + ":ECDHE+AES+SHA"),
        {"tls.legacy_protocols", "tls.cipher_cbc"},
        {("tls.legacy_protocols", "B")},
        "B",
    ),
    "rsa1024": Case(TlsConfig(cert="rsa1024", ciphers=MOZILLA), {"tls.weak_key"}, {("tls.weak_key", "B")}, "B"),
    "sha1-signed": Case(
        TlsConfig(cert="sha1", ciphers=MOZILLA), {"tls.weak_signature"}, {("tls.weak_signature", "F")}, "F"
    ),
    "expired": Case(TlsConfig(cert="expired", ciphers=MOZILLA), {"tls.cert_expired"}, {("tls.cert_expired", "F")}, "F"),
    "wrong host": Case(
        TlsConfig(cert="wrong_host", ciphers=MOZILLA),
        {"tls.cert_hostname_mismatch"},
        {("tls.cert_hostname_mismatch", "F")},
        "F",
    ),
    # The intermediate is published at the leaf's caIssuers URL and completes a trusted path: one problem,
    # one finding (it used to be counted twice, also as an untrusted certificate capping at F).
    "missing intermediate": Case(
        TlsConfig(cert="missing_intermediate", ciphers=MOZILLA),
        {"tls.chain_incomplete"},
        {("tls.chain_incomplete", "B")},
        "B",
    ),
    "untrusted root signs the leaf": Case(
        TlsConfig(cert="untrusted_root", ciphers=MOZILLA),
        {"tls.cert_untrusted_ca"},
        {("tls.cert_untrusted_ca", "F")},
        "F",
    ),
    "full chain to an untrusted root": Case(
        TlsConfig(cert="untrusted_chain", ciphers=MOZILLA),
        {"tls.cert_untrusted_ca"},
        {("tls.cert_untrusted_ca", "F")},
        "F",
    ),
    "rsa key exchange": Case(
        TlsConfig(cert="rsa2048", maximum_version=TLS12, ciphers="AES128-GCM-SHA256"),
        {"tls.no_forward_secrecy", "tls.no_tls13"},
        {("tls.no_forward_secrecy", "B")},
        "B",
    ),
    # Debian's default Apache configuration: ECDHE first, but TLS_RSA_WITH_* still accepted.
    "static rsa accepted": Case(
        TlsConfig(cert="rsa2048", ciphers=MOZILLA + ":AES128-GCM-SHA256:AES256-GCM-SHA384"),
        {"tls.cipher_static_rsa"},
    ),
    "cbc only": Case(
        TlsConfig(maximum_version=TLS12, ciphers="ECDHE-ECDSA-AES128-SHA256"),
        {"tls.no_aead", "tls.no_tls13"},  # CBC counted once (tls.no_aead)
        {("tls.no_aead", "B")},
        "B",
    ),
    "null suites": Case(  # eNULL includes AECDH-NULL-SHA, which is anonymous as well
        TlsConfig(ciphers=MOZILLA + ":eNULL:@SECLEVEL=0"),
        {"tls.cipher_null", "tls.cipher_anonymous"},
        {("tls.cipher_null", "F"), ("tls.cipher_anonymous", "F")},
        "F",
    ),
    "anonymous suites": Case(
        TlsConfig(ciphers=MOZILLA + ":AECDH-AES128-SHA:@SECLEVEL=0"),
        {"tls.cipher_anonymous"},  # the CBC probe offers authenticated suites only
        {("tls.cipher_anonymous", "F")},
        "F",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_tls_configurations_are_graded_with_their_caps(name: str, site_factory, pki, scan_settings) -> None:
    case = CASES[name]
    serve_ca_issuers(site_factory, pki)  # always, so that no case depends on which test ran first
    site = site_factory(catalog.best_practices(site_factory.unique_host("tls"), tls=case.tls))
    body = (await scan(site.url, scan_settings)).to_dict()
    tls = body["tls"]
    problems = {f["check"] for f in tls["findings"] if f["status"] != "good"}
    assert problems == case.problems, tls["findings"]
    caps = {(c["outcome"], c["max_grade"]) for c in body["grading"]["caps"] if c["outcome"].startswith("tls.")}
    assert caps == case.caps
    assert body["grade"] == case.grade
    assert tls["protocols"]["SSLv3"] == "rejected"  # offered by hand: OpenSSL 3 cannot send SSL 3.0


async def test_a_missing_intermediate_is_named_in_the_chain_finding(site_factory, pki, scan_settings) -> None:
    serve_ca_issuers(site_factory, pki)
    tls_config = TlsConfig(cert="missing_intermediate", ciphers=MOZILLA)
    site = site_factory(catalog.best_practices(site_factory.unique_host("nointer"), tls=tls_config))
    findings = {f["check"]: f["note"] for f in (await scan(site.url, scan_settings)).to_dict()["tls"]["findings"]}
    assert findings == {
        "tls.cert_valid": "valid for 89 more days",
        "tls.chain_incomplete": "the issuer CN=websec Test Intermediate CA,O=websec tests is not sent, so clients "
        "that cannot download it themselves reject the certificate",
    }


async def test_a_home_made_ca_is_named_as_untrusted_not_as_a_missing_intermediate(site_factory, scan_settings) -> None:
    tls_config = TlsConfig(cert="untrusted_root", ciphers=MOZILLA)
    site = site_factory(catalog.best_practices(site_factory.unique_host("homeca"), tls=tls_config))
    findings = {f["check"]: f["note"] for f in (await scan(site.url, scan_settings)).to_dict()["tls"]["findings"]}
    assert findings == {
        "tls.cert_untrusted_ca": "issued by CN=websec Untrusted Root CA,O=websec private, which is not a certificate "
        "authority browsers trust"
    }


async def test_the_best_site_reports_its_transport_in_full(best_site, scan_settings) -> None:
    tls = (await scan(best_site.url, scan_settings)).to_dict()["tls"]
    assert [f["check"] for f in tls["findings"]] == ["tls.cert_valid"]
    assert tls["protocols"] == {
        "TLSv1.3": "accepted",
        "TLSv1.2": "accepted",
        "TLSv1.1": "rejected",
        "TLSv1": "rejected",
        "SSLv3": "rejected",
    }
    assert tls["weak_cipher_families"] == dict.fromkeys(
        ("null", "anonymous", "export", "rc4", "des", "3des", "static_rsa", "cbc"), "rejected"
    )
    assert (tls["forward_secrecy"], tls["aead"], tls["chain_complete"]) == (True, True, True)
    assert [c["subject"].split(",")[0] for c in tls["chain"]] == ["CN=best.test", "CN=websec Test Intermediate CA"]
    assert tls["ocsp_stapling"] == {"stapled": False}
    # its CA embeds SCTs from two logs, as public CAs do; the server (Python's TLS) sends none in the handshake
    logs = sorted(base64.b64encode(ct_log_id(n)).decode() for n in (1, 2))
    assert tls["certificate_transparency"] == {
        "embedded_scts": 2,
        "handshake_scts": 0,
        "ocsp_scts": 0,
        "logs": logs,
        "sct_present": True,
    }
    assert not any("Transparency" in item for item in tls["not_testable"])


async def test_hsts_with_a_long_max_age_is_what_separates_a_from_a_plus(site_factory, scan_settings) -> None:
    site = site_factory(
        catalog.best_practices(site_factory.unique_host("nohsts"), remove_headers=["Strict-Transport-Security"])
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["grade"] == "A" and {"outcome": "hsts.missing", "max_grade": "A"} in body["grading"]["caps"]
    assert [f["check"] for f in body["tls"]["findings"]] == ["tls.cert_valid"]


@pytest.mark.parametrize("cert", ["expired", "not_yet_valid"])
async def test_hsts_over_a_certificate_outside_its_dates_is_ignored(cert: str, site_factory, scan_settings) -> None:
    # RFC 6797 8.1: browsers ignore HSTS received with a certificate error, a leaf outside its dates included
    site = site_factory(
        catalog.best_practices(site_factory.unique_host("hsts" + cert.replace("_", "")), tls=TlsConfig(cert=cert))
    )
    report = await scan(site.url, scan_settings)
    hsts = report.sections["headers"]["Strict-Transport-Security"]
    assert hsts["status"] == "weak" and "certificate problem: the certificate" in hsts["note"]
    assert "hsts.ignored_tls_error" in {c["outcome"] for c in report.caps}
