"""A URL resolved against a base as browsers resolve it (URL Standard §4.4), for the page's URLs and redirects.

Kept apart from the page parser (records/html.py, which re-exports `join_url`): the fetch layer follows
redirects with it (records/location.py) and must not import lxml and the page analysis for that, which only
grading needs (issue 14: the command line's imports before the fetch starts).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

__all__ = ["URL_DROPPED", "join_url"]

#: URL Standard §4.4: the tabs and newlines a URL's parser drops wherever they are.
URL_DROPPED = str.maketrans("", "", "\t\n\r")
#: URL Standard §4.2: the special schemes, where `\\` is a path separator like `/` ("file" has its own rules).
_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
# URL Standard §4.4 "scheme state": an ASCII letter, then letters, digits, "+", "-", ".", up to ":". One
# possessive run from the start: linear in a megabyte attribute.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*+:")
_C0_OR_SPACE = "".join(map(chr, range(0x21)))


def _as_browsers_read(base_scheme: str, value: str) -> str:
    """`value` rewritten so that urljoin resolves it as the URL Standard's basic URL parser (§4.4) does.

    urljoin follows RFC 3986, where `\\` is an ordinary path character and `http:host/path` has no host;
    browsers load `<script src="\\\\cdn.other.net\\a.js">`, `/\\cdn.other.net/a.js` and
    `http:cdn.other.net/a.js` from cdn.other.net. For a special scheme (the value's own, or the base's when the
    value is relative): `\\` is `/` before the query or fragment; a scheme other than the base's is followed by
    an authority whatever the slashes ("special authority ignore slashes state"), and two or more slashes
    starting the authority count as two."""
    value = value.strip(_C0_OR_SPACE).translate(URL_DROPPED)  # §4.4 steps 1-3
    match = _SCHEME.match(value)
    scheme = match.group(0)[:-1].lower() if match else ""
    if (scheme or base_scheme) not in _SPECIAL_SCHEMES:
        return value
    end = len(value)
    for mark in ("?", "#"):
        found = value.find(mark, 0, end)
        end = found if found >= 0 else end
    value = value[:end].replace("\\", "/") + value[end:]
    rest = value[match.end() :] if match else value
    if scheme and scheme != base_scheme:
        return f"{scheme}://{rest.lstrip('/')}"  # "special authority slashes state", then "ignore slashes"
    if rest.startswith("//"):
        return f"{value[: match.end()] if match else ''}//{rest.lstrip('/')}"
    return value  # same scheme without "//": relative ("special relative or authority state"), as urljoin reads it


def join_url(base: str, value: str) -> str | None:
    """`value` resolved against `base` as browsers resolve it (see `_as_browsers_read`), or None where URL
    parsing fails (an unclosed IPv6 bracket, say)."""
    base_scheme = _SCHEME.match(base)
    try:
        return urljoin(base, _as_browsers_read(base_scheme.group(0)[:-1].lower() if base_scheme else "", value))
    except ValueError:
        return None
