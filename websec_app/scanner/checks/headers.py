"""Security response headers of the final page (report section "headers", spec 2.3).

One function per header, each reading what a browser would make of the value (see the
parsers in `records/`: csp, header_values, structured_fields, html) and naming outcomes
from rules/headers.toml. Every header always yields at least one finding, so every
header object in the report has a status; findings are emitted worst first because the
report takes a header's fix from its first problem. Every weak or warn finding carries a
note saying what in the response led to it (spec 2.3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlsplit

from ...wording import counted
from ..data import permissions_policy_features
from ..findings import LIST_LIMIT, CheckResult, Finding, noted
from ..fixes.csp_proposal import (
    NONCE_NOTE,
    CspProposal,
    Repairs,
    left_out_note,
    propose_policy,
    relies_on_nonce,
    repair_policy,
    site_policy_too_long,
    writable_directives,
)
from ..records import csp as csp_records
from ..records.header_values import (
    PRELOAD_LONG_MAX_AGE,
    parse_hsts,
    parse_referrer_meta,
    parse_referrer_policy_header,
    read_for_preload_list,
    split_header_list,
)
from ..records.html import HtmlPage, MetaElement, is_html, meta_elements_of, parse_page
from ..records.structured_fields import InnerList, Item, StructuredFieldError, Token, parse_dictionary
from ..registrable import registrable_domain
from ..snapshot import HeaderList, HttpResponse, SiteSnapshot, TlsHandshake
from ..target import ip_literal
from . import csp, csp_bypass
from ._header_details import header_details
from ._shown import MAX_SHOWN, listed
from ._shown import shown as shown_text  # `shown` is a local name in several functions here
from .redirection import www_without_https

SECTION = "headers"
CSP = "Content-Security-Policy"
CSP_REPORT_ONLY = "Content-Security-Policy-Report-Only"
HSTS = "Strict-Transport-Security"
XFO = "X-Frame-Options"
XCTO = "X-Content-Type-Options"
REFERRER = "Referrer-Policy"
PERMISSIONS = "Permissions-Policy"
FEATURE_POLICY = "Feature-Policy"
XXP = "X-XSS-Protection"
#: The header objects of this section, in report order.
HEADERS = (CSP, HSTS, XFO, XCTO, REFERRER, PERMISSIONS, XXP)

#: A finding lists LIST_LIMIT notes: a page can hold thousands of <meta> elements, each worth a note, and a
#: <meta> policy thousands of sources, each worth a warning (10,000 <meta name="referrer"> made 486 KB).
#: The longest note: a sentence around a value already cut to MAX_SHOWN fits; one quoting a whole value (a <meta>
#: policy's source of 2 MiB) is cut too.
_MAX_NOTE_LENGTH = 2 * MAX_SHOWN
_SIX_MONTHS = 15_768_000  # seconds; Mozilla's minimum for HSTS (infosec.mozilla.org web guidelines)
_ONE_YEAR = 31_536_000  # hstspreload.org's minimum, and the usual recommendation


def check_headers(snapshot: SiteSnapshot) -> CheckResult:
    final = snapshot.final
    if final is None:
        return CheckResult(
            SECTION,
            (Finding("check.error", note="No HTTP response was received, so headers could not be checked."),),
            header_details(HeaderList(), HEADERS),
        )
    headers = final.headers
    page = parse_page(final) if final.body and is_html(final) else None  # the one parse of the scan
    every_meta = meta_elements_of(page) if page is not None else ()
    evaluation, csp_findings = _content_security_policy(final, page, every_meta)
    # Inside <noscript> (raw text when scripting is on) or <template> (not in the document), a <meta>
    # is no element browsers act on.
    metas = tuple(meta for meta in every_meta if not meta.inert)
    findings = [
        *csp_findings,
        *_strict_transport_security(final, snapshot.tls, snapshot.fetched_at, www_without_https(snapshot)),
        *_x_frame_options(headers, evaluation, metas),
        *_x_content_type_options(headers),
        *_referrer_policy(headers, metas),
        *_permissions_policy(headers),
        *_x_xss_protection(headers),
    ]
    return CheckResult(SECTION, tuple(findings), header_details(headers, HEADERS))


def _finding(outcome: str, subject: str, notes: Sequence[str] = (), **fix_vars: str) -> Finding:
    return noted(outcome, _bounded(notes), subject, fix_vars=fix_vars)


def _bounded(notes: Sequence[str]) -> list[str]:
    """The notes a finding shows: each distinct one once, each at most _MAX_NOTE_LENGTH characters (a note can
    quote a source of a 2 MiB <meta> policy), the first LIST_LIMIT, then how many more there were."""
    return listed(notes, LIST_LIMIT, each=_MAX_NOTE_LENGTH, more=" notes like these")


def _with_notes(findings: list[Finding], notes: Sequence[str]) -> list[Finding]:
    """Attach context notes to the first (worst) finding, where the report shows them."""
    if not notes or not findings:
        return findings
    first = findings[0]
    return [replace(first, more_notes=(*first.more_notes, *_bounded(notes))), *findings[1:]]


# --- Content-Security-Policy ---------------------------------------------------------------------


# The fix of the header is one policy (`csp_proposal`, fixes/csp_proposal.py) for every CSP outcome:
# built from the page when the site's policy does not stop injected scripts, the site's own policy
# repaired when it does (a policy derived from one page could loosen it or break later loads).
_DERIVED_FIX = frozenset(
    {"csp.missing", "csp.invalid", "csp.no_script_restriction", "csp.broad_script_source", "csp.unsafe_inline_script"}
)


def _content_security_policy(
    final: HttpResponse, page: HtmlPage | None, metas: Sequence[MetaElement]
) -> tuple[csp.CspEvaluation, list[Finding]]:
    headers = final.headers
    header_policies = csp_records.parse_header_policies(headers.get_all(CSP))
    report_only = csp_records.parse_header_policies(headers.get_all(CSP_REPORT_ONLY), enforced=False)
    report_only = [p for p in report_only if p.has_effect]
    meta_policies = []
    notes: list[str] = []
    for meta in metas:
        if meta.http_equiv == "content-security-policy" and meta.content and meta.content.strip():
            if meta.inert:
                notes.append(
                    "a Content-Security-Policy <meta> element inside <noscript> or <template> is ignored by browsers"
                )
            elif meta.in_head:
                policies, unread = csp_records.parse_meta_policies(meta.content)
                meta_policies.extend(policies)
                if len(policies) > 1:
                    notes.append(
                        "the <meta> policy holds commas: Chromium enforces each part as a policy of its own, as in a "
                        "header (CSP3 §3.3 reads it as one)"
                    )
                if unread:
                    notes.append(
                        f"only the first {csp_records.MAX_META_POLICIES} comma-separated parts of the <meta> policy "
                        "were read"
                    )
            else:
                # HTML "http-equiv Content-Security-Policy" state: "If the meta element is not a
                # child of a head element, return."
                notes.append("a Content-Security-Policy <meta> element inside <body> is ignored by browsers")
        elif meta.http_equiv == "content-security-policy-report-only":
            notes.append("a Content-Security-Policy-Report-Only <meta> element is ignored (CSP3 §3.3: header only)")
        elif _padded(meta.http_equiv, "content-security-policy") and not meta.inert:
            name = shown_text(repr(meta.http_equiv))
            notes.append(f"<meta http-equiv={name}> is ignored by browsers: spaces around the name count")
    evaluation = csp.evaluate([*header_policies, *meta_policies])
    if any(not p.has_effect for p in header_policies) and evaluation.policies:
        notes.append("a policy without any directive browsers know (empty, or between commas) was ignored")

    if not evaluation.policies:
        if header_policies:
            empty = all(not p.text for p in header_policies)
            why = ["the header is empty"] if empty else ["no directive browsers know could be read from it"]
            why.extend(w for p in header_policies for w in p.warnings)
            findings = [_finding("csp.invalid", CSP, why)]
        elif report_only:
            reason = "Content-Security-Policy-Report-Only only reports violations; it does not block anything"
            findings = [_finding("csp.report_only_only", CSP, [reason])]
            enforced = _enforce(report_only[0], urlsplit(final.url).scheme == "https")
            return evaluation, _with_proposal(_with_notes(findings, notes), enforced)
        else:
            findings = [_finding("csp.missing", CSP)]
        keep = [directive for p in header_policies for directive in p.directives]
        return evaluation, _with_proposal(_with_notes(findings, notes), propose_policy(page, final.url, keep))

    if not any(p.delivery == "header" for p in evaluation.policies):
        notes.append(
            "the policy is delivered by a <meta> element, where frame-ancestors, report-uri and sandbox do not work"
        )
    if report_only:
        notes.append("a Content-Security-Policy-Report-Only policy is also sent (it only reports, so it is not graded)")
    findings = _csp_problems(evaluation)
    bypass = csp_bypass.bypass_of(evaluation.policies)
    if bypass.scripts:
        findings.append(_finding("csp.bypassable_script_host", CSP, csp_bypass.bypass_notes(bypass.scripts)))
    if not findings:
        return evaluation, _with_notes([_finding("csp.good", CSP)], [*notes, *evaluation.notes])
    outcomes = {f.outcome for f in findings}
    if outcomes & _DERIVED_FIX:
        keep = [d for p in evaluation.policies if p.delivery == "header" for d in p.directives]
        proposal = propose_policy(page, final.url, keep)
    else:
        # the first policy is repaired (its header replaced by the fix's): the hosts another policy names (a <meta>
        # one beside a header's frame-ancestors policy) are said, not moved into it
        first = evaluation.policies[0]
        # the fix removes 'unsafe-eval' where the repaired policy writes it; eval is then blocked on the page (every
        # policy must allow it), and the hosts whose JSONP needs it bypass nothing
        removes_eval = "csp.unsafe_eval" in outcomes and csp.writes_unsafe_eval(first)
        culprits = bypass.sources_without_eval if removes_eval else bypass.sources
        repairs = Repairs(
            insecure_scripts="csp.insecure_source" in outcomes,
            unsafe_eval=removes_eval,
            objects_open="csp.no_object_src" in outcomes,
            base_open="csp.no_base_uri" in outcomes,
            inline_style="csp.unsafe_inline_style" in outcomes,
            bypassing=culprits if bypass.policy is first else frozenset(),
            bypassing_elsewhere=() if bypass.policy is first else tuple(sorted(culprits)),
        )
        proposal = repair_policy(first, page, final.url, repairs)
    return evaluation, _with_proposal(_with_notes(findings, [*notes, *evaluation.notes]), proposal)


def _padded(attribute: str, keyword: str) -> bool:
    """`attribute` is `keyword` with whitespace around it, which HTML does not trim (records/html.py MetaElement)."""
    return attribute != keyword and attribute.strip(" \t\n\f\r") == keyword


def _enforce(report_only: csp_records.Policy, https: bool) -> CspProposal:
    """The site's own Report-Only policy, to be enforced: the site has been trying it out already. Only what
    may be written into server configuration is copied (csp_proposal.writable_directives), and only up to
    csp_proposal.MAX_SITE_POLICY_LENGTH characters (past it, the generic policy)."""
    directives, left_out = writable_directives(report_only.directives)
    policy = "; ".join(" ".join([name, *sources]) for name, sources in directives)
    too_long = site_policy_too_long(
        policy,
        https,
        directives,
        "the site's Report-Only policy",
        "send it as Content-Security-Policy once its reports (or the browser console) show nothing legitimate "
        "being blocked",
    )
    if too_long is not None:
        return too_long
    notes = [
        "The proposed policy is the site's own Report-Only policy: once its reports (or the browser console) "
        "show nothing legitimate being blocked, send it as Content-Security-Policy to enforce it"
    ]
    if left_out:
        notes.append(left_out_note(left_out, "the site's Report-Only policy"))
    if relies_on_nonce(directives):
        notes.append(NONCE_NOTE)
    return CspProposal(policy, False, tuple(notes))


def _with_proposal(findings: list[Finding], proposal: CspProposal) -> list[Finding]:
    """Every CSP finding's fix is the proposed policy, and its notes (what it allows, how to roll it out) are
    that fix's `fix_note`: they speak of the proposal and its snippets, so a report shows them only where it
    shows the fix, never among what was found on the site (the `note`, which a free report shows)."""
    return [
        replace(f, fix_vars={**f.fix_vars, "csp_proposal": proposal.policy}, fix_note=proposal.fix_note)
        for f in findings
    ]


def _csp_problems(evaluation: csp.CspEvaluation) -> list[Finding]:
    """Problems worst first (weak before warn, larger deductions first), matching the report's choice."""
    weak: list[Finding] = []
    warn: list[Finding] = []
    if not evaluation.restricts_scripts:
        weak.append(
            _finding("csp.no_script_restriction", CSP, ["no policy has script-src, script-src-elem or default-src"])
        )
    else:
        if evaluation.broad_script_sources:
            listed = " ".join(evaluation.broad_script_sources)
            weak.append(_finding("csp.broad_script_source", CSP, [f"scripts may load from {listed}"]))
        if evaluation.insecure_script_sources:
            listed = " ".join(evaluation.insecure_script_sources)
            weak.append(_finding("csp.insecure_source", CSP, [f"scripts may load over plain HTTP from {listed}"]))
        if evaluation.inline_script:
            what = " and ".join(evaluation.inline_script)
            warn.append(_finding("csp.unsafe_inline_script", CSP, [f"inline script is allowed in {what}"]))
        if evaluation.eval_allowed:
            warn.append(_eval_finding(evaluation))
    if evaluation.object_unrestricted:
        warn.append(_finding("csp.no_object_src", CSP, _object_src_notes(evaluation.policies)))
    if evaluation.base_uri_unrestricted:
        warn.append(_finding("csp.no_base_uri", CSP, _base_uri_notes(evaluation.policies)))
    if evaluation.inline_style:
        what = " and ".join(evaluation.inline_style)
        warn.append(_finding("csp.unsafe_inline_style", CSP, [f"inline style is allowed in {what}"]))
    return weak + warn


def _object_src_notes(policies: Sequence[csp_records.Policy]) -> list[str]:
    """Why plugins are unrestricted, naming the directive that applies (object-src or its fallback)."""
    notes = []
    for policy in policies:
        found = csp_records.effective_sources(policy, "object-src")
        if found is None:
            notes.append("no object-src, and no default-src for it to fall back to")
            continue
        name, sources = found
        broad = " ".join(s for s in sources if csp.is_broad(s))
        where = (
            f"object-src {' '.join(sources)}"
            if name == "object-src"
            else f"object-src falls back to {name} {' '.join(sources)}, which"
        )
        notes.append(f"{where} allows <object> and <embed> content from {broad}")
    return list(dict.fromkeys(notes))


def _base_uri_notes(policies: Sequence[csp_records.Policy]) -> list[str]:
    notes = []
    for policy in policies:
        sources = policy.get("base-uri")
        if sources is None:
            notes.append("no base-uri directive (base-uri does not fall back to default-src)")
        else:
            notes.append(f"base-uri {' '.join(sources)} lets a <base> element point to any site")
    return list(dict.fromkeys(notes))


def _eval_finding(evaluation: csp.CspEvaluation) -> Finding:
    uses_keyword = any(
        "'unsafe-eval'" in (s.lower() for s in found[1])
        for p in evaluation.policies
        if (found := csp_records.effective_sources(p, "script-src")) is not None
    )
    why = (
        "'unsafe-eval' is allowed"
        if uses_keyword
        else "eval() is unrestricted because there is no script-src or default-src (script-src-elem does not cover it)"
    )
    return _finding("csp.unsafe_eval", CSP, [why])


# --- Strict-Transport-Security -------------------------------------------------------------------


def _strict_transport_security(
    final: HttpResponse, tls: TlsHandshake | None, now: datetime, www_fails: tuple[str, str] | None = None
) -> list[Finding]:
    """`www_fails`: (www's host, why) when the policy sends browsers to a www without working HTTPS
    (redirection.www_without_https), which the preload list refuses."""
    values = final.headers.get_all(HSTS)
    if not final.url.lower().startswith("https://"):
        notes = ["the final page was served over plain HTTP"]
        if values:
            notes.append("browsers ignore Strict-Transport-Security received over HTTP (RFC 6797 §8.1)")
        return [_finding("hsts.not_https", HSTS, notes)]
    if ip_literal(urlsplit(final.url).hostname or "") is not None:
        sent = ["the header was sent, and browsers ignore it for an IP address"] if values else []
        return [_finding("hsts.ip_address", HSTS, sent)]
    if not values:
        return [_finding("hsts.missing", HSTS)]
    notes = []
    if len(values) > 1:
        notes.append(
            f"{len(values)} Strict-Transport-Security headers were sent; browsers use only the first (RFC 6797 §8.1)"
        )
    policy = parse_hsts(values[0])
    if policy.error:
        return [_finding("hsts.invalid", HSTS, [policy.error, *notes])]
    reason = _certificate_problem(tls, final.url, now)
    if reason is not None:
        return [_finding("hsts.ignored_tls_error", HSTS, [f"certificate problem: {reason}", *notes])]
    max_age = policy.max_age or 0
    if max_age == 0:
        return [_finding("hsts.disabled", HSTS, ["max-age=0 removes the site from browsers' HSTS lists", *notes])]
    findings = []
    age = f"max-age={max_age} ({_days(max_age)})"
    if max_age < _SIX_MONTHS:
        findings.append(_finding("hsts.short_max_age", HSTS, [f"{age} is under 6 months (15768000 seconds)"]))
    elif max_age < _ONE_YEAR:
        findings.append(_finding("hsts.under_one_year", HSTS, [f"{age} is under 1 year (31536000 seconds)"]))
    if not policy.include_subdomains:
        findings.append(
            _finding(
                "hsts.no_include_subdomains",
                HSTS,
                ["includeSubDomains is not set"],
                max_age=str(max(max_age, _ONE_YEAR)),
            )
        )
    if policy.unknown_directives:
        notes.append("unknown directives are ignored: " + ", ".join(policy.unknown_directives))
    if policy.repeated_directives:
        repeated = " and ".join(policy.repeated_directives)
        verb = "is" if len(policy.repeated_directives) == 1 else "are"
        notes.append(
            f"{repeated} {verb} sent more than once (browsers accept this, though RFC 6797 §6.1 asks for each "
            "directive once)"
        )
    if policy.preload_with_value:
        notes.append(
            f"{policy.preload_with_value} is not a preload request: the preload list (hstspreload.org) "
            "needs a bare preload directive"
        )
    if max_age > PRELOAD_LONG_MAX_AGE:
        notes.append(
            "a max-age over 10 years (315360000 seconds) is unusually long (hstspreload.org warns); Chromium keeps "
            "at most 1 year (31536000 seconds) of any max-age"
        )
    if policy.preload:
        notes.append(_preload_note(values[0], len(values), urlsplit(final.url).hostname or "", www_fails))
    return _with_notes(findings or [_finding("hsts.good", HSTS)], notes)


def _preload_note(value: str, fields: int = 1, host: str = "", www_fails: tuple[str, str] | None = None) -> str:
    """Whether hstspreload.org would take this header for the preload list, read as it reads it (which differs from
    browsers: a quoted max-age, spaces around its "=" or more than 20 digits are errors there). `fields`: how many
    Strict-Transport-Security fields the response had; hstspreload.org refuses more than one
    (response.multiple_headers). `host`: the page's; hstspreload.org takes whole registered domains only
    (domain.go `preloadableDomainLevel`: "www.example.com is a subdomain. Please preload example.com instead") and
    reads the header from that domain's own first HTTPS response, so for a page on www it names the domain. It also
    refuses a domain whose www has no working HTTPS (`www_fails`; domain.go `domain.www.no_tls`)."""
    if fields > 1:
        return (
            f"preload is requested, but hstspreload.org refuses a response with {fields} Strict-Transport-Security "
            "headers: send one"
        )
    reading = read_for_preload_list(value)
    if reading.eligible and host and (domain := registrable_domain(host)) != host.rstrip("."):  # an IP: itself
        return (
            f"preload is requested; hstspreload.org takes whole registered domains only, so submit {domain} (not "
            f"{host}), whose own HTTPS responses must send this header too"
        )
    if reading.eligible and www_fails is not None:
        return (
            f"preload is requested, but hstspreload.org refuses the domain while {www_fails[0]} {www_fails[1]}: "
            f"once preloaded, no browser could open {www_fails[0]}"
        )
    if reading.eligible:
        return "preload is requested; submit the domain at hstspreload.org to be built into browsers"
    if reading.unreadable_max_age is not None:
        return (
            f"preload is requested, but hstspreload.org cannot read {shown_text(reading.unreadable_max_age)} (it takes "
            "only unquoted digits right after max-age=), so the preload list would refuse this header"
        )
    return "preload is requested, but the preload list needs max-age of at least 31536000 and includeSubDomains"


def _certificate_problem(tls: TlsHandshake | None, url: str, now: datetime) -> str | None:
    """RFC 6797 §8.1: with "secure transport errors or warnings" browsers ignore the header
    (`TlsHandshake.refused_by_browsers`), or None when they accept the certificate."""
    if tls is None or tls.failure is not None:
        return None  # no handshake data for the host: nothing to hold against the header
    if tls.host.lower() != (urlsplit(url).hostname or "").lower():
        return None
    return tls.refused_by_browsers(now)


def _days(seconds: int) -> str:
    days = round(seconds / 86400)
    return counted(days, "day") if seconds >= 86400 else counted(seconds, "second")


# --- X-Frame-Options -----------------------------------------------------------------------------


def _x_frame_options(headers: HeaderList, evaluation: csp.CspEvaluation, metas: Sequence[MetaElement]) -> list[Finding]:
    """HTML "check a navigation response's adherence to X-Frame-Options", with CSP frame-ancestors first.

    An enforced header policy with frame-ancestors makes browsers ignore X-Frame-Options
    entirely (CSP3 §6.4.2 and the HTML algorithm's first step), whatever either says.
    """
    raw = headers.get(XFO)
    fa_values = [" ".join(v) for p in evaluation.policies if (v := p.get("frame-ancestors")) is not None]
    if evaluation.frame_ancestors == "restrictive":
        notes = [f"frame-ancestors {' '.join(fa_values)}".rstrip()]
        if raw is not None:
            notes.append(f"X-Frame-Options: {raw} is also sent; browsers that understand frame-ancestors ignore it")
        return [_finding("xfo.csp_frame_ancestors", XFO, notes)]
    if evaluation.frame_ancestors == "permissive":
        notes = [f"frame-ancestors {' '.join(fa_values)} allows any site to frame the page"]
        if raw is not None:
            notes.append(f"X-Frame-Options: {raw} is ignored because frame-ancestors is present")
        return [_finding("xfo.frame_ancestors_permissive", XFO, notes)]

    notes = []
    if any(m.http_equiv == "content-security-policy" and "frame-ancestors" in (m.content or "").lower() for m in metas):
        notes.append("frame-ancestors in a <meta> policy is ignored by browsers (CSP3 §6.4.2)")
    if any("frame-ancestors" in v.lower() for v in headers.get_all(CSP_REPORT_ONLY)):
        notes.append("frame-ancestors in Content-Security-Policy-Report-Only only reports, it does not block")
    if raw is None:
        return [_finding("xfo.missing", XFO, notes)]
    values = {v.lower() for v in split_header_list(raw)}
    if len(values) > 1:
        if values & {"deny", "sameorigin", "allowall"}:
            # HTML: conflicting values make browsers refuse every frame, the site's own included.
            return [_finding("xfo.good", XFO, [f"conflicting values ({raw}): browsers refuse all framing", *notes])]
        return [_finding("xfo.invalid", XFO, [f"conflicting values ({raw}) are ignored", *notes])]
    (value,) = values
    if value in ("deny", "sameorigin"):
        return [_finding("xfo.good", XFO, notes)]
    if value.startswith("allow-from"):
        allowed = raw.strip()[len("allow-from") :].strip()
        notes.insert(0, f"X-Frame-Options: {raw} is ignored by current browsers")
        return [_finding("xfo.allow_from", XFO, notes, allowed=allowed)]
    shown = repr(raw) if raw.strip() else "an empty value"
    return [_finding("xfo.invalid", XFO, [f"{shown} is not DENY or SAMEORIGIN", *notes])]


# --- X-Content-Type-Options ----------------------------------------------------------------------


def _x_content_type_options(headers: HeaderList) -> list[Finding]:
    """Fetch "determine nosniff": only the FIRST comma-separated value counts, case-insensitively."""
    raw = headers.get(XCTO)
    if raw is None:
        return [_finding("xcto.missing", XCTO)]
    values = split_header_list(raw)
    if values[0].lower() == "nosniff":
        extra = [f"{len(values)} values were sent; browsers read only the first"] if len(values) > 1 else []
        return [_finding("xcto.good", XCTO, extra)]
    shown = repr(values[0]) if values[0] else "an empty value"
    why = f"the first value is {shown}, not nosniff" if len(values) > 1 else f"{shown} is not nosniff"
    return [_finding("xcto.invalid", XCTO, [why])]


# --- X-XSS-Protection ----------------------------------------------------------------------------


def _x_xss_protection(headers: HeaderList) -> list[Finding]:
    """The legacy XSS filter switch. Chrome (78), Edge (Chromium) and Safari have removed the filter, and
    where it survives, turning it on let an attacker switch off chosen scripts of a page or probe what it
    contains (MDN X-XSS-Protection; OWASP Secure Headers Project: "X-XSS-Protection: 0"). So only `0`, or no
    header at all, is right; any other value asks old browsers for the filter (their default when the header
    is absent or malformed too, which is why absence is no worse)."""
    raw = headers.get(XXP)
    if raw is None:
        return [_finding("xxp.good", XXP)]
    value = raw.strip()
    if value == "0":
        return [_finding("xxp.good", XXP)]
    return [
        _finding(
            "xxp.enabled", XXP, [f"{value!r} asks old browsers to run their XSS filter" if value else "an empty value"]
        )
    ]


# --- Referrer-Policy -----------------------------------------------------------------------------

_REFERRER_OUTCOMES = {
    "no-referrer": "referrer.good",
    "same-origin": "referrer.good",
    "strict-origin": "referrer.good",
    "strict-origin-when-cross-origin": "referrer.good",
    "origin": "referrer.origin_on_downgrade",
    "origin-when-cross-origin": "referrer.origin_on_downgrade",
    "no-referrer-when-downgrade": "referrer.full_url_cross_origin",
    "unsafe-url": "referrer.unsafe_url",
}


def _referrer_policy(headers: HeaderList, metas: Sequence[MetaElement]) -> list[Finding]:
    """The header, then any <meta name="referrer">, which overrides it (HTML "Standard metadata names": referrer)."""
    raw = headers.get(REFERRER)
    notes: list[str] = []
    effective: str | None = None
    if raw is not None:
        parsed = parse_referrer_policy_header(raw)
        effective = parsed.policy
        if parsed.malformed:
            # Chromium, most visitors' browser, drops the header; Firefox may skip the bad value alone.
            shown = ", ".join(parsed.malformed)
            what = "is not a referrer policy token" if len(parsed.malformed) == 1 else "are not referrer policy tokens"
            notes.append(
                f"{shown} {what} (letters and hyphens only), so Chromium ignores the whole header and uses its "
                "default, strict-origin-when-cross-origin"
            )
        if parsed.unrecognised:
            notes.append("unrecognised values are ignored: " + ", ".join(parsed.unrecognised))
        if effective and len(parsed.tokens) > 1:
            notes.append(f"browsers use the last value they recognise: {effective}")
    for meta in metas:
        if _padded(meta.name, "referrer"):
            name = shown_text(repr(meta.name))
            notes.append(f"<meta name={name}> is ignored by browsers: spaces around the name count")
        if meta.name != "referrer" or meta.content is None:
            continue
        from_meta = parse_referrer_meta(meta.content)
        if from_meta is None:
            spaces = " (spaces around the value count)" if parse_referrer_meta(meta.content.strip()) else ""
            content = shown_text(repr(meta.content))
            notes.append(f'<meta name="referrer" content={content}> is not a referrer policy and is ignored{spaces}')
            continue
        if raw is not None and from_meta != effective:
            notes.append(f'<meta name="referrer"> sets {from_meta}, which overrides the header')
        else:
            notes.append(f'set by <meta name="referrer"> to {from_meta}')
        effective = from_meta
    if effective is None:
        outcome = "referrer.invalid" if raw is not None else "referrer.missing"
        if raw is not None and not raw.strip():
            notes.insert(0, "the header is empty")
        elif raw is not None and not notes:
            notes.append(f"{raw.strip()!r} holds no referrer policy value")
        return [_finding(outcome, REFERRER, notes)]
    outcome = _REFERRER_OUTCOMES[effective]
    named = re.compile(rf"(?<![\w-]){re.escape(effective)}(?![\w-])")
    # Searched in what the report shows: the <meta> that names it may be past the notes listed
    if outcome != "referrer.good" and not any(named.search(n) for n in _bounded(notes)):
        notes.insert(0, f"the policy in force is {effective}")  # spec 2.3: a weak or warn header has a note
    return [_finding(outcome, REFERRER, notes)]


# --- Permissions-Policy --------------------------------------------------------------------------


def _permissions_policy(headers: HeaderList) -> list[Finding]:
    """W3C Permissions Policy: the header is a structured-field dictionary; if it does not parse, it is ignored."""
    raw = headers.get(PERMISSIONS)
    feature_policy = headers.get(FEATURE_POLICY)
    if raw is None:
        if feature_policy is not None:
            converted = _feature_policy_to_permissions_policy(feature_policy)
            return [
                _finding(
                    "permissions.feature_policy_only",
                    PERMISSIONS,
                    [f"Feature-Policy: {feature_policy}"],
                    permissions_policy=converted or "camera=(), microphone=(), geolocation=()",
                )
            ]
        return [_finding("permissions.missing", PERMISSIONS)]
    if not raw.strip():
        return [_finding("permissions.empty", PERMISSIONS, ["the header is empty"])]
    try:
        members = parse_dictionary(raw)
    except StructuredFieldError as exc:
        why = [str(exc)]
        if "'" in raw or ";" in raw:
            why.append("this looks like the old Feature-Policy syntax (geolocation 'none'); write geolocation=()")
        return [_finding("permissions.invalid", PERMISSIONS, why)]
    if not members:
        return [_finding("permissions.empty", PERMISSIONS, [f"{raw.strip()!r} names no feature"])]
    # Chromium drops a feature it does not know ("Unrecognized feature"), and `*` allows a feature to every
    # origin, embedded ones included: neither restricts anything.
    known = permissions_policy_features()
    recognised = [name for name in members if name in known]
    restricted = [name for name in recognised if not _allows_everyone(members[name])]
    notes: list[str] = []
    if restricted:
        notes.append(f"{len(restricted)} of {len(recognised)} features restricted")
    else:
        notes.append("no feature browsers know is restricted")
        if recognised:
            verb = "is" if len(recognised) == 1 else "are"
            notes.append(f"{', '.join(recognised)} {verb} allowed to every origin (*)")
    unknown = [name for name in members if name not in known]
    if unknown:
        notes.append(_unknown_features_note(unknown, known))
    if feature_policy is not None:
        notes.append("Feature-Policy is also sent; browsers that support Permissions-Policy ignore it")
    return [_finding("permissions.good" if restricted else "permissions.empty", PERMISSIONS, notes)]


def _unknown_features_note(unknown: Sequence[str], known: frozenset[str]) -> str:
    """Names browsers ignore, each with the known feature it may be a typo of."""
    from difflib import get_close_matches  # only for the rare header naming an unknown feature

    named = []
    for name in unknown:
        close = get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        named.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return "features browsers do not know are ignored: " + ", ".join(named)


def _allows_everyone(member: Item | InnerList) -> bool:
    if isinstance(member, Item):
        return member.value == Token("*")
    if isinstance(member, InnerList):
        return any(item.value == Token("*") for item in member.items)
    return False


# A Permissions-Policy key (RFC 8941 sf-key) as feature names are written; and the characters an sf-string
# may hold (%x20-7E), which an origin from Feature-Policy must keep to (no space: it was split on them).
_FEATURE_NAME = re.compile(r"[a-z][a-z0-9-]*")
_SF_STRING_CHARS = re.compile(r"[\x21-\x7e]+")


def _feature_policy_to_permissions_policy(value: str) -> str:
    """Translate the old syntax for the fix, always into a header that parses (RFC 8941 dictionary).

    `camera 'none'; geolocation 'self' https://maps.example`
    becomes `camera=(), geolocation=(self "https://maps.example")`. A name that is no feature name
    (`3d`, `caméra`) is left out, and so is an origin with a character an sf-string cannot hold (non-ASCII:
    browsers would need it punycoded anyway); `\\` and `"` in an origin are escaped.
    """
    parts = []
    for directive in value.split(";"):
        words = directive.split()
        if not words:
            continue
        name = words[0].lower()
        if not _FEATURE_NAME.fullmatch(name):
            continue
        allow: list[str] = []
        for word in words[1:]:
            keyword = word.strip("'").lower()
            if keyword == "*":
                allow = ["*"]
                break
            if keyword in ("self", "src"):
                allow.append(keyword)
            elif keyword != "none" and "://" in word and _SF_STRING_CHARS.fullmatch(word):
                escaped = word.replace("\\", "\\\\").replace('"', '\\"')
                allow.append(f'"{escaped}"')
        parts.append(f"{name}=*" if allow == ["*"] else f"{name}=({' '.join(allow)})")
    return ", ".join(parts)
