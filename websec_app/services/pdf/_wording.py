"""Plain words for what a report body holds: finding titles, detail labels, TLS probe names.

Nothing a reader sees is a rule id, a Python literal or a field name: outcomes go through
`scanner.rules.titles`, header objects are matched to their rule, detail keys through DETAIL_LABELS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from websec_app.scanner.checks.tls import MIN_DH_BITS, aead, forward_secret
from websec_app.scanner.report import header_outcome
from websec_app.scanner.rules.titles import plain_title
from websec_app.scanner.snapshot import dhe_suite
from websec_app.wording import PROTOCOL_LABELS

#: Section detail fields as a reader names them (unknown fields: "some_field" -> "Some field").
DETAIL_LABELS = {
    "host": "Host",
    "port": "Port",
    "address": "IP address",
    "protocol": "Negotiated protocol",
    "cipher": "Negotiated cipher suite",
    "trusted": "Trusted by browsers",
    "verify_error": "Why the certificate is not trusted",
    "untrusted_ca": "Untrusted certificate authority",
    "hostname_matches": "Certificate matches the host name",
    "error": "Connection error",
    "found": "Found",
    "url": "Address",
    "status_code": "HTTP status",
    "content_type": "Content type",
    "legacy_location": "Found only at the old location (/security.txt)",
    "signed": "Digitally signed",
    "contacts": "Contacts",
    "expires": "Expires",
    "canonical": "Canonical address",
    "encryption": "Encryption key",
    "policy": "Disclosure policy",
    "acknowledgments": "Acknowledgments page",
    "hiring": "Security jobs page",
    "preferred_languages": "Preferred languages",
    "html": "HTML page",
    "base": "Base address of the page",
    "truncated": "Page cut short by the scan's size limit",
    "body_note": "Note on the page body",
    "budgets_exhausted": "Analysis limits reached",
    "a": "IPv4 addresses",
    "aaaa": "IPv6 addresses",
    "cname": "Aliases (CNAME)",
    "domain": "Domain",
    "dangling_cnames": "Aliases to names that no longer exist",
    "records": "Records",
    "null_mx": "Declares it receives no email",
    "record": "Record",
    "lookups": "DNS lookups needed",
    "all": "Policy for other senders",
    "errors": "Errors",
    "not_checked": "Not checked",
    "void_lookups": "Lookups of names that do not exist",
    "void": "Names that do not exist",
    "name": "Name",
    "rcode": "DNS answer",
    "status": "Status",
    "note": "Note",
    "ds": "DS records",
    "mx": "Mail servers",
    "spf": "SPF (allowed email senders)",
    "dkim": "DKIM (email signing)",
    "dnssec": "DNSSEC (signed DNS answers)",
    "dmarc": "DMARC (forged email policy)",
    "caa": "CAA (allowed certificate authorities)",
    "mta_sts": "MTA-STS (email encryption policy)",
    "tlsrpt": "TLS-RPT (email encryption reports)",
    "foreign_origin": "Request from an unknown website",
    "lookalike_origin": "Request from a website named like this one",
    "http_origin": "Request from this page's unencrypted address (http://, same host and port)",
    "http_port_80_origin": "Request from this host's unencrypted address on port 80 (http://)",
    "null_origin": "Request from a sandboxed page (origin null)",
    "no_origin": "Request without an origin",
    "origin_sent": "Origin sent",
    "allow_origin": "Allowed origin answered",
    "allow_credentials": "Login data allowed",
    "vary_origin": "Answer varies by origin",
    "cookies_sent": "Cookies sent with it (those browsers send from that origin)",
    "cookies_withheld": "Cookies browsers keep from that origin",
    "mixed_content": "Plain-HTTP content",
    "active": "Scripts, styles and frames",
    "passive": "Images and media",
    "upgraded_by_csp": "Upgraded to HTTPS by the Content Security Policy",
    "sri": "Integrity checks",
    "missing": "Without an integrity check",
    "present": "With an integrity check",
    "invalid": "Invalid",
    "not_applicable": "Not applicable",
    "products": "Products named",
    "backends": "Internal hosts named",
    "http_url": "Plain-HTTP address tested",
    "ocsp_stapling": "Certificate status (OCSP stapling)",
    "stapled": "Sent with the certificate",
    "must_staple": "Required by the certificate (Must-Staple)",
    "dh_group": "Diffie-Hellman group (DHE key exchange)",
    "prime_bits": "Size (bits)",
    "certificate_transparency": "Certificate Transparency",
    "embedded_scts": "Proofs of logging in the certificate",
    "ocsp_scts": "Proofs of logging in the status response",
    "sct_present": "Logged publicly",
    "logs": "Logs",
    "days_to_expiry": "Days until expiry",
    "not_before": "Valid from",
    "not_after": "Valid until",
    "subject": "Subject",
    "issuer": "Issuer",
    "san": "Names covered",
    "key_type": "Key type",
    "key_size": "Key size (bits)",
    "signature_hash": "Signature hash",
    "serial": "Serial number",
    "self_signed": "Self-signed",
    "sha256_fingerprint": "SHA-256 fingerprint",
    "count": "Count",
    "disclosures": "Disclosures",
    "external_origins": "Other sites the page loads from",
    "cookies": "Cookies",
    "header": "Header",
    "value": "Value",
    "product": "Product",
    "version": "Version",
}


def label(key: str) -> str:
    known = DETAIL_LABELS.get(key)
    if known:
        return known
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def item_title(name: str, item: Mapping[str, Any], *, header: bool) -> str:
    """What a finding or header object is called in the PDF: its plain title."""
    if header:
        outcome = header_outcome(name, item)
        if outcome == "check.error":
            return f"{name}: not checked"
        return plain_title(outcome) if outcome else name
    return plain_title(name)


#: Whether accepting a protocol is good, acceptable or a problem.
PROTOCOL_VERDICT = {
    "TLSv1.3": "good",
    "TLSv1.2": "good",
    "TLSv1.1": "bad",
    "TLSv1": "bad",
    "SSLv3": "bad",
    "SSLv2": "bad",
}
CIPHER_FAMILY_LABELS = {
    "null": ("NULL (no encryption)", "bad"),
    "anonymous": ("Anonymous (no certificate check)", "bad"),
    "export": ("EXPORT (40/56-bit, deliberately weak)", "bad"),
    "rc4": ("RC4 (broken stream cipher)", "bad"),
    "des": ("DES (56-bit key)", "bad"),
    "3des": ("3DES (64-bit blocks, SWEET32)", "weak"),
    "static_rsa": ("Static RSA key exchange (no forward secrecy)", "warn"),
    "cbc": ("CBC mode (older, padding attacks)", "warn"),
}
PROBE_RESULTS = {
    "accepted": "Accepted",
    "rejected": "Refused",
    "not_testable": "Not tested",
    "error": "Could not be checked",
}


# OpenSSL's verification and socket errors, as a reader says them (the raw text stays in the JSON).
_VERIFY_WORDS = (
    (
        "self-signed certificate in certificate chain",
        "The chain ends in a self-signed certificate browsers do not trust",
    ),
    ("self-signed", "The certificate is self-signed: no authority browsers trust vouches for it"),
    ("unable to get local issuer", "The issuer is not an authority browsers trust, or an intermediate is missing"),
    ("unable to get issuer", "The issuer is not an authority browsers trust, or an intermediate is missing"),
    ("has expired", "A certificate in the chain has expired"),
    ("not yet valid", "A certificate in the chain is not valid yet"),
    ("signature failure", "A signature in the chain does not verify"),
    ("revoked", "A certificate in the chain has been revoked"),
    ("hostname mismatch", "The certificate was issued for another name"),
    ("no certificate", "The server sent no certificate"),
)
_CONNECTION_WORDS = (
    ("refused", "The server refused connections on the HTTPS port"),
    ("timed out", "The server did not answer on the HTTPS port in time"),
    ("timeout", "The server did not answer on the HTTPS port in time"),
    ("reset", "The server dropped the connection"),
    ("unreachable", "The server could not be reached"),
)


def verify_reason(raw: Any) -> str:
    lowered = str(raw or "").lower()
    return next((words for key, words in _VERIFY_WORDS if key in lowered), "The certificate chain does not verify")


def connection_error(raw: Any) -> str:
    lowered = str(raw or "").lower()
    return next((w for key, w in _CONNECTION_WORDS if key in lowered), "The secure connection could not be set up")


def probe_name(name: str) -> str:
    if name in PROTOCOL_LABELS:
        return PROTOCOL_LABELS[name]
    family = CIPHER_FAMILY_LABELS.get(name)
    return family[0] if family else label(name)


def cipher_strength(protocol: str | None, cipher: str | None, bits: Any, dh_bits: Any = None) -> tuple[str, str]:
    """(verdict, words) for the negotiated suite: strong = forward secrecy and AEAD with 128+ bits, and for a
    DHE suite a Diffie-Hellman group of MIN_DH_BITS or more (`dh_bits`, when the scan read it)."""
    if not cipher:
        return "not tested", "No cipher suite was negotiated."
    forward, sealed = forward_secret(protocol, cipher), aead(protocol, cipher)
    size = bits if isinstance(bits, int) else None
    small_group = dh_bits if dhe_suite(cipher) and isinstance(dh_bits, int) and dh_bits < MIN_DH_BITS else None
    if forward and sealed and (size is None or size >= 128) and small_group is None:
        return "good", "Strong: forward secrecy and authenticated encryption" + (f", {size}-bit key" if size else "")
    missing = [w for w, ok in (("forward secrecy", forward), ("authenticated encryption (AEAD)", sealed)) if not ok]
    if size is not None and size < 128:
        missing.append(f"a key of at least 128 bits (it has {size})")
    if small_group is not None:
        missing.append(f"a Diffie-Hellman group of at least {MIN_DH_BITS} bits (it has {small_group})")
    return "weak", "Weaker: lacks " + " and ".join(missing)


__all__ = [
    "CIPHER_FAMILY_LABELS",
    "DETAIL_LABELS",
    "PROBE_RESULTS",
    "PROTOCOL_LABELS",
    "PROTOCOL_VERDICT",
    "cipher_strength",
    "connection_error",
    "header_outcome",
    "item_title",
    "label",
    "probe_name",
    "verify_reason",
]
