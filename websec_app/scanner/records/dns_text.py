"""Reading DNS records back from the presentation format the snapshot keeps."""

from __future__ import annotations

import re

import dns.exception
import dns.rdata
import dns.rdataclass
import dns.rdatatype

from ..registrable import is_registry_suffix
from ..snapshot import DnsAnswer

__all__ = [
    "MAX_ENCLOSING_ZONES",
    "enclosing_zone_names",
    "failed",
    "is_domain_name",
    "tag_list",
    "txt_of",
    "txt_strings",
]

#: How far above a name that is no zone apex its zone is looked for: a platform's zone is one or two labels up
#: (github.io for alice.github.io, blogspot.com for a.b.blogspot.com).
MAX_ENCLOSING_ZONES = 3

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$", re.IGNORECASE)


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


def failed(answer: DnsAnswer | None) -> bool:
    """The query was asked and did not get an authoritative yes or no."""
    return answer is not None and answer.rcode not in ("NOERROR", "NXDOMAIN")


def tag_list(text: str) -> list[tuple[str, str]]:
    """The `key=value` fields of a record separated by ";", in order, each side trimmed
    (MTA-STS, RFC 8461 3.1; TLS-RPT, RFC 8460 3)."""
    found = []
    for part in text.split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            found.append((key.strip(), value.strip()))
    return found
