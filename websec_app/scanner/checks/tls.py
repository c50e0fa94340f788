"""The `tls` section: can the site be reached over HTTPS with a certificate browsers accept,
and how strong is the transport, in the manner of SSL Labs' grade caps?

Judged from the recorded handshakes (fetch/tls.py):
- the certificate: trust against the system store plus WEBSEC_CA_BUNDLE (an untrusted CA and a
  missing intermediate are told apart, one finding each), the validity period, the host name
  (RFC 6125, hostname.py), days to expiry, key size, signature hash, whether the server sends
  its intermediates, the stapled OCSP response and Certificate Transparency SCTs;
- the protocol versions the server accepts (one probe each) and the weak cipher families it
  accepts at all (data/weak_ciphers.json), with what could not be tested said, never guessed;
- forward secrecy and AEAD for the cipher a browser-like client negotiates;
- the size of the server's DHE group (Logjam), when it accepts a DHE suite, whichever suite it prefers.
A bad certificate is a finding that caps the grade at F, never an error: the rest of the site
is still graded. Parts that were not fetched (hand-made snapshots) produce no findings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...wording import counted, time_left
from ..data import cipher_family, distrusted_roots
from ..findings import CheckResult, Finding
from ..snapshot import (
    CT_LOGS_REQUIRED,
    MAX_PUBLIC_LIFETIME,
    CertificateInfo,
    DhGroup,
    HeartbeatCheck,
    SignedTimestamp,
    SiteSnapshot,
    TlsHandshake,
    TlsProbe,
    embedded_logs_required,
)
from ._ocsp import judge_staple
from ._revocation import judge_revocation
from ._shown import shown, shown_lists
from .tls_dane import web_dane_findings

# Let's Encrypt renews at 30 days left; under 14 days something is failing (their expiry mails start at 20).
EXPIRY_WARN_DAYS = 30
EXPIRY_URGENT_DAYS = 14

# CA/Browser Forum Baseline Requirements 6.1.5 (and NIST SP 800-57 part 1, 112-bit security):
# RSA keys of at least 2048 bits, ECDSA on P-256 or larger. DSA is not allowed at all.
MIN_KEY_SIZE = {"RSA": 2048, "EC": 256}
# Under these, browsers refuse the certificate outright (Chrome's and Firefox's verifiers reject RSA and DSA keys
# under 1024 bits and curves under 160): the connection fails, so the grade is capped at F, not B.
BROWSER_MIN_KEY_SIZE = {"RSA": 1024, "DSA": 1024, "EC": 160}
# Browsers reject certificates signed with these (Chrome and Firefox since 2017 for SHA-1).
WEAK_SIGNATURE_HASHES = ("md5", "sha1", "md2", "md4")

# Finite-field DHE groups (Logjam, CVE-2015-4000, weakdh.org). Under 1024 bits, browsers refuse the handshake
# (Chrome; Firefox's SSL_ERROR_WEAK_SERVER_EPHEMERAL_DH_KEY) and SSL Labs grades F. Under 2048 bits the group is
# below 112-bit security (NIST SP 800-57 part 1 table 2: FFC L = 2048, the same line as MIN_KEY_SIZE's RSA), and
# 1024-bit groups, common primes above all, are within reach of precomputation (SSL Labs caps them at B).
BROWSER_MIN_DH_BITS = 1024
MIN_DH_BITS = 2048

#: A certificate whose chain verifies that browsers refuse all the same: its CA revoked it (read from the staple or
#: asked), or it comes without the SCTs of public logging they require.
REFUSED_BEYOND_THE_CHAIN = ("tls.ocsp_revoked", "tls.cert_revoked", "tls.cert_not_logged")

LEGACY_PROTOCOLS = ("TLSv1.1", "TLSv1")  # RFC 8996 (2021) deprecates both
_SHOWN = {"TLSv1.1": "TLS 1.1", "TLSv1": "TLS 1.0"}
MODERN_PROTOCOLS = ("TLSv1.3", "TLSv1.2")

# One outcome per weak cipher family of data/weak_ciphers.json.
CIPHER_FAMILY_OUTCOMES = {
    "null": "tls.cipher_null",
    "anonymous": "tls.cipher_anonymous",
    "export": "tls.cipher_export",
    "rc4": "tls.cipher_rc4",
    "des": "tls.cipher_des",
    "3des": "tls.cipher_3des",
    "static_rsa": "tls.cipher_static_rsa",
    "cbc": "tls.cipher_cbc",
}


def forward_secret(protocol: str | None, cipher: str | None) -> bool | None:
    """RFC 8446: every TLS 1.3 key exchange is ephemeral; before 1.3 only (EC)DHE suites are."""
    if not cipher:
        return None
    if protocol == "TLSv1.3" or cipher.startswith("TLS_"):
        return True
    return cipher.startswith(("ECDHE-", "DHE-", "EDH-"))


def aead(protocol: str | None, cipher: str | None) -> bool | None:
    """RFC 9325 4.2: AEAD suites (GCM, CCM, ChaCha20-Poly1305); TLS 1.3 has nothing else."""
    if not cipher:
        return None
    if protocol == "TLSv1.3" or cipher.startswith("TLS_"):
        return True
    return any(mode in cipher for mode in ("GCM", "CCM", "CHACHA20", "POLY1305"))


def _certificate_json(cert: CertificateInfo, days_left: int) -> dict[str, Any]:
    """The leaf as the report shows it: its names `shown`, its subjectAltNames the first that store in
    findings.LIST_BUDGET characters (`not_listed` counts the rest). A certificate list of 100 KiB (what OpenSSL
    accepts) holds thousands of names, or a distinguished name of 25,000 emoji, each 12 characters of JSON."""
    return {
        "subject": shown(cert.subject),
        "issuer": shown(cert.issuer),
        "not_before": cert.not_before.isoformat(),
        "not_after": cert.not_after.isoformat(),
        "days_to_expiry": days_left,
        **shown_lists({"san": [*cert.san_dns, *cert.san_ip]}),
        "key_type": cert.key_type,
        "key_size": cert.key_size,
        "signature_hash": cert.signature_hash,
        "serial": cert.serial,
        "self_signed": cert.self_signed,
        "sha256_fingerprint": cert.sha256_fingerprint,
        "key_usage": [_KEY_USAGE_NAMES.get(bit, bit) for bit in cert.key_usage] if cert.key_usage is not None else None,
        "extended_key_usage": list(cert.extended_key_usage) if cert.extended_key_usage is not None else None,
    }


#: The certificates of a chain the report shows and grades (see where it is used).
MAX_CHAIN_SHOWN = 16


def _chain_json(cert: CertificateInfo) -> dict[str, Any]:
    return {
        "subject": shown(cert.subject),
        "issuer": shown(cert.issuer),
        "not_after": cert.not_after.isoformat(),
        "key_type": cert.key_type,
        "key_size": cert.key_size,
        "signature_hash": cert.signature_hash,
        "is_ca": cert.is_ca,
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
        "verify_error": None if tls.verify_error is None else shown(tls.verify_error),
        "untrusted_ca": None if tls.untrusted_ca is None else shown(tls.untrusted_ca),
        "hostname_matches": tls.hostname_matches,
        # mutual TLS: a visitor without a certificate is refused, or (optional) prompted by the browser to pick one
        "client_certificate_requested": tls.client_certificate_requested,
    }


def _certificate_findings(
    snapshot: SiteSnapshot, tls: TlsHandshake, leaf: CertificateInfo, refused: list[Finding] | None = None
) -> list[Finding]:
    """The certificate's own problems, or `tls.cert_valid` when it has none and no finding of `refused` (what the CA
    or Certificate Transparency says of it beside its chain, REFUSED_BEYOND_THE_CHAIN) has browsers refuse it."""
    now = snapshot.fetched_at
    findings: list[Finding] = []
    dated = leaf.dated_problem(now)
    dated_problem = dated is not None
    if dated is not None:
        kind, words = dated
        findings.append(Finding(f"tls.cert_{kind}", note=words))
    if not tls.trusted:
        reason = tls.verify_error or "the chain does not lead to a trusted root"
        # OpenSSL reports an expired chain as a verification error too; that is already counted.
        if not (dated_problem and ("expired" in reason or "not yet valid" in reason)):
            if leaf.self_signed:
                findings.append(Finding("tls.cert_untrusted", note=f"self-signed certificate ({reason})"))
            elif tls.chain_complete is False:
                pass  # a trusted path exists once the intermediate is added: tls.chain_incomplete says so, once
            elif tls.untrusted_ca:
                note = f"issued by {tls.untrusted_ca}, which is not a certificate authority browsers trust"
                findings.append(Finding("tls.cert_untrusted_ca", subject=tls.untrusted_ca, note=note))
            else:
                findings.append(Finding("tls.cert_untrusted", note=_purpose_note(leaf, reason) or reason))
    if not tls.hostname_matches:
        names = ", ".join(leaf.san_dns + leaf.san_ip) or "no subjectAltName"
        findings.append(Finding("tls.cert_hostname_mismatch", note=f"{tls.host} is not among: {names}"))
    if not dated_problem:
        days_left = (leaf.not_after - now).days
        if days_left < EXPIRY_URGENT_DAYS:
            findings.append(Finding("tls.cert_expires_very_soon", note=f"expires in {time_left(leaf.not_after - now)}"))
        elif days_left < EXPIRY_WARN_DAYS:
            findings.append(Finding("tls.cert_expires_soon", note=f"expires in {time_left(leaf.not_after - now)}"))
    findings += _lifetime_findings(tls, leaf)
    findings += _key_usage_findings(tls, leaf)
    findings += _distrust_findings(snapshot, tls, leaf)
    if not findings and not any(f.outcome in REFUSED_BEYOND_THE_CHAIN for f in refused or ()):
        findings.append(Finding("tls.cert_valid", note=f"valid for {(leaf.not_after - now).days} more days"))
    return findings


#: OpenSSL's words for X509_V_ERR_INVALID_PURPOSE, a certificate of the chain not for TLS servers (fetch/_tls_client).
_INVALID_PURPOSE = "unsupported certificate purpose"


def _purpose_note(leaf: CertificateInfo, reason: str) -> str | None:
    """OpenSSL's "unsupported certificate purpose" in a site owner's words: a leaf whose Extended Key Usage leaves out
    serverAuth is not for web servers (a client or e-mail certificate installed on the server; browsers refuse it:
    Chrome's ERR_CERT_INVALID), else a CA certificate of the chain is restricted to other purposes."""
    if not reason.startswith(_INVALID_PURPOSE):
        return None
    purposes = leaf.extended_key_usage
    if purposes is not None and "serverAuth" not in purposes:
        listed = ", ".join(purposes) or "no purpose"
        return (
            f"the certificate is not for web servers: its Extended Key Usage lists {listed}, and browsers require "
            "serverAuth (TLS Web Server Authentication)"
        )
    ca = reason.removeprefix(_INVALID_PURPOSE).strip(" ()")
    named = f" ({ca})" if ca else ""
    return f"a CA certificate of the chain{named} may not issue certificates for web servers (its Extended Key Usage)"


#: RFC 5280 4.2.1.3's names for the Key Usage bits (CertificateInfo.key_usage holds cryptography's).
_KEY_USAGE_NAMES = {
    "digital_signature": "digitalSignature",
    "content_commitment": "nonRepudiation",
    "key_encipherment": "keyEncipherment",
    "data_encipherment": "dataEncipherment",
    "key_agreement": "keyAgreement",
    "key_cert_sign": "keyCertSign",
    "crl_sign": "cRLSign",
    "encipher_only": "encipherOnly",
    "decipher_only": "decipherOnly",
}


def _key_usage_findings(tls: TlsHandshake, leaf: CertificateInfo) -> list[Finding]:
    """A certificate whose Key Usage extension forbids the key exchange negotiated: a signed one (TLS 1.3, ECDHE,
    DHE) needs digitalSignature (RFC 8446 4.4.2.2, RFC 4492 5.3, RFC 5246 7.4.2), RSA key exchange
    keyEncipherment (RFC 5246 7.4.2). Chromium refuses the connection otherwise (ERR_SSL_KEY_USAGE_INCOMPATIBLE),
    whatever the root; OpenSSL's own check accepts keyEncipherment or keyAgreement alone, so the grading
    handshake completing shows nothing. Without the extension any use is allowed."""
    usage = leaf.key_usage
    signed = forward_secret(tls.protocol, tls.cipher)
    if usage is None or signed is None:
        return []
    if signed:
        needed, use = "digital_signature", "the server signs the key exchange with the certificate's key"
    elif leaf.key_type == "RSA":
        needed, use = "key_encipherment", "the client encrypts the key exchange to the certificate's RSA key"
    else:
        return []
    if needed in usage:
        return []
    listed = ", ".join(_KEY_USAGE_NAMES.get(bit, bit) for bit in usage) or "nothing"
    note = (
        f"the certificate's Key Usage allows {listed}, but with {tls.cipher} over {tls.protocol} {use}, which "
        f"needs {_KEY_USAGE_NAMES[needed]}"
    )
    return [Finding("tls.cert_key_usage", note=note)]


def _key_problem(cert: CertificateInfo) -> str | None:
    """The outcome a certificate's key earns: too small for browsers to accept at all, or under the CA/B
    minimum; None for a key that is fine."""
    floor = BROWSER_MIN_KEY_SIZE.get(cert.key_type)
    if floor is not None and 0 < cert.key_size < floor:
        return "tls.key_too_small_for_browsers"
    minimum = MIN_KEY_SIZE.get(cert.key_type)
    if cert.key_type == "DSA" or (minimum is not None and cert.key_size < minimum):
        return "tls.weak_key"
    return None


def _judged_path(tls: TlsHandshake, listed_chain: tuple[CertificateInfo, ...]) -> tuple[CertificateInfo, ...]:
    """The certificates whose keys and signatures clients check. Trusted: the path the verifier built, without its
    anchor (Chromium's CertVerifyProc checks SHA-1 and weak keys on the verified chain only, so a SHA-1
    cross-signed copy of a root the server also sends, off that path, harms no one). Otherwise the chain as sent
    (`listed_chain`, as the report lists it): there is no path to go by."""
    if tls.trusted and tls.verified_path:
        return tls.verified_path[:MAX_CHAIN_SHOWN]
    return listed_chain


def _key_findings(chain: tuple[CertificateInfo, ...]) -> list[Finding]:
    findings = []
    leaf = chain[0]
    # The keys and signatures that matter are the ones clients check: the leaf's and the intermediates' (a
    # root's self-signature is never verified, RFC 5280 6.1, so SHA-1 on a sent root is harmless, and a root's
    # key is the trust store's business, not the server's).
    for cert in chain:
        if cert.self_signed and cert is not leaf:
            continue
        outcome = _key_problem(cert)
        if outcome is not None:
            what = "the certificate's" if cert is leaf else f"the intermediate {cert.subject}'s"
            if outcome == "tls.key_too_small_for_browsers":
                wanted = f"browsers refuse {cert.key_type} keys under {BROWSER_MIN_KEY_SIZE[cert.key_type]} bits"
            else:
                minimum = MIN_KEY_SIZE.get(cert.key_type)
                wanted = f"at least {minimum} bits needed" if minimum else "RSA 2048+ or ECDSA P-256+ needed"
            note = f"{what} key is {cert.key_type} {cert.key_size}-bit ({wanted})"
            findings.append(Finding(outcome, subject=cert.subject, note=note))
        if cert.self_signed:
            continue
        if (cert.signature_hash or "").lower() in WEAK_SIGNATURE_HASHES:
            what = "the certificate" if cert is leaf else f"the intermediate {cert.subject}"
            findings.append(
                Finding("tls.weak_signature", subject=cert.subject, note=f"{what} is signed with {cert.signature_hash}")
            )
    return findings


def _lifetime_findings(tls: TlsHandshake, leaf: CertificateInfo) -> list[Finding]:
    """CA/B BR 6.3.2: issued since 2020-09-01, valid for at most 398 days. Chrome (ERR_CERT_VALIDITY_TOO_LONG)
    and Safari refuse a longer one from a public CA; a chain to a locally installed root is exempt, so there it
    is a warning. Whether the root is public (in certifi's or the system's default bundle, not only in the
    operator's WEBSEC_CA_BUNDLE) is known from the fetch (`public_root`); unknown counts as local.

    Whatever the issue date: Chromium's CertVerifyProc::HasTooLongValidity applies 398 days to every
    certificate, since no certificate issued under an earlier limit can still be within its dates (the last,
    825 days, ran out at the end of 2022): one from before 2020-09-01 still valid today is refused too."""
    lifetime = leaf.not_after - leaf.not_before
    if not tls.trusted or lifetime <= MAX_PUBLIC_LIFETIME:
        return []
    note = f"valid for {lifetime.days} days, from {leaf.not_before:%Y-%m-%d} to {leaf.not_after:%Y-%m-%d} (398 at most)"
    if tls.public_root:
        return [Finding("tls.cert_lifetime_too_long", note=note)]
    return [Finding("tls.cert_lifetime_long_local_root", note=note + "; its root is installed locally, not public")]


def _distrust_findings(snapshot: SiteSnapshot, tls: TlsHandshake, leaf: CertificateInfo) -> list[Finding]:
    """A trusted path to a root the stores still hold, whose newer certificates Chrome refuses (data/
    distrusted_roots.toml: Entrust and AffirmTrust, Chunghwa Telecom, NetLock), for a leaf issued after the date: its
    earliest SCT, as Chrome dates it, or its notBefore when it comes with none that counts (refused then anyway)."""
    root = distrusted_roots().get(tls.anchor_key or "") if tls.trusted else None
    if root is None:
        return []
    now = snapshot.fetched_at
    stamps = [s.timestamp for s in (*leaf.embedded_scts, *(tls.handshake_scts or ())) if s.timestamp <= now]
    issued = min(stamps) if stamps else leaf.not_before
    if issued <= root.after:
        return []
    when = f"its earliest SCT is dated {issued:%Y-%m-%d}" if stamps else f"it was issued on {issued:%Y-%m-%d}"
    note = (
        f"it chains to {root.name} ({root.owner}), whose certificates logged after {root.after:%Y-%m-%d} are no "
        f"longer trusted by {root.since} and later, and {when}"
    )
    return [Finding("tls.cert_distrusted_root", note=f"{note}; {root.also}" if root.also else note)]


def _chain_findings(tls: TlsHandshake) -> list[Finding]:
    """Reported only when the fetch found a trusted path once the missing intermediate is added
    (fetch/tls.py `_judge_chain`); an unknown issuer without that evidence is an untrusted CA."""
    if tls.chain_complete is False:
        missing = (
            f"the issuer {tls.missing_issuer} is not sent" if tls.missing_issuer else "an intermediate is not sent"
        )
        if not tls.trusted:
            missing += ", so clients that cannot download it themselves reject the certificate"
        return [Finding("tls.chain_incomplete", note=missing)]
    return []


def _ocsp_details(snapshot: SiteSnapshot, tls: TlsHandshake) -> tuple[dict[str, Any], list[Finding]]:
    """The stapled OCSP response judged; with OCSP Must-Staple (RFC 7633) a missing or unusable staple is a
    certificate Firefox refuses (MOZILLA_PKIX_ERROR_REQUIRED_TLS_FEATURE_MISSING)."""
    must_staple = bool(tls.chain) and tls.chain[0].must_staple
    if tls.ocsp_staple is None or not tls.chain:
        if must_staple:
            note = "the certificate requires OCSP stapling (Must-Staple), and the server staples no response"
            return {"stapled": False, "must_staple": True}, [Finding("tls.must_staple_missing", note=note)]
        return {"stapled": False}, []
    issuer = tls.chain[1].der if len(tls.chain) > 1 and tls.chain[1].subject == tls.chain[0].issuer else None
    verdict = judge_staple(tls.ocsp_staple, tls.chain[0].der, issuer, snapshot.fetched_at)
    details = {
        "stapled": True,
        "status": verdict.status,
        "note": verdict.note,
        "signature_verified": verdict.signature_verified,
        "next_update": verdict.next_update.isoformat() if verdict.next_update else None,
    }
    if must_staple:
        details["must_staple"] = True
    if verdict.status == "revoked":
        return details, [Finding("tls.ocsp_revoked", note=verdict.note)]
    if verdict.status == "invalid" and must_staple:
        note = f"the certificate requires OCSP stapling (Must-Staple), and the staple is unusable: {verdict.note}"
        return details, [Finding("tls.must_staple_missing", note=note)]
    if verdict.status == "invalid":
        return details, [Finding("tls.ocsp_staple_invalid", note=verdict.note)]
    return details, []


def _revocation_details(snapshot: SiteSnapshot, tls: TlsHandshake) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The CA's word on the leaf, asked when the server staples no current answer (fetch/revocation.py): a revoked
    certificate is refused by Firefox (CRLite) and, for a leaked key, Chrome (CRLSet). None when not asked."""
    answer, leaf = tls.revocation, tls.leaf
    if answer is None or leaf is None:
        return None, []
    verdict = judge_revocation(answer, leaf.der, snapshot.fetched_at)
    details = {"method": answer.method, "url": shown(answer.url), "status": verdict.status, "note": shown(verdict.note)}
    if verdict.status == "revoked":
        return details, [Finding("tls.cert_revoked", note=verdict.note)]
    return details, []


def _transparency_details(snapshot: SiteSnapshot, tls: TlsHandshake) -> tuple[dict[str, Any], list[Finding]]:
    """Certificate Transparency (RFC 6962): the SCTs that came with the leaf, embedded in it, in the TLS handshake,
    or in the stapled OCSP response. Chrome (since 2018, ERR_CERTIFICATE_TRANSPARENCY_REQUIRED) and Safari refuse a
    certificate from a public CA that comes with SCTs from too few logs (snapshot.py `CT_LOGS_REQUIRED`,
    `embedded_logs_required`; counted across sources once any comes outside the certificate, as Chromium counts
    them); one from a locally installed root is exempt. SCTs are counted by log, not verified: the logs' keys are
    Chrome's and Apple's lists, which a scan does not carry, so too few is certain and enough is as far as a scan
    can tell. An SCT dated after the scan does not count: RFC 6962 5.2 has clients reject it."""
    leaf = tls.leaf
    embedded = leaf.embedded_scts if leaf else ()
    in_handshake = tls.handshake_scts
    stapled: tuple[SignedTimestamp, ...] = ()
    if tls.ocsp_staple is not None and leaf is not None:
        stapled = judge_staple(tls.ocsp_staple, leaf.der, None, snapshot.fetched_at).scts
    now = snapshot.fetched_at

    def counted_logs(scts: tuple[SignedTimestamp, ...]) -> set[str]:
        return {sct.log_id for sct in scts if sct.timestamp <= now}

    embedded_logs, handshake_logs, stapled_logs = (
        counted_logs(embedded),
        counted_logs(in_handshake or ()),
        counted_logs(stapled),
    )
    future = sum(1 for sct in (*embedded, *(in_handshake or ()), *stapled) if sct.timestamp > now)
    details: dict[str, Any] = {
        "embedded_scts": len(embedded),
        "handshake_scts": None if in_handshake is None else len(in_handshake),
        "ocsp_scts": len(stapled),
        # a 100 KiB certificate: 1,000 SCTs
        **shown_lists({"logs": sorted(embedded_logs | handshake_logs | stapled_logs)}),
        "sct_present": bool(embedded) or bool(in_handshake) or bool(stapled),
    }
    if future:
        details["future_dated_scts"] = future
    if leaf is None or not tls.trusted or tls.public_root is not True:
        return details, []
    outside = handshake_logs | stapled_logs
    required = CT_LOGS_REQUIRED if outside else embedded_logs_required(leaf.not_after - leaf.not_before)
    logs = len(embedded_logs | outside)
    if logs >= required or in_handshake is None:  # unread: the handshake may have carried the rest
        return details, []
    return details, [Finding("tls.cert_not_logged", note=_not_logged_note(logs, required, details, leaf))]


def _not_logged_note(logs: int, required: int, details: dict[str, Any], leaf: CertificateInfo) -> str:
    if not details["sct_present"]:
        came = (
            "it comes with no SCT (signed certificate timestamp): none embedded in the certificate, none in the TLS "
            "handshake, none in a stapled OCSP response"
        )
    else:
        sources = {"embedded_scts": "embedded", "handshake_scts": "in the TLS handshake", "ocsp_scts": "stapled"}
        parts = ", ".join(f"{details[key]} {where}" for key, where in sources.items() if details[key])
        future = details.get("future_dated_scts")
        if future:
            parts += f"; {counted(future, 'SCT')} dated after the scan, which clients reject, not counted"
        what = f"SCTs from {counted(logs, 'log')} only" if logs else "no SCT that counts"
        came = f"it comes with {what} ({parts})"
    if required > CT_LOGS_REQUIRED:
        days = (leaf.not_after - leaf.not_before).days
        needed = f"embedded SCTs from {required} different logs for a certificate valid {days} days"
        return f"{came}; Chrome and Safari require {needed}"
    return f"{came}; Chrome and Safari require SCTs from at least {required} different logs"


def _probe_map(probes: tuple[TlsProbe, ...]) -> dict[str, str]:
    return {probe.name: probe.result for probe in probes}


def _protocol_findings(tls: TlsHandshake) -> list[Finding]:
    # The grading handshake offered everything up to TLS 1.3, so the version it got is the server's best. A
    # weak cipher family accepted at a version (offered TLS 1.0-1.2) shows that version accepted too.
    accepted = {p.name for p in tls.protocols if p.accepted} | ({tls.protocol} if tls.protocol else set())
    accepted |= {p.protocol for p in tls.cipher_probes if p.accepted and p.protocol}
    results = _probe_map(tls.protocols)
    findings = []
    if "SSLv3" in accepted:
        findings.append(Finding("tls.sslv3_accepted", subject="SSLv3"))
    legacy = [name for name in LEGACY_PROTOCOLS if name in accepted]
    if legacy:
        findings.append(Finding("tls.legacy_protocols", note="accepts " + ", ".join(_SHOWN[n] for n in legacy)))
    if tls.protocol not in MODERN_PROTOCOLS:
        best = _SHOWN.get(tls.protocol or "", tls.protocol)
        findings.append(Finding("tls.no_modern_protocol", note=f"the newest version the server accepts is {best}"))
    elif results.get("TLSv1.3") == "rejected" and "TLSv1.2" in accepted:
        findings.append(Finding("tls.no_tls13", note="TLS 1.2 is the newest version accepted"))
    return findings


def _cipher_findings(tls: TlsHandshake) -> list[Finding]:
    findings = []
    for probe in tls.cipher_probes:
        outcome = CIPHER_FAMILY_OUTCOMES.get(probe.name)
        if outcome is None or not probe.accepted:
            continue
        if probe.name == "static_rsa" and forward_secret(tls.protocol, tls.cipher) is False:
            continue  # browsers get RSA key exchange too: tls.no_forward_secrecy below says it, with its cap
        if probe.name == "cbc" and aead(tls.protocol, tls.cipher) is False:
            continue  # browsers get a CBC suite too: tls.no_aead below says it, with its cap
        family = cipher_family(probe.name)
        name = family.name if family else probe.name
        findings.append(
            Finding(outcome, subject=probe.cipher, note=f"{name} suite accepted: {probe.cipher} ({probe.protocol})")
        )
    if forward_secret(tls.protocol, tls.cipher) is False:
        findings.append(Finding("tls.no_forward_secrecy", note=f"{tls.cipher} over {tls.protocol}"))
    if aead(tls.protocol, tls.cipher) is False:
        findings.append(Finding("tls.no_aead", note=f"{tls.cipher} over {tls.protocol}"))
    return findings


def _dh_findings(tls: TlsHandshake) -> list[Finding]:
    """The DHE group, when the server accepts a DHE suite (fetch/tls.py asks for it whatever the server prefers:
    the clients that offer no ECDHE get it)."""
    group = tls.dh_group
    if group is None or group.prime_bits is None:
        return []
    used = f"a {group.prime_bits}-bit DH group with {group.cipher} over {group.protocol}"
    if group.prime_bits < BROWSER_MIN_DH_BITS:
        note = f"{used} (browsers refuse groups under {BROWSER_MIN_DH_BITS} bits)"
        return [Finding("tls.dh_too_small_for_browsers", note=note)]
    if group.prime_bits < MIN_DH_BITS:
        return [Finding("tls.weak_dh", note=f"{used} (at least {MIN_DH_BITS} bits needed)")]
    return []


def secure_renegotiation(tls: TlsHandshake) -> bool | None:
    """RFC 5746 as the server's handshakes up to TLS 1.2 showed it: False when any ServerHello lacked
    renegotiation_info (a server, or one behind the same name, of before 2010), None when none could tell (TLS 1.3
    only: it has no renegotiation)."""
    seen = [tls.secure_renegotiation, *(p.secure_renegotiation for p in (*tls.protocols, *tls.cipher_probes))]
    known = [value for value in seen if value is not None]
    return all(known) if known else None


def _heartbleed_findings(tls: TlsHandshake) -> list[Finding]:
    """Heartbleed (CVE-2014-0160): a server that answers a heartbeat request for more payload than it carried
    (fetch/_legacy_hello.py asks only for bytes the request itself holds) reads past it, and gives away up to 64 KiB
    of its memory per request to anyone who asks for more: private keys, session cookies, passwords."""
    check = tls.heartbeat
    if check is None or check.verdict != "vulnerable":
        return []
    return [Finding("tls.heartbleed", note=check.detail)]


def _heartbeat_details(check: HeartbeatCheck) -> dict[str, Any]:
    return {"offered": True, "heartbleed": check.verdict, "detail": shown(check.detail) if check.detail else None}


def _renegotiation_findings(tls: TlsHandshake) -> list[Finding]:
    if secure_renegotiation(tls) is not False:
        return []
    lacking = [p for p in (*tls.protocols, *tls.cipher_probes) if p.secure_renegotiation is False]
    protocol = tls.protocol if tls.secure_renegotiation is False else lacking[0].protocol
    named = {"TLSv1.2": "TLS 1.2", "SSLv3": "SSL 3.0", **_SHOWN}.get(protocol or "", protocol)
    return [Finding("tls.no_secure_renegotiation", note=f"its {named} handshake carries no renegotiation_info")]


def _dh_details(group: DhGroup) -> dict[str, Any]:
    return {"prime_bits": group.prime_bits, "cipher": group.cipher, "protocol": group.protocol}


def _not_testable(tls: TlsHandshake) -> list[str]:
    items = [f"{p.name}: {p.detail}" for p in (*tls.protocols, *tls.cipher_probes) if p.result == "not_testable"]
    items += [
        f"{p.name}: could not be checked ({p.detail})"
        for p in (*tls.protocols, *tls.cipher_probes)
        if p.result == "error"
    ]
    if tls.dh_group is not None and tls.dh_group.prime_bits is None:
        items.append(f"DHE group size: could not be read ({tls.dh_group.detail})")
    return items + list(tls.not_testable)


def check_tls(snapshot: SiteSnapshot) -> CheckResult:
    tls = snapshot.tls
    if tls is None:
        return CheckResult("tls", (Finding("check.error", note="the TLS handshake was not attempted"),))
    details: dict[str, Any] = _handshake_details(tls)
    if tls.protocols:
        details["protocols"] = _probe_map(tls.protocols)
    if tls.cipher_probes:
        details["weak_cipher_families"] = _probe_map(tls.cipher_probes)
    if tls.protocols or tls.cipher_probes or tls.not_testable or tls.dh_group is not None:
        details["not_testable"] = _not_testable(tls)
    if tls.failure is not None:
        outcome = "tls.no_https" if tls.failure.kind in ("unreachable", "refused") else "tls.handshake_failed"
        details["error"] = shown(tls.failure.message)
        finding = Finding(outcome, subject=f"{tls.host}:{tls.port}", note=tls.failure.message)
        return CheckResult("tls", (finding,), details)
    leaf = tls.leaf
    if leaf is None:
        return CheckResult("tls", (Finding("tls.handshake_failed", note="the server sent no certificate"),), details)
    details["certificate"] = _certificate_json(leaf, (leaf.not_after - snapshot.fetched_at).days)
    # A server may send hundreds of certificates; clients build a path from the first few, and the fetch
    # judges at most as many (fetch/tls.py MAX_JUDGED_CERTIFICATES): the report shows those, and counts the rest.
    listed_chain = tls.chain[:MAX_CHAIN_SHOWN]
    details["chain"] = [_chain_json(cert) for cert in listed_chain]
    if len(tls.chain) > len(listed_chain):
        details["chain_not_shown"] = len(tls.chain) - len(listed_chain)
    details["chain_complete"] = tls.chain_complete
    details["key_exchange_group"] = tls.key_exchange_group
    details["forward_secrecy"] = forward_secret(tls.protocol, tls.cipher)
    if tls.dh_group is not None:
        details["dh_group"] = _dh_details(tls.dh_group)
    details["aead"] = aead(tls.protocol, tls.cipher)
    details["secure_renegotiation"] = secure_renegotiation(tls)
    if tls.heartbeat is not None:
        details["heartbeat"] = _heartbeat_details(tls.heartbeat)
    details["ocsp_stapling"], ocsp_findings = _ocsp_details(snapshot, tls)
    details["revocation"], revocation_findings = _revocation_details(snapshot, tls)
    details["certificate_transparency"], transparency_findings = _transparency_details(snapshot, tls)
    beside_the_chain = [*ocsp_findings, *revocation_findings, *transparency_findings]
    findings = _certificate_findings(snapshot, tls, leaf, beside_the_chain)
    findings += _key_findings(_judged_path(tls, listed_chain))
    findings += _chain_findings(tls)
    findings += beside_the_chain
    findings += _protocol_findings(tls)
    findings += _cipher_findings(tls)
    findings += _dh_findings(tls)
    findings += _renegotiation_findings(tls)
    findings += _heartbleed_findings(tls)
    findings += web_dane_findings(snapshot, details)
    entry = snapshot.entry_tls
    if entry is not None and entry.failure is None and entry.leaf is not None:
        findings += _entry_host_findings(snapshot, entry, entry.leaf, tls, {f.outcome for f in findings})
        # the certificate visitors meet first, at the address scanned: its evidence, and its dates for a monitor
        days = (entry.leaf.not_after - snapshot.fetched_at).days
        details["entry_certificate"] = {"host": entry.host, **_certificate_json(entry.leaf, days)}
    return CheckResult("tls", tuple(findings), details)


def _entry_host_findings(
    snapshot: SiteSnapshot, entry: TlsHandshake, leaf: CertificateInfo, page_tls: TlsHandshake, page_outcomes: set[str]
) -> list[Finding]:
    """The problems of the host scanned when the page is on another host (`SiteSnapshot.entry_tls`). Every visitor
    who types the address, or follows a link to it, meets that host before the redirect: a browser stops at an
    expired, untrusted or mismatched certificate with a full-page error, so the page behind it, however well served,
    is never reached; and the first request, with the cookies the browser holds for that host, goes over the
    protocol and suite that host negotiates (SSL Labs grades the name asked). They count as the page's own would (the
    same outcomes and caps), each note naming the host. What is right there goes unsaid (the section's
    `tls.cert_valid` is the page's). The fix names the host (the report's {host} is the page's), or both when the
    page has the same problem (one finding); a server setting's fix, which names no host, says where to make it."""
    name = entry.host if entry.port == 443 else f"{entry.host}:{entry.port}"
    page = page_tls.host if page_tls.port == 443 else f"{page_tls.host}:{page_tls.port}"
    where = f"{name}, the address scanned, which redirects to {page}"
    certificate = [
        *_certificate_findings(snapshot, entry, leaf),
        *_key_findings(_judged_path(entry, entry.chain[:MAX_CHAIN_SHOWN])),
        *_chain_findings(entry),
        *_revocation_details(snapshot, entry)[1],
        *_transparency_details(snapshot, entry)[1],
    ]
    server = [
        *_protocol_findings(entry),
        *_cipher_findings(entry),
        *_dh_findings(entry),
        *_renegotiation_findings(entry),
        *_heartbleed_findings(entry),
    ]

    def fix_note(outcome: str) -> str:
        scanned = f"{name} (the server, or server block, that redirects to {page})"
        if outcome in page_outcomes:
            return f"Change it for {scanned} and for {page}"
        return f"Change it for {scanned}: {page}'s own is right"

    return [
        replace(
            f,
            note=f"{where}: {f.note}" if f.note else where,
            fix_vars={
                **f.fix_vars,
                "host": f"{page_tls.host} and {entry.host}" if f.outcome in page_outcomes else entry.host,
            },
            fix_note=fix_note(f.outcome) if is_server_setting else f.fix_note,
        )
        for f, is_server_setting in (*((f, False) for f in certificate), *((f, True) for f in server))
        if f.outcome != "tls.cert_valid"
    ]
