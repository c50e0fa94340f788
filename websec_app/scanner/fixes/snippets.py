"""`fix_snippets`: the rendered fix of an outcome, written for each server of SERVERS (issue 15).

Pure: the same (outcome, fix, subject, subjects) always gives the same texts, so they are rendered once per
process and cached (grading runs once per scan and mostly sees the same few dozen fixes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache

from ..records.csp import parse_policy
from . import writers_config, writers_platform
from .actions import CSP, CSP_REPORT_ONLY, Action, SetHeader, Unwritable, action_for
from .csp_proposal import relies_on_nonce
from .remedies import CODE_KINDS, RemedyTable, remedy_table
from .servers import SERVER_LABELS, SERVERS

_WRITERS: dict[str, Callable[[Action], str]] = {
    "nginx": writers_config.nginx,
    "apache": writers_config.apache,
    "caddy": writers_config.caddy,
    "iis": writers_config.iis,
    "express": writers_platform.express,
    "netlify": writers_platform.netlify,
    "vercel": writers_platform.vercel,
    "cloudflare": writers_platform.cloudflare,
}
#: When a fix names nothing a server can send (or an outcome has no remedy yet): say where it is done.
_FALLBACK = "Not a {label} setting: {fix}"
#: A CSP with a nonce: the nonce is new in every response, a fixed header would repeat one (issue 15).
_NONCE_FALLBACK = (
    "Not a fixed {label} setting: this policy relies on a nonce, which must be new in every response, so send "
    "it from the application that generates the nonce: {fix}"
)
#: A value or cookie name the server's configuration would read as its own (Apache ${NAME}, Caddy {$NAME},
#: an nginx regular expression): not written.
_UNWRITABLE = (
    "Not written for {label}: the site's text holds characters {label} would read as its own configuration "
    "(a variable or a pattern), so make this change where the application sets it: {fix}"
)


def _fallback(fix: str, sentence: str = _FALLBACK) -> tuple[str, ...]:
    return tuple(sentence.format(label=SERVER_LABELS[server], fix=fix) for server in SERVERS)


def _written(server: str, action: Action, fix: str) -> str:
    try:
        return _WRITERS[server](action)
    except Unwritable:
        return _UNWRITABLE.format(label=SERVER_LABELS[server], fix=fix)


def _render(
    table: RemedyTable,
    outcome: str,
    fix: str,
    subject: str | None,
    subjects: tuple[str, ...],
    lacking_samesite: tuple[str, ...],
    plain_http: bool = False,
) -> tuple[str, ...]:
    remedy = table.remedy(outcome)
    if remedy is None:
        return _fallback(fix)
    if plain_http and remedy.kind == "cookie":
        # Browsers refuse a Secure cookie from a plain-HTTP page: a snippet adding Secure there would drop the
        # cookie (and the login with it). A remedy about Secure says to serve HTTPS first; the others leave it out.
        if remedy.on_plain_http is not None:
            return _templated(table, remedy.on_plain_http, fix)
        remedy = replace(remedy, attributes=tuple(a for a in remedy.attributes if a.lower() != "secure"))
    if remedy.kind not in CODE_KINDS:
        return _templated(table, remedy.kind, fix)
    try:
        action = action_for(remedy, fix, subject, subjects, lacking_samesite)
    except Unwritable:
        return _fallback(fix, _UNWRITABLE)
    if action is None:
        return _fallback(fix)
    if isinstance(action, SetHeader) and action.name in (CSP, CSP_REPORT_ONLY) and _relies_on_nonce(action.value):
        return _fallback(fix, _NONCE_FALLBACK)
    return tuple(_written(server, action, fix) for server in SERVERS)


def _templated(table: RemedyTable, template: str, fix: str) -> tuple[str, ...]:
    """A remedy written as prose per server (no code can do it), the rule's fix put in without the Markdown backticks
    it marks code with: a snippet is shown as it is, in a box of its own."""
    texts = table.templates[template]
    plain = fix.replace("`", "")
    return tuple(texts[server].replace("{fix}", plain) for server in SERVERS)


def _relies_on_nonce(value: str) -> bool:
    """The proposal's rule (csp_proposal.relies_on_nonce), over each policy of the header value as browsers
    parse it: a source that is a nonce, not the text `'nonce-` anywhere (in a report-uri, say)."""
    return any(relies_on_nonce(parse_policy(policy).directives) for policy in value.split(","))


@lru_cache(maxsize=2048)
def _cached(
    outcome: str,
    fix: str,
    subject: str | None,
    subjects: tuple[str, ...],
    lacking_samesite: tuple[str, ...],
    plain_http: bool = False,
) -> tuple[str, ...]:
    return _render(remedy_table(), outcome, fix, subject, subjects, lacking_samesite, plain_http)


def names_subjects(outcome: str, *, plain_http: bool = False) -> bool:
    """Whether the outcome's snippets name the finding's subjects (its cookies, or the headers that disclose
    versions), so that a subject they leave out is not fixed by them (grading.SNIPPET_LIMIT)."""
    remedy = remedy_table().remedy(outcome)
    if remedy is None or remedy.kind not in ("cookie", "hide_versions"):
        return False
    # on a plain-HTTP page a remedy about Secure is a sentence saying to serve HTTPS first (_render)
    return not (plain_http and remedy.on_plain_http is not None)


def render_snippets(
    outcome: str,
    fix: str | None,
    *,
    subject: str | None = None,
    subjects: Iterable[str] = (),
    lacking_samesite: Iterable[str] = (),
    plain_http: bool = False,
) -> dict[str, str] | None:
    """{server: snippet} for every key of SERVERS, or None when there is no fix.

    `subject` is the header a spec 2.3 header object reports on (its snippet sets that header to the fix's
    value; Content-Security-Policy goes out as Content-Security-Policy-Report-Only first); `subjects` are a
    finding's subjects (the cookies or headers it names); `lacking_samesite` the cookies another finding of
    the report shows without SameSite (a cookie fix then adds it too, so the fixes of one cookie agree);
    `plain_http` that the scanned page is served over plain HTTP (no cookie snippet then adds Secure).
    """
    if fix is None:
        return None
    chosen = tuple(subjects)
    named = frozenset(chosen)  # `in` on the tuple read it whole for each name: quadratic in a cookie flood
    lacking = tuple(name for name in lacking_samesite if name in named)
    texts = _cached(outcome, fix, subject, chosen, lacking, plain_http)
    return dict(zip(SERVERS, texts, strict=True))
