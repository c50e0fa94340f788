"""Content Security Policy: parse policies the way browsers do, into the policy model checks judge.

References (section numbers of CSP Level 3, w3.org/TR/CSP3, Working Draft 2024):
- §2.2.1 "Parse a serialized CSP": split on ";", lowercase directive names, the first
  occurrence of a directive wins, values split on ASCII whitespace.
- §2.2.2 "Parse a response's CSPs": each comma-separated piece of each header is its own
  policy, and a policy with no directives is dropped.
- §6.8 "Get the effective directive for request" and "Get fetch directive fallback list":
  an absent fetch directive is replaced by the first present one of its list, whose sources
  then apply exactly as if written under the absent name (script-src-elem -> script-src ->
  default-src, object-src -> default-src, ...). Directives that are not fetch directives
  (base-uri, form-action, frame-ancestors, sandbox) never fall back.
- §2.3.1 source expressions: a quoted expression that is neither a keyword nor a well-formed
  nonce or hash is skipped by browsers (Chromium: "contains an invalid source ... It will be
  ignored"); a list left with nothing, or with 'none' alone, matches nothing (CSP3 "Does url
  match source list in origin with redirect count?").
- "Does a source list allow all inline behavior for type?": a nonce or hash (and, for
  scripts, 'strict-dynamic') turns 'unsafe-inline' off, which is what CSP2+ browsers do.
- §6.4.2: frame-ancestors has no fallback and is ignored in a <meta> policy; HTML's
  http-equiv processing also drops report-uri and sandbox from <meta> policies.
- §3.3: a <meta> element's content is one serialized policy; Chromium splits it on commas as
  it splits a header, and enforces each part, and so is it read here (parse_meta_policies).

Nothing here raises on malformed input: whatever a browser would skip is skipped, and the
skipped part is recorded as a warning so the report can say why. What the policies allow
together, and what is too broad, is judged in checks/csp.py.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "KNOWN_DIRECTIVES",
    "MAX_META_POLICIES",
    "META_IGNORED_DIRECTIVES",
    "OBSOLETE_DIRECTIVES",
    "SOURCE_LIST_DIRECTIVES",
    "Policy",
    "SourceList",
    "allows_all_inline",
    "effective_sources",
    "ignored_sources",
    "is_nonce_or_hash",
    "keywords_in",
    "matches_nothing",
    "parse_header_policies",
    "parse_meta_policies",
    "parse_policy",
    "quoted_sources",
    "scheme_and_host",
    "serialize",
    "upgrades_insecure_requests",
]

#: Directives of CSP3, Trusted Types, Upgrade Insecure Requests and Fenced Frames.
KNOWN_DIRECTIVES = frozenset(
    {
        "base-uri",
        "child-src",
        "connect-src",
        "default-src",
        "fenced-frame-src",
        "font-src",
        "form-action",
        "frame-ancestors",
        "frame-src",
        "img-src",
        "manifest-src",
        "media-src",
        "object-src",
        "report-to",
        "report-uri",
        "require-trusted-types-for",
        "sandbox",
        "script-src",
        "script-src-attr",
        "script-src-elem",
        "style-src",
        "style-src-attr",
        "style-src-elem",
        "trusted-types",
        "upgrade-insecure-requests",
        "webrtc",
        "worker-src",
    }
)
#: Directives browsers no longer act on (or never shipped): a note, not an error.
OBSOLETE_DIRECTIVES = frozenset(
    {
        "block-all-mixed-content",  # superseded by Mixed Content autoupgrading
        "disown-opener",
        "navigate-to",
        "plugin-types",
        "prefetch-src",
        "referrer",
        "reflected-xss",
        "require-sri-for",
    }
)
#: Directives whose value is a source list (the others take tokens, URLs or nothing).
SOURCE_LIST_DIRECTIVES = KNOWN_DIRECTIVES - {
    "report-to",
    "report-uri",
    "require-trusted-types-for",
    "sandbox",
    "trusted-types",
    "upgrade-insecure-requests",
    "webrtc",
}
#: Dropped from <meta> policies (HTML "http-equiv Content-Security-Policy" state; CSP3 §6.4.2).
META_IGNORED_DIRECTIVES = ("frame-ancestors", "report-uri", "sandbox")

_KEYWORDS = frozenset(
    {
        "'self'",
        "'none'",
        "'unsafe-inline'",
        "'unsafe-eval'",
        "'strict-dynamic'",
        "'unsafe-hashes'",
        "'report-sample'",
        "'unsafe-allow-redirects'",
        "'wasm-unsafe-eval'",
        "'inline-speculation-rules'",
        "'trusted-types-eval'",
        "'report-sha256'",
        "'report-sha384'",
        "'report-sha512'",
        "'unsafe-webtransport-hashes'",
    }
)
# CSP3 §2.3.1: nonce-source / hash-source = "'" prefix base64-value "'"; the prefix is a
# keyword-like literal, matched case-insensitively; the base64 value itself is not altered.
_BASE64_VALUE = r"[A-Za-z0-9+/\-_]+={0,2}"
_NONCE_RE = re.compile(rf"^'nonce-{_BASE64_VALUE}'$", re.IGNORECASE)
_HASH_RE = re.compile(rf"^'sha(?:256|384|512)-{_BASE64_VALUE}'$", re.IGNORECASE)
_HASH_LIKE_RE = re.compile(r"^'sha[0-9]*-", re.IGNORECASE)
_SCHEME_SOURCE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:$")
# host-source = [ scheme-part "://" ] host-part [ ":" port-part ] [ path-part ]
_HOST_SOURCE_RE = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://)?"
    r"(?P<host>\*|(?:\*\.)?[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.?)"
    r"(?::(?P<port>\*|[0-9]+))?"
    r"(?P<path>/[^;,]*)?$"
)
_ASCII_WHITESPACE = "\t\n\f\r "
#: The policies read from one <meta> element: a page may hold a million commas (2 MiB of "a,": 4.5 s to parse
#: each part as a policy), and no site needs more than a few. A policy only restricts, so those left unread can
#: only make the grade stricter than a browser's, never more lenient.
MAX_META_POLICIES = 50
_DIRECTIVE_NAME_RE = re.compile(r"^[A-Za-z0-9\-]+$")


class SourceList(tuple[str, ...]):
    """A directive's source expressions, which keeps the quoted ones (keywords, nonces, hashes and mistakes) once
    worked out: the checks read a list many times, and most sources of a long list are hosts (a 2 MiB <meta>
    list took 0.05-0.2 s a pass, with ten passes)."""

    @functools.cached_property
    def quoted(self) -> tuple[str, ...]:
        return tuple(s for s in self if s.startswith("'"))

    @functools.cached_property
    def ignored(self) -> tuple[str, ...]:
        return tuple(s for s in self.quoted if not _is_valid_quoted(s))


@dataclass(frozen=True)
class Policy:
    """One parsed policy: directive name (lowercase) -> source expressions as written, each once."""

    directives: tuple[tuple[str, tuple[str, ...]], ...]
    delivery: str  # "header" | "meta"
    enforced: bool  # False for Content-Security-Policy-Report-Only
    text: str
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> tuple[str, ...] | None:
        for key, value in self.directives:
            if key == name:
                return value
        return None

    def __contains__(self, name: object) -> bool:
        return any(key == name for key, _ in self.directives)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.directives)

    @property
    def has_effect(self) -> bool:
        """Browsers keep unknown directives but act on none of them (CSP3 §2.2.1)."""
        return any(key in KNOWN_DIRECTIVES for key, _ in self.directives)


def parse_policy(text: str, *, delivery: str = "header", enforced: bool = True) -> Policy:
    """CSP3 §2.2.1 "Parse a serialized CSP", keeping notes on what a browser would skip."""
    directives: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    warnings: list[str] = []
    for raw in text.split(";"):
        token = raw.strip(_ASCII_WHITESPACE)
        if not token:
            continue  # empty directives, e.g. a trailing ";"
        if not token.isascii():
            warnings.append(f"the directive {_short(token)!r} holds non-ASCII characters and is ignored")
            continue
        name, _, rest = _split_first_whitespace(token)
        name = name.lower()
        if name in seen:
            warnings.append(f"the directive {name} appears twice; browsers use the first and ignore the rest")
            continue
        seen.add(name)
        if delivery == "meta" and name in META_IGNORED_DIRECTIVES:
            warnings.append(f"{name} is ignored in a <meta> policy (it only works as a header)")
            continue
        # a source written twice matches what it matches once (CSP3 §6.7.2.5 asks whether any source matches):
        # each is kept once, so a hostile <meta> of a million `*` is read as one (2.3 s of grading CPU before)
        value = SourceList(dict.fromkeys(v for v in re.split(r"[\t\n\f\r ]+", rest) if v))
        if not _DIRECTIVE_NAME_RE.match(name) or (name not in KNOWN_DIRECTIVES and name not in OBSOLETE_DIRECTIVES):
            warnings.append(f"{_short(name)!r} is not a CSP directive; browsers ignore it")
        elif name in OBSOLETE_DIRECTIVES:
            warnings.append(f"{name} is obsolete; browsers ignore it")
        warnings.extend(_missing_semicolon_warnings(name, value))
        warnings.extend(_source_list_warnings(name, value))
        directives.append((name, value))
    return Policy(tuple(directives), delivery, enforced, text.strip(_ASCII_WHITESPACE), tuple(warnings))


def _split_first_whitespace(token: str) -> tuple[str, str, str]:
    match = re.search(r"[\t\n\f\r ]", token)
    if not match:
        return token, "", ""
    return token[: match.start()], match.group(), token[match.end() :]


def parse_header_policies(values: Iterable[str], *, enforced: bool = True) -> list[Policy]:
    """CSP3 §2.2.2: each header line, and each comma-separated piece of it, is one policy.

    Policies without any directive are returned too (callers can say so); browsers drop them.
    """
    return [parse_policy(piece, enforced=enforced) for value in values for piece in value.split(",")]


def parse_meta_policies(content: str) -> tuple[list[Policy], bool]:
    """A <meta http-equiv="Content-Security-Policy"> element's policies, always enforced, split on commas as a
    header is, and whether parts past MAX_META_POLICIES were left unread.

    CSP3 §3.3 (HTML's http-equiv processing) parses the content as one policy, where a comma is part of a
    source, but Chromium parses it as it parses a header (ParseContentSecurityPolicies splits on commas whatever
    the policy's source) and enforces each part: Chromium 156 runs no script under content="img-src *,
    script-src 'none'", which read as one policy restricts images only. Parts of only whitespace are dropped,
    as Chromium drops them. Held to Chromium by tests/scanner/test_headers_browser.py."""
    pieces = content.split(",", MAX_META_POLICIES)
    unread = len(pieces) > MAX_META_POLICIES and bool(pieces.pop().strip(_ASCII_WHITESPACE + ","))
    policies = [parse_policy(p, delivery="meta", enforced=True) for p in pieces if p.strip(_ASCII_WHITESPACE)]
    return policies, unread


def upgrades_insecure_requests(policies: Iterable[Policy]) -> bool:
    """Whether browsers make the page's http:// requests over https:// (Upgrade Insecure Requests §4.1): an
    enforced policy, a header's or a <meta>'s, has upgrade-insecure-requests, whatever value follows the name.
    A Report-Only policy upgrades nothing. Callers pass the policies browsers act on: a <meta> one only from
    <head> and not inert (records/html.MetaElement). Held to Chromium by test_upgrade_insecure_requests_browser."""
    return any(policy.enforced and "upgrade-insecure-requests" in policy for policy in policies)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _missing_semicolon_warnings(directive: str, values: Sequence[str]) -> list[str]:
    """A directive name among the values of a directive that takes no source list: the ';' before it is missing,
    so the directive named is not set (`report-uri /r object-src 'none'` sets no object-src). Source lists are
    checked in _source_list_warnings; trusted-types is left out, as its values are policy names, any token."""
    if directive in SOURCE_LIST_DIRECTIVES or directive == "trusted-types":
        return []
    return [
        f"{directive} lists {value!r}, which is a directive name: a ';' is probably missing before it"
        for value in values
        if value.lower() in KNOWN_DIRECTIVES
    ]


def _source_list_warnings(directive: str, sources: Sequence[str]) -> list[str]:
    """Common mistakes that silently change a policy's meaning."""
    if directive not in SOURCE_LIST_DIRECTIVES:
        return []
    warnings = []
    for source in sources:
        lowered = source.lower()
        if lowered not in _MISTAKEN_BARE and not lowered.startswith(_MISTAKEN_PREFIXES) and lowered[:1] != "'":
            continue  # a host or scheme: the common case, decided in one set lookup and one prefix test
        if lowered in KNOWN_DIRECTIVES:
            warnings.append(
                f"{directive} lists {source!r}, which is a directive name: a ';' is probably missing before it"
            )
        elif f"'{lowered}'" in _KEYWORDS or lowered.startswith(_MISTAKEN_PREFIXES):
            warnings.append(f"{directive} has {source} without single quotes, so browsers read it as a host name")
        elif source.startswith("'") and not _is_valid_quoted(source):
            warnings.append(f"{directive} has {source}, {_malformed_reason(source)}; browsers ignore it")
    skipped = set(ignored_sources(sources))  # once, not per source: a 2 MiB <meta> policy made this quadratic
    kept = [s for s in sources if s.lower() != "'none'" and s not in skipped]
    if kept and any(s.lower() == "'none'" for s in sources):
        warnings.append(f"{directive} combines 'none' with other sources; 'none' is then ignored")
    return warnings


#: Unquoted sources that are mistakes: a directive name (a missing ';'), a keyword, nonce or hash without quotes.
_MISTAKEN_BARE = KNOWN_DIRECTIVES | {keyword.strip("'") for keyword in _KEYWORDS}
_MISTAKEN_PREFIXES = ("nonce-", "sha256-", "sha384-", "sha512-")


def _malformed_reason(source: str) -> str:
    lowered = source.lower()
    if lowered.startswith("'nonce-"):
        return "which is not a valid nonce (a nonce is base64: letters, digits, + / - _ and up to two = at the end)"
    if _HASH_LIKE_RE.match(source):
        return "which is not a valid hash (sha256-, sha384- or sha512- followed by a base64 digest)"
    return "which is not a CSP keyword"


def serialize(
    policy: Policy,
    rewrite: Callable[[str, str], str | None] = lambda _directive, source: source,
    *,
    without: Iterable[str] = (),
) -> str:
    """The policy as header text, each source passed through `rewrite` (None drops it).

    Directives named in `without` are left out (so a fix can append a better one).
    """
    dropped = set(without)
    parts = []
    for name, sources in policy.directives:
        if name in dropped:
            continue
        kept = [new for source in sources if (new := rewrite(name, source)) is not None]
        parts.append(" ".join([name, *kept]))
    return "; ".join(parts)


# --- Source expressions --------------------------------------------------------------------------


def is_nonce_or_hash(source: str) -> bool:
    # most sources are hosts: the quote test spares them two pattern runs (a 2 MiB <meta> policy reads each thrice)
    return source.startswith("'") and bool(_NONCE_RE.match(source) or _HASH_RE.match(source))


def _is_valid_quoted(source: str) -> bool:
    lowered = source.lower()
    return lowered in _KEYWORDS or lowered == "'none'" or is_nonce_or_hash(source)


def quoted_sources(sources: Sequence[str]) -> tuple[str, ...]:
    """The quoted expressions of a list, where every keyword, nonce and hash is (a parsed policy's lists keep
    theirs: `SourceList`)."""
    if isinstance(sources, SourceList):
        return sources.quoted
    return tuple(s for s in sources if s.startswith("'"))


def ignored_sources(sources: Sequence[str]) -> tuple[str, ...]:
    """Quoted expressions that match no CSP3 §2.3.1 production: browsers skip them."""
    if isinstance(sources, SourceList):
        return sources.ignored
    return tuple(s for s in quoted_sources(sources) if not _is_valid_quoted(s))


def keywords_in(sources: Sequence[str]) -> frozenset[str]:
    """Keyword sources, lowercased (ABNF literals are case-insensitive: 'SELF' is 'self')."""
    return frozenset(lowered for s in quoted_sources(sources) if (lowered := s.lower()) in _KEYWORDS)


def scheme_and_host(source: str) -> tuple[str | None, str | None]:
    """(scheme, host) of a scheme- or host-source, lowercased; (None, None) for anything else."""
    if source.startswith("'"):
        return None, None
    if _SCHEME_SOURCE_RE.match(source):
        return source[:-1].lower(), None
    match = _HOST_SOURCE_RE.match(source)
    if not match:
        return None, None
    scheme = match.group("scheme")
    return (scheme.lower() if scheme else None), match.group("host").lower()


def matches_nothing(sources: Sequence[str]) -> bool:
    """An empty list or `'none'` alone (with other sources present, 'none' is ignored).

    Sources browsers skip (see `ignored_sources`) do not count: `'none' 'bogus'` matches nothing.
    """
    skipped = set(ignored_sources(sources))
    kept = [s for s in sources if s not in skipped]
    return all(s.lower() == "'none'" for s in kept)  # also true when nothing is kept


def allows_all_inline(sources: Sequence[str], *, script: bool) -> bool:
    """CSP3 "Does a source list allow all inline behavior for type?"."""
    allow = False
    for source in quoted_sources(sources):
        if is_nonce_or_hash(source):
            return False
        lowered = source.lower()
        if script and lowered == "'strict-dynamic'":
            return False
        if lowered == "'unsafe-inline'":
            allow = True
    return allow


# --- Fallbacks -----------------------------------------------------------------------------------

# CSP3 §6.8 "Get fetch directive fallback list" (plus fenced-frame-src from the Fenced Frames spec).
# script-src, style-src and child-src are no request's effective directive, but script-src is
# where eval() is judged (CSP3 "EnsureCSPDoesNotBlockStringCompilation": script-src, then
# default-src), and all three fall back to default-src like every fetch directive.
# Anything else (base-uri, form-action, frame-ancestors, sandbox, ...) has no fallback at all.
_FALLBACKS: dict[str, tuple[str, ...]] = {
    "script-src-elem": ("script-src-elem", "script-src", "default-src"),
    "script-src-attr": ("script-src-attr", "script-src", "default-src"),
    "script-src": ("script-src", "default-src"),
    "style-src-elem": ("style-src-elem", "style-src", "default-src"),
    "style-src-attr": ("style-src-attr", "style-src", "default-src"),
    "style-src": ("style-src", "default-src"),
    "worker-src": ("worker-src", "child-src", "script-src", "default-src"),
    "frame-src": ("frame-src", "child-src", "default-src"),
    "fenced-frame-src": ("fenced-frame-src", "frame-src", "child-src", "default-src"),
    "child-src": ("child-src", "default-src"),
    "connect-src": ("connect-src", "default-src"),
    "manifest-src": ("manifest-src", "default-src"),
    "object-src": ("object-src", "default-src"),
    "media-src": ("media-src", "default-src"),
    "font-src": ("font-src", "default-src"),
    "img-src": ("img-src", "default-src"),
}


def effective_sources(policy: Policy, directive: str) -> tuple[str, tuple[str, ...]] | None:
    """(the directive that applies, its sources) for `directive`, or None when nothing restricts it.

    Every judgement of a source list goes through here, so a list inherited from default-src (or
    script-src, child-src) is judged exactly like the same list written under `directive`.
    """
    for name in _FALLBACKS.get(directive, (directive,)):
        sources = policy.get(name)
        if sources is not None:
            return name, sources
    return None
