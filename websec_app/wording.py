"""Words every renderer shares (the UI, CLI, emails, PDFs and API errors say them the same way): counted nouns
("1 day", "2 days"), the names of TLS protocol versions, a certificate's Key Usage and revocation, and how a site's
bidirectional controls are shown."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """ "1 check", "3 checks", "0 checks"; `plural` for nouns that do not just take an s ("1 match", "2 matches")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


#: TLS protocol versions as OpenSSL reports them -> as a reader names them.
PROTOCOL_LABELS = {
    "TLSv1.3": "TLS 1.3",
    "TLSv1.2": "TLS 1.2",
    "TLSv1.1": "TLS 1.1",
    "TLSv1": "TLS 1.0",
    "SSLv3": "SSL 3.0",
    "SSLv2": "SSL 2.0",
}


def time_left(left: timedelta) -> str:
    """Whole days, or hours under a day ("0 days" for a certificate expiring tonight said nothing)."""
    if left.days >= 1:
        return counted(left.days, "day")
    hours = int(left.total_seconds() // 3600)
    return counted(hours, "hour") if hours >= 1 else "less than an hour"


def tlsa_words(details: Any) -> str:
    """The web host's TLSA records as a reader sees them (`tls.tlsa`, checks/tls_dane.py): "" when it has none."""
    if not isinstance(details, Mapping) or not details.get("name"):
        return ""
    name, dnssec, matches = details["name"], details.get("dnssec"), details.get("matches")
    if dnssec == "unproven":
        return f"Published at {name}, not DNSSEC-valid: clients ignore them"
    if dnssec != "secure":
        return f"Published at {name}: could not be checked"
    if matches is True:
        return f"The certificate matches the records at {name} (DNSSEC-valid)"
    if matches is False:
        return f"The certificate matches none of the records at {name}"
    return f"Published at {name}: none usable"


def _extension_words(certificate: Mapping[str, Any], field: str, absent: str, empty: str) -> str:
    """A certificate extension's list of names as a reader sees it: the names; `absent` for null (no extension,
    which allows everything); `empty` for an empty list; "" for a report stored before the field."""
    if field not in certificate:
        return ""
    names = certificate[field]
    if names is None:
        return absent
    if not isinstance(names, list):
        return ""
    return ", ".join(str(name) for name in names) or empty


def key_usage_words(certificate: Mapping[str, Any]) -> str:
    """What the report's site certificate lets its key be used for (`tls.certificate.key_usage`: RFC 5280 4.2.1.3's
    names; tls.cert_key_usage judges it)."""
    return _extension_words(
        certificate,
        "key_usage",
        "Every use: the certificate has no Key Usage extension",
        "No use: the extension lists none",
    )


def purpose_words(certificate: Mapping[str, Any]) -> str:
    """What the report's site certificate is for (`tls.certificate.extended_key_usage`: RFC 5280 4.2.1.12's names;
    browsers need serverAuth)."""
    return _extension_words(
        certificate,
        "extended_key_usage",
        "Any purpose: the certificate has no Extended Key Usage extension",
        "No purpose: the extension lists none",
    )


_REVOCATION_STATES = {"good": "Not revoked", "revoked": "Revoked", "unknown": "Could not be checked"}
_REVOCATION_SOURCES = {"ocsp": "OCSP responder", "crl": "CRL"}


def revocation_words(answer: Any, *, with_note: bool) -> str:
    """What the certificate's CA said of it (`tls.revocation`, asked when the server staples no current answer):
    "Revoked (CRL)", and the note when `with_note` or when the answer proved nothing (the note says why). "" when not
    asked."""
    if not isinstance(answer, Mapping) or answer.get("status") not in _REVOCATION_STATES:
        return ""
    state = _REVOCATION_STATES[answer["status"]]
    source = _REVOCATION_SOURCES.get(str(answer.get("method")))
    said = f"{state} ({source})" if source else state
    note = answer.get("note")
    return f"{said}: {note}" if note and (with_note or answer["status"] == "unknown") else said


_SCT_SOURCES = (
    ("embedded_scts", "embedded in the certificate"),
    ("handshake_scts", "sent in the TLS handshake"),
    ("ocsp_scts", "in the stapled OCSP response"),
)


def transparency_words(details: Any) -> str:
    """The Certificate Transparency SCTs that came with the certificate (`tls.certificate_transparency`): "From 2
    logs: 2 embedded in the certificate", or "None: ..."; "" when there is nothing to say."""
    if not isinstance(details, Mapping):
        return ""
    counts = {key: details.get(key) for key, _ in _SCT_SOURCES}
    parts = [f"{count} {where}" for (key, where) in _SCT_SOURCES if isinstance(count := counts[key], int) and count]
    if not parts:
        if counts["handshake_scts"] is None:
            return "None embedded in the certificate or stapled (the handshake's were not read)"
        return "None: not embedded in the certificate, sent in the TLS handshake or stapled"
    logs = details.get("logs")
    not_listed = details.get("not_listed")
    listed = len(logs) if isinstance(logs, list) else 0
    more = not_listed.get("logs", 0) if isinstance(not_listed, Mapping) else 0
    return f"From {counted(listed + more, 'log')}: {', '.join(parts)}"


_HEARTBEAT_VERDICTS = {
    "vulnerable": "Offered: vulnerable to Heartbleed (CVE-2014-0160)",
    "safe": "Offered: not vulnerable to Heartbleed",
    "unanswered": "Offered, but no heartbeat answered: Heartbleed could not be checked",
}


def heartbeat_words(details: Any) -> str:
    """TLS heartbeats as the scan found them (`tls.heartbeat`, there only when the server offered them): whether the
    server is Heartbleed; "" when it offered none."""
    if not isinstance(details, Mapping):
        return ""
    verdict = str(details.get("heartbleed"))
    if verdict in _HEARTBEAT_VERDICTS:
        return _HEARTBEAT_VERDICTS[verdict]
    return f"Offered: Heartbleed could not be checked ({details.get('detail') or 'the probe failed'})"


#: Characters that reorder how the text after them is displayed (Unicode TR 9's marks, embeddings, overrides
#: and isolates). A site's RIGHT-TO-LEFT OVERRIDE makes the rest of a line read backwards ("Trojan Source",
#: CVE-2021-42574), so renderers show these escaped, and a site's text in the order it was sent.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def bidi_escaped(ch: str) -> str:
    """`\\u202e` for a bidirectional control: its name in the text, not its effect."""
    return f"\\u{ord(ch):04x}"


__all__ = [
    "BIDI_CONTROLS",
    "PROTOCOL_LABELS",
    "bidi_escaped",
    "counted",
    "heartbeat_words",
    "key_usage_words",
    "purpose_words",
    "revocation_words",
    "transparency_words",
]
