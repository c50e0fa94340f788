"""The `tls` section: can the site be reached over HTTPS with a certificate browsers accept?

Judged from the recorded handshakes (fetch/tls.py): trust against the system store plus
WEBSEC_CA_BUNDLE, the validity period, the host name (RFC 6125, hostname.py) and the
days left before expiry. A bad certificate is a finding that caps the grade at F, never
an error: the rest of the site is still graded.
"""

from __future__ import annotations

from typing import Any

from ..findings import CheckResult, Finding
from ..snapshot import CertificateInfo, SiteSnapshot, TlsHandshake

# Let's Encrypt renews at 30 days left; under 14 days something is failing (their expiry mails start at 20).
EXPIRY_WARN_DAYS = 30
EXPIRY_URGENT_DAYS = 14


def _certificate_json(cert: CertificateInfo, days_left: int) -> dict[str, Any]:
    return {
        "subject": cert.subject,
        "issuer": cert.issuer,
        "not_before": cert.not_before.isoformat(),
        "not_after": cert.not_after.isoformat(),
        "days_to_expiry": days_left,
        "san": list(cert.san_dns) + list(cert.san_ip),
        "key_type": cert.key_type,
        "key_size": cert.key_size,
        "signature_hash": cert.signature_hash,
        "serial": cert.serial,
        "self_signed": cert.self_signed,
        "sha256_fingerprint": cert.sha256_fingerprint,
    }


def _handshake_details(tls: TlsHandshake) -> dict[str, Any]:
    return {
        "host": tls.host,
        "port": tls.port,
        "address": tls.address or None,
        "protocol": tls.protocol,
        "cipher": tls.cipher,
        "cipher_bits": tls.cipher_bits,
        "trusted": tls.trusted,
        "verify_error": tls.verify_error,
        "hostname_matches": tls.hostname_matches,
    }


def _certificate_findings(snapshot: SiteSnapshot, tls: TlsHandshake, leaf: CertificateInfo) -> list[Finding]:
    now = snapshot.fetched_at
    findings: list[Finding] = []
    dated_problem = False
    if leaf.not_after < now:
        dated_problem = True
        findings.append(Finding("tls.cert_expired", note=f"expired on {leaf.not_after:%Y-%m-%d}"))
    elif leaf.not_before > now:
        dated_problem = True
        findings.append(Finding("tls.cert_not_yet_valid", note=f"valid only from {leaf.not_before:%Y-%m-%d}"))
    if not tls.trusted:
        reason = tls.verify_error or "the chain does not lead to a trusted root"
        # OpenSSL reports an expired chain as a verification error too; that is already counted.
        if not (dated_problem and ("expired" in reason or "not yet valid" in reason)):
            if leaf.self_signed:
                reason = f"self-signed certificate ({reason})"
            findings.append(Finding("tls.cert_untrusted", note=reason))
    if not tls.hostname_matches:
        names = ", ".join(leaf.san_dns + leaf.san_ip) or "no subjectAltName"
        findings.append(Finding("tls.cert_hostname_mismatch", note=f"{tls.host} is not among: {names}"))
    if not dated_problem:
        days_left = (leaf.not_after - now).days
        if days_left < EXPIRY_URGENT_DAYS:
            findings.append(Finding("tls.cert_expires_very_soon", note=f"expires in {days_left} days"))
        elif days_left < EXPIRY_WARN_DAYS:
            findings.append(Finding("tls.cert_expires_soon", note=f"expires in {days_left} days"))
    if not findings:
        findings.append(Finding("tls.cert_valid", note=f"valid for {(leaf.not_after - now).days} more days"))
    return findings


def check_tls(snapshot: SiteSnapshot) -> CheckResult:
    tls = snapshot.tls
    if tls is None:
        return CheckResult("tls", (Finding("check.error", note="the TLS handshake was not attempted"),))
    details: dict[str, Any] = _handshake_details(tls)
    if tls.failure is not None:
        outcome = "tls.no_https" if tls.failure.kind in ("unreachable", "refused") else "tls.handshake_failed"
        details["error"] = tls.failure.message
        finding = Finding(outcome, subject=f"{tls.host}:{tls.port}", note=tls.failure.message)
        return CheckResult("tls", (finding,), details)
    leaf = tls.leaf
    if leaf is None:
        return CheckResult("tls", (Finding("tls.handshake_failed", note="the server sent no certificate"),), details)
    details["certificate"] = _certificate_json(leaf, (leaf.not_after - snapshot.fetched_at).days)
    return CheckResult("tls", tuple(_certificate_findings(snapshot, tls, leaf)), details)
