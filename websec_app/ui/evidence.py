"""The evidence behind a report, as display rows: raw response headers, redirect chains, the TLS tables,
the certificate chain, where the points went, and the fix snippets per server.

Pure functions of a report body (spec 2.1/2.2 plus the additive evidence fields: `redirection.main_chain[i]
.headers`, `tls.protocols`, `tls.chain`, `fix_snippets`); a field an older stored report lacks gives empty
rows, and the page shows nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from websec_app.scanner.data import cipher_family
from websec_app.scanner.fixes import SERVER_LABELS, detected_server, servers_in_order
from websec_app.scanner.snapshot import dhe_suite
from websec_app.wording import (
    PROTOCOL_LABELS,
    counted,
    heartbeat_words,
    key_usage_words,
    purpose_words,
    revocation_words,
    tlsa_words,
    transparency_words,
)

#: TLS versions a browser should get; any older one accepted is a problem (grading caps it at B or worse).
_CURRENT_PROTOCOLS = ("TLSv1.3", "TLSv1.2")
_PROTOCOL_NAMES = PROTOCOL_LABELS
_PROBE_WORDS = {"accepted": "Accepted", "rejected": "Refused", "not_testable": "Not testable", "error": "No answer"}


@dataclass(frozen=True)
class Row:
    """One name/value line: a raw header, a certificate field, a negotiated parameter."""

    name: str
    value: str


@dataclass(frozen=True)
class Hop:
    url: str
    status: str
    location: str  # "" for the last hop


@dataclass(frozen=True)
class ProbeRow:
    """A protocol version or weak cipher family probe: what the server said and whether that is good."""

    name: str
    outcome: str  # "Accepted", "Refused", "Not testable", "No answer"
    tone: str  # "good", "bad" or "neutral"


@dataclass(frozen=True)
class CertRow:
    role: str  # "Site certificate", "Intermediate CA", ...
    subject: str
    issuer: str
    expires: str
    key: str  # "EC 256", "RSA 2048"
    signature: str


@dataclass(frozen=True)
class MailServerRow:
    """One MX host as a sending mail server met it (dns.mail_servers): STARTTLS, the protocol after it, what its
    certificate says (or why there was no TLS, or why it could not be asked), and the days its certificate has left."""

    host: str
    starttls: str  # "Yes", "No", "Not asked"
    protocol: str
    certificate: str
    days_left: str


@dataclass(frozen=True)
class NameServerRow:
    """One address of a name server the domain is delegated to, asked directly for its SOA (dns.delegation): who names
    it (the parent zone's delegation, the zone's NS records) and what it answered."""

    server: str
    address: str
    named_by: str  # "Delegation and NS records", "Delegation only", "NS records only"
    verdict: str  # "Serves the zone", "Does not serve the zone", "No answer"
    tone: str  # "good", "bad" or "neutral"
    answer: str


@dataclass(frozen=True)
class ScoreBar:
    """One section's share of the points lost; `percent` of the 100 points a score starts from (at most 100).
    `locked`: the bar of the sections a free report hides, all together."""

    section: str
    title: str
    points: str  # "−54 pts"
    percent: int
    locked: bool = False


@dataclass(frozen=True)
class HiddenPoints:
    """What the sections a free report hides lost, together: `at_least` when the score's floor of 0 hides
    part of it."""

    title: str  # "Cookies and cross-origin isolation (full report only)"
    points: int
    at_least: bool = False


@dataclass(frozen=True)
class Snippet:
    server: str  # the SERVERS key
    label: str
    code: str


@dataclass(frozen=True)
class Evidence:
    final_status: str = ""
    final_headers: list[Row] = field(default_factory=list)
    main_chain: list[Hop] = field(default_factory=list)
    http_chain: list[Hop] = field(default_factory=list)
    negotiated: list[Row] = field(default_factory=list)
    certificate: list[Row] = field(default_factory=list)
    # the certificate of the address scanned when the page is on another host (tls.entry_certificate), and that host
    entry_certificate: list[Row] = field(default_factory=list)
    entry_host: str = ""
    chain: list[CertRow] = field(default_factory=list)
    mail_servers: list[MailServerRow] = field(default_factory=list)  # the dns section's MX hosts, asked for STARTTLS
    name_servers: list[NameServerRow] = field(default_factory=list)  # the dns section's name servers, asked directly
    protocols: list[ProbeRow] = field(default_factory=list)
    weak_ciphers: list[ProbeRow] = field(default_factory=list)
    not_testable: list[str] = field(default_factory=list)
    score_bars: list[ScoreBar] = field(default_factory=list)
    score_text: str = ""  # the chart in words: its text alternative
    caps: list[str] = field(default_factory=list)  # every grade cap applied, with the finding behind it


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _date(iso: Any) -> str:
    """'2027-02-20T12:00:00+00:00' -> '2027-02-20' (a certificate's expiry is read by the day)."""
    return _text(iso)[:10]


def _hops(chain: Any) -> list[Hop]:
    if not isinstance(chain, list):
        return []
    return [
        Hop(_text(hop.get("url")), _text(hop.get("status_code")), _text(hop.get("location")))
        for hop in chain
        if isinstance(hop, Mapping)
    ]


def _raw_headers(chain: Any) -> tuple[str, list[Row]]:
    """The final response's status and headers, in wire order (the last hop of the main chain)."""
    if not isinstance(chain, list) or not chain or not isinstance(chain[-1], Mapping):
        return "", []
    last = chain[-1]
    pairs = last.get("headers")
    rows = [
        Row(_text(pair[0]), _text(pair[1]))
        for pair in (pairs if isinstance(pairs, list) else [])
        if isinstance(pair, list | tuple) and len(pair) == 2
    ]
    return _text(last.get("status_code")), rows


def _protocol_tone(name: str, result: str) -> str:
    """A current version accepted is good (refused: merely not offered); an old one accepted is bad."""
    if name in _CURRENT_PROTOCOLS:
        return "good" if result == "accepted" else "neutral"
    return {"accepted": "bad", "rejected": "good"}.get(result, "neutral")


def _cipher_tone(_family: str, result: str) -> str:
    return {"accepted": "bad", "rejected": "good"}.get(result, "neutral")


def _probes(results: Any, name_of: Callable[[str], str], tone_of: Callable[[str, str], str]) -> list[ProbeRow]:
    if not isinstance(results, Mapping):
        return []
    return [
        ProbeRow(name_of(str(name)), _PROBE_WORDS.get(str(result), _text(result)), tone_of(str(name), str(result)))
        for name, result in results.items()
    ]


def _protocol_name(name: str) -> str:
    return _PROTOCOL_NAMES.get(name, name)


def _family_name(family_id: str) -> str:
    family = cipher_family(family_id)
    return family.name if family is not None else family_id


def _yes_no(value: Any) -> str:
    return {True: "Yes", False: "No"}.get(value, "") if isinstance(value, bool) else ""


def _dh_group(group: Any, cipher: Any) -> str:
    """The negotiated DHE suite's group, when the scan read its size (fetch/tls_probes.probe_dh_group); nothing for
    another suite (the scan reads the group of any server that accepts DHE, whatever it prefers)."""
    bits = group.get("prime_bits") if isinstance(group, Mapping) and dhe_suite(cipher) else None
    return f"Diffie-Hellman, {bits} bits" if isinstance(bits, int) else ""


def _tls_rows(tls: Mapping[str, Any]) -> tuple[list[Row], list[Row], list[CertRow]]:
    protocol = _text(tls.get("protocol"))
    bits = f" ({tls['cipher_bits']} bits)" if tls.get("cipher_bits") else ""
    negotiated = [
        Row("Protocol", _protocol_name(protocol) if protocol else ""),
        Row("Cipher suite", _text(tls.get("cipher")) + bits if tls.get("cipher") else ""),
        Row(
            "Key exchange group",
            _text(tls.get("key_exchange_group")) or _dh_group(tls.get("dh_group"), tls.get("cipher")),
        ),
        Row("Forward secrecy", _yes_no(tls.get("forward_secrecy"))),
        Row("Authenticated encryption (AEAD)", _yes_no(tls.get("aead"))),
        Row("Secure renegotiation (RFC 5746)", _yes_no(tls.get("secure_renegotiation"))),
        Row("Client certificate requested (mutual TLS)", _yes_no(tls.get("client_certificate_requested"))),
        Row("Heartbeats (RFC 6520)", heartbeat_words(tls.get("heartbeat"))),
        Row("Revocation (asked of the CA)", revocation_words(tls.get("revocation"), with_note=False)),
        Row("Certificate Transparency (SCTs)", transparency_words(tls.get("certificate_transparency"))),
        Row("DANE (TLSA records)", tlsa_words(tls.get("tlsa"))),
        Row("Certificate trusted", _yes_no(tls.get("trusted"))),
        Row("Full chain sent", _yes_no(tls.get("chain_complete"))),
    ]
    certificate = _certificate_rows(_mapping(tls.get("certificate")))
    chain = []
    listed = _list(tls.get("chain"))
    for position, entry in enumerate(e for e in listed if isinstance(e, Mapping)):
        if position == 0:
            role = "Site certificate"
        elif entry.get("subject") == entry.get("issuer"):
            role = "Root CA"
        else:
            role = "Intermediate CA"
        chain.append(
            CertRow(
                role=role,
                subject=_text(entry.get("subject")),
                issuer=_text(entry.get("issuer")),
                expires=_date(entry.get("not_after")),
                key=" ".join(_text(entry.get(k)) for k in ("key_type", "key_size") if entry.get(k)),
                signature=_text(entry.get("signature_hash")),
            )
        )
    return [r for r in negotiated if r.value], certificate, chain


def _mail_server_rows(servers: Any) -> list[MailServerRow]:
    rows = []
    for host, shown in _mapping(servers).items():
        if not isinstance(shown, Mapping):
            continue
        asked = shown.get("starttls")
        starttls = "Not asked" if asked is None else "Yes" if asked else "No"
        protocol = _text(shown.get("protocol"))
        days = shown.get("days_to_expiry")
        rows.append(
            MailServerRow(
                host=str(host),
                starttls=starttls,
                protocol=_protocol_name(protocol) if protocol else "",
                certificate=_text(shown.get("certificate") or shown.get("problem") or shown.get("error")),
                days_left=(counted(days, "day") if days >= 0 else "Expired") if isinstance(days, int) else "",
            )
        )
    return rows


_NAME_SERVER_VERDICTS = {
    "serves": ("Serves the zone", "good"),
    "lame": ("Does not serve the zone", "bad"),
    "no address": ("No address", "bad"),
    "silent": ("No answer", "bad"),
    "no answer": ("No answer", "neutral"),
}


def _name_server_rows(dns: Mapping[str, Any]) -> list[NameServerRow]:
    delegation = _mapping(dns.get("delegation"))
    parent = delegation.get("parent")
    delegated = {str(host) for host in parent} if isinstance(parent, list) else None
    listed = dns.get("nameservers")
    in_zone = {str(host) for host in listed} if isinstance(listed, list) else set()
    rows = []
    for shown in delegation.get("servers") or []:
        if not isinstance(shown, Mapping):
            continue
        server = str(shown.get("server", ""))
        by = [name for name, names in (("Delegation", delegated), ("NS records", in_zone)) if names and server in names]
        answer = _text(shown.get("answer"))
        verdict, tone = _NAME_SERVER_VERDICTS.get(str(shown.get("verdict")), ("No answer", "neutral"))
        rows.append(
            NameServerRow(
                server=server,
                address=_text(shown.get("address")),
                named_by=" and ".join(by) + (" only" if len(by) == 1 and delegated is not None else ""),
                verdict=verdict,
                tone=tone,
                answer=answer[:1].upper() + answer[1:],
            )
        )
    return rows


def _certificate_rows(cert: Mapping[str, Any]) -> list[Row]:
    """A certificate's fields as the evidence lists them, those it has."""
    key = " ".join(_text(cert.get(k)) for k in ("key_type", "key_size") if cert.get(k))
    san = cert.get("san")
    rows = [
        Row("Subject", _text(cert.get("subject"))),
        Row("Names (SAN)", ", ".join(str(n) for n in san) if isinstance(san, list) else ""),
        Row("Issuer", _text(cert.get("issuer"))),
        Row("Valid from", _date(cert.get("not_before"))),
        Row("Valid until", _date(cert.get("not_after"))),
        Row("Key", key),
        Row("Key usage", key_usage_words(cert)),
        Row("Purposes (EKU)", purpose_words(cert)),
        Row("Signature hash", _text(cert.get("signature_hash"))),
        Row("Serial", _text(cert.get("serial"))),
        Row("SHA-256 fingerprint", _text(cert.get("sha256_fingerprint"))),
    ]
    return [r for r in rows if r.value]


def _score(
    report: Mapping[str, Any], deductions: list[tuple[str, str, int]], hidden: HiddenPoints | None
) -> tuple[list[ScoreBar], str]:
    """A bar per section that lost points (worst first), then one for the hidden sections; the same in a
    sentence or two."""
    lost = sorted((d for d in deductions if d[2] > 0), key=lambda d: -d[2])
    bars = [ScoreBar(key, title, f"−{counted(points, 'pt')}", min(100, points)) for key, title, points in lost]
    parts = [f"{title} {counted(points, 'point')}" for _, title, points in lost]
    total = sum(points for _, _, points in lost)
    if hidden is not None and hidden.points > 0:
        more = " or more" if hidden.at_least else ""
        bars.append(
            ScoreBar("locked", hidden.title, f"−{counted(hidden.points, 'pt')}{more}", min(100, hidden.points), True)
        )
        parts.append(f"{hidden.title} {'at least ' if hidden.at_least else ''}{counted(hidden.points, 'point')}")
        total += hidden.points
    score = int(report.get("score") or 0)
    grading = _mapping(report.get("grading"))
    uncapped = int(grading.get("uncapped_score", score) or 0)
    if not parts:
        words = f"No points lost: the score is {score} out of 100."
    else:
        words = f"Points lost: {', '.join(parts)}; {counted(total, 'point')} in all, from 100."
        if total > 100:
            words += " The score never goes below 0."
    if uncapped != score:
        words += f" Before the grade caps the score was {uncapped}; the caps hold it at {score}."
    return bars, words


def _snippets(raw: Any, order: tuple[str, ...]) -> list[Snippet]:
    if not isinstance(raw, Mapping):
        return []
    return [
        Snippet(server, SERVER_LABELS.get(server, server), _text(raw[server]))
        for server in order
        if isinstance(raw.get(server), str) and raw[server]
    ]


def fix_snippets(report: Mapping[str, Any], raw: Any) -> list[Snippet]:
    """A finding's `fix_snippets`, the scanned site's own server first (none when the field is absent)."""
    return _snippets(raw, servers_in_order(detected_server(report)))


def evidence(
    report: Mapping[str, Any],
    deductions: list[tuple[str, str, int]],
    caps: list[str],
    hidden: HiddenPoints | None = None,
) -> Evidence:
    """`deductions`: (section key, title, points lost) of each shown section, in the report's order;
    `caps`: the grade caps in words; `hidden`: what the sections a free report hides lost."""
    redirection = _mapping(report.get("redirection"))
    tls = _mapping(report.get("tls"))
    status, headers = _raw_headers(redirection.get("main_chain"))
    negotiated, certificate, chain = _tls_rows(tls)
    bars, words = _score(report, deductions, hidden)
    not_testable = tls.get("not_testable")
    return Evidence(
        final_status=status,
        final_headers=headers,
        main_chain=_hops(redirection.get("main_chain")),
        http_chain=_hops(redirection.get("http_chain")),
        negotiated=negotiated,
        certificate=certificate,
        entry_certificate=_certificate_rows(entry := _mapping(tls.get("entry_certificate"))),
        entry_host=_text(entry.get("host")),
        chain=chain,
        mail_servers=_mail_server_rows(_mapping(report.get("dns")).get("mail_servers")),
        name_servers=_name_server_rows(_mapping(report.get("dns"))),
        protocols=_probes(tls.get("protocols"), _protocol_name, _protocol_tone),
        weak_ciphers=_probes(tls.get("weak_cipher_families"), _family_name, _cipher_tone),
        not_testable=[str(item) for item in not_testable] if isinstance(not_testable, list) else [],
        score_bars=bars,
        score_text=words,
        caps=caps,
    )
