"""Parsing what a user typed into the URL we scan.

Hosts are canonicalised the way browsers do (WHATWG URL Standard, "host parsing"),
so `http://2130706433/`, `http://0x7f.1/` and `http://017700000001/` are all
recognised as 127.0.0.1 before the SSRF guard looks at them.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

from .errors import InvalidTarget

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://")
# WHATWG URL, "special authority ignore slashes state": after http: or https:, browsers skip any run of
# slashes and backslashes, so "https:example.com", "https:/example.com" and "https:\\example.com" all
# mean https://example.com/.
_SPECIAL_SCHEME_SLASHES = re.compile(r"^(https?):[/\\]*", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_URL_LENGTH = 2048


@dataclass(frozen=True)
class Target:
    """A normalised http(s) URL, split into the parts the fetcher needs."""

    scheme: str
    host: str  # lowercase ASCII (IDNA) name, or a canonical IP address without brackets
    port: int
    path: str  # path plus query, always starting with "/"

    @property
    def is_ip_literal(self) -> bool:
        return ip_literal(self.host) is not None

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.netloc}"

    @property
    def url(self) -> str:
        return f"{self.origin}{self.path}"

    def with_scheme(self, scheme: str) -> Target:
        """The same host over another scheme, on that scheme's default port."""
        return Target(scheme, self.host, _DEFAULT_PORTS[scheme], "/")

    def with_path(self, path: str) -> Target:
        return Target(self.scheme, self.host, self.port, path)


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _parse_ipv4_number(part: str) -> int | None:
    """One label of a WHATWG IPv4 host: decimal, 0x-hex or 0-octal."""
    if part == "":
        return None
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
        if part == "":
            return 0
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    digits = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[base]
    if not all(c in digits for c in part):
        return None
    return int(part, base)


def _ends_in_a_number(host: str) -> bool:
    labels = host.split(".")
    if labels[-1] == "":
        if len(labels) == 1:
            return False
        labels = labels[:-1]
    last = labels[-1]
    if last and all(c in "0123456789" for c in last):
        return True
    return _parse_ipv4_number(last) is not None and last[:2] in ("0x", "0X")


def parse_whatwg_ipv4(host: str) -> str | None:
    """The dotted-quad form of a numeric host, or None when the host is a name.

    Raises InvalidTarget for hosts that browsers also reject (out-of-range numbers).
    """
    if not _ends_in_a_number(host):
        return None
    parts = host.split(".")
    if parts[-1] == "":
        parts = parts[:-1]
    if len(parts) > 4:
        raise InvalidTarget(f"{host!r} is not a valid IPv4 address")
    numbers = [_parse_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        raise InvalidTarget(f"{host!r} is not a valid IPv4 address")
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise InvalidTarget(f"{host!r} is not a valid IPv4 address")
    address = values[-1]
    for index, number in enumerate(values[:-1]):
        address += number * 256 ** (3 - index)
    return str(ipaddress.IPv4Address(address))


#: WHATWG URL, "forbidden domain code point": the forbidden host code points, C0 controls, % and DEL. No host
#: holds one (records/location.py refuses a Location's percent-decoded host by them); none is among
#: `_DNS_NAME_CHARACTERS`, the only characters `normalise_host` lets through.
FORBIDDEN_DOMAIN_CODE_POINTS = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f") | {chr(c) for c in range(0x20)}

_DNS_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def _domain_to_ascii(host: str) -> str:
    """WHATWG URL "domain to ASCII": UTS #46 ToASCII with CheckHyphens and UseSTD3ASCIIRules false, as
    browsers parse hosts, so `a_b.example.com`, `-a-.example.com` and `r3---sn-x.googlevideo.com` are names.
    An ASCII label (not `xn--`) is only lower-cased; a label with other characters, or an `xn--` label,
    gets IDNA2008's checks (RFC 5891 section 5.4, the `idna` package) after the UTS #46 mapping. Raises
    idna.IDNAError."""
    mapped = host.lower() if host.isascii() else idna.uts46_remap(host, std3_rules=False)
    labels = mapped.split(".")
    for index, label in enumerate(labels):
        if label.startswith("xn--"):
            idna.ulabel(label)  # a Punycode that decodes to a valid label, in its canonical spelling
        elif not label.isascii():
            labels[index] = idna.alabel(label).decode("ascii")
    return ".".join(labels)


def normalise_host(raw_host: str) -> str:
    host = raw_host.strip().rstrip(".").lower()
    if not host:
        raise InvalidTarget("The URL has no host name")
    if ":" in host:  # IPv6 literal (urlsplit already removed the brackets)
        try:
            address = ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            raise InvalidTarget(f"{raw_host!r} is not a valid IPv6 address") from None
        if "%" in host:
            raise InvalidTarget("IPv6 zone identifiers are not allowed in a target URL")
        return str(address)
    # WHATWG host parsing: domain-to-ASCII (UTS #46 mapping) first, then the IPv4 number check,
    # so that e.g. fullwidth or superscript digits cannot slip a numeric address past the guard.
    try:
        ascii_host = _domain_to_ascii(host)
    except idna.IDNAError as exc:
        raise InvalidTarget(f"{raw_host!r} is not a valid host name ({exc})") from None
    # Letters, digits, `-`, `_` and dots only: the URL Standard refuses its forbidden domain code points (`%`,
    # `/`, `@`...) and lets `a&b` or `a'b(c)` through, but no browser looks such a name up (Chromium's
    # dns_names_util), and it would only carry hostile text into reports and fix snippets. Checked before the
    # IPv4 number parse, as the URL Standard checks forbidden code points, so `%31.0.0.1` and `a&b.1` are
    # refused for the character they hold, not as a bad IPv4 address.
    unusable = next((c for c in ascii_host if c not in _DNS_NAME_CHARACTERS), None)
    if unusable is not None:
        raise InvalidTarget(f"{raw_host!r} is not a valid host name (it contains {unusable!r})")
    numeric = parse_whatwg_ipv4(ascii_host)
    if numeric is not None:
        return numeric
    if len(ascii_host) > 253 or any(not 0 < len(label) <= 63 for label in ascii_host.split(".")):
        raise InvalidTarget(f"{raw_host!r} is not a valid host name")
    return ascii_host


def parse_target(text: str) -> Target:
    """Normalise user input into a Target; `https://` is assumed when no scheme is given."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidTarget("A URL is required")
    text = text.strip()
    if len(text) > _MAX_URL_LENGTH:
        raise InvalidTarget(f"The URL is longer than {_MAX_URL_LENGTH} characters")
    if any(c.isspace() or ord(c) < 0x20 for c in text):
        raise InvalidTarget("The URL contains whitespace or control characters")
    text = _SPECIAL_SCHEME_SLASHES.sub(lambda m: m.group(1) + "://", text, count=1)
    if not _SCHEME_RE.match(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:(?!\d)", text) and not text.startswith("["):
            scheme = text.split(":", 1)[0].lower()
            raise InvalidTarget(f"Unsupported URL scheme {scheme!r}: only http and https can be scanned")
        text = "https://" + text.lstrip("/")
    try:
        parts = urlsplit(text)
        raw_host = parts.hostname
    except ValueError as exc:  # e.g. "[" (an unclosed IPv6 bracket)
        raise InvalidTarget(f"The URL is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidTarget(f"Unsupported URL scheme {scheme!r}: only http and https can be scanned")
    if parts.username is not None or parts.password is not None:
        raise InvalidTarget("URLs with a user name or password cannot be scanned")
    if raw_host is None:
        raise InvalidTarget("The URL has no host name")
    try:
        port = parts.port if parts.port is not None else _DEFAULT_PORTS[scheme]  # `:0` is a bad port, not none
    except ValueError:
        raise InvalidTarget("The URL has an invalid port") from None
    if not 0 < port < 65536:
        raise InvalidTarget("The URL has an invalid port")
    host = normalise_host(raw_host)
    path = parts.path or "/"
    if not path.startswith("/"):
        path = "/" + path
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, host, port, path)
