"""SMTP TLS Reporting (RFC 8460): the `_smtp._tls` TXT record, read by its grammar (section 3) as senders do.

The record shares MTA-STS's grammar (records/dns_text.versioned_fields): `v=TLSRPTv1`, then `name=value` fields
separated by *WSP ";" *WSP, case-sensitive; `rua` is required, other fields are ignored. A TXT record not
beginning with "v=TLSRPTv1;" is discarded, and then anything but one record means no reports.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .dmarc import is_mail_address, mailto_addresses
from .dns_text import EXTENSION_VALUE, begins_versioned, looks_versioned, versioned_fields

__all__ = ["tlsrpt_near_misses", "tlsrpt_problem", "tlsrpt_records"]

_VERSION = "v=TLSRPTv1"
# tlsrpt-rua = %s"rua=" tlsrpt-uri *(*WSP "," *WSP tlsrpt-uri)
_URI_SEPARATOR = re.compile(r"[ \t]*,[ \t]*")
# tlsrpt-uri = URI (RFC 3986: no whitespace), "commas (ASCII 0x2C), exclamation points (ASCII 0x21), and
# semicolons (ASCII 0x3B) MUST be encoded"
_NOT_IN_URI = re.compile(r"[\x00-\x20\x7f!,;]")


def tlsrpt_records(txt_values: list[str]) -> list[str]:
    """RFC 8460 3: records not beginning with "v=TLSRPTv1;" are discarded (then more than one is none)."""
    return [t for t in txt_values if begins_versioned(t, _VERSION)]


def tlsrpt_near_misses(txt_values: list[str]) -> list[str]:
    """The records discarded although they look like TLS-RPT ("v=TLSRPTv1" alone, "V=TLSRPTv1; rua=...")."""
    return [t for t in txt_values if looks_versioned(t, _VERSION)]


def tlsrpt_problem(text: str) -> str | None:
    """RFC 8460 3: v=TLSRPTv1, then fields separated by ";", among them rua= one or more mailto: or https: URIs,
    comma-separated (the first rua, should there be several)."""
    fields, problem = versioned_fields(text, _VERSION)
    if problem is not None:
        return problem
    ruas = [value for name, value in fields if name == "rua"]
    for name, value in fields:
        if name != "rua" and not EXTENSION_VALUE.fullmatch(value):
            return f"{name}={value} is not a field value (printable, without space, '=' or ';')"
    if not ruas:
        hint = " (field names are case-sensitive)" if any(name.lower() == "rua" for name, _ in fields) else ""
        return f"the record has no rua= field (where reports go){hint}"
    for uri in _URI_SEPARATOR.split(ruas[0]):
        scheme, colon, rest = uri.partition(":")
        if not colon or scheme.lower() not in ("mailto", "https") or not rest:
            return f"{uri!r} is not a mailto: or https: URI"
        if _NOT_IN_URI.search(uri):
            return f"{uri!r} is not a URI (a space, or a ',', '!' or ';' not percent-encoded)"
        mailboxes = mailto_addresses(rest)  # ?subject=... allowed
        if scheme.lower() == "mailto" and not (mailboxes and all(is_mail_address(m) for m in mailboxes)):
            return f"{uri!r} is not a mail address"
        if scheme.lower() == "https" and not _https_host(uri):
            return f"{uri!r} names no host to send reports to"
    return None


def _https_host(uri: str) -> str | None:
    try:
        return urlsplit(uri).hostname or None
    except ValueError:  # an unbalanced "[" in the host, a bad port
        return None
