"""The tls section beyond the certificate's dates: protocols, cipher families, forward secrecy, AEAD,
keys, signatures, chain completeness, OCSP staples and SCTs, judged from recorded handshakes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509 import ocsp
from cryptography.x509.oid import NameOID

from tests.factories import FIXED_NOW, cipher_probes, make_certificate, make_handshake, make_snapshot, protocol_probes
from tests.fixtures import ocsp_staples
from tests.fixtures.ocsp_staples import with_scts, with_signature_algorithm, with_single_responses
from tests.fixtures.pki import Pki
from websec_app.scanner.checks.tls import aead, check_tls, forward_secret
from websec_app.scanner.fetch.tls import parse_certificate
from websec_app.scanner.grading import Graded, grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import SignedTimestamp, TlsProbe


def outcomes(**handshake) -> list[str]:
    return [f.outcome for f in check_tls(make_snapshot(tls=make_handshake(**handshake))).findings]


def graded(**handshake) -> Graded:
    """The tls section alone, graded (the hand-made snapshot has no security headers)."""
    result = check_tls(make_snapshot(tls=make_handshake(**handshake)))
    return grade([result], default_rulebook(), {"host": "example.com", "domain": "example.com"})


def caps(report) -> set[tuple[str, str]]:
    return {(c["outcome"], c["max_grade"]) for c in report.caps}


# -- protocols ---------------------------------------------------------------------------------------


def test_given_tls13_and_tls12_only_then_no_protocol_finding_and_sslv3_is_listed_as_not_testable() -> None:
    result = check_tls(make_snapshot(tls=make_handshake(protocols=protocol_probes(), cipher_probes=cipher_probes())))
    assert [f.outcome for f in result.findings] == ["tls.cert_valid"]
    assert result.details["protocols"] == {
        "TLSv1.3": "accepted",
        "TLSv1.2": "accepted",
        "TLSv1.1": "rejected",
        "TLSv1": "rejected",
        "SSLv3": "not_testable",
    }
    assert any(item.startswith("SSLv3: ") for item in result.details["not_testable"])
    assert any(item.startswith("3des: ") for item in result.details["not_testable"])


def test_given_tls10_and_tls11_still_accepted_then_legacy_caps_at_b() -> None:
    probes = protocol_probes(accepted=("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1"))
    report = graded(protocols=probes)
    finding = report.sections["tls"]["findings"][0]
    assert finding["check"] == "tls.legacy_protocols" and finding["note"] == "accepts TLS 1.1, TLS 1.0"
    assert caps(report) == {("tls.legacy_protocols", "B")}
    assert report.grade == "B"


def test_given_a_server_whose_best_protocol_is_tls10_then_no_modern_protocol_caps_at_f() -> None:
    probes = protocol_probes(accepted=("TLSv1",))
    found = outcomes(protocol="TLSv1", cipher="ECDHE-ECDSA-AES256-SHA", protocols=probes)
    assert "tls.no_modern_protocol" in found and "tls.legacy_protocols" in found
    assert ("tls.no_modern_protocol", "F") in caps(graded(protocol="TLSv1", cipher="ECDHE-RSA-AES256-SHA"))


def test_given_tls12_without_tls13_then_a_minor_warning_without_cap() -> None:
    probes = protocol_probes(accepted=("TLSv1.2",))
    report = graded(protocol="TLSv1.2", cipher="ECDHE-ECDSA-AES128-GCM-SHA256", protocols=probes)
    assert [f["check"] for f in report.sections["tls"]["findings"] if f["status"] != "good"] == ["tls.no_tls13"]
    assert report.caps == () and report.score == 98


def test_given_a_tls13_probe_that_could_not_run_then_tls13_is_not_reported_missing() -> None:
    probes = protocol_probes(accepted=("TLSv1.2",), not_testable=("TLSv1.3", "SSLv3"))
    assert "tls.no_tls13" not in outcomes(protocol="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256", protocols=probes)


def test_given_no_probes_recorded_then_no_protocol_or_cipher_findings() -> None:
    assert outcomes() == ["tls.cert_valid"]


# -- cipher suites -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "cipher", "outcome", "cap"),
    [
        ("null", "ECDHE-ECDSA-NULL-SHA", "tls.cipher_null", "F"),
        ("anonymous", "AECDH-AES128-SHA", "tls.cipher_anonymous", "F"),
        ("export", "EXP-RC4-MD5", "tls.cipher_export", "F"),
        ("rc4", "ECDHE-RSA-RC4-SHA", "tls.cipher_rc4", "C"),
        ("des", "DES-CBC-SHA", "tls.cipher_des", "C"),
        ("3des", "DES-CBC3-SHA", "tls.cipher_3des", "B"),
    ],
)
def test_given_a_weak_cipher_family_accepted_then_its_outcome_and_cap(family, cipher, outcome, cap) -> None:
    report = graded(cipher_probes=cipher_probes({family: cipher}))
    finding = next(f for f in report.sections["tls"]["findings"] if f["check"] == outcome)
    assert cipher in finding["note"]
    assert (outcome, cap) in caps(report)


def test_a_weak_family_accepted_at_a_legacy_version_counts_that_version_as_accepted() -> None:
    # the 3DES probe (TLS 1.0-1.2 offered) got TLS 1.0: the server speaks it, whatever its own probe said
    probes = (TlsProbe("3des", "accepted", protocol="TLSv1", cipher="TLS_RSA_WITH_3DES_EDE_CBC_SHA"),)
    result = check_tls(make_snapshot(tls=make_handshake(protocols=protocol_probes(), cipher_probes=probes)))
    assert {f.outcome: f.note for f in result.findings}["tls.legacy_protocols"] == "accepts TLS 1.0"


def test_given_cbc_suites_accepted_beside_aead_ones_then_a_minor_warning() -> None:
    report = graded(cipher_probes=cipher_probes({"cbc": "ECDHE-ECDSA-AES128-SHA"}))
    assert report.score == 99 and report.caps == ()


def test_given_static_rsa_accepted_beside_ecdhe_then_a_minor_warning_without_cap() -> None:
    """RFC 9325 4.1: static RSA SHOULD NOT be negotiated. Browsers get ECDHE here, so only clients that
    pick TLS_RSA_* lose forward secrecy: a warning, not the B cap of tls.no_forward_secrecy."""
    probes = (TlsProbe("static_rsa", "accepted", protocol="TLSv1.2", cipher="AES128-GCM-SHA256"),)
    report = graded(protocol="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256", cipher_probes=probes, protocols=())
    problems = [f for f in report.sections["tls"]["findings"] if f["status"] != "good"]
    assert [(f["check"], f["status"], f["severity"]) for f in problems] == [("tls.cipher_static_rsa", "warn", "minor")]
    assert "AES128-GCM-SHA256" in problems[0]["note"]
    assert report.caps == () and report.score == 97


def test_given_rsa_key_exchange_negotiated_then_static_rsa_is_not_counted_twice() -> None:
    probes = (TlsProbe("static_rsa", "accepted", protocol="TLSv1.2", cipher="AES128-GCM-SHA256"),)
    found = outcomes(protocol="TLSv1.2", cipher="AES128-GCM-SHA256", cipher_probes=probes)
    assert "tls.no_forward_secrecy" in found and "tls.cipher_static_rsa" not in found


def test_given_a_cbc_suite_negotiated_then_cbc_accepted_is_not_counted_twice() -> None:
    # as static RSA above: what browsers get (tls.no_aead, -5, cap B) already says CBC is accepted
    probes = cipher_probes({"cbc": "ECDHE-RSA-AES256-SHA384"})
    report = graded(protocol="TLSv1.2", cipher="ECDHE-RSA-AES256-SHA384", cipher_probes=probes)
    assert [f["check"] for f in report.sections["tls"]["findings"] if f["status"] != "good"] == ["tls.no_aead"]
    assert report.uncapped_score == 95 and caps(report) == {("tls.no_aead", "B")}


def test_given_rsa_key_exchange_then_no_forward_secrecy_caps_at_b() -> None:
    report = graded(protocol="TLSv1.2", cipher="AES128-GCM-SHA256")
    assert caps(report) == {("tls.no_forward_secrecy", "B")}
    assert report.sections["tls"]["forward_secrecy"] is False and report.sections["tls"]["aead"] is True


def test_given_a_cbc_suite_negotiated_then_no_aead_caps_at_b() -> None:
    report = graded(protocol="TLSv1.2", cipher="ECDHE-RSA-AES256-SHA384")
    assert caps(report) == {("tls.no_aead", "B")}


@pytest.mark.parametrize(
    ("protocol", "cipher", "fs", "is_aead"),
    [
        ("TLSv1.3", "TLS_AES_256_GCM_SHA384", True, True),
        ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", True, True),
        ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305", True, True),
        ("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256", True, True),
        ("TLSv1.2", "AES256-CCM", False, True),
        ("TLSv1", "EDH-RSA-DES-CBC3-SHA", True, False),
        ("TLSv1.2", "CAMELLIA128-SHA", False, False),
        (None, None, None, None),
    ],
)
def test_forward_secrecy_and_aead_by_cipher_name(protocol, cipher, fs, is_aead) -> None:
    assert forward_secret(protocol, cipher) is fs
    assert aead(protocol, cipher) is is_aead


# -- keys, signatures, chain ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key_type", "size", "weak"),
    [("RSA", 1024, True), ("RSA", 2048, False), ("EC", 224, True), ("EC", 256, False), ("DSA", 2048, True)],
)
def test_key_sizes_below_rsa_2048_or_ec_256_are_weak_and_cap_at_b(key_type, size, weak) -> None:
    report = graded(certificate=make_certificate(key_type=key_type, key_size=size))
    assert (("tls.weak_key", "B") in caps(report)) is weak


@pytest.mark.parametrize("digest", ["sha1", "md5"])
def test_a_sha1_or_md5_signed_leaf_caps_at_f(digest) -> None:
    report = graded(certificate=make_certificate(signature_hash=digest))
    assert ("tls.weak_signature", "F") in caps(report)
    assert report.grade == "F"


def test_a_sha1_signed_intermediate_counts_but_a_sent_sha1_root_does_not() -> None:
    leaf = make_certificate()
    intermediate = make_certificate(names=("Test Intermediate CA",), signature_hash="sha1")
    root = make_certificate(names=("Test Root",), self_signed=True, signature_hash="sha1")
    findings = check_tls(make_snapshot(tls=make_handshake(chain=(leaf, intermediate, root)))).findings
    assert [f.subject for f in findings if f.outcome == "tls.weak_signature"] == [intermediate.subject]


def test_a_chain_of_hundreds_shows_and_grades_the_first_sixteen_and_counts_the_rest() -> None:
    # Given a server that sends 330 SHA-1 intermediates behind its leaf (a hostile site's report bloat)
    leaf = make_certificate()
    extras = tuple(make_certificate(names=(f"CA {n}",), signature_hash="sha1") for n in range(330))
    result = check_tls(make_snapshot(tls=make_handshake(chain=(leaf, *extras))))

    # Then the report holds 16 certificates and the count of the others, and 15 findings, not 330
    assert len(result.details["chain"]) == 16 and result.details["chain_not_shown"] == 315
    assert len([f for f in result.findings if f.outcome == "tls.weak_signature"]) == 15


def test_given_intermediates_not_sent_then_chain_incomplete_caps_at_b() -> None:
    issuer = "CN=Test Intermediate CA"
    report = graded(chain_complete=False, missing_issuer=issuer)
    finding = next(f for f in report.sections["tls"]["findings"] if f["check"] == "tls.chain_incomplete")
    assert issuer in finding["note"]
    assert caps(report) == {("tls.chain_incomplete", "B")}


# -- OCSP stapling and Certificate Transparency -------------------------------------------------------------


def _staple(pki: Pki, leaf: x509.Certificate, status: ocsp.OCSPCertStatus, *, next_update: datetime, key=None) -> bytes:
    builder = ocsp.OCSPResponseBuilder().add_response(
        cert=leaf,
        issuer=pki.intermediate_cert,
        algorithm=hashes.SHA1(),
        cert_status=status,
        this_update=FIXED_NOW - timedelta(hours=1),
        next_update=next_update,
        revocation_time=FIXED_NOW - timedelta(days=2) if status == ocsp.OCSPCertStatus.REVOKED else None,
        revocation_reason=x509.ReasonFlags.key_compromise if status == ocsp.OCSPCertStatus.REVOKED else None,
    )
    signer = pki.root_cert if key is pki.root_key else pki.intermediate_cert
    builder = builder.responder_id(ocsp.OCSPResponderEncoding.HASH, signer)
    response = builder.sign(key or pki.intermediate_key, hashes.SHA256())
    return response.public_bytes(serialization.Encoding.DER)


def _stapled(pki: Pki, staple: bytes, *, with_issuer: bool = True):
    issued = pki.issue("valid", ["ocsp.example.com"])
    chain = tuple(parse_certificate(c.public_bytes(serialization.Encoding.DER)) for c in issued.chain)
    tls = make_handshake("ocsp.example.com", chain=chain if with_issuer else chain[:1], ocsp_staple=staple)
    return check_tls(make_snapshot("https://ocsp.example.com/", tls=tls))


def test_a_good_staple_signed_by_the_issuer_is_reported_without_finding(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    staple = _staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW + timedelta(days=3))
    result = _stapled(pki, staple)
    assert [f.outcome for f in result.findings] == ["tls.cert_valid"]
    assert result.details["ocsp_stapling"]["status"] == "good"
    assert result.details["ocsp_stapling"]["signature_verified"] is True


def test_a_revoked_staple_caps_at_f(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    staple = _staple(pki, leaf, ocsp.OCSPCertStatus.REVOKED, next_update=FIXED_NOW + timedelta(days=3))
    result = _stapled(pki, staple)
    revoked = [f for f in result.findings if f.outcome == "tls.ocsp_revoked"]
    assert revoked and "key_compromise" in (revoked[0].note or "")


def test_an_expired_staple_is_invalid(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    staple = _staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW - timedelta(minutes=10))
    notes = [f.note for f in _stapled(pki, staple).findings if f.outcome == "tls.ocsp_staple_invalid"]
    assert notes and "expired" in notes[0]


def test_a_staple_signed_by_someone_else_is_invalid(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    staple = _staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW + timedelta(days=1), key=pki.root_key)
    notes = [f.note for f in _stapled(pki, staple).findings if f.outcome == "tls.ocsp_staple_invalid"]
    assert notes and "not signed by the certificate's issuer" in notes[0]


def test_a_staple_for_another_certificate_is_invalid(pki: Pki) -> None:
    other = pki.issue("valid", ["other.example.com"]).certificate
    staple = _staple(pki, other, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW + timedelta(days=1))
    notes = [f.note for f in _stapled(pki, staple).findings if f.outcome == "tls.ocsp_staple_invalid"]
    assert notes == ["the stapled response is for another certificate"]


def test_garbage_instead_of_a_staple_is_invalid_not_a_crash(pki: Pki) -> None:
    assert "tls.ocsp_staple_invalid" in [f.outcome for f in _stapled(pki, b"\x30\x03junk").findings]


def test_of_several_single_responses_the_leafs_is_judged_not_a_crash(pki: Pki) -> None:
    """RFC 6960 4.2.1: a response lists a SEQUENCE OF SingleResponse; the client judges the one whose CertID
    names its certificate (serial, issuer name and key hashes), the strictest when several do (Chromium's
    CheckOCSP). cryptography's single-response accessors raised ValueError: check.crashed, every TLS finding
    lost."""
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    other = pki.issue("valid", ["other.example.com"]).certificate
    good, for_other = ocsp_staples.staple(pki, leaf), ocsp_staples.staple(pki, other)
    revoked = ocsp_staples.staple(pki, leaf, ocsp.OCSPCertStatus.REVOKED)

    listed_second = _stapled(pki, with_single_responses(pki, for_other, good))
    assert [f.outcome for f in listed_second.findings] == ["tls.cert_valid"]
    assert listed_second.details["ocsp_stapling"]["status"] == "good"
    assert listed_second.details["ocsp_stapling"]["signature_verified"] is True

    twice = _stapled(pki, with_single_responses(pki, good, revoked))
    assert [f.outcome for f in twice.findings] == ["tls.ocsp_revoked"]  # refused by browsers: not "valid, trusted"

    others_only = _stapled(pki, with_single_responses(pki, for_other, for_other))
    assert [(f.outcome, f.note) for f in others_only.findings if f.outcome != "tls.cert_valid"] == [
        ("tls.ocsp_staple_invalid", "the stapled response is for another certificate")
    ]


def test_a_single_response_with_the_leafs_serial_under_another_issuer_is_for_another_certificate(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    other_issuer = (
        ocsp.OCSPResponseBuilder()
        .add_response(leaf, pki.root_cert, hashes.SHA1(), ocsp.OCSPCertStatus.GOOD, FIXED_NOW, None, None, None)
        .responder_id(ocsp.OCSPResponderEncoding.HASH, pki.intermediate_cert)
        .sign(pki.intermediate_key, hashes.SHA256())
        .public_bytes(serialization.Encoding.DER)
    )
    notes = [f.note for f in _stapled(pki, other_issuer).findings if f.outcome == "tls.ocsp_staple_invalid"]
    assert notes == ["the stapled response is for another certificate"]


def test_a_staple_signed_with_an_unknown_algorithm_is_invalid_not_a_crash(pki: Pki) -> None:
    leaf = pki.issue("valid", ["ocsp.example.com"]).certificate
    unknown = with_signature_algorithm(ocsp_staples.staple(pki, leaf), "1.2.3.4")
    result = _stapled(pki, unknown)
    assert [(f.outcome, f.note) for f in result.findings] == [
        ("tls.cert_valid", "valid for 90 more days"),
        ("tls.ocsp_staple_invalid", "the stapled response is signed with an algorithm clients do not know (1.2.3.4)"),
    ]
    assert "tls.ocsp_staple_invalid" in [f.outcome for f in _stapled(pki, unknown, with_issuer=False).findings]


def _must_staple_leaf(pki: Pki) -> x509.Certificate:
    """A leaf of the test intermediate whose TLS Feature extension asks for status_request (RFC 7633)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ocsp.example.com")])
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(pki.intermediate_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(FIXED_NOW - timedelta(days=10))
        .not_valid_after(FIXED_NOW + timedelta(days=80))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("ocsp.example.com")]), critical=False)
        .add_extension(x509.TLSFeature([x509.TLSFeatureType.status_request]), critical=False)
        .sign(pki.intermediate_key, hashes.SHA256())
    )


def _must_staple_graded(pki: Pki, leaf: x509.Certificate, staple: bytes | None) -> Graded:
    chain = tuple(parse_certificate(c.public_bytes(serialization.Encoding.DER)) for c in (leaf, pki.intermediate_cert))
    return graded(host="ocsp.example.com", certificate=chain[0], chain=chain, ocsp_staple=staple)


def test_a_must_staple_certificate_without_a_usable_staple_caps_at_f(pki: Pki) -> None:
    # RFC 7633: Firefox refuses a Must-Staple certificate that comes without a valid OCSP response
    leaf = _must_staple_leaf(pki)
    assert parse_certificate(leaf.public_bytes(serialization.Encoding.DER)).must_staple
    expired = _staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW - timedelta(minutes=10))
    for staple in (None, expired):
        report = _must_staple_graded(pki, leaf, staple)
        problems = [f["check"] for f in report.sections["tls"]["findings"] if f["status"] != "good"]
        assert problems == ["tls.must_staple_missing"], staple  # an unusable staple is not counted twice
        assert caps(report) == {("tls.must_staple_missing", "F")}
    good = _staple(pki, leaf, ocsp.OCSPCertStatus.GOOD, next_update=FIXED_NOW + timedelta(days=3))
    assert caps(_must_staple_graded(pki, leaf, good)) == set()
    assert not parse_certificate(
        pki.issue("valid", ["ocsp.example.com"]).certificate.public_bytes(serialization.Encoding.DER)
    ).must_staple


def test_embedded_scts_are_counted_with_their_logs() -> None:
    sct = SignedTimestamp(log_id="c2F0b3NoaQ==", timestamp=datetime(2026, 9, 1, tzinfo=UTC))
    cert = make_certificate()
    with_scts = type(cert)(**{**cert.__dict__, "embedded_scts": (sct, sct)})
    details = check_tls(make_snapshot(tls=make_handshake(certificate=with_scts))).details
    assert details["certificate_transparency"] == {
        "embedded_scts": 2,
        "handshake_scts": None,  # a hand-made handshake: not read
        "ocsp_scts": 0,
        "logs": ["c2F0b3NoaQ=="],
        "sct_present": True,
    }


def _logged(
    embedded: tuple[str, ...] = (),
    in_handshake: tuple[str, ...] | None = (),
    days: int = 90,
    public_root: bool | None = True,
) -> list[tuple[str, str | None]]:
    """The tls.cert_not_logged findings (outcome, note) for a trusted leaf valid `days` days that embeds SCTs from the
    logs `embedded` and whose handshake carried SCTs from `in_handshake` (None: not read). A log named "future:..."
    dated its SCT a day after the scan."""

    def stamps(logs: tuple[str, ...]) -> tuple[SignedTimestamp, ...]:
        return tuple(
            SignedTimestamp(log_id=log, timestamp=FIXED_NOW + timedelta(days=1 if log.startswith("future:") else -1))
            for log in logs
        )

    cert = make_certificate(not_before=FIXED_NOW - timedelta(days=1), not_after=FIXED_NOW + timedelta(days=days - 1))
    cert = type(cert)(**{**cert.__dict__, "embedded_scts": stamps(embedded)})
    handshake_scts = None if in_handshake is None else stamps(in_handshake)
    tls = make_handshake(certificate=cert, public_root=public_root, handshake_scts=handshake_scts)
    findings = check_tls(make_snapshot(tls=tls)).findings
    return [(f.outcome, f.note) for f in findings if f.outcome == "tls.cert_not_logged"]


def test_a_public_certificate_needs_scts_from_two_logs_as_chrome_and_safari_require() -> None:
    # Given a certificate from a public CA valid 90 days: two logs' SCTs, embedded or sent, are enough
    assert _logged(embedded=("A", "B")) == []
    assert _logged(in_handshake=("A", "B")) == []
    assert _logged(embedded=("A",), in_handshake=("B",)) == []  # counted across sources, as Chromium counts
    # None at all, or one log's twice, is refused
    assert _logged() == [
        (
            "tls.cert_not_logged",
            "it comes with no SCT (signed certificate timestamp): none embedded in the certificate, none in the TLS "
            "handshake, none in a stapled OCSP response; Chrome and Safari require SCTs from at least 2 different logs",
        )
    ]
    assert _logged(embedded=("A", "A")) == [
        (
            "tls.cert_not_logged",
            "it comes with SCTs from 1 log only (2 embedded); Chrome and Safari require SCTs from at least 2 different "
            "logs",
        )
    ]
    assert _logged(embedded=("A",), in_handshake=("A",))[0][1].startswith(
        "it comes with SCTs from 1 log only (1 embedded, 1 in the TLS handshake);"
    )


def test_an_sct_dated_after_the_scan_does_not_count() -> None:
    """RFC 6962 5.2: clients reject an SCT whose timestamp is in the future."""
    assert _logged(embedded=("A", "future:B")) == [
        (
            "tls.cert_not_logged",
            "it comes with SCTs from 1 log only (2 embedded; 1 SCT dated after the scan, which clients reject, not "
            "counted); Chrome and Safari require SCTs from at least 2 different logs",
        )
    ]
    assert _logged(in_handshake=("future:A", "future:B"))[0][1].startswith(
        "it comes with no SCT that counts (2 in the TLS handshake; 2 SCTs dated after the scan"
    )


def test_the_scts_of_a_stapled_response_count_by_their_logs(pki: Pki) -> None:
    """RFC 6962 3.3's third way: SCTs in the stapled OCSP response, counted by log with the others."""
    issued = pki.issue("valid", ["stapled-scts.example"], logged_in=1)  # log 1, embedded
    leaf = parse_certificate(issued.certificate.public_bytes(serialization.Encoding.DER))
    good = ocsp_staples.staple(pki, issued.certificate)

    def judged(staple: bytes) -> tuple[dict[str, object], list[str | None]]:
        tls = make_handshake("stapled-scts.example", leaf, public_root=True, handshake_scts=(), ocsp_staple=staple)
        result = check_tls(make_snapshot(tls=tls))
        notes = [f.note for f in result.findings if f.outcome == "tls.cert_not_logged"]
        return result.details["certificate_transparency"], notes

    details, notes = judged(with_scts(pki, good, (1, 2)))  # logs 1 and 2: two different logs, one sent apart
    assert (details["ocsp_scts"], len(details["logs"]), notes) == (2, 2, [])
    details, notes = judged(with_scts(pki, good, (1,)))  # log 1 again: one log in all
    assert notes == [
        "it comes with SCTs from 1 log only (1 embedded, 1 stapled); Chrome and Safari require SCTs from at least 2 "
        "different logs"
    ]


def test_a_certificate_valid_over_180_days_embeds_three_logs_unless_others_come_in_the_handshake() -> None:
    assert _logged(embedded=("A", "B", "C"), days=200) == []
    assert _logged(embedded=("A", "B"), days=200) == [
        (
            "tls.cert_not_logged",
            "it comes with SCTs from 2 logs only (2 embedded); Chrome and Safari require embedded SCTs from 3 "
            "different logs for a certificate valid 200 days",
        )
    ]
    assert _logged(embedded=("A",), in_handshake=("B",), days=200) == []  # any sent: 2 from anywhere


def test_transparency_is_not_judged_for_a_local_root_or_when_the_handshake_was_not_read() -> None:
    assert _logged(public_root=False) == []  # Chrome exempts a locally installed root
    assert _logged(public_root=None) == []  # not looked up: unknown counts as local, as for the lifetime
    assert _logged(in_handshake=None) == []  # the handshake may have carried them


def test_no_scts_from_a_public_root_cap_the_grade_at_f() -> None:
    tls = make_handshake(public_root=True, handshake_scts=())
    result = check_tls(make_snapshot(tls=tls))
    graded = grade([result], default_rulebook(), {"host": "example.com", "domain": "example.com"})
    assert graded.grade == "F"
    assert result.details["certificate_transparency"] == {
        "embedded_scts": 0,
        "handshake_scts": 0,
        "ocsp_scts": 0,
        "logs": [],
        "sct_present": False,
    }


# -- the DHE group (Logjam) ------------------------------------------------------------------------------------


def _dhe(bits: int | None, detail: str | None = None) -> dict[str, object]:
    """A TLS 1.2 handshake that got DHE, with the group the fetch read (None: could not be read)."""
    from websec_app.scanner.snapshot import DhGroup

    group = DhGroup(bits, "TLSv1.2", "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", detail)
    return {"protocol": "TLSv1.2", "cipher": "DHE-RSA-AES128-GCM-SHA256", "dh_group": group}


@pytest.mark.parametrize(
    ("bits", "outcome", "cap"),
    [
        (512, "tls.dh_too_small_for_browsers", "F"),
        (1023, "tls.dh_too_small_for_browsers", "F"),
        (1024, "tls.weak_dh", "B"),
        (1536, "tls.weak_dh", "B"),
        (2047, "tls.weak_dh", "B"),
    ],
)
def test_a_dhe_group_under_1024_bits_fails_and_under_2048_caps_at_b(bits, outcome, cap) -> None:
    report = graded(**_dhe(bits))
    assert caps(report) == {(outcome, cap)}
    finding = next(f for f in report.sections["tls"]["findings"] if f["check"] == outcome)
    assert finding["note"].startswith(f"a {bits}-bit DH group with TLS_DHE_RSA_WITH_AES_128_GCM_SHA256 over TLSv1.2")
    assert report.sections["tls"]["dh_group"] == {
        "prime_bits": bits,
        "cipher": "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        "protocol": "TLSv1.2",
    }


@pytest.mark.parametrize("bits", [2048, 3072, 4096])
def test_a_dhe_group_of_2048_bits_or_more_is_no_finding(bits) -> None:
    report = graded(**_dhe(bits))
    assert caps(report) == set()
    assert not {"tls.weak_dh", "tls.dh_too_small_for_browsers"} & set(outcomes(**_dhe(bits)))


def test_a_dhe_group_that_could_not_be_read_is_said_untested_never_passed_or_failed() -> None:
    detail = "the server announced a 16777215-byte ServerKeyExchange: more than any client reads"
    result = check_tls(make_snapshot(tls=make_handshake(**_dhe(None, detail))))

    assert not {f.outcome for f in result.findings} & {"tls.weak_dh", "tls.dh_too_small_for_browsers"}
    assert f"DHE group size: could not be read ({detail})" in result.details["not_testable"]
    assert result.details["dh_group"]["prime_bits"] is None


def test_a_handshake_whose_group_was_not_looked_at_has_no_dh_details() -> None:
    result = check_tls(make_snapshot(tls=make_handshake(protocol="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256")))
    assert "dh_group" not in result.details
    assert not {f.outcome for f in result.findings} & {"tls.weak_dh", "tls.dh_too_small_for_browsers"}
