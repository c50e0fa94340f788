"""The tls section from recorded handshakes."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from tests.factories import FIXED_NOW, cipher_probes, make_certificate, make_handshake, make_snapshot, protocol_probes
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.grading import grade
from websec_app.scanner.hostname import certificate_matches_host
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import CertificateInfo, Failure, TlsHandshake


def outcomes(snapshot) -> list[str]:
    return [f.outcome for f in check_tls(snapshot).findings]


def test_given_a_trusted_current_matching_certificate_then_tls_is_good() -> None:
    snap = make_snapshot(tls=make_handshake())
    result = check_tls(snap)
    assert [f.outcome for f in result.findings] == ["tls.cert_valid"]
    assert result.details["certificate"]["days_to_expiry"] == 98
    assert result.details["protocol"] == "TLSv1.3"


def test_given_an_expired_certificate_then_one_expired_finding_and_grade_f() -> None:
    cert = make_certificate(not_after=datetime(2026, 1, 1, tzinfo=UTC))
    snap = make_snapshot(tls=make_handshake(certificate=cert, trusted=False, verify_error="certificate has expired"))
    assert outcomes(snap) == ["tls.cert_expired"]  # the verifier's "expired" is not counted twice
    assert grade_snapshot(snap).grade == "F"


def test_given_a_self_signed_certificate_then_untrusted_with_the_reason() -> None:
    cert = make_certificate(self_signed=True)
    snap = make_snapshot(tls=make_handshake(certificate=cert, trusted=False, verify_error="self-signed certificate"))
    result = check_tls(snap)
    assert [f.outcome for f in result.findings] == ["tls.cert_untrusted"]
    assert "self-signed" in (result.findings[0].note or "")


def test_an_unsupported_purpose_names_the_leafs_purposes_or_the_ca_that_restricts_them() -> None:
    def note(purposes: tuple[str, ...] | None, verify_error: str) -> str | None:
        cert = replace(make_certificate(), extended_key_usage=purposes)
        result = check_tls(
            make_snapshot(tls=make_handshake(certificate=cert, trusted=False, verify_error=verify_error))
        )
        return next(f.note for f in result.findings if f.outcome == "tls.cert_untrusted")

    assert note(("clientAuth",), "unsupported certificate purpose") == (
        "the certificate is not for web servers: its Extended Key Usage lists clientAuth, and browsers require "
        "serverAuth (TLS Web Server Authentication)"
    )
    # the leaf is for web servers: a CA certificate above it is restricted to other purposes (OpenSSL names it)
    assert note(("serverAuth",), "unsupported certificate purpose (CN=Mail CA)") == (
        "a CA certificate of the chain (CN=Mail CA) may not issue certificates for web servers (its Extended Key Usage)"
    )
    assert note(None, "unsupported certificate purpose (CN=Mail CA)") == (
        "a CA certificate of the chain (CN=Mail CA) may not issue certificates for web servers (its Extended Key Usage)"
    )
    assert note(("clientAuth",), "certificate signature failure") == "certificate signature failure"


def test_given_a_certificate_for_another_host_then_hostname_mismatch() -> None:
    snap = make_snapshot(tls=make_handshake(certificate=make_certificate(names=("other.test",))))
    assert outcomes(snap) == ["tls.cert_hostname_mismatch"]


def test_given_a_certificate_expiring_in_ten_days_then_weak() -> None:
    cert = make_certificate(not_after=datetime(2026, 12, 2, 12, tzinfo=UTC))
    assert outcomes(make_snapshot(tls=make_handshake(certificate=cert))) == ["tls.cert_expires_very_soon"]


def test_a_certificate_expiring_within_a_day_says_hours() -> None:
    def said(left: timedelta) -> str | None:
        cert = make_certificate(not_after=FIXED_NOW + left)
        return check_tls(make_snapshot(tls=make_handshake(certificate=cert))).findings[0].note

    assert said(timedelta(hours=12)) == "expires in 12 hours"  # it said "expires in 0 days"
    assert said(timedelta(minutes=90)) == "expires in 1 hour"
    assert said(timedelta(minutes=20)) == "expires in less than an hour"
    assert said(timedelta(days=1, hours=3)) == "expires in 1 day"


def test_a_certificate_valid_over_398_days_caps_at_f_from_a_public_root_and_warns_from_a_local_one() -> None:
    # CA/B BR 6.3.2 (since 2020-09-01); Chrome ERR_CERT_VALIDITY_TOO_LONG exempts locally installed roots
    five_years = make_certificate(not_before=FIXED_NOW - timedelta(days=30), not_after=FIXED_NOW + timedelta(days=1800))

    def graded(**fields: object) -> tuple[list[str], str]:
        result = check_tls(make_snapshot(tls=make_handshake(certificate=five_years, **fields)))
        book, context = default_rulebook(), {"host": "example.com", "domain": "example.com"}
        return [f.outcome for f in result.findings], grade([result], book, context).grade

    assert graded(public_root=True) == (["tls.cert_lifetime_too_long"], "F")
    assert graded(public_root=False)[0] == ["tls.cert_lifetime_long_local_root"]
    assert graded(public_root=None)[0] == ["tls.cert_lifetime_long_local_root"]  # unknown: the warning only
    # Chromium's HasTooLongValidity applies 398 days whatever the issue date (none issued under an older limit
    # can still be current): a leaf from the day before BR 6.3.2 took effect is refused like one from the day after
    for issued in (
        datetime(2019, 6, 1, tzinfo=UTC),
        datetime(2020, 8, 31, tzinfo=UTC),
        datetime(2020, 9, 1, tzinfo=UTC),
    ):
        long_lived = make_certificate(not_before=issued, not_after=datetime(2027, 6, 1, tzinfo=UTC))
        assert outcomes(make_snapshot(tls=make_handshake(certificate=long_lived, public_root=True))) == [
            "tls.cert_lifetime_too_long"
        ], issued
    a_year = make_certificate(not_before=FIXED_NOW - timedelta(days=100), not_after=FIXED_NOW + timedelta(days=298))
    assert outcomes(make_snapshot(tls=make_handshake(certificate=a_year, public_root=True))) == ["tls.cert_valid"]


def test_given_no_https_listener_then_no_https_caps_at_f() -> None:
    failed = TlsHandshake("example.com", 443, failure=Failure("unreachable", "connection refused on port 443"))
    snap = make_snapshot(url="http://example.com/", tls=failed)
    assert outcomes(snap) == ["tls.no_https"]
    report = grade_snapshot(snap)
    assert report.grade == "F" and {"outcome": "tls.no_https", "max_grade": "F"} in report.caps


def test_hostname_matching_follows_rfc_6125() -> None:
    wildcard = make_certificate(names=("*.example.com",))
    assert certificate_matches_host(wildcard, "www.example.com")
    assert not certificate_matches_host(wildcard, "example.com")  # wildcard needs one label
    assert not certificate_matches_host(wildcard, "a.b.example.com")  # and only one
    assert not certificate_matches_host(make_certificate(names=("*.com",)), "example.com")
    assert certificate_matches_host(make_certificate(names=("Example.COM.",)), "example.com")
    assert certificate_matches_host(make_certificate(names=("93.184.216.34",)), "93.184.216.34")
    assert not certificate_matches_host(make_certificate(names=("example.com",)), "93.184.216.34")


def test_a_wildcard_on_a_registry_controlled_suffix_matches_nothing() -> None:
    # RFC 6125 7.2, CA/B BR 3.2.2.6; Chrome refuses wildcards directly under an ICANN suffix of the PSL
    assert not certificate_matches_host(make_certificate(names=("*.co.uk",)), "foo.co.uk")
    assert not certificate_matches_host(make_certificate(names=("*.xn--55qx5d.cn",)), "shop.xn--55qx5d.cn")  # 公司.cn
    assert certificate_matches_host(make_certificate(names=("*.example.co.uk",)), "www.example.co.uk")
    # Chrome consults the ICANN section only: a private entry (github.io) is no registry, and its wildcard matches
    assert certificate_matches_host(make_certificate(names=("*.github.io",)), "alice.github.io")
    snap = make_snapshot(
        url="https://shop.co.uk/", tls=make_handshake("shop.co.uk", make_certificate(names=("*.co.uk",)))
    )
    assert outcomes(snap) == ["tls.cert_hostname_mismatch"]


def _intermediate(key_type: str, key_size: int) -> CertificateInfo:
    cert = make_certificate(names=("Test Intermediate CA",), key_type=key_type, key_size=key_size)
    return replace(cert, subject="CN=Test Intermediate CA", issuer="CN=Test Root CA", san_dns=(), is_ca=True)


def test_a_key_browsers_refuse_caps_at_f_and_a_weak_one_at_b_in_the_leaf_or_an_intermediate() -> None:
    def graded(chain: tuple[CertificateInfo, ...]) -> tuple[list[tuple[str, str | None]], str]:
        snap = make_snapshot(tls=make_handshake(certificate=chain[0], chain=chain))
        result = check_tls(snap)
        findings = [(f.outcome, f.subject) for f in result.findings if f.outcome != "tls.cert_valid"]
        return findings, grade([result], default_rulebook(), {"host": "example.com", "domain": "example.com"}).grade

    leaf = make_certificate()
    # RSA under 1024 bits (or EC under 160): Chrome and Firefox refuse the certificate, so F, not B
    assert graded((make_certificate(key_type="RSA", key_size=512),)) == (
        [("tls.key_too_small_for_browsers", "CN=example.com")],
        "F",
    )
    assert graded((leaf, _intermediate("RSA", 768)))[0] == [
        ("tls.key_too_small_for_browsers", "CN=Test Intermediate CA")
    ]
    assert graded((leaf, _intermediate("EC", 112)))[1] == "F"
    # under the CA/B minimum but accepted: B, the intermediate's too (it used to look at the leaf only)
    assert graded((leaf, _intermediate("RSA", 1024))) == ([("tls.weak_key", "CN=Test Intermediate CA")], "B")
    assert graded((make_certificate(key_type="RSA", key_size=1024),))[0] == [("tls.weak_key", "CN=example.com")]
    # a root's key is the trust store's business
    root = replace(_intermediate("RSA", 1024), subject="CN=Test Root CA", self_signed=True)
    assert graded((leaf, _intermediate("EC", 256), root))[0] == []


# -- an untrusted CA is not a missing intermediate (issue 11) --------------------------------------------


def test_given_a_leaf_from_an_untrusted_ca_then_one_untrusted_ca_finding_and_no_chain_finding() -> None:
    ca = "CN=Home Lab Root,O=home"
    tls = make_handshake(trusted=False, verify_error="unable to get local issuer certificate", untrusted_ca=ca)
    result = check_tls(make_snapshot(tls=tls))
    assert [(f.outcome, f.subject) for f in result.findings] == [("tls.cert_untrusted_ca", ca)]
    assert "does not send" not in (result.findings[0].note or "")
    assert result.details["untrusted_ca"] == ca
    assert grade_snapshot(make_snapshot(tls=tls)).grade == "F"


def test_given_a_missing_intermediate_that_completes_a_trusted_path_then_only_chain_incomplete() -> None:
    tls = make_handshake(
        trusted=False,
        verify_error="unable to get local issuer certificate",
        chain_complete=False,
        missing_issuer="CN=Test Intermediate CA",
    )
    findings = check_tls(make_snapshot(tls=tls)).findings
    # Browsers that download the intermediate trust the certificate: it is valid, and its chain incomplete.
    assert [f.outcome for f in findings] == ["tls.cert_valid", "tls.chain_incomplete"]
    assert findings[1].note == (
        "the issuer CN=Test Intermediate CA is not sent, so clients that cannot download it themselves reject "
        "the certificate"
    )


def test_a_certificate_expiring_in_one_day_says_one_day() -> None:
    cert = make_certificate(not_after=datetime(2026, 11, 23, 13, tzinfo=UTC))  # TEST_NOW + 1 day 1 hour
    [finding] = check_tls(make_snapshot(tls=make_handshake(certificate=cert))).findings
    assert (finding.outcome, finding.note) == ("tls.cert_expires_very_soon", "expires in 1 day")


def test_a_key_usage_that_forbids_the_negotiated_key_exchange_caps_at_f() -> None:
    """RFC 8446 4.4.2.2, RFC 5246 7.4.2, RFC 5280 4.2.1.3: with a Key Usage extension, a signed key exchange
    (TLS 1.3, ECDHE, DHE) needs digitalSignature and RSA key exchange keyEncipherment. Chromium refuses either
    otherwise (ERR_SSL_KEY_USAGE_INCOMPATIBLE: tests/scanner/test_tls_key_usage_browser.py); it was graded A+."""

    def graded(key_usage: tuple[str, ...] | None, protocol: str, cipher: str, key_type: str = "EC") -> tuple:
        cert = replace(
            make_certificate(key_type=key_type, key_size=2048 if key_type == "RSA" else 256), key_usage=key_usage
        )
        result = check_tls(make_snapshot(tls=make_handshake(certificate=cert, protocol=protocol, cipher=cipher)))
        findings = [(f.outcome, f.note) for f in result.findings if f.outcome != "tls.no_forward_secrecy"]
        return findings, grade([result], default_rulebook(), {"host": "example.com", "domain": "example.com"}).grade

    tls13 = ("TLSv1.3", "TLS_AES_128_GCM_SHA256")
    assert graded(("key_encipherment",), *tls13) == (
        [
            (
                "tls.cert_key_usage",
                "the certificate's Key Usage allows keyEncipherment, but with TLS_AES_128_GCM_SHA256 over TLSv1.3 "
                "the server signs the key exchange with the certificate's key, which needs digitalSignature",
            )
        ],
        "F",
    )
    assert graded(("key_agreement",), "TLSv1.2", "ECDHE-ECDSA-AES128-GCM-SHA256")[1] == "F"
    assert graded(("key_encipherment",), "TLSv1.2", "DHE-RSA-AES128-GCM-SHA256", "RSA")[1] == "F"
    # RSA key exchange encrypts to the key: keyEncipherment is what it needs, digitalSignature alone is refused
    assert graded(("key_encipherment",), "TLSv1.2", "AES128-GCM-SHA256", "RSA")[0] == [
        ("tls.cert_valid", "valid for 98 more days")
    ]
    assert [o for o, _ in graded(("digital_signature",), "TLSv1.2", "AES128-GCM-SHA256", "RSA")[0]] == [
        "tls.cert_key_usage"
    ]
    # no extension: any use; the usual leaf: fine
    assert graded(None, *tls13) == ([("tls.cert_valid", "valid for 98 more days")], "A+")
    assert graded(("digital_signature",), *tls13)[1] == "A+"
    assert graded(("digital_signature", "key_encipherment"), "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", "RSA")[1] == "A+"


def test_keys_and_signatures_are_judged_on_the_verified_path_when_trusted() -> None:
    """Chromium's CertVerifyProc checks SHA-1 and weak keys on the verified chain only, its anchor left out: a
    SHA-1 cross-signed copy of the root that the server also sends, off the path the verifier built, is
    harmless (it capped the grade at F). Untrusted, there is no path: the chain as sent is judged."""
    leaf, intermediate = make_certificate(), _intermediate("EC", 256)
    cross_signed_root = replace(
        _intermediate("EC", 256), subject="CN=Test Root CA", issuer="CN=Legacy Root", signature_hash="sha1"
    )
    sent = (leaf, intermediate, cross_signed_root)

    def found(**fields: object) -> list[tuple[str, str | None]]:
        result = check_tls(make_snapshot(tls=make_handshake(certificate=leaf, chain=sent, **fields)))
        return [(f.outcome, f.note) for f in result.findings]

    assert found(verified_path=(leaf, intermediate)) == [("tls.cert_valid", "valid for 98 more days")]
    untrusted = found(trusted=False, verify_error="certificate signature failure")
    assert ("tls.weak_signature", "the intermediate CN=Test Root CA is signed with sha1") in untrusted
    # on the path, a SHA-1 intermediate or a weak key is found as before
    sha1_intermediate = replace(intermediate, signature_hash="sha1")
    assert ("tls.weak_signature", "the intermediate CN=Test Intermediate CA is signed with sha1") in found(
        verified_path=(leaf, sha1_intermediate)
    )
    assert [o for o, _ in found(verified_path=(leaf, _intermediate("RSA", 1024)))] == ["tls.cert_valid", "tls.weak_key"]


def test_the_certificate_of_the_host_scanned_counts_when_the_page_is_on_another_host() -> None:
    # Given https://example.com/ redirecting to https://www.example.com/, whose certificate is right, while
    # example.com's own expired: every visitor who types example.com stops at a browser's certificate error
    page = make_handshake("www.example.com")
    expired = make_certificate(names=("example.com",), not_after=datetime(2026, 1, 1, tzinfo=UTC))
    entry = make_handshake("example.com", certificate=expired, trusted=False, verify_error="certificate has expired")
    snap = make_snapshot("https://www.example.com/", tls=page, entry_tls=entry)

    # Then the section says so, naming the host, and the grade is capped as for the page's own certificate
    findings = check_tls(snap).findings
    assert [f.outcome for f in findings] == ["tls.cert_valid", "tls.cert_expired"]
    assert findings[1].note == (
        "example.com, the address scanned, which redirects to www.example.com: expired on 2026-01-01"
    )
    assert grade_snapshot(snap).grade == "F"
    # And its fix names the host whose certificate it is (the report's host is the page's), both when both expired
    [fixed] = [f for f in grade_snapshot(snap).to_dict()["tls"]["findings"] if f["check"] == "tls.cert_expired"]
    assert fixed["fix"].startswith("Renew the certificate for example.com now")
    both = replace(
        snap, tls=make_handshake("www.example.com", certificate=replace(expired, san_dns=("www.example.com",)))
    )
    [fixed] = [f for f in grade_snapshot(both).to_dict()["tls"]["findings"] if f["check"] == "tls.cert_expired"]
    assert fixed["fix"].startswith("Renew the certificate for www.example.com and example.com now")
    assert len(fixed["notes"]) == 2
    # And a certificate of another name at the host scanned is a mismatch there, not at the page
    other = make_handshake("example.com", certificate=make_certificate(names=("www.example.com",)))
    mismatch = check_tls(make_snapshot("https://www.example.com/", tls=page, entry_tls=other)).findings
    assert [f.outcome for f in mismatch] == ["tls.cert_valid", "tls.cert_hostname_mismatch"]
    assert mismatch[1].note is not None and mismatch[1].note.startswith("example.com, the address scanned")


def test_a_right_certificate_at_the_host_scanned_adds_nothing() -> None:
    page = make_handshake("www.example.com")
    for entry in (
        make_handshake("example.com"),
        replace(make_handshake("example.com"), failure=Failure("timeout", "x")),
    ):
        snap = make_snapshot("https://www.example.com/", tls=page, entry_tls=entry)
        assert outcomes(snap) == ["tls.cert_valid"]


def test_the_protocols_and_suites_of_the_host_scanned_count_when_the_page_is_on_another_host() -> None:
    # Given https://example.com/ redirecting to https://www.example.com/, which accepts TLS 1.2 and 1.3 alone, while
    # example.com's server still accepts TLS 1.0 and a CBC suite: every visitor's first request goes to it
    page = make_handshake("www.example.com", protocols=protocol_probes(), cipher_probes=cipher_probes())
    entry = make_handshake(
        "example.com",
        protocols=protocol_probes(accepted=("TLSv1.3", "TLSv1.2", "TLSv1")),
        cipher_probes=cipher_probes({"cbc": "ECDHE-RSA-AES128-SHA"}),
    )
    snap = make_snapshot("https://www.example.com/", tls=page, entry_tls=entry)

    # Then the section says so, naming the host, with the page's caps (TLS 1.0: at most B)
    by_outcome = {f.outcome: f for f in check_tls(snap).findings}
    assert sorted(by_outcome) == ["tls.cert_valid", "tls.cipher_cbc", "tls.legacy_protocols"]
    assert by_outcome["tls.legacy_protocols"].note == (
        "example.com, the address scanned, which redirects to www.example.com: accepts TLS 1.0"
    )
    report = grade_snapshot(snap).to_dict(pro=True, include_fix=True)
    assert {"outcome": "tls.legacy_protocols", "max_grade": "B"} in report["grading"]["caps"]
    # And the fix, a server setting that names no host, says where to make it
    [legacy] = [f for f in report["tls"]["findings"] if f["check"] == "tls.legacy_protocols"]
    assert legacy["fix_note"] == (
        "Change it for example.com (the server, or server block, that redirects to www.example.com): "
        "www.example.com's own is right"
    )
    # And when the page's server accepts TLS 1.0 too, it is one finding with both notes
    both = replace(snap, tls=replace(page, protocols=protocol_probes(accepted=("TLSv1.3", "TLSv1.2", "TLSv1"))))
    [legacy] = [f for f in grade_snapshot(both).to_dict()["tls"]["findings"] if f["check"] == "tls.legacy_protocols"]
    assert legacy["notes"] == [
        "accepts TLS 1.0",
        "example.com, the address scanned, which redirects to www.example.com: accepts TLS 1.0",
    ]
    assert legacy["fix_note"] == (
        "Change it for example.com (the server, or server block, that redirects to www.example.com) and for "
        "www.example.com"
    )
