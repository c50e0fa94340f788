"""Plain words for what a report body holds: finding titles, detail labels, TLS probe names, the DNS records.

Nothing a reader sees is a rule id, a Python literal or a field name: outcomes go through
`scanner.rules.titles`, header objects are matched to their rule, detail keys through DETAIL_LABELS, and the DNS
section's records through `dns_words` (what a CAA value, a null MX or a stopped SPF evaluation means).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from websec_app.scanner.checks.tls import MIN_DH_BITS, aead, forward_secret
from websec_app.scanner.records.caa import parse_issue_value
from websec_app.scanner.records.spf_evaluation import LOOKUP_LIMIT, VOID_LOOKUP_LIMIT
from websec_app.scanner.report import header_outcome
from websec_app.scanner.rules.titles import plain_title
from websec_app.scanner.snapshot import dhe_suite
from websec_app.wording import PROTOCOL_LABELS, counted

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
    "secure_renegotiation": "Secure renegotiation (RFC 5746)",
    "client_certificate_requested": "Client certificate requested (mutual TLS)",
    "revocation": "Revocation (asked of the CA)",
    "dane": "DANE (TLSA records of the mail servers)",
    "tlsa": "DANE (TLSA records for HTTPS)",
    "nameservers": "Name servers (NS records)",
    "delegation": "Name servers asked directly (do they serve the zone?)",
    "mail_servers": "Mail servers asked for STARTTLS",
    "www_https": "HTTPS at www (the HSTS policy covers it)",
    "works": "Works",
    "problem": "Problem",
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
    "tls_rpt": "TLS-RPT (email encryption reports)",
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
    "heartbeat": "Heartbeats (RFC 6520)",
    "heartbleed": "Heartbleed",
    "embedded_scts": "Proofs of logging in the certificate",
    "ocsp_scts": "Proofs of logging in the status response",
    "handshake_scts": "Proofs of logging sent in the handshake",
    "sct_present": "Logged publicly",
    "logs": "Logs",
    "days_to_expiry": "Days until expiry",
    "entry_certificate": "Certificate of the address scanned",
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


def entry_certificate_words(cert: Mapping[str, Any]) -> str:
    """The certificate of the address scanned (tls.entry_certificate, when the page is on another host), as a client
    reads it: whose, until when (or since when expired), who issued it, which names it covers."""
    until = str(cert.get("not_after") or "")[:10]
    days = cert.get("days_to_expiry")
    if isinstance(days, int) and days < 0:
        state = f"expired on {until}"
    else:
        state = f"valid until {until}" + (f" ({days} days left)" if isinstance(days, int) else "")
    names = cert.get("san")
    covered = f"; names covered: {', '.join(map(str, names))}" if isinstance(names, list) and names else ""
    return f"{cert.get('host', '')}: {state}; issued by {cert.get('issuer', '')}{covered}"


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


# --- the DNS section's records, as a client reads them ----------------------------------------------------------

#: How long a list of the DNS section is printed before "… (N in all)".
_DNS_LIST_CHARS = 500
_NO_ISSUER = "no CA may issue (an empty issuer domain name, RFC 8659 4.2)"
#: What a receiver does with mail from the servers a record does not list, by the qualifier of the term that decides
#: for them (details.spf.all: "-all", or a term matching every sender of a family before it, "?ip6:::/0")
_SPF_ALL = {
    "-": "refused ({term})",
    "~": "accepted but marked as suspect ({term}, soft fail)",
    "?": "no verdict ({term}, neutral)",
    "+": "accepted ({term}): any server may send as the domain",
}
#: What a receiver does with mail from the senders of one address family, by their result (RFC 7208 2.6), when the
#: families' results differ; temperror is said by the evaluation's stop
_SPF_RESULT = {
    "pass": "all accepted (pass): any of them may send as the domain",
    "fail": "refused (fail)",
    "softfail": "accepted but marked as suspect (softfail)",
    "neutral": "no verdict (neutral)",
    "permerror": "permanent error (permerror): receivers ignore SPF for them, as if the domain published none",
}
_DMARC_POLICY = {
    "reject": "reject (forged mail is refused)",
    "quarantine": "quarantine (forged mail goes to spam)",
    "none": "none (reports only: forged mail is delivered)",
}
_YES_NO_UNKNOWN = {"y": "yes", "n": "no", "u": "unknown"}
_RCODE = {
    "NOERROR": "the name exists, so DKIM keys are published below it (selectors cannot be listed)",
    "NXDOMAIN": "the name does not exist (NXDOMAIN)",
    "SERVFAIL": "the DNS server failed to answer (SERVFAIL)",
    "REFUSED": "the DNS server refused to answer (REFUSED)",
}
_DNSSEC_STATUS = {
    "secure": "signed, and the chain of trust from the parent zone verifies",
    "unsigned": "not signed",
    "island": "signed, but the parent zone has no DS record for it, so resolvers cannot verify it",
    "broken": "signed, but the chain of trust does not verify: validating resolvers answer SERVFAIL",
    "unknown": "could not be determined",
}
_MTA_STS_MODE = {
    "enforce": "enforce (senders deliver only over an encrypted connection to a verified server)",
    "testing": "testing (senders report failures but deliver anyway)",
    "none": "none (the policy is switched off)",
}


def _in_all(values: Sequence[Any], more: int = 0, *, of: str = "") -> str:
    """A list on one line, the items that fit in `_DNS_LIST_CHARS` (at least one), then "… (N in all)" when some
    are not shown, here or in the report (`more`: how many it left out, its `not_listed`); `of` names what N
    counts when it is not the items ("records")."""
    shown: list[str] = []
    length = 0
    for value in map(str, values):
        if shown and length + len(value) > _DNS_LIST_CHARS:
            break
        shown.append(value)
        length += len(value) + 2
    if len(shown) == len(values) and not more:
        return ", ".join(shown)
    return f"{', '.join(shown)}, … ({len(values) + more:,}{' ' + of if of else ''} in all)"


def _not_listed(body: Mapping[str, Any], key: str) -> int:
    counts = body.get("not_listed")
    count = counts.get(key, 0) if isinstance(counts, Mapping) else 0
    return count if isinstance(count, int) else 0


def _mx_words(mx: Mapping[str, Any]) -> list[str]:
    records = [str(record) for record in mx.get("records") or []]
    more = _not_listed(mx, "records")
    servers = [record for record in records if record.partition(" ")[2].strip() != "."]
    if records == ["0 ."] and not more:
        return ["none (null MX, RFC 7505): the domain declares it receives no email"]
    if not records:
        return ["none published: senders deliver to the domain's own address (RFC 5321 5.1)"]
    # in the order senders try them, the lowest preference first (RFC 5321 5.1)
    servers.sort(key=lambda record: int(p) if (p := record.partition(" ")[0]).isdigit() else 65536)
    named = [
        f"{exchange.strip().removesuffix('.')} (preference {preference})"
        for preference, _, exchange in (record.partition(" ") for record in servers)
    ]
    lines = [_in_all(named, more)] if named or more else []
    nulls = [record for record in records if record not in servers]
    if nulls:
        lines.append(
            f"{'and ' if lines else ''}a null MX ({', '.join(nulls)}), which RFC 7505 wants alone and with preference "
            "0: receivers may ignore it"
        )
    return lines


def _spf_words(spf: Mapping[str, Any]) -> list[str]:
    record = spf.get("record")
    parts = [f"Record: {record}" if record else "Record: none, or more than one (the findings say which)"]
    all_for = spf.get("all_for")
    deciding = spf.get("all")
    if isinstance(deciding, str) and deciding:
        verdict = _SPF_ALL[deciding[0] if deciding[0] in _SPF_ALL else "+"].format(term=deciding)
        parts.append(f"Mail from servers it does not list{_some_senders(all_for)}: {verdict}")
    results = spf.get("results")
    results = results if isinstance(results, Mapping) else {}
    if len(set(results.values())) > 1:  # each family's own, beside the verdict said for the other
        parts += [
            f"Mail from {family} servers: {_SPF_RESULT[result]}"
            for family, result in results.items()
            if result in _SPF_RESULT and not (isinstance(all_for, list) and family in all_for)
        ]
    if record and isinstance(spf.get("lookups"), int):
        lookups = _for_each_family(spf["lookups"], spf.get("lookups_for"))
        parts.append(f"DNS lookups it needs: {lookups} (receivers allow {LOOKUP_LIMIT})")
    if spf.get("void_lookups"):
        void_for = spf.get("void_lookups_for")
        void = _for_each_family(spf["void_lookups"], void_for)
        if void == str(spf["void_lookups"]):
            void = f"Lookups of names that do not exist: {void} (receivers allow {VOID_LOOKUP_LIMIT})"
        else:  # an a term asks A for IPv4 senders and AAAA for IPv6 ones (RFC 7208 5.3): a name can have only one
            void = (
                "Lookups that find nothing (a name that does not exist, or has no address of the sender's type): "
                f"{void} (receivers allow {VOID_LOOKUP_LIMIT})"
            )
        parts.append(void + (f": {_in_all(spf['void'])}" if spf.get("void") else ""))
    if spf.get("errors"):
        stopped = [family for family, result in results.items() if result == "permerror"]
        parts.append(f"Errors{_some_senders(stopped)}: {'; '.join(map(str, spf['errors']))}")
    if spf.get("not_checked"):
        parts.append(f"Not checked (they depend on the sender's address): {_in_all(spf['not_checked'])}")
    if spf.get("stopped_at"):
        failed = [str(lookup).rpartition(" ") for lookup in spf.get("failed_lookups") or []]
        unanswered = ", ".join(f"{name} ({rdtype})" if name else rdtype for name, _, rdtype in failed)
        why = f"no usable answer for {unanswered}" if unanswered else "its lookup failed"
        parts.append(
            f"Evaluation stopped at {spf['stopped_at']}{_some_senders(spf.get('stopped_for'))}: {why}, so receivers "
            "answer with a temporary error (temperror, RFC 7208 5)"
        )
    return parts


def _for_each_family(most: int, by_family: Any) -> str:
    """A count of SPF's evaluation, the same for every sender ("3"), or each address family's when they differ ("11
    for IPv4 senders, 3 for IPv6 senders": receivers count a sender's own, RFC 7208 4.6.4)."""
    if not isinstance(by_family, Mapping) or len({*by_family.values()}) < 2:
        return str(most)
    return ", ".join(f"{count} for {family} senders" for family, count in by_family.items())


def _some_senders(families: Any) -> str:
    """ " (for IPv6 senders)" when what a line says holds for one address family's senders only, else ""."""
    if isinstance(families, list) and len(families) == 1:
        return f" (for {families[0]} senders)"
    return ""


def _dmarc_words(dmarc: Mapping[str, Any]) -> list[str]:
    parts = [f"Record: {dmarc['record']}"] if dmarc.get("record") else []
    for key, name in (("p", "Policy"), ("sp", "Subdomains"), ("np", "Subdomains that do not exist")):
        if dmarc.get(key):
            parts.append(f"{name}: {_DMARC_POLICY.get(str(dmarc[key]), dmarc[key])}")
    if isinstance(dmarc.get("pct"), int) and dmarc["pct"] != 100:
        parts.append(f"Applied to: {dmarc['pct']}% of the mail that fails")
    for key, name in (("t", "Testing mode (t)"), ("psd", "Public suffix domain (psd)")):
        if dmarc.get(key):
            parts.append(f"{name}: {_YES_NO_UNKNOWN.get(str(dmarc[key]).lower(), dmarc[key])}")
    for key, name in (("rua", "Aggregate reports to"), ("ruf", "Failure reports to")):
        if dmarc.get(key):
            parts.append(f"{name}: {_in_all(dmarc[key], _not_listed(dmarc, key))}")
    if dmarc.get("ignored_tags"):
        parts.append(f"Tags receivers ignore: {_in_all(dmarc['ignored_tags'])}")
    if dmarc.get("errors"):
        parts.append(f"Errors: {'; '.join(map(str, dmarc['errors']))}")
    return parts


def _dkim_words(dkim: Mapping[str, Any]) -> list[str]:
    rcode = str(dkim.get("rcode") or "")
    answer = _RCODE.get(rcode, f"DNS answer {rcode}")
    if rcode == "NXDOMAIN":
        answer += ", so no key is published under any selector"
    return [f"{dkim.get('name')}: {answer}"]


def _dnssec_words(dnssec: Mapping[str, Any]) -> list[str]:
    status = str(dnssec.get("status") or "unknown")
    words = _DNSSEC_STATUS.get(status, status)
    parts = [f"{words[:1].upper()}{words[1:]}" + (f" ({dnssec['note']})" if dnssec.get("note") else "")]
    if dnssec.get("zone"):
        parts.append(f"Zone checked: {dnssec['zone']}, the platform's zone the domain is part of")
    if dnssec.get("ds"):
        parts.append(f"DS records: {_in_all(dnssec['ds'], _not_listed(dnssec, 'ds'))}")
    return parts


def _issuers(heading: str, values: Sequence[Any], more: int) -> list[str]:
    """Who an issue (or issuewild) RRset lets issue, a line, then a line per value naming no CA for a reason of its
    own (at most 3): authorisations add up, and a value naming no CA (";", empty, or one that does not follow the
    grammar) adds none (RFC 8659 4.2). `more`: values the report does not list."""
    named, unreadable = [], []
    for value in values:
        issue = parse_issue_value(str(value).encode("utf-8", "replace"))
        if issue.issuer:
            parameters = "; ".join(f"{tag}={parameter}" for tag, parameter in issue.parameters)
            named.append(f"{issue.issuer} ({parameters})" if parameters else issue.issuer)
        elif issue.problem:
            unreadable.append(f"“{value}” names no CA: {issue.problem} (RFC 8659 4.2)")
    if named:
        words = _in_all(named, more + len(values) - len(named), of="records")
    elif more:
        words = f"none of the records listed names one ({len(values) + more:,} records in all)"
    else:
        words = _NO_ISSUER
    extra = [f"and {len(unreadable) - 3:,} more values that name no CA"] if len(unreadable) > 3 else []
    return [f"{heading}: {words}", *unreadable[:3], *extra]


def _caa_words(caa: Mapping[str, Any]) -> list[str]:
    where = f"Records read at: {caa.get('name')}"
    if caa.get("alias_of"):
        where += f", an alias (CNAME) of {caa['alias_of']}: these are its records"
    parts = [where]
    if caa.get("issue"):
        parts += _issuers("Certificate authorities allowed", caa["issue"], _not_listed(caa, "issue"))
    else:
        parts.append("Certificate authorities allowed: any (no issue record restricts them)")
    if caa.get("issuewild"):
        parts += _issuers("For wildcard certificates", caa["issuewild"], _not_listed(caa, "issuewild"))
    if caa.get("iodef"):
        parts.append(f"Problem reports to: {_in_all(caa['iodef'], _not_listed(caa, 'iodef'))}")
    return parts


def _mta_sts_words(mta_sts: Mapping[str, Any]) -> list[str]:
    parts = [f"Record: {mta_sts['record']}"] if mta_sts.get("record") else []
    policy = mta_sts.get("policy")
    if not isinstance(policy, Mapping):
        return [*parts, "Policy: not read (the findings say why)"]
    for key, value in policy.items():
        if key == "not_listed" or value in (None, "", []):
            continue
        if key == "mode":
            parts.append(f"Mode: {_MTA_STS_MODE.get(str(value), value)}")
        elif key == "max_age" and isinstance(value, int):
            parts.append(f"Senders keep the policy for: {value / 86400:g} days ({value:,} seconds)")
        elif key == "mx":
            parts.append(f"Mail servers it covers: {_in_all(value, _not_listed(policy, 'mx'))}")
        else:
            parts.append(f"{label(key)}: {value}")
    return parts


def _tls_rpt_words(tls_rpt: Mapping[str, Any]) -> list[str]:
    record = tls_rpt.get("record")
    return [f"Record: {each}" for each in record] if isinstance(record, list) else [f"Record: {record}"]


_DANE_STATES = {
    "secure": "TLSA records, DNSSEC-valid",
    "none": "no TLSA records",
    "unproven": "TLSA records that DNSSEC does not prove",
    "unknown": "could not be checked",
    "failed": "the lookup failed",
}


def _dane_words(dane: Mapping[str, Any]) -> list[str]:
    hosts = dane.get("mx_hosts")
    lines = [f"{host}: {_DANE_STATES.get(str(state), state)}" for host, state in (hosts or {}).items()]
    return lines + [f"Not checked: {item}" for item in dane.get("not_checked") or []]


def _mail_server_words(servers: Mapping[str, Any]) -> list[str]:
    """A line per MX host: what a sending server met there."""
    lines = []
    for host, shown in servers.items():
        if not isinstance(shown, Mapping):
            continue
        if shown.get("protocol"):
            days = shown.get("days_to_expiry")
            left = f" ({counted(days, 'day')} left)" if isinstance(days, int) and days >= 0 else ""
            lines.append(
                f"{host}: STARTTLS with {shown['protocol']}; {shown.get('certificate', '')}{left}".rstrip("; ")
            )
        elif shown.get("problem"):
            lines.append(f"{shown['problem']} (mail to it goes unencrypted)")
        else:
            lines.append(f"{host}: could not be asked ({shown.get('error', 'no answer')})")
    return lines


def _delegation_words(delegation: Mapping[str, Any]) -> list[str]:
    """A line per name server address asked, then the servers the parent zone delegates the domain to."""
    lines = [
        f"{server.get('server')}{f' ({address})' if (address := server.get('address')) else ''}: {server.get('answer')}"
        for server in delegation.get("servers") or []
        if isinstance(server, Mapping)
    ]
    parent = delegation.get("parent")
    if isinstance(parent, list) and parent:
        lines.append(f"Delegated by the parent zone to: {', '.join(str(host) for host in parent)}")
    return lines


_DNS_OBJECTS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "mx": _mx_words,
    "spf": _spf_words,
    "dmarc": _dmarc_words,
    "dkim": _dkim_words,
    "dnssec": _dnssec_words,
    "caa": _caa_words,
    "mta_sts": _mta_sts_words,
    "tls_rpt": _tls_rpt_words,
    "dane": _dane_words,
    "mail_servers": _mail_server_words,
    "delegation": _delegation_words,
}
#: The dns section's fields `dns_words` words; any other goes the generic way.
DNS_WORDED = frozenset({"a", "aaaa", "cname", "not_listed", *_DNS_OBJECTS})


def dns_words(body: Mapping[str, Any]) -> dict[str, list[str]]:
    """The DNS section's records in words, by field (label them with `label`), a line per fact: a null MX, a CAA
    value naming no CA, a stopped SPF evaluation said as what they mean, the raw record beside them, each list
    with how many it has in all when the report lists only its first (`not_listed`). Fields of DNS_WORDED only."""
    words = {}
    for key, value in body.items():
        if key not in DNS_WORDED or key == "not_listed" or value in (None, "", []):
            continue
        if key in _DNS_OBJECTS:
            if isinstance(value, Mapping):
                words[key] = _DNS_OBJECTS[key](value)
        elif isinstance(value, list):
            words[key] = [_in_all(value, _not_listed(body, key))]
    return words


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
    "DNS_WORDED",
    "PROBE_RESULTS",
    "PROTOCOL_LABELS",
    "PROTOCOL_VERDICT",
    "cipher_strength",
    "connection_error",
    "dns_words",
    "header_outcome",
    "item_title",
    "label",
    "probe_name",
    "verify_reason",
]
