"""Reading DNS records back from the presentation format the snapshot keeps."""

from __future__ import annotations

import functools
import re

import dns.exception
import dns.rdata
import dns.rdataclass
import dns.rdatatype

from ..registrable import is_registry_suffix, registrable_domain
from ..snapshot import DnsAnswer

__all__ = [
    "EXTENSION_VALUE",
    "MAX_ENCLOSING_ZONES",
    "begins_versioned",
    "enclosing_zone_names",
    "looks_versioned",
    "failed",
    "is_domain_name",
    "versioned_fields",
    "txt_of",
    "txt_strings",
    "zone_file_strings",
]

#: How far above a name that is no zone apex its zone is looked for: a platform's zone is one or two labels up
#: (github.io for alice.github.io, blogspot.com for a.b.blogspot.com).
MAX_ENCLOSING_ZONES = 3

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$", re.IGNORECASE)
# RFC 8461 3.1 sts-ext-name, 3.2 sts-policy-ext-name, RFC 8460 3 tlsrpt-ext-name
_FIELD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: RFC 8461 3.1 sts-ext-value, RFC 8460 3 tlsrpt-ext-value: 1*(%x21-3A / %x3C / %x3E-7E), printable ASCII but
#: "=" and ";" (and no space).
EXTENSION_VALUE = re.compile(r"[\x21-\x3a\x3c\x3e-\x7e]+")


def txt_strings(records: tuple[str, ...]) -> list[str]:
    """Each TXT record as one string: its character-strings concatenated without spaces
    (RFC 7208 3.3, RFC 7489 6.1, RFC 8461 3.1), undecodable bytes replaced."""
    values = []
    for text in records:
        try:
            rdata = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.TXT, text)
        except dns.exception.DNSException:
            continue
        values.append(b"".join(rdata.strings).decode("utf-8", errors="replace"))  # type: ignore[attr-defined]
    return values


def zone_file_strings(record: str) -> list[str]:
    """`record` as a TXT record's character-strings: 255 octets at most each (RFC 1035 3.3), quoted and escaped as a
    zone file writes them (what `txt_strings` reads back). Receivers join an SPF record's strings without a space
    (RFC 7208 3.3)."""
    parts: list[str] = []
    rest = record
    while len(rest.encode()) > 255:
        cut, size = 0, 0
        for index, char in enumerate(rest):
            size += len(char.encode())
            if size > 255:
                break
            cut = index + 1
        space = rest.rfind(" ", 0, cut)
        # after a space when there is one, so no term is cut in two (the space ends the string; receivers join them)
        cut = space + 1 if space > 0 else cut
        parts.append(rest[:cut])
        rest = rest[cut:]
    parts.append(rest)
    return ['"' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in parts]


def txt_of(answer: DnsAnswer | None) -> list[str]:
    return txt_strings(answer.records) if answer is not None and answer.exists else []


def is_domain_name(name: str) -> bool:
    """A syntactically valid host name: labels of letters, digits, '-' and '_' (the last for
    service labels), at most 63 octets each and 253 in all, and a non-numeric top label."""
    name = name.rstrip(".")
    if not name or len(name) > 253:
        return False
    labels = name.split(".")
    return all(_LABEL.match(label) for label in labels) and not labels[-1].isdigit() and len(labels) > 1


def enclosing_zone_names(domain: str) -> list[str]:
    """The names above `domain`, nearest first, that may be the apex of the zone holding it when it has no
    zone of its own (alice.github.io is a name in the github.io zone): at most MAX_ENCLOSING_ZONES, and none
    from a registry-controlled suffix up (`io`, `co.uk`: a registry's zone is not the site's)."""
    labels = domain.rstrip(".").lower().split(".")
    names = []
    for start in range(1, min(len(labels), MAX_ENCLOSING_ZONES + 1)):
        name = ".".join(labels[start:])
        if is_registry_suffix(name):
            break
        names.append(name)
    return names


#: The domains of a domain's name servers asked whether they exist (their SOA): providers use one or two.
MAX_NAMESERVER_DOMAINS = 4


def nameserver_host(record: str) -> str:
    """A name server as an NS record's presentation form names it ("NS1.Example.NET." -> "ns1.example.net")."""
    return record.strip().rstrip(".").lower()


def nameserver_hosts(answer: DnsAnswer | None) -> list[str]:
    """The name servers an NS answer names ("ns1.example.net."), in the records' order."""
    if answer is None or not answer.exists:
        return []
    return [host for record in answer.records if (host := nameserver_host(record))]


def nameserver_domains(domain: str, answer: DnsAnswer | None) -> list[str]:
    """The registrable domains of the name servers an NS answer of `domain` names, those outside `domain` (one of its
    own names is no other domain to lose), in the records' order, at most MAX_NAMESERVER_DOMAINS: a provider's name
    servers share one (ns1.provider.example, ns2.provider.example)."""
    hosts = nameserver_hosts(answer)
    outside = [host for host in hosts if host != domain and not host.endswith("." + domain)]
    return list(dict.fromkeys(registrable_domain(host) for host in outside))[:MAX_NAMESERVER_DOMAINS]


def failed(answer: DnsAnswer | None) -> bool:
    """The query was asked and did not get an authoritative yes or no."""
    return answer is not None and answer.rcode not in ("NOERROR", "NXDOMAIN")


def begins_versioned(text: str, version: str) -> bool:
    """The record begins with `version` ("v=STSv1", "v=TLSRPTv1") and a separator, *WSP ";" (RFC 8461 3.1,
    RFC 8460 3): senders discard the TXT records that do not, which both RFCs spell "v=STSv1;" and
    "v=TLSRPTv1;", the whitespace their grammar's separator allows before the ";" read as mox reads it."""
    return text.startswith(version) and text[len(version) :].lstrip(" \t").startswith(";")


@functools.cache
def _near_miss(version: str) -> re.Pattern[str]:
    name, _, number = version.partition("=")
    return re.compile(rf"\s*{re.escape(name)}\s*=\s*{re.escape(number)}(?![0-9])", re.IGNORECASE)


def looks_versioned(text: str, version: str) -> bool:
    """The record is `version` mistyped (its case, spaces, the ";" left out: "v=STSv1id=abc"), but not another
    version ("v=STSv10", as "v=STSv2", is no v1 record): one senders discard, which its owner meant as one."""
    return not begins_versioned(text, version) and _near_miss(version).match(text) is not None


def versioned_fields(text: str, version: str) -> tuple[list[tuple[str, str]], str | None]:
    """The `name=value` fields of an MTA-STS or TLS-RPT record (RFC 8461 3.1, RFC 8460 3), in order, and the
    first place the record leaves their shared grammar (None when it does not):

        record = version 1*(sep field) [sep]      sep = *WSP ";" *WSP      field = name "=" value
        name   = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")

    Nothing but the separator may surround a field: `id = 1` and a space after the last value are outside it,
    and senders that parse the grammar (mox) then have no policy. Each value is returned as written: its own
    grammar is the caller's (`EXTENSION_VALUE` for fields it does not know). Split at ";" rather than matched
    with a pattern, which cost as much as the square of a run of spaces."""
    head, *parts = text.split(";")
    if head.rstrip(" \t") != version:
        return [], f"the record does not begin with {version};"
    closed = bool(parts) and not parts[-1].strip(" \t")  # the optional final separator
    if closed:
        parts.pop()
    if not parts:
        return [], f"no field follows {version}"
    fields: list[tuple[str, str]] = []
    for index, part in enumerate(parts):
        field = part.lstrip(" \t")
        if closed or index < len(parts) - 1:
            field = field.rstrip(" \t")  # the next separator's *WSP
        name, equals, value = field.partition("=")
        if not equals or not _FIELD_NAME.fullmatch(name):
            problem = "an empty field (two ';' in a row)" if not field else f"{field!r} is not name=value"
            return fields, problem
        fields.append((name, value))
    return fields, None
