"""Extra request headers a user gives for the scanned site (`scan --header 'Name: value'`, issue 17): basic
auth or a preview cookie of a staging site.

They go to the target's own origin only (its scheme, host and port): never to another host after a redirect,
never over plain HTTP when the target is HTTPS (the `http://` form the scanner also checks gets none), never
to DNS, TLS probes or certificate downloads. They are not part of the report and never logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from .target import Target

# RFC 9110 5.1 (field-name = token) and 5.5 (no CR, LF or NUL in a value).
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
#: Headers the scanner itself must control: framing, the connection, the target's name, and what it decodes.
FORBIDDEN = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "expect",
        "accept-encoding",
        "proxy-authorization",
        "proxy-connection",
        "origin",
    }
)
MAX_HEADERS = 20
MAX_LINE = 8192


class BadHeader(ValueError):
    """A header line that cannot be sent as given."""


def parse_header_line(line: str) -> tuple[str, str]:
    """`Name: value` -> (name, value). Raises BadHeader (the message never repeats the value: it may be a secret)."""
    name, colon, value = line.partition(":")
    name = name.strip()
    if not colon or not _TOKEN.match(name):
        raise BadHeader("a header must be written 'Name: value', the name without spaces")
    if len(line) > MAX_LINE:
        raise BadHeader(f"the {name} header is longer than {MAX_LINE} characters")
    if _BAD_VALUE.search(value):
        raise BadHeader(f"the {name} header's value has a line break or NUL")
    if name.lower() in FORBIDDEN:
        raise BadHeader(f"the scanner sets {name} itself")
    return name, value.strip()


@dataclass(frozen=True)
class OriginHeaders:
    """The extra headers, and the one origin they may go to."""

    scheme: str
    host: str
    port: int
    headers: tuple[tuple[str, str], ...]

    @classmethod
    def for_target(cls, target: Target, headers: tuple[tuple[str, str], ...]) -> OriginHeaders:
        if len(headers) > MAX_HEADERS:
            raise BadHeader(f"at most {MAX_HEADERS} extra headers")
        return cls(target.scheme, target.host, target.port, headers)

    def applies_to(self, scheme: str, host: str, port: int | None) -> bool:
        default = 443 if scheme == "https" else 80
        return (scheme, host.strip("[]").lower(), port or default) == (self.scheme, self.host, self.port)

    async def add_to(self, request: httpx.Request) -> None:
        """httpx's request hook: set the headers on a request to the target's origin, leave others alone.

        A Cookie header joins the cookies the request already carries (those the site set along a redirect
        chain, fetch/http.py ChainCookies) instead of replacing them: a site that sets a cookie and redirects
        to check it would otherwise loop until the redirect limit."""
        url = request.url
        if self.applies_to(url.scheme, url.host, url.port):
            for name, value in self.headers:
                carried = request.headers.get("cookie") if name.lower() == "cookie" else None
                request.headers[name] = joined_cookies(value, carried) if carried else value


#: What a Cookie header's pairs are trimmed of (6265bis WSP): Python's own strip() also takes the no-break and
#: ideographic spaces a site's UTF-8 or latin-1 cookie value may end with, which then went back changed.
_WSP = " \t"


def _cookie_name(pair: str) -> str:
    """The name of one `name=value` of a Cookie header; a pair without "=" is a cookie with an empty name
    (RFC 6265bis 5.6 step 3, 5.8.3)."""
    name, equals, _ = pair.partition("=")
    return name.strip(_WSP) if equals else ""


def joined_cookies(users: str, carried: str) -> str:
    """One Cookie header (RFC 6265bis 5.8.3: pairs joined by "; ") with the user's cookies first, then those the
    request carried, except the ones the user's header names too: the user's value wins."""
    own = [pair.strip(_WSP) for pair in users.split(";") if pair.strip(_WSP)]
    named = {_cookie_name(pair) for pair in own}
    others = [pair.strip(_WSP) for pair in carried.split(";") if pair.strip(_WSP) and _cookie_name(pair) not in named]
    return "; ".join(own + others)
