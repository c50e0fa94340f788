"""A redirect's `Location` header as browsers read and follow it.

The snapshot keeps header values as Latin-1 text, one character a byte (RFC 9110 5.5: field values are
octets). Browsers read a Location's bytes as UTF-8 (records/header_text.as_utf8): Chromium and Firefox follow
`Location: /à-propos` sent as UTF-8 to `/%C3%A0-propos`, and `https://bücher.test/` to its IDNA name.

They then parse it with the URL Standard's basic URL parser (Fetch 4.4, "location URL"), which repairs
much: leading and trailing spaces and controls are stripped, tabs and newlines dropped, `\\` read as `/`
(records/urls.join_url, shared with the page's URLs); spaces, controls and non-ASCII in the path and query
are percent-encoded (§1.3 "path/query percent-encode set"); the host is percent-decoded before IDNA
(§3.5 "host parsing"); user name and password are allowed for navigations and send nothing by themselves.
`redirect_target` follows what browsers follow, and its result is an ordinary http(s) URL that the fetch
resolves and guards like any other.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from ..errors import InvalidTarget
from ..target import FORBIDDEN_DOMAIN_CODE_POINTS, parse_target
from .urls import join_url

__all__ = ["MAX_LOCATION", "BadLocation", "redirect_target"]

MAX_LOCATION = 2048  # as for a URL the user types (target.py); browsers allow more, the scanner does not

# URL Standard §1.3: the C0 control percent-encode set (C0 controls, DEL and all non-ASCII) is always encoded;
# the path set adds these (Chromium also encodes | and ^ there), the special-query set these.
_PATH_ENCODED = frozenset(' "<>`{}|^')
_QUERY_ENCODED = frozenset(" \"<>'")


class BadLocation(ValueError):
    """A Location browsers would not follow either; the message completes "the Location header ..."."""


def _percent_encoded(text: str, also: frozenset[str]) -> str:
    """`text` with the C0 control percent-encode set and `also` percent-encoded as UTF-8; `%` is left alone."""
    if text.isascii() and text.isprintable() and not also.intersection(text):
        return text
    return "".join(
        "".join(f"%{byte:02X}" for byte in char.encode("utf-8")) if char in also or not " " <= char <= "~" else char
        for char in text
    )


def _host_and_port(authority: str) -> tuple[str, str]:
    """The authority's host (percent-decoded, unless an IPv6 literal) and port text, without any userinfo."""
    host_port = authority.rpartition("@")[2]  # the userinfo ends at the last "@" (URL Standard, authority state)
    if host_port.startswith("["):  # an IPv6 literal is never percent-decoded; target.py reads it
        end = host_port.find("]") + 1
        return host_port[:end], host_port[end:]
    host, colon, port = host_port.partition(":")
    host = unquote(host, errors="replace")  # host parsing: "UTF-8 decode without BOM" of the percent-decoding
    # §3.5 host parsing: no forbidden domain code point once the host is percent-decoded (a `/`, `?` or `@`
    # would also move the splits of the URL rebuilt for parse_target below).
    bad = sorted(FORBIDDEN_DOMAIN_CODE_POINTS.intersection(host))
    if bad:
        raise BadLocation(f"names a host with a character no host name may have ({bad[0]!r})")
    return host, colon + port


def redirect_target(base: str, location: str) -> str:
    """The absolute http(s) URL a browser follows `location` to from `base`; raises BadLocation naming what is
    wrong where browsers fail too (or where the scanner sets a limit). `location` as browsers read it
    (records/header_text.as_utf8)."""
    if not location.strip(" \t"):
        raise BadLocation("is empty")
    if len(location) > MAX_LOCATION:
        raise BadLocation(f"is longer than {MAX_LOCATION} characters")
    joined = join_url(base, location)
    if joined is None:
        raise BadLocation("is not a valid URL")
    try:
        parts = urlsplit(joined)
    except ValueError as exc:  # urllib: e.g. an unclosed IPv6 bracket
        raise BadLocation(f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BadLocation(f"is not a URL the scanner can follow: the scheme {scheme!r} is not http or https")
    host, port = _host_and_port(parts.netloc)
    path = _percent_encoded(parts.path or "/", _PATH_ENCODED)
    query = "?" + _percent_encoded(parts.query, _QUERY_ENCODED) if parts.query else ""
    try:  # the host through IDNA and the IPv4 forms, the port in range
        return parse_target(f"{scheme}://{host}{port}{path}{query}").url
    except InvalidTarget as exc:
        raise BadLocation(f"is not a URL the scanner can follow: {exc}") from None
