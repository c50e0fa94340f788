"""SMTP TLS Reporting (RFC 8460): the `_smtp._tls` TXT record."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .dmarc import is_mail_address, mailto_addresses
from .dns_text import tag_list

__all__ = ["tlsrpt_problem", "tlsrpt_records"]


def tlsrpt_records(txt_values: list[str]) -> list[str]:
    return [t for t in txt_values if re.match(r"^v=TLSRPTv1\s*(;|$)", t)]


def tlsrpt_problem(text: str) -> str | None:
    """RFC 8460 3: v=TLSRPTv1, then rua= one or more mailto: or https: URIs, comma-separated."""
    ruas = [value for key, value in tag_list(text) if key == "rua"]
    if not ruas:
        return "the record has no rua= field (where reports go)"
    for uri in ruas[0].split(","):
        uri = uri.strip()
        scheme, colon, rest = uri.partition(":")
        if not colon or scheme.lower() not in ("mailto", "https") or not rest:
            return f"{uri!r} is not a mailto: or https: URI"
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
