"""A Content Security Policy built from what one page loads (issue 15): the `fix` of the CSP header.

Read from the page's one parse (records/html.py): every URL the page loads or posts to, the text
of its inline `<script>` and `<style>` elements, its `style=""` values and how many inline event
handlers it has. Choices, each for a reason:

- `default-src 'self'`, not 'none': the scanner sees one page's HTML, not its stylesheets or what
  its scripts fetch. Same-origin loads it cannot see (fonts and images named in the site's own CSS,
  `fetch('/api')`, workers) are the commonest and least risky, so they keep working; every other
  origin is listed only where the page was seen using it. Each directive written out repeats
  'self', since a directive replaces default-src rather than adding to it.
- Inline `<script>` and `<style>` are allowed by SHA-256 hashes of their text, exactly as browsers
  hash it (the UTF-8 bytes of the element's text; CSP3 §8.3). Data blocks (`type=application/ld+json`
  and other types that do not run) are not scripts and need no hash; import maps and speculation
  rules are checked like scripts, so they get one.
- Inline event handlers (`onclick=`) and `javascript:` links are NOT allowed: 'unsafe-hashes' would
  let any injected element carry an allowed handler's code (a script gadget). The note says to move
  them into scripts. `style=""` attributes ARE allowed, by their hashes with 'unsafe-hashes' in
  style-src-attr: an injected element can only reuse those exact declarations, which run no script.
  Past MAX_STYLE_ATTRIBUTE_HASHES distinct values, style-src-attr 'unsafe-inline' (and the note says
  what that costs).
- Fonts: a stylesheet's `@font-face` is invisible without fetching the stylesheet, so font-src is
  'self' (through default-src) plus each stylesheet's origin (relative `url()`s in a stylesheet
  resolve against it); img-src gets those origins too. A known font service's stylesheet names its fonts on
  another origin (data/csp_services.toml: Google Fonts' on fonts.gstatic.com): that origin instead.
  `url()`s in inline CSS are read directly.
- Known third-party scripts that load more when they run (data/csp_services.toml: reCAPTCHA, the Google tag,
  Stripe.js, two captchas) get what their makers document for CSP, and the note names them.
- Origins are scheme://host[:port], `data:`/`blob:` only for images, fonts and media; on an HTTPS
  page `http://` origins are written as `https://` because upgrade-insecure-requests upgrades those
  requests before the CSP check (Fetch "main fetch"). A host that is not a valid CSP host-source
  (an IPv6 literal, a name with other characters: a hostile page could try `;` to add directives)
  is left out.
- Bounded: at most MAX_ORIGINS origins per directive, MAX_HASHES hashes per kind and MAX_LENGTH
  characters in all. A page past a bound gets GENERIC (strict, not derived), with a note saying why.
  The site's own policy, repaired or enforced, is repeated up to MAX_SITE_POLICY_LENGTH characters; past it,
  GENERIC too, with the changes to make in the site's policy in the note. A host longer than a DNS name
  (253 characters) is left out: nothing loads from it, and a page of 2 MiB can hold one.
- Reporting (`report-uri`, `report-to`), `frame-ancestors` and Trusted Types directives of the site's
  current policy are kept: the site chose them, and they only add protection or reports.
- What the site wrote goes into the user's server configuration (fixes/snippets.py), where Apache reads
  `${NAME}` and Caddy `{$NAME}` as the server's environment variables: a value the site wrote is kept only
  if it matches WRITABLE (CSP source expressions and URL characters, without `$`, braces, `%`, quotes,
  backslashes or whitespace); the rest is left out, with a note.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

from ...wording import counted
from ..data import ScriptService, csp_services
from ..records.csp import Policy, effective_sources
from ..records.html import (
    HtmlPage,
    base_element,
    base_url,
    clean_url,
    join_url,
    origin_of,
    raw_resources,
    script_type,
    split_url,
)
from ..records.script_bypasses import HostSource, bypass_hosts, host_source, narrowed_path

__all__ = [
    "GENERIC_POLICY",
    "KEPT_DIRECTIVES",
    "MAX_HASHES",
    "MAX_LENGTH",
    "MAX_ORIGINS",
    "MAX_SITE_POLICY_LENGTH",
    "MAX_STYLE_ATTRIBUTE_HASHES",
    "NONCE_NOTE",
    "CspProposal",
    "Repairs",
    "generic_policy",
    "inline_hash",
    "left_out_note",
    "propose_policy",
    "relies_on_nonce",
    "repair_policy",
    "site_policy_too_long",
    "writable_directives",
    "writable_source",
]

#: At most this many origins in one directive; a page using more gets GENERIC_POLICY.
MAX_ORIGINS = 20
#: At most this many hashes of inline `<script>` (and, separately, of inline `<style>`).
MAX_HASHES = 20
#: At most this many `style=""` hashes; more distinct values get style-src-attr 'unsafe-inline'.
MAX_STYLE_ATTRIBUTE_HASHES = 20
#: The whole policy's length: nginx as a reverse proxy holds all response headers in
#: proxy_buffer_size (4 KiB on most platforms) and fails the response past it.
MAX_LENGTH = 4096
#: The longest policy of the site's own (repaired, or its Report-Only one enforced) a proposal repeats. The site
#: already sends it, so it is not held to MAX_LENGTH; but the report writes a fix a dozen times (the fix, a snippet
#: per server, the notes) and a <meta> policy can be 2 MiB: one repaired made a 12.8 MB headers section.
MAX_SITE_POLICY_LENGTH = 4 * MAX_LENGTH
#: RFC 1035 §2.3.4: a name is at most 255 octets, 253 characters written without the final dot.
_MAX_HOST_LENGTH = 253
#: Directives of the site's own policy carried into the proposal.
KEPT_DIRECTIVES = ("frame-ancestors", "report-uri", "report-to", "require-trusted-types-for", "trusted-types")
_MAX_KEPT_TOKENS = 16
_MAX_KEPT_TOKEN_LENGTH = 256
#: The strict policy proposed when the page cannot be read or lists too much.
GENERIC_POLICY = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'self'"
)
#: Where reCAPTCHA's api.js, the most common script of a host serving JSONP, loads the rest of itself from: a kept
#: culprit covering it gets the hint to allow this path.
_RECAPTCHA = HostSource("www.gstatic.com", False, "/recaptcha/")
_ROLLOUT = (
    # Not "as the snippets do": the fix note is also printed where no snippet is (the compliance PDF, CI formats)
    "Roll the policy out as Content-Security-Policy-Report-Only first, use the site for a week or two while "
    "watching the browser console (and the reports, if the policy has report-to or report-uri) for what it "
    "would block, add what is legitimate, then rename the header to Content-Security-Policy to enforce it"
)

# The directive each kind of raw_resources() fetches under (CSP3 §6.1 fetch directives).
_DIRECTIVE_OF_KIND = {
    "script": "script-src",
    "stylesheet": "style-src",
    "image": "img-src",
    "imageset": "img-src",
    "icon": "img-src",
    "media": "media-src",
    "track": "media-src",
    "frame": "frame-src",
    "object": "object-src",
    "font": "font-src",
    "manifest": "manifest-src",
    "form": "form-action",
}
# `<link rel=preload as=...>` values raw_resources() leaves as "preload".
_DIRECTIVE_OF_PRELOAD = {
    "fetch": "connect-src",
    "worker": "worker-src",
    "document": "frame-src",
    "embed": "object-src",
    "object": "object-src",
}
# Written in this order; those absent from a proposal are covered by default-src 'self'.
_ORDER = (
    "default-src", "script-src", "style-src", "style-src-attr", "img-src", "font-src", "connect-src",
    "media-src", "frame-src", "worker-src", "manifest-src", "object-src", "base-uri", "form-action",
)  # fmt: skip
_SCHEMES_ALLOWED = {"img-src": ("data", "blob"), "font-src": ("data",), "media-src": ("data", "blob")}
# Inline scripts browsers check against script-src besides JS: import maps, speculation rules.
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_AUTHORITY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#]*)")
_HOST_RE = re.compile(r"^[a-z0-9\-]+(?:\.[a-z0-9\-]+)*$")
_FONT_FACE_RE = re.compile(r"@font-face\s*\{([^{}]*)\}", re.IGNORECASE)
# CSS Syntax §4.3.6: an unquoted url() holds no whitespace, quotes or "(" unless escaped ("\(" is kept, as
# before); one with a bare "(" is a bad url, which loads nothing. Allowing "(" let each "url(" of a
# `<style>` made of "url(url(url(..." read to the end and back (64 KB: 6.3 s, 256 KB: 106 s, the
# event loop frozen): now a url() ends at the next "(" at the latest, and the possessive quantifiers
# never give back what they read.
_CSS_URL_RE = re.compile(r"""url\(\s*+(?:"([^"]*+)"|'([^']*+)'|((?:[^()'"\s\\]++|\\\(?)*+))\s*+\)""", re.IGNORECASE)
_CSS_IMPORT_RE = re.compile(r"""@import\s+(?:url\(\s*)?["']?([^"')\s;]+)""", re.IGNORECASE)
_TIME_CHECK_EVERY = 256
#: A source expression, URL or name the site wrote that may be copied into server configuration: a quoted
#: keyword, nonce or hash (CSP3 §2.3.1), or a host / scheme source, report-uri URL, report-to group or
#: Trusted Types policy name made of URL characters, without `$` `{` `}`, quotes, backslashes or whitespace
#: (Apache expands `${NAME}` on every line, Caddy `{$NAME}` before reading escapes); `%` only as a
#: percent-encoding, `%` and two hex digits (`a%20b`): never Apache's `%{...}` format, and mod_headers is
#: given `%%` (a literal percent, writers_config._apache_string), nginx and Caddy take `%` as it is. Linear:
#: the repeated alternatives start with different characters, no nesting.
_WRITABLE_RE = re.compile(r"'[A-Za-z0-9+/=_.-]+'|(?:[A-Za-z0-9!#&()*+,\-./:;=?@\[\]_~]|%[0-9A-Fa-f]{2})+")
_WRITABLE_DIRECTIVE_RE = re.compile(r"[a-z0-9-]+")
_MAX_WRITABLE_LENGTH = 1024
#: Directives that mean nothing without a value: left out when none of theirs is writable.
_NEEDS_A_VALUE = ("report-uri", "report-to")
NONCE_NOTE = (
    "The policy relies on a nonce ('nonce-...'), which must be new in every response: send it from the "
    "application that generates the nonce, not as a fixed header in the server configuration (one nonce "
    "repeated in every response would block each script carrying a new one and protect nothing)"
)


@dataclass(frozen=True)
class CspProposal:
    """The proposed policy (the header value) and the notes that go with it: what it allows and leaves out,
    and how to roll it out. They speak of the proposal and its snippets, not of the site, so they travel with
    the fix (the report's `fix_note`), never in the finding's `note`, which a free report shows without a fix."""

    policy: str
    derived: bool  # False: GENERIC_POLICY (no HTML page, or one past a bound)
    notes: tuple[str, ...]

    @property
    def fix_note(self) -> str | None:
        """The notes as the sentences shown beside the fix."""
        return " ".join(f"{note}." for note in self.notes) or None


class _TooMuch(Exception):
    """A bound was passed: the proposal falls back to the generic policy."""


def inline_hash(text: str) -> str:
    """The CSP hash-source of an inline element's text: base64 of SHA-256 over its UTF-8 bytes."""
    digest = hashlib.sha256(text.encode("utf-8", "replace")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def writable_source(token: str) -> bool:
    """Whether a source expression the site wrote may be copied into server configuration (_WRITABLE_RE)."""
    return len(token) <= _MAX_WRITABLE_LENGTH and _WRITABLE_RE.fullmatch(token) is not None


def writable_directives(
    directives: Iterable[tuple[str, Sequence[str]]],
) -> tuple[list[tuple[str, tuple[str, ...]]], int]:
    """The directives of a site's policy with only what may be written into server configuration, and how
    many values (sources or directive names) were left out. A source list left empty matches nothing, as
    'none' does; report-uri and report-to left empty are dropped."""
    kept: list[tuple[str, tuple[str, ...]]] = []
    left_out = 0
    for name, sources in directives:
        if _WRITABLE_DIRECTIVE_RE.fullmatch(name) is None:
            left_out += 1
            continue
        writable = tuple(source for source in sources if writable_source(source))
        left_out += len(sources) - len(writable)
        if writable or not sources or name not in _NEEDS_A_VALUE:
            kept.append((name, writable))
    return kept, left_out


def relies_on_nonce(directives: Iterable[tuple[str, Sequence[str]]]) -> bool:
    """Whether a policy allows something by a nonce: one a server would send unchanged in every response."""
    return any(source.lower().startswith("'nonce-") for _, sources in directives for source in sources)


def left_out_note(count: int, where: str) -> str:
    return (
        f"{counted(count, 'value')} of {where} left out: characters ($, braces, %, quotes, backslashes) that "
        "server configuration would read as its own (Apache and Caddy expand environment variables written "
        "in them)"
    )


def site_policy_too_long(
    policy: str, https: bool, keep: Sequence[tuple[str, Sequence[str]]], whose: str, changes: str
) -> CspProposal | None:
    """The generic policy, with a note saying why and what to change in the site's own, when `policy` (made from
    the site's: `whose`) is longer than MAX_SITE_POLICY_LENGTH; None when it is not."""
    if len(policy) <= MAX_SITE_POLICY_LENGTH:
        return None
    note = (
        f"This is a generic strict policy: {whose} would take {len(policy):,} characters, past this scanner's bound "
        f"of {MAX_SITE_POLICY_LENGTH:,} for a policy it repeats. To keep the site's policy instead, {changes}"
    )
    return CspProposal(_generic(https, _kept(keep)[0]), False, (note, _ROLLOUT))


def generic_policy(https: bool, keep: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """GENERIC_POLICY, with upgrade-insecure-requests on an HTTPS page and the site's kept directives."""
    return _generic(https, _kept(keep)[0])


def _generic(https: bool, kept: list[tuple[str, tuple[str, ...]]]) -> str:
    directives = [d.strip() for d in GENERIC_POLICY.split(";")]
    if any(name == "frame-ancestors" for name, _ in kept):
        directives = [d for d in directives if not d.startswith("frame-ancestors")]
    if https:
        directives.append("upgrade-insecure-requests")
    directives.extend(" ".join([name, *values]) for name, values in kept)
    return "; ".join(directives)


def propose_policy(page: HtmlPage | None, page_url: str, keep: Sequence[tuple[str, Sequence[str]]] = ()) -> CspProposal:
    """The policy `page` (fetched from `page_url`) needs; `keep`: the site's current (directive, sources)."""
    https = urlsplit(page_url).scheme == "https"
    kept, left_out = _kept(keep)
    kept_note = (left_out_note(left_out, "the site's reporting and Trusted Types directives"),) if left_out else ()
    if page is None:
        return CspProposal(_generic(https, kept), False, (*kept_note, _ROLLOUT))
    builder = _Builder(page, page_url, https)
    try:
        builder.collect()
        policy = builder.policy(kept)
        if len(policy) > MAX_LENGTH:
            raise _TooMuch(f"listing everything the page loads would take {len(policy):,} characters")
    except _TooMuch as too_much:
        note = (
            f"This is a generic strict policy, not one built from the page: {too_much} (past this scanner's "
            "bounds). Use a nonce on each <script> instead (script-src 'nonce-RANDOM' 'strict-dynamic', with "
            "RANDOM new for every response) and list the few origins the rest comes from"
        )
        return CspProposal(_generic(https, kept), False, (note, *kept_note, _ROLLOUT))
    return CspProposal(policy, True, (*builder.notes(), *kept_note, _ROLLOUT))


@dataclass(frozen=True)
class Repairs:
    """What to change in a policy that already restricts scripts (checks/headers.py decides)."""

    insecure_scripts: bool = False  # http:// script sources: make them https://
    unsafe_eval: bool = False  # drop 'unsafe-eval'
    objects_open: bool = False  # object-src 'none'
    base_open: bool = False  # base-uri 'self'
    inline_style: bool = False  # drop 'unsafe-inline' for styles, allow the page's own by hash
    # script sources through which a script that runs what a request names loads (checks/csp_bypass.py): each
    # becomes the paths the page loads its scripts from on that host, or goes when the page loads none from there
    bypassing: frozenset[str] = frozenset()
    bypassing_elsewhere: tuple[str, ...] = ()  # such sources of another policy than the one repaired: said, not changed


def repair_policy(policy: Policy, page: HtmlPage | None, page_url: str, repairs: Repairs) -> CspProposal:
    """The site's own policy with its weaknesses removed, for a policy that already restricts scripts.

    Replacing such a policy by one derived from a single page could loosen it (a nonce with
    'strict-dynamic' would become a host list) or break what the page loads later, so it is edited.
    """
    style_sources: list[str] = []
    attribute_sources: list[str] = []
    if repairs.inline_style and page is not None:
        builder = _Builder(page, page_url, urlsplit(page_url).scheme == "https")
        try:
            builder._inline_elements()
        except _TooMuch:
            builder.style_hashes.clear()
        style_sources = list(builder.style_hashes)
        if len(page.style_attributes) > MAX_STYLE_ATTRIBUTE_HASHES:  # too many to hash: keep them working
            attribute_sources = ["'unsafe-inline'"]
        elif page.style_attributes:
            attribute_sources = ["'unsafe-hashes'", *dict.fromkeys(map(inline_hash, page.style_attributes))]
    objects, base, foreign_base = (
        _objects_and_base(page, page_url) if repairs.objects_open or repairs.base_open else ([], [], None)
    )
    dropped = {"object-src"} if repairs.objects_open else set()
    dropped |= {"base-uri"} if repairs.base_open else set()
    directives: list[str] = []
    writable, left_out = writable_directives(policy.directives)
    narrowing = _narrowing(policy, page, page_url, repairs.bypassing)
    # Each directive's sources as the site wrote them, looked up once each: Policy.get reads the directives from
    # the first, and a <meta> policy of 130,000 directives took minutes
    written: dict[str, tuple[str, ...]] = {}
    for name, sources in policy.directives:
        written.setdefault(name, sources)

    def rewritten(name: str, sources: Sequence[str], narrow: bool) -> list[str]:
        return list(
            dict.fromkeys(
                new
                for source in sources
                for new in (
                    narrowing.replaced[source]
                    if narrow and source in narrowing.replaced
                    else (_repaired(name, source, repairs),)
                )
                if new is not None
            )
        )

    # default-src serves every other fetch too: its script sources are narrowed in a script-src of their own
    writable_default_src = next((sources for name, sources in writable if name == "default-src"), ())
    script_src_added = narrowing.directive == "default-src" and bool(narrowing.replaced)
    for name, sources in writable:
        if name in dropped:
            continue
        kept = rewritten(name, sources, name == narrowing.directive and not script_src_added)
        if not written.get(name):  # upgrade-insecure-requests, sandbox: valueless as the site wrote them
            directives.append(name)
            continue
        if repairs.inline_style and name in ("style-src", "style-src-elem"):
            kept += [h for h in style_sources if h not in kept]
        if repairs.inline_style and name == "style-src-attr" and "'unsafe-inline'" in (s.lower() for s in sources):
            kept += [h for h in attribute_sources if h not in kept]
        directives.append(" ".join([name, *(kept or ["'none'"])]))
    if script_src_added:
        directives.append(
            " ".join(["script-src", *(rewritten("script-src", writable_default_src, True) or ["'none'"])])
        )
    if repairs.inline_style and "style-src" not in policy and "style-src-elem" not in policy:
        directives.append(" ".join(["style-src", "'self'", *style_sources]))
    if repairs.inline_style and attribute_sources and "style-src-attr" not in policy:
        directives.append(" ".join(["style-src-attr", *attribute_sources]))
    object_src, base_uri = " ".join(["object-src", *objects]), " ".join(["base-uri", *base])
    if repairs.objects_open:
        directives.append(object_src)
    if repairs.base_open:
        directives.append(base_uri)
    changes = [
        change
        for wanted, change in (
            (repairs.insecure_scripts, "script sources over https://"),
            (repairs.unsafe_eval, "'unsafe-eval' removed (move eval() and new Function() code into plain functions)"),
            (repairs.objects_open, object_src),
            (repairs.base_open, base_uri),
            (repairs.inline_style, "inline styles allowed by hash instead of 'unsafe-inline'"),
            (
                bool(narrowing.replaced or narrowing.kept or narrowing.unwritable),
                _narrowing_change(narrowing, script_src_added),
            ),
        )
        if wanted
    ]
    too_long = site_policy_too_long(
        "; ".join(directives),
        urlsplit(page_url).scheme == "https",
        writable,
        "the site's policy repaired",
        "make these changes in it: " + "; ".join(changes),
    )
    if too_long is not None:
        return too_long
    notes = ["The proposed policy is the site's current one" + (", changed: " + "; ".join(changes) if changes else "")]
    if repairs.base_open and foreign_base is not None:
        notes.append(foreign_base_note(foreign_base))
    if repairs.bypassing_elsewhere:
        notes.append(_elsewhere_note(repairs.bypassing_elsewhere))
    if left_out:
        notes.append(left_out_note(left_out, "the site's policy"))
    if relies_on_nonce(writable):  # no server snippet then (snippets.py): the application sends the header
        notes.append(NONCE_NOTE)
    return CspProposal("; ".join(directives), False, (*notes, _ROLLOUT))


@dataclass(frozen=True)
class _Narrowing:
    """What the repair does with the sources through which a listed script loads (Repairs.bypassing)."""

    directive: str | None = None  # of the policy's script list
    replaced: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # source -> the page's paths on its hosts
    kept: tuple[str, ...] = ()  # no <script src> of the page loads from them: left as they are, with advice
    unwritable: tuple[str, ...] = ()  # the page's scripts from them cannot be written as paths: left too
    unread: bool = False  # the page lists too many scripts to read: every such source kept


def _narrowing(policy: Policy, page: HtmlPage | None, page_url: str, bypassing: frozenset[str]) -> _Narrowing:
    """Each source of the policy's script list in `bypassing` is replaced by the paths the page loads scripts from
    on the hosts it allows (`_Builder._narrowed`). One the page loads nothing from by <script src> is kept: a
    script may load it at run time (reCAPTCHA's api.js loads from www.gstatic.com/recaptcha/), or another page."""
    found = effective_sources(policy, "script-src-elem") if bypassing else None
    if found is None:
        return _Narrowing()
    culprits = [source for source in found[1] if source in bypassing]
    loaded: list[tuple[str, HostSource]] = []
    if page is not None:
        builder = _Builder(page, page_url, urlsplit(page_url).scheme == "https")
        try:
            builder._resources(only="script-src")
        except _TooMuch:  # more than MAX_ORIGINS script sources, or out of time: a partial list would drop some
            return _Narrowing(found[0], {}, tuple(culprits), unread=True)
        written = builder.sources.get("script-src", {})
        loaded = [(source, read) for source in written if (read := host_source(source)) is not None]
    replaced: dict[str, tuple[str, ...]] = {}
    kept: list[str] = []
    unwritable: list[str] = []
    for source in culprits:
        culprit = host_source(source)
        covered = [(page_source, read) for page_source, read in loaded if culprit is not None and culprit.covers(read)]
        # the page's sources under the culprit: its paths on hosts serving a listed script, and the origins of hosts
        # under a `*.host` culprit that serve none (apis.google.com beside www.google.com/recaptcha/)
        paths = tuple(page_source for page_source, read in covered if read.path or read.host not in bypass_hosts())
        if covered and len(paths) < len(covered):
            # a script of the page on a host serving a listed script, whose path `_Builder._narrowed` could not
            # write: only its origin would allow it, so the culprit stays
            unwritable.append(source)
        elif paths:
            replaced[source] = paths
        else:
            kept.append(source)
    return _Narrowing(found[0], replaced, tuple(kept), tuple(unwritable))


def _elsewhere_note(sources: tuple[str, ...]) -> str:
    return (
        f"The policy allowing scripts from {_first_few(list(sources))} (hosts that also serve JSONP endpoints or "
        "AngularJS) is another of the site's policies: allow only the paths the site's scripts load from there"
    )


#: The sources a change note names, at most: a hostile policy writes one host in thousands of ways.
_NOTE_SOURCES = 5


def _narrowing_change(narrowing: _Narrowing, in_script_src: bool) -> str:
    """The change note of `_narrowing`; `in_script_src`: in a script-src added for them, default-src keeping the
    rest."""
    parts = []
    if narrowing.replaced:
        each = [f"{source} -> {' '.join(paths)}" for source, paths in narrowing.replaced.items()]
        where = " (in a script-src of its own: default-src still serves the rest)" if in_script_src else ""
        parts.append(
            "script hosts that also serve JSONP endpoints or AngularJS allowed by the paths this page loads scripts "
            f"from{where}: {_first_few(each)}"
        )
    if narrowing.unwritable:
        parts.append(
            f"{_first_few(list(narrowing.unwritable))} kept (this page loads scripts from it by paths a policy "
            "cannot hold as written): allow only the paths the site's scripts load from there, not the whole host"
        )
    if narrowing.kept:
        why = "this page lists too many scripts to read" if narrowing.unread else "no <script src> of this page uses it"
        hint = (
            " (for reCAPTCHA, https://www.gstatic.com/recaptcha/)"
            if any((read := host_source(source)) is not None and read.covers(_RECAPTCHA) for source in narrowing.kept)
            else ""
        )
        parts.append(
            f"{_first_few(list(narrowing.kept))} kept ({why}): allow only the paths the site's scripts load from "
            f"there, not the whole host{hint}, or use nonces with 'strict-dynamic'"
        )
    return "; ".join(parts)


def _first_few(items: list[str]) -> str:
    shown = ", ".join(items[:_NOTE_SOURCES])
    return shown + (f" and {len(items) - _NOTE_SOURCES:,} more" if len(items) > _NOTE_SOURCES else "")


def _objects_and_base(page: HtmlPage | None, page_url: str) -> tuple[list[str], list[str], str | None]:
    """object-src and base-uri for a repaired policy, derived from the page as propose_policy derives them:
    'none' and 'self' plus what its <object>/<embed> load and its <base href>, which fixed 'none' and 'self'
    would block (the page's relative URLs then resolve against the document, not the base); and base-uri's
    source for a <base href> on another origin (`foreign_base_note`)."""
    if page is None:
        return ["'none'"], ["'self'"], None
    builder = _Builder(page, page_url, urlsplit(page_url).scheme == "https")
    try:
        builder.collect_objects_and_base()
    except _TooMuch:  # more than MAX_ORIGINS embedded origins, or out of time: the strict values
        return ["'none'"], ["'self'"], None
    lists = builder.source_lists()
    return lists["object-src"], lists["base-uri"], builder.foreign_base


def foreign_base_note(source: str) -> str:
    """Why base-uri allows another origin: the page's <base href> points there, which the page analysis flags
    (page.base_foreign) and whose fix is to remove it. The proposal keeps the page working as it is; this says
    what to drop from it once the <base> goes, so that the two pieces of advice agree."""
    return (
        f"The base-uri directive allows {source} because the page's <base href> points there and its relative "
        "URLs load from there: if that origin is not the site's own, remove the <base> element (the page analysis "
        f"flags it) and {source} from base-uri"
    )


def _repaired(directive: str, source: str, repairs: Repairs) -> str | None:
    lowered = source.lower()
    if repairs.unsafe_eval and lowered == "'unsafe-eval'":
        return None
    if repairs.inline_style and lowered == "'unsafe-inline'" and directive.startswith("style-src"):
        return None
    if repairs.insecure_scripts and directive.startswith(("script-src", "default-src")):
        if lowered == "http:":
            return None
        if lowered.startswith("http://"):
            return "https://" + source.split("://", 1)[1]
    return source


def _kept(keep: Sequence[tuple[str, Sequence[str]]]) -> tuple[list[tuple[str, tuple[str, ...]]], int]:
    """The site's directives worth keeping, bounded (tokens come parsed: no `;` or `,` in them), and how many
    of their values were left out as unwritable in server configuration (writable_source)."""
    kept: list[tuple[str, tuple[str, ...]]] = []
    left_out = 0
    for name, values in keep:
        if name not in KEPT_DIRECTIVES or any(name == seen for seen, _ in kept):
            continue
        bounded = [v for v in values[:_MAX_KEPT_TOKENS] if len(v) <= _MAX_KEPT_TOKEN_LENGTH and v.isascii()]
        tokens = tuple(v for v in bounded if writable_source(v))
        left_out += len(bounded) - len(tokens)
        if tokens or name == "require-trusted-types-for":
            kept.append((name, tokens))
    return kept, left_out


class _Builder:
    """Collects the sources of one page's policy; raises _TooMuch past a bound."""

    def __init__(self, page: HtmlPage, page_url: str, https: bool) -> None:
        self.page = page
        self.page_url = page_url
        self.https = https
        self.page_origin = origin_of(page_url)
        self.sources: dict[str, dict[str, None]] = {}  # directive -> ordered sources
        self.script_hashes: dict[str, None] = {}
        self.style_hashes: dict[str, None] = {}
        self.counts = {"script": 0, "stylesheet": 0, "image": 0, "font": 0, "frame": 0, "other": 0}
        self.left_out: dict[str, None] = {}  # why some loads are not allowed, for the note
        self.stylesheet_origins: dict[str, None] = {}
        # (directive, scheme, authority, before the <base>) -> source
        self.source_of: dict[tuple[str, str, str, bool], str | None] = {}
        self.base, base_href = base_url(page, page_url)
        self.base_href = (
            base_href if base_href is not None and not base_href.startswith(("data:", "javascript:")) else None
        )
        self.base_is_self = origin_of(self.base) == self.page_origin
        self.base_element = base_element(page)
        self.foreign_base: str | None = None  # base-uri's source for a <base href> on another origin
        self.font_services: dict[str, str] = {}  # a known font service's stylesheet origin -> its fonts' origin
        self.script_services: dict[str, ScriptService] = {}  # known scripts of the page that load more, by name
        self.known_script_hosts = csp_services().script_hosts

    # -- collecting ---------------------------------------------------------------------------------

    def collect(self) -> None:
        self._base()
        self._resources()
        self._inline_elements()
        self._style_attributes()
        for service in self.script_services.values():  # what a known script loads when it runs
            for directive, sources in service.sources:
                for source in sources:
                    self._add(directive, source)
        for origin in self.stylesheet_origins:  # a stylesheet's relative url()s load from its origin
            if (fonts := csp_services().fonts_of_stylesheet.get(origin)) is not None:
                self._add("font-src", fonts)  # ...or, for a known font service, from where its CSS names them
                self.font_services[origin] = fonts
                continue
            self._add("font-src", origin)
            self._add("img-src", origin)

    def collect_objects_and_base(self) -> None:
        """Only what object-src and base-uri need (a repaired policy adds those, nothing else)."""
        self._base()
        self._resources(only="object-src")

    def _base(self) -> None:
        """base-uri allows the page's <base href>, which 'self' alone would block (breaking its relative URLs)."""
        if self.base_href is not None:
            source = self._add_url("base-uri", self.base_href, before_base=True)
            self.foreign_base = source if source != "'self'" else None

    def _resources(self, only: str | None = None) -> None:
        started = time.thread_time()
        for count, (raw, kind, element) in enumerate(raw_resources(self.page)):
            if count % _TIME_CHECK_EVERY == 0 and time.thread_time() - started >= self.page.budget.max_cpu_seconds:
                raise _TooMuch("the page lists more resources than could be read in time")
            directive = _DIRECTIVE_OF_KIND.get(kind)
            if kind == "preload":
                directive = _DIRECTIVE_OF_PRELOAD.get(str(element.get("as", "")).strip().lower())
            if directive is None or (only is not None and directive != only):
                continue
            counted = "image" if kind == "imageset" else kind
            self.counts[counted if counted in self.counts else "other"] += 1
            # As page analysis resolves them: what precedes the <base> was fetched against the page's URL (HTML
            # §4.2.3, records/html.base_element); a form's action is resolved when it is submitted.
            before_base = (
                self.base_element is not None and element.position < self.base_element.position and kind != "form"
            )
            source = self._add_url(directive, raw, before_base=before_base)
            if kind == "stylesheet" and source is not None and source != "'self'":
                self.stylesheet_origins.setdefault(source)
            elif kind == "script" and only is None and source is not None and source != "'self'":
                self._known_script(raw, source, before_base)

    def _known_script(self, raw: str, source: str, before_base: bool) -> None:
        """Note a script of data/csp_services.toml the page loads (it needs more when it runs); `source`: what
        _add_url allowed it by, whose host tells at once whether it can be one (a page may load thousands)."""
        read = host_source(source)
        if read is None or read.host not in self.known_script_hosts:
            return
        url = join_url(self.page_url if before_base else self.base, clean_url(raw).replace("\\", "/"))
        if url is None or not url.lower().startswith(("https://", "http://")):
            return
        for service in csp_services().scripts:
            if service.loaded_by(url):
                self.script_services.setdefault(service.name, service)

    def _inline_elements(self) -> None:
        for element in self.page.elements:
            if element.inert or element.text is None or not element.text:
                continue  # an empty inline script or style is never checked against the policy
            if element.name == "script":
                # Every script but a data block is checked against script-src (HTML §4.12.1.1 step 19), an
                # import map and speculation rules too.
                if element.get("src") is None and script_type(element) is not None:
                    self._hash(self.script_hashes, element.text, "inline scripts")
            elif element.name == "style":
                self._hash(self.style_hashes, element.text, "inline <style> elements")
                self._css_urls(element.text)

    def _style_attributes(self) -> None:
        for value in self.page.style_attributes:
            self._css_urls(value)

    def _css_urls(self, css: str) -> None:
        """`url()`s of inline CSS: inside @font-face they are fonts, elsewhere images; `@import`s are styles."""
        imports = []
        for match in _CSS_IMPORT_RE.finditer(css):
            imports.append((match.start(), match.end()))
            source = self._add_url("style-src", match.group(1))
            if source is not None and source != "'self'":
                self.stylesheet_origins.setdefault(source)
        in_import = _Spans(imports)
        in_font_face = _Spans([(m.start(1), m.end(1)) for m in _FONT_FACE_RE.finditer(css)])
        for match in _CSS_URL_RE.finditer(css):
            if in_import.holds(match.start()):
                continue
            url = next(g for g in match.groups() if g is not None)
            self._add_url("font-src" if in_font_face.holds(match.start()) else "img-src", url)

    def _hash(self, hashes: dict[str, None], text: str, what: str) -> None:
        hashes.setdefault(inline_hash(text))
        if len(hashes) > MAX_HASHES:
            raise _TooMuch(f"the page has more than {MAX_HASHES} distinct {what}")

    def _add_url(self, directive: str, raw: str, *, before_base: bool = False) -> str | None:
        """Allow what `raw` (a URL as written in the page) loads under `directive`; the source added, or None.
        `before_base`: it is resolved against the page's URL, not the `<base href>`."""
        base, base_is_self = (self.page_url, True) if before_base else (self.base, self.base_is_self)
        value = clean_url(raw).replace("\\", "/")  # URL Standard: "\\" is "/" in http(s) URLs
        if not value or value.startswith("#"):
            return None
        authority = _AUTHORITY_RE.match(value)
        if authority is not None:  # scheme://host...: the source depends on the scheme and host alone
            key = (directive, authority.group(1) or "", authority.group(2), before_base)
            if key not in self.source_of:  # a page names the same few origins thousands of times
                joined = join_url(base, authority.group(0))
                parts = split_url(joined) if joined is not None else None
                self.source_of[key] = self._source(directive, parts) if parts is not None else None
            source = self.source_of[key]
            return self._add(directive, self._narrowed(directive, source, base, value)) if source is not None else None
        if _SCHEME_RE.match(value):
            joined = join_url(base, value)
            split = split_url(joined) if joined is not None else None
            if split is None:
                return None  # a URL browsers cannot parse loads nothing
            parts = split
        elif base_is_self:
            return self._add(directive, "'self'")  # relative, against the page's own origin
        else:
            parts = urlsplit(base)
        source = self._source(directive, parts)
        return self._add(directive, self._narrowed(directive, source, base, value)) if source is not None else None

    def _narrowed(self, directive: str, source: str, base: str, value: str) -> str:
        """`source` (an origin) for a script the page loads, or the script's path on it when its host also serves a
        script that runs what a request names (records/script_bypasses.py: a JSONP endpoint of www.google.com, whose
        reCAPTCHA a page loads from /recaptcha/): allowing the whole host would let an injected script use it."""
        if directive != "script-src" or source == "'self'" or urlsplit(source).hostname not in bypass_hosts():
            return source
        joined = join_url(base, value)
        parts = split_url(joined) if joined is not None else None
        path = narrowed_path(parts) if parts is not None else None
        if path is None or not writable_source(source + path):  # a path server configuration cannot hold as is
            return source
        return source + path

    def _source(self, directive: str, parts: SplitResult) -> str | None:
        scheme = parts.scheme.lower()
        if scheme in ("data", "blob"):
            if scheme in _SCHEMES_ALLOWED.get(directive, ()):
                return f"{scheme}:"
            self.left_out.setdefault(f"{scheme}: URLs under {directive} (any injected content could use them)")
            return None
        if scheme not in ("http", "https"):
            return None  # about:, javascript: (counted as inline handlers), mailto: ...
        try:
            port = parts.port
            host = (parts.hostname or "").encode("idna").decode("ascii")
        except (ValueError, UnicodeError):
            port, host = None, ""
        if len(host) > _MAX_HOST_LENGTH or not _HOST_RE.match(host):
            self.left_out.setdefault(
                "URLs whose host cannot be written in a CSP (an IPv6 address, odd characters, a name past 253)"
            )
            return None
        if scheme == "http" and self.https:
            scheme, port = "https", (443 if port == 80 else port)  # upgrade-insecure-requests, before the CSP check
        if port == {"http": 80, "https": 443}[scheme]:
            port = None
        origin = f"{scheme}://{host}" + (f":{port}" if port is not None else "")
        return "'self'" if origin == self.page_origin else origin

    def _add(self, directive: str, source: str) -> str:
        sources = self.sources.setdefault(directive, {})
        sources.setdefault(source)
        if len(sources) > MAX_ORIGINS:
            # a host serving JSONP is allowed by the page's paths on it (`_narrowed`): those count as sources too
            places = "origins and paths" if any("/" in s.partition("://")[2] for s in sources) else "origins"
            raise _TooMuch(
                f"the page loads {directive.removesuffix('-src')} content from more than {MAX_ORIGINS} {places}"
            )
        return source

    # -- the policy ---------------------------------------------------------------------------------

    def policy(self, kept: Iterable[tuple[str, tuple[str, ...]]]) -> str:
        lists = self.source_lists()
        kept_list = list(kept)
        directives = [" ".join([name, *lists[name]]) for name in _ORDER if name in lists]
        if not any(name == "frame-ancestors" for name, _ in kept_list):
            directives.append("frame-ancestors 'self'")
        if self.https:
            directives.append("upgrade-insecure-requests")
        directives.extend(" ".join([name, *values]) for name, values in kept_list)
        return "; ".join(directives)

    def source_lists(self) -> dict[str, list[str]]:
        """Each directive's sources, from what was collected: object-src is 'none' unless the page embeds."""
        lists: dict[str, list[str]] = {"default-src": ["'self'"]}
        for directive in _ORDER[1:]:
            found = list(self.sources.get(directive, {}))
            if directive == "script-src":
                found += list(self.script_hashes)
            elif directive == "style-src":
                found += list(self.style_hashes)
            if directive == "object-src":
                lists[directive] = found or ["'none'"]
            elif directive in ("base-uri", "form-action", "script-src") or any(s != "'self'" for s in found):
                lists[directive] = ["'self'", *(s for s in found if s != "'self'")]
        attributes = self.page.style_attributes
        if attributes:
            many = len(attributes) > MAX_STYLE_ATTRIBUTE_HASHES
            lists["style-src-attr"] = (
                ["'unsafe-inline'"] if many else ["'unsafe-hashes'", *dict.fromkeys(map(inline_hash, attributes))]
            )
        return lists

    def notes(self) -> list[str]:
        page = self.page
        # the origins the page loads from itself, not those a known script's maker documents (a note of their own)
        documented = {
            (directive, source)
            for service in self.script_services.values()
            for directive, sources in service.sources
            for source in sources
        }
        others = sorted(
            {
                source
                for directive, sources in self.sources.items()
                for source in sources
                if source.startswith(("http://", "https://")) and (directive, source) not in documented
            }
        )
        seen = [
            counted(n, label)
            for label, n in (
                ("script", self.counts["script"]),
                ("stylesheet", self.counts["stylesheet"]),
                ("image", self.counts["image"]),
                ("font", self.counts["font"]),
                ("frame", self.counts["frame"]),
            )
            if n
        ]
        if self.script_hashes:
            seen.append(counted(len(self.script_hashes), "inline script") + " (by SHA-256 hash)")
        what = ", ".join(seen) or "nothing but the page itself"
        where = f", from its own origin and {counted(len(others), 'other')}" if others else ""
        notes = [
            f"The proposed policy allows what this page loads: {what}{where}. Other pages of the site, and what "
            "scripts load while running, may need more"
        ]
        if self.script_services:
            names = list(self.script_services)
            one = len(names) == 1
            named = names[0] if one else ", ".join(names[:-1]) + " and " + names[-1]
            notes.append(
                f"It also allows what {named} {'loads' if one else 'load'} while running, as "
                f"{'its maker documents' if one else 'their makers document'} for a Content-Security-Policy"
            )
        if page.exhausted:
            notes.append("Only part of the page could be read (see page analysis), so the policy may miss some of it")
        if self.script_hashes or self.style_hashes:
            notes.append(
                "A hash allows one exact inline text: after any edit to an inline script or <style>, hash it again "
                "(an inline script that differs per response, with a token or user data, needs a nonce instead)"
            )
        if page.inline_handlers:
            notes.append(
                f"The page has {counted(page.inline_handlers, 'inline event handler')} (onclick= and the like, or "
                "javascript: links): the policy blocks them. Move that code into a script file with "
                "addEventListener; 'unsafe-hashes' could allow them, but an injected element could then reuse "
                "an allowed handler, so the policy leaves it out"
            )
        if page.style_attributes:
            if len(page.style_attributes) > MAX_STYLE_ATTRIBUTE_HASHES:
                notes.append(
                    f"The page has {counted(page.style_attribute_count, 'style attribute')}, too many distinct "
                    "ones to hash, so style-src-attr allows them with 'unsafe-inline' (which this scan marks as a "
                    "minor weakness): move them into classes to drop it"
                )
            else:
                notes.append(
                    f"Style attributes ({page.style_attribute_count:,} on the page) are allowed by their hashes "
                    "('unsafe-hashes' in style-src-attr): an injected element could only reuse those exact "
                    "declarations, which run no script"
                )
        if self.counts["stylesheet"] or self.style_hashes:
            notes.append(
                "Fonts and images named inside stylesheets are not visible without fetching them: the policy allows "
                "them from the page's own origin and from each stylesheet's origin"
                + "".join(
                    f" (the fonts of {urlsplit(service).hostname}'s stylesheets from {urlsplit(fonts).hostname}, where "
                    "they are)"
                    for service, fonts in list(self.font_services.items())[:1]
                )
                + ". One from elsewhere must be added to font-src or img-src"
            )
        if self.foreign_base is not None:
            notes.append(foreign_base_note(self.foreign_base))
        if self.left_out:
            notes.append("Not allowed by the policy: " + ", ".join(self.left_out))
        return notes


class _Spans:
    """Sorted, disjoint (start, end) spans, asked about increasing positions: linear in all, not quadratic."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.index = 0

    def holds(self, position: int) -> bool:
        while self.index < len(self.spans) and self.spans[self.index][1] <= position:
            self.index += 1
        return self.index < len(self.spans) and self.spans[self.index][0] <= position
