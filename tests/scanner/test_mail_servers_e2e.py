"""Whole scans of domains whose MX hosts run a real SMTP server (aiosmtpd, tests/fixtures/mail_servers.py): STARTTLS
works or is missing (dns.mx_starttls, dns.mx_no_starttls), an enforced MTA-STS policy the host's certificate fails
(dns.mta_sts_mx_failing), and DNSSEC-valid TLSA records held to the certificate the host presents (dns.dane_valid,
dns.dane_mismatch with the record to publish). A host the scan cannot reach is "could not check", never a verdict."""

from __future__ import annotations

import dataclasses
import hashlib
import ssl
from typing import Any

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.fixtures.mail_servers import mail_address, mail_domain, mail_site
from tests.fixtures.pki import IssuedCert, Pki
from tests.fixtures.ports import free_port
from tests.fixtures.sites import SiteFactory
from tests.pdf_text import pdf_pages
from websec_app.scanner import scan
from websec_app.scanner.diff import diff_reports
from websec_app.services.pdf import render_scan_pdf
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons


def _spki_sha256(certificate: IssuedCert | None) -> str:
    assert certificate is not None
    spki = certificate.certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).hexdigest()


def _findings(body: dict, prefix: str) -> dict[str, dict]:
    return {f["check"]: f for f in body["dns"]["findings"] if f["check"].startswith(prefix)}


async def _scan_with_mx(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki, prefix: str, **domain: Any
) -> tuple[str, dict]:
    """The scan of a `mail_domain` (tests/fixtures/mail_servers.py) while its mail server runs."""
    mail = mail_domain(site_factory, pki, prefix, **domain)
    with mail.serving():
        body = (await scan(mail.url, mail.settings(scan_settings))).to_dict()
    return mail.host, body


async def test_an_mx_host_with_starttls_and_a_valid_certificate(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-tls")
    found = _findings(body, "dns.mx_")
    assert found["dns.mx_starttls"]["status"] == "good"
    assert found["dns.mx_starttls"]["note"] == f"STARTTLS works at mx.{host} (TLSv1.3)"
    assert "dns.mx_no_starttls" not in found
    shown = body["dns"]["mail_servers"][f"mx.{host}"]
    assert shown["starttls"] is True and shown["protocol"] == "TLSv1.3"
    assert shown["certificate"] == f"valid for mx.{host}" and shown["greeting"].startswith(f"220 mx.{host} ")
    assert shown["days_to_expiry"] > 14 and "dns.mx_cert_expires_soon" not in found


async def test_an_mx_host_without_starttls_takes_mail_in_cleartext(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-plain", certificate=None)
    found = _findings(body, "dns.mx_")
    assert set(found) == {"dns.mx_present", "dns.mx_no_starttls"}
    assert (found["dns.mx_no_starttls"]["status"], found["dns.mx_no_starttls"]["deduction"]) == ("bad", 3)
    assert found["dns.mx_no_starttls"]["note"] == (
        f"mx.{host} does not offer STARTTLS: mail to it travels in cleartext"
    )
    assert "Postfix: smtpd_tls_security_level = may" in found["dns.mx_no_starttls"]["fix"]
    # for every web server, the snippet says the fix is made on the mail servers, not in its configuration
    assert found["dns.mx_no_starttls"]["fix_snippets"]["nginx"].startswith(
        "Done on the domain's mail servers (its MX hosts, or at the mail provider that runs them), not in the nginx"
    )


async def test_an_mx_host_nothing_answers_at_is_not_judged(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host = site_factory.unique_host("mx-down")
    records = ((host, "MX", f"10 mx.{host}"), (f"mx.{host}", "A", mail_address()), (host, "TXT", '"v=spf1 mx -all"'))
    mail_site(site_factory, host, records)
    port = free_port()
    body = (await scan(f"https://{host}/", dataclasses.replace(scan_settings, smtp_port=port))).to_dict()
    assert _findings(body, "dns.mx_").keys() == {"dns.mx_present"}
    [error] = [f for f in body["dns"]["findings"] if f["subjects"] == [f"STARTTLS of mx.{host}"]]
    assert error["check"] == "check.error" and error["note"] == f"connection refused on port {port}"
    assert body["dns"]["mail_servers"] == {f"mx.{host}": {"error": f"connection refused on port {port}"}}


async def test_an_enforced_mta_sts_policy_fails_at_an_mx_host_whose_certificate_names_another(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-sts", certificate="other", mta_sts="enforce")
    found = _findings(body, "dns.mta_sts")
    assert set(found) == {"dns.mta_sts_mx_failing"}
    failing = found["dns.mta_sts_mx_failing"]
    assert (failing["status"], failing["severity"], failing["deduction"]) == ("bad", "important", 4)
    assert found["dns.mta_sts_mx_failing"]["note"] == (
        f"the policy is in enforce mode, and at mx.{host}, the certificate names other.{host}, not mx.{host}: senders "
        "that honor MTA-STS do not deliver mail there (RFC 8461 4.2)"
    )
    # STARTTLS itself works: opportunistic senders deliver encrypted, and the note says what others refuse
    starttls = _findings(body, "dns.mx_")["dns.mx_starttls"]
    assert starttls["status"] == "good"
    assert (
        starttls["note"] == f"STARTTLS works at mx.{host} (TLSv1.3; the certificate names other.{host}, not mx.{host})"
    )
    assert (
        body["dns"]["mail_servers"][f"mx.{host}"]["certificate"] == f"the certificate names other.{host}, not mx.{host}"
    )


async def test_a_testing_mta_sts_policy_is_told_what_enforce_would_break(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(
        site_factory, scan_settings, pki, "mx-stst", certificate="other", mta_sts="testing"
    )
    found = _findings(body, "dns.mta_sts")
    assert set(found) == {"dns.mta_sts_testing"}
    assert found["dns.mta_sts_testing"]["note"].startswith(
        f"mode: testing only reports failures; under enforce, at mx.{host}, the certificate names other.{host}"
    )


async def test_an_enforced_mta_sts_policy_the_mx_host_passes_is_good(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    _, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-stsok", mta_sts="enforce")
    assert set(_findings(body, "dns.mta_sts")) == {"dns.mta_sts_enforce"}


async def test_tlsa_records_that_name_the_key_the_mx_host_presents_are_dane(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(
        site_factory, scan_settings, pki, "mx-dane", tlsa=lambda served: [f"3 1 1 {_spki_sha256(served)}"]
    )
    [dane] = _findings(body, "dns.dane").values()
    assert dane["check"] == "dns.dane_valid"
    assert dane["note"] == (
        f"TLSA records for mx.{host}, and the MX records, DNSSEC-valid; the certificate presented matches them "
        f"(mx.{host}: 3 1 1); mx.{host} has one usable TLSA record: publish the next key's (or a 2 1 1 record for the "
        "issuing CA) before the key changes, or mail stops when it does (RFC 7671 8.1)"
    )
    assert body["dns"]["dane"]["not_checked"] == []
    # with the next key's record published beside it, the rollover is ready: nothing to advise
    _, ready = await _scan_with_mx(
        site_factory,
        scan_settings,
        pki,
        "mx-dane2",
        tlsa=lambda served: [f"3 1 1 {_spki_sha256(served)}", "3 1 1 " + "e5" * 32],
    )
    assert _findings(ready, "dns.dane")["dns.dane_valid"]["note"].endswith(": 3 1 1)")


async def test_a_dane_ta_record_for_the_intermediate_authenticates_a_leaf_that_names_the_host(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    def intermediate(served: IssuedCert | None) -> list[str]:
        assert served is not None
        return [f"2 0 1 {hashlib.sha256(served.chain[1].public_bytes(Encoding.DER)).hexdigest()}"]

    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-danta", tlsa=intermediate)
    assert (
        f"the certificate presented matches them (mx.{host}: 2 0 1)"
        in _findings(body, "dns.dane")["dns.dane_valid"]["note"]
    )
    # DANE-TA also needs the leaf to name the host (RFC 7672 3.1.2); DANE-EE does not (3.1.1)
    _, other = await _scan_with_mx(
        site_factory, scan_settings, pki, "mx-danta2", certificate="other", tlsa=intermediate
    )
    assert set(_findings(other, "dns.dane")) == {"dns.dane_mismatch"}


async def test_tlsa_records_for_a_key_the_mx_host_no_longer_presents_hold_its_mail(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    old = "3 1 1 " + "a1" * 32
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-danex", tlsa=lambda served: [old])
    found = _findings(body, "dns.dane")
    assert set(found) == {"dns.dane_mismatch"}
    mismatch = found["dns.dane_mismatch"]
    assert (mismatch["status"], mismatch["deduction"]) == ("bad", 5)
    key = _spki_sha256(pki.issue("valid", (f"mx.{host}",)))
    assert mismatch["note"] == (
        f"the certificate mx.{host} presents (its key's SHA-256 {key[:16]}...) matches none of its TLSA records"
    )
    assert f"\n`_25._tcp.mx.{host}. IN TLSA 3 1 1 {key}`\n" in mismatch["fix"]


async def test_tlsa_records_for_an_mx_host_without_starttls_hold_its_mail(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(
        site_factory, scan_settings, pki, "mx-danen", certificate=None, tlsa=lambda served: ["3 1 1 " + "b2" * 32]
    )
    mismatch = _findings(body, "dns.dane")["dns.dane_mismatch"]
    assert mismatch["note"] == f"mx.{host} does not offer STARTTLS, and its TLSA records require TLS"
    assert mismatch["fix"].startswith("Make STARTTLS work at every MX host that has TLSA records")


async def test_the_pdf_says_what_each_mx_host_showed_in_words(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(
        site_factory, scan_settings, pki, "mx-pdf", tlsa=lambda served: ["3 1 1 " + "c3" * 32]
    )
    text = " ".join(" ".join(pdf_pages(render_scan_pdf(body))).split())
    assert "Mail servers asked for STARTTLS" in text
    days = body["dns"]["mail_servers"][f"mx.{host}"]["days_to_expiry"]
    assert f"mx.{host}: STARTTLS with TLSv1.3; valid for mx.{host} ({days} days left)" in text
    assert "Mail servers fail their own DANE records" in text
    key = _spki_sha256(pki.issue("valid", (f"mx.{host}",)))
    assert f"IN TLSA 3 1 1 {key}" in text


async def test_an_mx_host_without_an_address_is_said_once(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host = site_factory.unique_host("mx-noaddr")
    mail_site(site_factory, host, ((host, "MX", f"10 mx.{host}"), (host, "TXT", '"v=spf1 -all"')))
    body = (await scan(f"https://{host}/", dataclasses.replace(scan_settings, smtp_port=free_port()))).to_dict()
    assert [f["check"] for f in body["dns"]["findings"] if f"mx.{host}" in str(f.get("subjects"))] == [
        "dns.mx_unresolvable"
    ]
    assert (
        body["dns"]["mail_servers"][f"mx.{host}"]["error"] == f"DNS lookup failed: mx.{host} does not exist (NXDOMAIN)"
    )


async def test_the_mx_hosts_are_asked_as_soon_as_the_mx_answer_is_in(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    """Not once every DNS lookup is done: the MX hosts' addresses, TLSA records and the SPF tree come after."""
    mail = mail_domain(site_factory, pki, "mx-early")
    with mail.serving():
        report = await scan(mail.url, mail.settings(scan_settings))
    parts = {timing["part"]: timing for timing in report.timings}
    assert parts["smtp"]["start_ms"] < parts["dns"]["end_ms"]


async def test_an_mx_host_that_speaks_nothing_newer_than_tls_1_1_is_outdated(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-tls11", tls_up_to=ssl.TLSVersion.TLSv1_1)
    found = _findings(body, "dns.mx_")
    assert found["dns.mx_starttls"]["note"] == f"STARTTLS works at mx.{host} (TLSv1.1)"
    outdated = found["dns.mx_tls_outdated"]
    assert (outdated["status"], outdated["deduction"]) == ("warn", 1)
    assert outdated["note"] == f"mx.{host} (TLSv1.1) negotiates nothing newer"
    # a current host is not
    _, current = await _scan_with_mx(site_factory, scan_settings, pki, "mx-tls13")
    assert "dns.mx_tls_outdated" not in _findings(current, "dns.mx_")


async def test_a_certificate_renewed_with_a_new_key_before_the_tlsa_records_makes_a_monitor_alert(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    """The way DANE breaks in practice: the mail server's certificate is renewed with a new key and the TLSA records
    still name the old one. Mail stops, so the change is an important finding, which monitors alert on."""
    mail = mail_domain(site_factory, pki, "mx-rotate", tlsa=lambda served: [f"3 1 1 {_spki_sha256(served)}"])
    with mail.serving():
        before = (await scan(mail.url, mail.settings(scan_settings))).to_dict()
    renewed = dataclasses.replace(mail, served=pki.issue("rsa2048", (mail.exchange,)))
    with renewed.serving():
        after = (await scan(mail.url, renewed.settings(scan_settings))).to_dict()
    assert set(_findings(before, "dns.dane")) == {"dns.dane_valid"}
    mismatch = _findings(after, "dns.dane")["dns.dane_mismatch"]
    assert mismatch["severity"] == "important"
    assert f"IN TLSA 3 1 1 {_spki_sha256(renewed.served)}`" in mismatch["fix"]

    diff = diff_reports(before, after)
    reasons, _ = alert_reasons(before, after, diff, None)
    assert any(reason.startswith("New critical or important finding") for reason in reasons), reasons


async def test_a_domain_without_mta_sts_is_told_what_its_mx_hosts_would_fail_under_enforce(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    """dns.mta_sts_missing's fix publishes a policy in enforce mode, which would stop mail to a host whose certificate
    names another: the note says to mend the host first."""
    host, body = await _scan_with_mx(site_factory, scan_settings, pki, "mx-nosts", certificate="other")
    missing = _findings(body, "dns.mta_sts")["dns.mta_sts_missing"]
    assert missing["note"] == (
        f"no MTA-STS record at _mta-sts.{host}; before a policy in enforce mode, mend the MX hosts: at mx.{host}, the "
        f"certificate names other.{host}, not mx.{host}"
    )
    _, fine = await _scan_with_mx(site_factory, scan_settings, pki, "mx-nosts2")
    assert _findings(fine, "dns.mta_sts")["dns.mta_sts_missing"]["note"].startswith("no MTA-STS record at ")
    assert "mend" not in _findings(fine, "dns.mta_sts")["dns.mta_sts_missing"]["note"]


async def test_a_mail_server_certificate_that_expires_within_two_weeks_makes_a_monitor_alert(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    """The usual way an MX host's certificate expires: renewed on disk, and the mail server, which reads it when it
    starts, still presents the old one. Senders that authenticate the host (an enforced MTA-STS policy) stop
    delivering the day it expires, so a monitor must say so while it can be mended."""
    mail = mail_domain(site_factory, pki, "mx-expiring", mta_sts="enforce")
    with mail.serving():
        before = (await scan(mail.url, mail.settings(scan_settings))).to_dict()
    stale = dataclasses.replace(mail, served=pki.issue("expiring_soon", (mail.exchange,)))
    with stale.serving():
        after = (await scan(mail.url, stale.settings(scan_settings))).to_dict()
    assert "dns.mx_cert_expires_soon" not in _findings(before, "dns.mx_")
    expiring = _findings(after, "dns.mx_")["dns.mx_cert_expires_soon"]
    assert (expiring["status"], expiring["severity"], expiring["deduction"]) == ("weak", "important", 3)
    # ten days after the tests' clock starts, which has run on a little since
    expiry = stale.served.certificate.not_valid_after_utc  # type: ignore[union-attr]
    days = after["dns"]["mail_servers"][mail.exchange]["days_to_expiry"]
    assert (
        days == 9 and expiring["note"] == f"the certificate of {mail.exchange} expires in 9 days (on {expiry:%Y-%m-%d})"
    )
    assert "--deploy-hook" in expiring["fix"]
    # the policy still passes: the certificate is valid today
    assert "dns.mta_sts_enforce" in _findings(after, "dns.mta_sts")

    reasons, _ = alert_reasons(before, after, diff_reports(before, after), None)
    assert reasons == ["New critical or important finding: Mail server certificate expiring or expired."], reasons

    # left to expire, it stays (not "fixed" the day it gets worse), and the enforced policy now fails too
    expired = dataclasses.replace(mail, served=pki.issue("expired", (mail.exchange,)))
    with expired.serving():
        later = (await scan(mail.url, expired.settings(scan_settings))).to_dict()
    ended = expired.served.certificate.not_valid_after_utc  # type: ignore[union-attr]
    found = _findings(later, "dns.m")
    assert found["dns.mx_cert_expires_soon"]["note"] == (
        f"the certificate of {mail.exchange} expired 30 days ago (on {ended:%Y-%m-%d})"
    )
    assert "dns.mta_sts_mx_failing" in found


async def test_an_mta_sts_policy_host_whose_certificate_expires_within_two_weeks_is_said_before_the_policy_lapses(
    site_factory: SiteFactory, scan_settings: Settings, pki: Pki
) -> None:
    """The policy host is often a site of its own that automated renewal was never set up for: once its certificate
    expires, senders read no policy, and MTA-STS lapses when their copy's max_age runs out."""
    host, body = await _scan_with_mx(
        site_factory, scan_settings, pki, "sts-expiring", mta_sts="enforce", policy_certificate="expiring_soon"
    )
    found = _findings(body, "dns.mta_sts")
    assert "dns.mta_sts_enforce" in found  # the policy still works today
    expiring = found["dns.mta_sts_cert_expires_soon"]
    assert (expiring["status"], expiring["severity"], expiring["deduction"]) == ("weak", "important", 2)
    assert expiring["note"].startswith(f"the certificate of mta-sts.{host} expires in 9 days (on ")
    assert f"Renew the certificate of mta-sts.{host}" in expiring["fix"]
    # a policy host whose certificate has months left is not
    _, current = await _scan_with_mx(site_factory, scan_settings, pki, "sts-current", mta_sts="enforce")
    assert "dns.mta_sts_cert_expires_soon" not in _findings(current, "dns.mta_sts")
