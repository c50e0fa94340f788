"""A tolerant `Set-Cookie` parser that follows the browser algorithm of RFC 6265bis.

`http.cookies.SimpleCookie` implements the old RFC 2109 grammar and gives up on values
browsers accept every day (JSON, unquoted spaces, `Expires` dates with commas). This
module mirrors draft-ietf-httpbis-rfc6265bis ("6265bis") instead:

- §5.6 "The Set-Cookie Header Field": split name=value from the attributes at the
  first ";", split each attribute at its first "=", trim whitespace, match attribute
  names case-insensitively, and let the last occurrence of an attribute win;
- §5.1.1 "Dates": the forgiving cookie-date algorithm for `Expires`;
- §5.7 "Storage Model": the reasons a browser drops a cookie it parsed (a Secure
  cookie from a plain-HTTP page, a Domain the host does not match, broken prefixes).

One header line is one cookie: browsers never split a `Set-Cookie` value at commas,
so neither do we (which is why `Expires=Wed, 21 Oct 2015 07:28:00 GMT` is safe).
Nothing here does I/O or looks at the clock: "now" is passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from urllib.parse import urlsplit

from ..registrable import registrable_domain
from ..target import ip_literal

__all__ = [
    "EPOCH",
    "Malformed",
    "ParsedCookie",
    "Rejection",
    "default_path",
    "domain_matches",
    "is_public_suffix",
    "parse_cookie_date",
    "parse_set_cookie",
    "rejection",
    "scope_domain",
]

# 6265bis §5.6 step 1: a line with a control character other than HTAB is ignored entirely.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# 6265bis §5.6: name + value over 4096 octets, or one attribute value over 1024, is ignored.
_MAX_NAME_VALUE = 4096
_MAX_ATTRIBUTE_VALUE = 1024
_WSP = " \t"

# §5.1.1: the delimiters that split a cookie-date into tokens.
_DATE_DELIMITER = re.compile(r"[\x09\x20-\x2f\x3b-\x40\x5b-\x60\x7b-\x7e]+")
_TIME = re.compile(r"^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\D.*)?$")
_DAY = re.compile(r"^(\d{1,2})(?:\D.*)?$")
_YEAR = re.compile(r"^(\d{2,4})(?:\D.*)?$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

# 6265bis §4.1.3: the name prefixes browsers enforce, the longest first where one starts another.
_PREFIXES = ("__Host-Http-", "__Host-", "__Http-", "__Secure-")
_HTTPONLY_PREFIXES = ("__Host-Http-", "__Http-")

#: The earliest representable time: what a non-positive Max-Age means (§5.6.2).
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ParsedCookie:
    """One Set-Cookie line, as a browser would read it (the value is kept only to classify it)."""

    name: str
    value: str
    secure: bool = False
    httponly: bool = False
    samesite: str | None = None  # "Strict" | "Lax" | "None" | None (absent)
    samesite_raw: str | None = None  # the value as written, when it was not one of the three
    domain: str | None = None  # the Domain attribute, leading dot removed, lowercase
    path: str | None = None  # the Path attribute when it was valid (starts with "/")
    expires: datetime | None = None
    max_age: int | None = None
    partitioned: bool = False
    priority: str = "Medium"  # Chromium's Priority attribute: "Low" | "Medium" | "High" (anything else: Medium)
    attribute_names: tuple[str, ...] = ()  # lowercase, in order, for notes such as "Secure=false"
    ignored_attributes: tuple[str, ...] = ()  # attributes a browser skips (bad date, bad Max-Age...)

    @property
    def prefix(self) -> str | None:
        """6265bis §4.1.3: cookie prefixes are matched case-insensitively ("__Host-Http-" before "__Host-")."""
        if not self.name.startswith("__"):
            return None  # every prefix starts so: a flood of cookies is read without lowering each name
        lowered = self.name.lower()
        return next((prefix for prefix in _PREFIXES if lowered.startswith(prefix.lower())), None)

    def expiry(self, now: datetime) -> datetime | None:
        """When the cookie expires: Max-Age wins over Expires (§5.7 step 3); None for a session cookie."""
        if self.max_age is not None:
            if self.max_age <= 0:
                return EPOCH
            try:
                return now + timedelta(seconds=self.max_age)
            except OverflowError:
                return datetime.max.replace(tzinfo=UTC)
        return self.expires

    def deletes(self, now: datetime) -> bool:
        """An expiry in the past tells the browser to delete the cookie, not to store it."""
        expiry = self.expiry(now)
        return expiry is not None and expiry <= now


@dataclass(frozen=True)
class Malformed:
    """A Set-Cookie line that does not produce a usable cookie, and why."""

    reason: str


def parse_cookie_date(text: str) -> datetime | None:
    """6265bis §5.1.1: tolerant cookie-date parsing ("Wed, 21-Oct-2015 07:28:00 GMT", ...)."""
    found_time: tuple[int, int, int] | None = None
    day: int | None = None
    month: int | None = None
    year: int | None = None
    for token in _DATE_DELIMITER.split(text):
        if not token:
            continue
        if found_time is None and (m := _TIME.match(token)):
            found_time = (int(m[1]), int(m[2]), int(m[3]))
        elif day is None and (m := _DAY.match(token)):
            day = int(m[1])
        elif month is None and token[:3].lower() in _MONTHS:
            month = _MONTHS.index(token[:3].lower()) + 1
        elif year is None and (m := _YEAR.match(token)):
            year = int(m[1])
    if found_time is None or day is None or month is None or year is None:
        return None
    if 70 <= year <= 99:
        year += 1900
    elif 0 <= year <= 69:
        year += 2000
    hour, minute, second = found_time
    if not 1 <= day <= 31 or year < 1601 or hour > 23 or minute > 59 or second > 59:
        return None
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:  # 31 February and the like
        return None


def _strip(text: str) -> str:
    return text.strip(_WSP)


def parse_set_cookie(line: str, *, nameless: bool = False) -> ParsedCookie | Malformed:
    """Parse one Set-Cookie header value (6265bis §5.6). With `nameless`, a line without a name is read as the
    cookie Chromium stores for it, with an empty name, instead of as malformed."""
    if _CONTROL.search(line):
        return Malformed("it contains a control character, so browsers ignore the whole line")
    pair, _, unparsed = line.partition(";")
    if "=" not in pair:
        # RFC 6265 §5.2 step 2 ignored such lines; 6265bis now stores them as a cookie with
        # an empty name, which no server framework reads back. Either way it is not the
        # cookie the site meant to set, and its flags protect nothing worth grading.
        if not nameless:
            return Malformed("it has no '=' between a name and a value")
        name, value = "", _strip(pair)
    else:
        name, _, value = pair.partition("=")
        name, value = _strip(name), _strip(value)
    if not name and not (nameless and _storable_without_name(value)):
        return Malformed("its name is empty")
    if len(name) + len(value) > _MAX_NAME_VALUE:
        return Malformed("its name and value exceed 4096 bytes, so browsers ignore it")

    attributes: list[tuple[str, str]] = []
    for raw in unparsed.split(";"):
        if not _strip(raw):
            continue
        key, _, val = raw.partition("=")
        attributes.append((_strip(key).lower(), _strip(val)))

    # Each attribute overwrites the previous one of its kind: the last occurrence wins (§5.7).
    flags: set[str] = set()
    ignored: list[str] = []
    samesite: str | None = None
    samesite_raw: str | None = None
    domain: str | None = None
    path: str | None = None
    expires: datetime | None = None
    max_age: int | None = None
    priority = "Medium"
    for key, val in attributes:
        if len(val) > _MAX_ATTRIBUTE_VALUE:
            ignored.append(f"{key} (value longer than 1024 bytes)")
            continue
        if key == "expires":  # §5.6.1
            date = parse_cookie_date(val)
            if date is None:
                ignored.append(f"Expires={val!r} (not a date browsers understand)")
            else:
                expires = date
        elif key == "max-age":  # §5.6.2
            if re.fullmatch(r"-?\d+", val):
                max_age = int(val)
            else:
                ignored.append(f"Max-Age={val!r} (not an integer)")
        elif key == "domain":  # §5.6.3
            if val:
                # Only one leading dot goes: "..example.com" stays ".example.com", which no host matches.
                domain = val.removeprefix(".").lower()
            else:
                # §5.7 reads the last Domain, and an empty one leaves the cookie host-only, whatever an earlier
                # Domain said (Chromium 156 stores "Domain=example.com; Domain=" for the host alone).
                domain = None
                ignored.append("Domain with an empty value (the cookie is kept for this host only)")
        elif key == "path":  # §5.6.4: an empty or relative path means "the default path"
            if val.startswith("/"):
                path = val
            else:
                path = None
                ignored.append(f"Path={val!r} (must start with '/')")
        elif key in ("secure", "httponly", "partitioned"):  # §5.6.5, §5.6.6: any value is ignored
            flags.add(key)
        elif key == "samesite":  # §5.6.7: anything but the three keywords means "Default"
            keyword = val.lower()
            if keyword in ("strict", "lax", "none"):
                samesite, samesite_raw = keyword.capitalize(), None
            else:
                samesite, samesite_raw = None, val
        elif key == "priority":
            # Chromium's own attribute (net/cookies/parsed_cookie.cc: the last one counts, matched without case,
            # anything else is the default); only its cookie store reads it, to choose what to evict.
            priority = val.capitalize() if val.lower() in ("low", "medium", "high") else "Medium"
    return ParsedCookie(
        name=name,
        value=value,
        secure="secure" in flags,
        httponly="httponly" in flags,
        samesite=samesite,
        samesite_raw=samesite_raw,
        domain=domain,
        path=path,
        expires=expires,
        max_age=max_age,
        partitioned="partitioned" in flags,
        priority=priority,
        attribute_names=tuple(key for key, _ in attributes),
        ignored_attributes=tuple(ignored),
    )


@lru_cache(maxsize=256)
def _url_parts(url: str) -> tuple[str, str, str]:
    """The scheme, lowercase host and path of a response's URL, split once for all its Set-Cookie lines."""
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.path


def _storable_without_name(value: str) -> bool:
    """6265bis §5.7: a cookie without a name is stored unless its value is empty or starts like a prefixed name;
    Chromium 156 also refuses one whose value holds "=" (it would read back as another name)."""
    return bool(value) and "=" not in value and not value.lower().startswith(("__secure-", "__host-"))


def default_path(url: str) -> str:
    """6265bis §5.1.4: the directory of the request path, "/" when there is none."""
    path = _url_parts(url)[2]
    if not path.startswith("/") or path.count("/") == 1:
        return "/"
    return path[: path.rfind("/")]


def is_public_suffix(domain: str) -> bool:
    """True for `com`, `co.uk`, `github.io`... (a name one label under it is registrable itself)."""
    if ip_literal(domain) is not None:
        return False
    probe = f"websec-probe.{domain}"
    return registrable_domain(probe) == probe


def domain_matches(host: str, domain: str) -> bool:
    """6265bis §5.1.3: the host equals the domain, or is a name under it (never for IP literals)."""
    host = host.lower()
    if host == domain:
        return True
    return ip_literal(host) is None and host.endswith("." + domain)


def scope_domain(cookie: ParsedCookie, url: str) -> str | None:
    """The domain a browser keeps the cookie for, None when it is host-only: without Domain, or (§5.7 step 9)
    with a Domain that is a public suffix equal to the host (Domain=herokuapp.com from herokuapp.com)."""
    if cookie.domain is None:
        return None
    host = _url_parts(url)[1]
    if cookie.domain == host and is_public_suffix(cookie.domain):
        return None
    return cookie.domain


def path_matches(request_path: str, cookie_path: str) -> bool:
    """6265bis §5.1.4: the same path, or one under it ("/docs" covers "/docs/a", not "/docsx")."""
    if request_path == cookie_path:
        return True
    return request_path.startswith(cookie_path) and (cookie_path.endswith("/") or request_path[len(cookie_path)] == "/")


def storage_key(cookie: ParsedCookie, url: str) -> tuple[str, str, bool, str, bool]:
    """What a browser's cookie store keys a cookie set by a response from `url` by, a later one of the same key
    replacing it (6265bis §5.7 step 22: name, domain (the host for a host-only cookie), host-only flag, path;
    CHIPS adds the partition)."""
    domain = scope_domain(cookie, url)
    host = _url_parts(url)[1]
    return (cookie.name, domain or host, domain is None, cookie.path or default_path(url), cookie.partitioned)


@dataclass(frozen=True)
class Rejection:
    """Why a browser refuses to store a cookie: `kind` is "prefix" or "storage"."""

    kind: str
    reason: str


def rejection(cookie: ParsedCookie, url: str) -> Rejection | None:
    """Why a browser refuses to store this cookie set by a response from `url` (6265bis §5.7), or None."""
    scheme, host, _ = _url_parts(url)
    secure_origin = scheme == "https"
    if cookie.secure and not secure_origin:
        return Rejection(
            "storage", "it has Secure but came in a plain-HTTP response; browsers take Secure cookies only over HTTPS"
        )
    if cookie.domain is not None:
        if is_public_suffix(cookie.domain) and cookie.domain != host:
            return Rejection("storage", f"Domain={cookie.domain} is a public suffix, so browsers refuse the cookie")
        if not domain_matches(host, cookie.domain):
            return Rejection("storage", f"Domain={cookie.domain} does not cover the host {host}")
    # 6265bis §4.1.3: the prefixes are promises the browser enforces. Every one needs Secure from an HTTPS
    # response; __Http- and __Host-Http- also HttpOnly; __Host- and __Host-Http- also Path=/ and no Domain
    # (Chromium 156 refuses each violation with InvalidPrefix).
    prefix = cookie.prefix
    if prefix is not None:
        problems = []
        if not (cookie.secure and secure_origin):
            problems.append("the Secure attribute on an HTTPS response")
        if prefix in _HTTPONLY_PREFIXES and not cookie.httponly:
            problems.append("HttpOnly")
        if prefix.startswith("__Host-"):
            if cookie.domain is not None:
                problems.append("no Domain attribute")
            if cookie.path != "/":
                problems.append("Path=/")
        if problems:
            return Rejection("prefix", f"the {prefix} prefix requires " + ", ".join(problems))
    # CHIPS (draft-cutler-httpbis-partitioned-cookies §2.1): Partitioned needs Secure. Chromium 156 stores
    # nothing for such a line, at the top level or in a third-party frame, over HTTPS or HTTP (and Firefox
    # rejects it too: CookieRejectedPartitionedRequiresSecure), so it protects and exposes nothing.
    if cookie.partitioned and not cookie.secure:
        return Rejection("storage", "it has Partitioned without Secure, and browsers refuse such a cookie")
    # SameSite=None without Secure is not a rejection here: Chromium drops such a cookie but
    # Firefox and Safari keep it, so the cookies check grades it as a weakness instead.
    return None
