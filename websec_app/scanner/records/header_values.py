"""Parsers for the simple header grammars the `headers` check reads, following what browsers do.

Each parser returns a small frozen record; none raises on hostile input. Grading lives in
`checks/headers.py`; this module only says what a browser would make of a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .html_tokens import ascii_lower

__all__ = [
    "REFERRER_POLICIES",
    "HstsPolicy",
    "PreloadReading",
    "ReferrerPolicy",
    "parse_hsts",
    "read_for_preload_list",
    "parse_referrer_meta",
    "parse_referrer_policy_header",
    "split_header_list",
    "trim_http_whitespace",
]

#: Fetch's HTTP whitespace around a value is spaces and tabs (CR and LF cannot survive in a field value); not
#: U+00A0 or U+0085, as str.strip() would take: Chromium keeps `same-origin\xa0` whole, and rejects it.
_HTTP_WHITESPACE = " \t"
# RFC 9110 §5.6.2: token = 1*tchar
_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def trim_http_whitespace(value: str) -> str:
    """`value` without the spaces and tabs browsers trim around a header value (Fetch "normalize")."""
    return value.strip(_HTTP_WHITESPACE)


def split_header_list(value: str) -> list[str]:
    """Fetch "get, decode, and split" (fetch.spec.whatwg.org/#header-value-get-decode-and-split).

    Commas inside double-quoted strings do not split; each piece is trimmed of spaces and
    tabs. An empty value gives `[""]`, as in the standard.
    """
    values: list[str] = []
    current: list[str] = []
    i = 0
    while True:
        while i < len(value) and value[i] not in '",':
            current.append(value[i])
            i += 1
        if i < len(value) and value[i] == '"':
            end = _quoted_string_end(value, i)
            end = len(value) if end < 0 else end  # Fetch: an unterminated string runs to the end
            current.append(value[i:end])
            i = end
            if i < len(value):
                continue
        values.append(trim_http_whitespace("".join(current)))
        current = []
        if i >= len(value):
            return values
        i += 1  # the comma


def _quoted_string_end(value: str, start: int) -> int:
    """Index just past the quoted string starting at `start`; -1 when it is unterminated."""
    i = start + 1
    while i < len(value):
        if value[i] == "\\":
            i += 2
            continue
        if value[i] == '"':
            return i + 1
        i += 1
    return -1


def _unquote(value: str) -> str | None:
    """The content of an RFC 9110 §5.6.4 quoted-string, or None if it is not exactly one."""
    if not value.startswith('"') or _quoted_string_end(value, 0) != len(value):
        return None
    return re.sub(r"\\(.)", r"\1", value[1:-1])


# --- Strict-Transport-Security (RFC 6797) -------------------------------------------------------


@dataclass(frozen=True)
class HstsPolicy:
    """What a browser keeps from one STS header value. `error` set => the browser ignores it."""

    max_age: int | None = None
    include_subdomains: bool = False
    preload: bool = False
    error: str | None = None
    unknown_directives: tuple[str, ...] = ()
    repeated_directives: tuple[str, ...] = ()  # sent more than once, which browsers tolerate for these
    preload_with_value: str | None = None  # `preload=...` as sent: no preload request for hstspreload.org


def _split_directives(value: str) -> list[str]:
    """Split on ";" outside quoted strings (a quoted max-age may, in theory, hold one)."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == '"':
            end = _quoted_string_end(value, i)
            end = len(value) if end < 0 else end  # unterminated: the directive check rejects it
            current.append(value[i:end])
            i = end
            continue
        if value[i] == ";":
            parts.append("".join(current))
            current = []
        else:
            current.append(value[i])
        i += 1
    parts.append("".join(current))
    return parts


#: What a max-age of more than 18 digits reads as: far past every threshold, and an int every caller can use.
_HUGE_MAX_AGE = 10**18


def kept_hsts(values: Sequence[str]) -> HstsPolicy | None:
    """The policy browsers keep from a response's Strict-Transport-Security fields (RFC 6797 §8.1: the first field,
    valid, with a max-age above 0; max-age=0 removes the host instead), or None. Whether the response came over a
    connection without certificate errors, which §8.1 also asks, is the caller's to know."""
    policy = parse_hsts(values[0]) if values else None
    return policy if policy is not None and policy.error is None and policy.max_age else None


def parse_hsts(value: str) -> HstsPolicy:
    """RFC 6797 §6.1: `[ directive ] *( ";" [ directive ] )`, directive = name [ "=" token / quoted-string ].

    - Directive names are case-insensitive (§6.1).
    - A UA must ignore a header that does not match the grammar (§6.1, §8.1). "All directives MUST
      appear only once" (§6.1), but browsers enforce it only for the two they act on: Chromium's
      `ParseHSTSHeader` rejects a header repeating max-age or includeSubDomains and takes one repeating
      `preload` or an unknown directive (seen in Chromium 156), which §6.1 says to ignore.
    - max-age is REQUIRED (§6.1.1) and is delta-seconds, quoted or not.
    - includeSubDomains is valueless (§6.1.2). Unknown directives are ignored (§6.1);
      `preload` is not in the RFC but is read by hstspreload.org, only without a value (its
      `ParseHeaderString` calls `preload=...` an invalid preload directive and the header unpreloadable).
    """
    seen: set[str] = set()
    max_age: int | None = None
    include_subdomains = preload = False
    unknown: list[str] = []
    repeated: list[str] = []
    preload_with_value: str | None = None
    for raw in _split_directives(value):
        part = trim_http_whitespace(raw)
        if not part:
            continue  # "[ directive ]": empty directives between semicolons are allowed
        name, has_value, directive_value = part.partition("=")
        name = trim_http_whitespace(name)
        directive_value = trim_http_whitespace(directive_value)
        if not _TOKEN_RE.match(name):
            return HstsPolicy(error=f"{part!r} is not a valid directive")
        key = name.lower()
        first = key not in seen
        if not first and key in ("max-age", "includesubdomains"):
            return HstsPolicy(error=f"the {name} directive appears more than once")
        if not first and all(r.lower() != key for r in repeated):
            repeated.append(name)
        seen.add(key)
        if has_value:
            unquoted = _unquote(directive_value) if directive_value.startswith('"') else directive_value
            if unquoted is None or (not directive_value.startswith('"') and not _TOKEN_RE.match(directive_value)):
                return HstsPolicy(error=f"the value of {name} is not a token or quoted string")
            directive_value = unquoted
        if key == "max-age":
            if not has_value or not directive_value.isascii() or not directive_value.isdigit():
                return HstsPolicy(error=f"max-age must be a number of seconds, not {directive_value!r}")
            # Past 18 digits (Python refuses to read past 4300 at all), any value is "more than anyone asks".
            digits = directive_value.lstrip("0") or "0"
            max_age = int(digits) if len(digits) <= 18 else _HUGE_MAX_AGE
        elif key == "includesubdomains":
            if has_value:
                return HstsPolicy(error="includeSubDomains takes no value")
            include_subdomains = True
        elif key == "preload" and not has_value:
            preload = True
        elif key == "preload":
            preload_with_value = preload_with_value or part
        elif first:
            unknown.append(name)
    if max_age is None:
        return HstsPolicy(error="the required max-age directive is missing")
    return HstsPolicy(max_age, include_subdomains, preload, None, tuple(unknown), tuple(repeated), preload_with_value)


#: hstspreload.org's minimum max-age for a new submission (its "bulk-1-year" policy), and the length past which it
#: warns that a max-age is unusually long.
PRELOAD_MIN_MAX_AGE = 31_536_000
PRELOAD_LONG_MAX_AGE = 10 * PRELOAD_MIN_MAX_AGE
_UINT64_MAX = 2**64 - 1
_GO_ASCII_SPACE = " \t\n\v\f\r"  # what Go's strings.TrimSpace takes of ASCII (the rest fails Chromium's parse)


@dataclass(frozen=True)
class PreloadReading:
    """What hstspreload.org makes of one STS header value: its error codes (chromium/hstspreload `ParseHeaderString`
    then `PreloadableHeader`; its warnings change nothing, and are not kept). Any error means the domain cannot be
    submitted to the preload list."""

    errors: tuple[str, ...]
    unreadable_max_age: str | None = None  # the first max-age directive it could not read, as sent

    @property
    def eligible(self) -> bool:
        return not self.errors


def _preload_max_age(digits: str) -> int | str:
    """hstspreload's max-age value: ASCII digits read as an unsigned 64-bit number, or the error's issue code."""
    if not all("0" <= c <= "9" for c in digits):
        return "header.parse.max_age.non_digit_characters"
    significant = digits.lstrip("0") or "0"
    if not digits or len(significant) > 20 or int(significant) > _UINT64_MAX:
        return "header.parse.max_age.parse_int_error"
    return int(significant)


def read_for_preload_list(value: str) -> PreloadReading:
    """The header as hstspreload.org reads it, which is not how browsers do (`parse_hsts`).

    It splits on every ";" (quotes aside), trims each directive and matches names by prefix, case-insensitively:
    `max-age=` must be followed by digits alone, so a quoted max-age, spaces around "=", or more than 2^64-1
    (which Chromium clamps to a year) are errors, and so is a directive that starts with `max-age` without `=`
    right after it (`max-age =1`, `max-ageing=1`); `preload` and `includeSubDomains` count only bare, and a
    directive that merely starts with one of them is a warning. Repeats, unknown and empty directives are warnings
    (Chromium rejects a repeated max-age or includeSubDomains: `parse_hsts`). Then the header needs
    includeSubDomains, preload and max-age >= 31536000 (warning past 10 years). Only the errors are kept: a
    warning does not keep a domain off the list.
    """
    errors: list[str] = []
    max_age: int | None = None
    include_subdomains = preload = no_value = False
    unreadable: str | None = None
    for directive in (directive.strip(_GO_ASCII_SPACE) for directive in value.split(";")):
        lower = directive.lower()
        if lower == "preload":
            preload = True
        elif lower == "includesubdomains":
            include_subdomains = True
        elif lower.startswith("max-age="):
            seconds = _preload_max_age(directive[len("max-age=") :])
            if isinstance(seconds, str):
                errors.append(seconds)
                unreadable = unreadable or directive
            elif max_age is None:
                max_age = seconds
        elif lower.startswith("max-age"):
            if not no_value:
                errors.append("header.parse.invalid.max_age.no_value")
            no_value = True
            unreadable = unreadable or directive
    if not include_subdomains:
        errors.append("header.preloadable.include_sub_domains.missing")
    if not preload:
        errors.append("header.preloadable.preload.missing")
    if max_age is None:
        errors.append("header.preloadable.max_age.missing")
    elif max_age == 0:
        errors.append("header.preloadable.max_age.zero")
    elif max_age < PRELOAD_MIN_MAX_AGE:
        errors.append("header.preloadable.max_age.below_1_year")
    return PreloadReading(tuple(errors), unreadable)


# --- Referrer-Policy (W3C Referrer Policy) -------------------------------------------------------

#: The referrer policies of W3C Referrer Policy §3, best privacy first.
REFERRER_POLICIES = (
    "no-referrer",
    "same-origin",
    "strict-origin",
    "strict-origin-when-cross-origin",
    "origin",
    "origin-when-cross-origin",
    "no-referrer-when-downgrade",
    "unsafe-url",
)
# HTML "Standard metadata names", referrer: legacy <meta name="referrer"> values.
_LEGACY_META_REFERRER = {
    "never": "no-referrer",
    "default": "strict-origin-when-cross-origin",
    "always": "unsafe-url",
    "origin-when-crossorigin": "origin-when-cross-origin",
}


@dataclass(frozen=True)
class ReferrerPolicy:
    policy: str | None  # the effective policy, None when nothing was recognised or the header is malformed
    tokens: tuple[str, ...]  # every token as sent
    unrecognised: tuple[str, ...]
    malformed: tuple[str, ...] = ()  # tokens that are not `1*( ALPHA / "-" )`: the header is ignored


# Referrer Policy §4.1: policy-token = <a policy> / extension-token, extension-token = 1*( ALPHA / "-" )
_POLICY_TOKEN_RE = re.compile(r"^[A-Za-z-]+$")


def parse_referrer_policy_header(value: str) -> ReferrerPolicy:
    """Referrer Policy §8.1: the LAST token the browser recognises wins; others are ignored.

    This lets sites send `no-referrer, strict-origin-when-cross-origin` so old browsers
    keep the first and new ones take the second. Tokens are compared case-insensitively
    (ABNF string literals in §4.1 are case-insensitive, and Chromium compares so too).

    But §8.1 starts with Fetch "extract header list values", which fails when the value does not
    match the header's ABNF: one token that is not letters and hyphens (`foo_bar`, `no-referrer;`,
    `"no-referrer"`) makes the whole header ignored. Chromium does so (SecurityPolicy::
    ReferrerPolicyFromHeaderValue; seen in Chromium 156), then uses its default; empty list elements
    are allowed (RFC 9110 §5.6.1).
    """
    tokens = tuple(t for t in split_header_list(value) if t)
    malformed = tuple(t for t in tokens if not _POLICY_TOKEN_RE.match(t))
    if malformed:
        return ReferrerPolicy(None, tokens, (), malformed)
    policy = None
    unrecognised = []
    for token in tokens:
        if token.lower() in REFERRER_POLICIES:
            policy = token.lower()
        else:
            unrecognised.append(token)
    return ReferrerPolicy(policy, tokens, tuple(unrecognised))


def parse_referrer_meta(content: str) -> str | None:
    """HTML "Standard metadata names", referrer: the content ASCII-lowercased and legacy-mapped, None if that is
    no policy. Not trimmed: HTML does not, and Chromium ignores `content=" no-referrer"`."""
    value = ascii_lower(content)
    value = _LEGACY_META_REFERRER.get(value, value)
    return value if value in REFERRER_POLICIES else None
