"""CORS: does the site let other websites read its responses, and with the user's cookies?

The fetch layer requests the final URL again with each Origin of fetch/cors_origins.py
(`snapshot.cors_probes`): a look-alike of the target's name that only a broken prefix, suffix or
substring check accepts, a foreign one (when the look-alike was echoed, to tell an echo of every
Origin from a broken check, or got no answer), the page's own origin over `http://` (for an https page:
its host and port, and the host's port 80 as well when the page is on another port), and `null` (what
sandboxed iframes and `data:` documents send, so any site can forge it). Each request carries the cookies a
browser that loaded the page sends from a page of that origin, and no others: every probe origin is another
site than the page's (schemeful: `http://` is another site than `https://`), from which Chromium sends
SameSite=None cookies only, so a site is graded on the request an attacker's page makes. What matters is
what a browser would do with the answer (WHATWG Fetch §3.2.5 "CORS check" and §4.9):

- the read is allowed when `Access-Control-Allow-Origin` is `*` or byte-for-byte the
  request's origin; with cookies (credentials mode "include") `*` is refused and
  `Access-Control-Allow-Credentials` must be exactly `true` (case-sensitive);
- so `*` is public data (fine for public content), `*` plus credentials is a
  misconfiguration browsers reject, and an echoed foreign or look-alike origin plus `true` lets
  every website (or every one who registers a name) read the page as the logged-in user
  (PortSwigger, "CORS vulnerabilities");
- an `http://` origin allowed with credentials on an https page lets anyone on the network path
  read it (PortSwigger, "Breaking TLS with poorly configured CORS").

One policy is graded once: an echo that an earlier probe's echo already covers is a note on that
finding. A server that echoes the Origin must say `Vary: Origin` (Fetch §3.2.5 note; RFC 9110
§12.5.5), or a shared cache may hand one origin's permission to another.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..findings import LIST_LIMIT, CheckResult, Finding
from ..records.header_text import as_utf8
from ..records.header_values import trim_http_whitespace
from ..records.origins import trustworthy_host
from ..snapshot import CorsProbe, CorsProbeKind, HttpResponse, SiteSnapshot
from ._shown import listed, shown
from .cookies import classify

SECTION = "cors"


def _observe(response: HttpResponse | None, origin: str | None) -> dict[str, Any] | None:
    """The CORS headers one response carried."""
    if response is None:
        return None
    # Browsers trim only spaces and tabs: `<origin>\xa0` is not the origin (Chromium blocks the read).
    acao = [trim_http_whitespace(v) for v in response.headers.get_all("access-control-allow-origin")]
    acac = [trim_http_whitespace(v) for v in response.headers.get_all("access-control-allow-credentials")]
    vary = {trim_http_whitespace(t).lower() for v in response.headers.get_all("vary") for t in v.split(",")}
    return {
        "origin_sent": origin,
        "status_code": response.status_code,
        # as the report shows them (`shown`): a response head may hold 100 KiB of either, and a scan four probes
        "allow_origin": shown(", ".join(acao)) if acao else None,
        "allow_credentials": shown(", ".join(acac)) if acac else None,
        "vary_origin": "origin" in vary or "*" in vary,
        "_acao": acao,
        "_acac": acac,
    }


def _credentials(seen: dict[str, Any]) -> bool:
    """Fetch §4.9 step 4: only the exact value `true` lets a credentialed response through."""
    return bool(seen["_acac"] == ["true"])


#: The outcome of an echoed Origin, by the probe that sent it and whether credentials came with it.
_ECHO_OUTCOMES = {
    ("foreign", True): "cors.origin_reflected_credentials",
    ("foreign", False): "cors.origin_reflected",
    ("lookalike", True): "cors.lookalike_credentials",
    ("lookalike", False): "cors.lookalike_allowed",
    ("null", True): "cors.null_credentials",
    ("null", False): "cors.null_allowed",
    ("http", True): "cors.http_origin_credentials",
    ("http_port_80", True): "cors.http_origin_credentials",
}
#: The probes sending a cleartext origin of the page's own host (fetch/cors_origins.py).
_HTTP_KINDS = ("http", "http_port_80")
#: How widely an echo exposes the site: any website with the visitor's cookies, a network attacker with them,
#: any website without them. An echo is folded into an earlier one that exposes at least as much.
_EXPOSURE = {
    "cors.origin_reflected_credentials": 3,
    "cors.lookalike_credentials": 3,
    "cors.null_credentials": 3,
    "cors.http_origin_credentials": 2,
    "cors.origin_reflected": 1,
    "cors.lookalike_allowed": 1,
    "cors.null_allowed": 1,
}


def _cleartext_origin(value: str) -> bool:
    """An `http://` origin that anyone on the network path can impersonate: not a loopback one, which browsers
    hold potentially trustworthy (W3C Secure Contexts §3.1). Case-sensitive: browsers serialise the scheme in
    lowercase, and compare Access-Control-Allow-Origin byte for byte."""
    if not value.startswith("http://"):
        return False
    try:
        host = urlsplit(value).hostname or ""
    except ValueError:
        return False
    return not trustworthy_host(host)


def _judge_probe(seen: dict[str, Any], kind: str, label: str, secure_page: bool) -> list[Finding]:
    """Findings for one probe that sent `Origin: <origin_sent>` (kind "page": the page itself, no Origin)."""
    acao: list[str] = seen["_acao"]
    origin = seen["origin_sent"]
    if not acao:
        return []
    if len(acao) > 1 or "," in acao[0]:
        # Fetch §3.2.5: the header must hold one value; browsers reject a list.
        return [Finding("cors.invalid", label, f"Access-Control-Allow-Origin: {seen['allow_origin']}")]
    value = acao[0]
    if not value:
        return [Finding("cors.invalid", label, "Access-Control-Allow-Origin is empty")]
    if value == "*":
        if _credentials(seen):
            return [Finding("cors.wildcard_credentials", label, "Access-Control-Allow-Origin: * with credentials")]
        return [Finding("cors.public", label, "Access-Control-Allow-Origin: *: anyone can read it without cookies")]
    # PortSwigger, "Breaking TLS with poorly configured CORS": an https page that lets a cleartext origin read
    # it with cookies is readable by whoever can forge that origin's pages on the network.
    cleartext = secure_page and _credentials(seen) and _cleartext_origin(value)
    if value != origin:
        # str.strip() on purpose, wider than browsers' trim: `<origin>\xa0` is the origin altered, which browsers
        # refuse, not another origin (nor, for `http://<host>\xa0`, a cleartext origin allowed).
        if value.strip().lower().rstrip("/") == origin.lower():
            note = f"{label}: the Origin is echoed altered ({value!r}), which browsers do not accept"
            return [Finding("cors.allowlist", label, note)]
        if cleartext:
            note = f"{value} is allowed with credentials on an https page"
            return [Finding("cors.http_origin_credentials", value, note)]
        return [Finding("cors.allowlist", label, f"{label}: only {value} is allowed")]
    findings: list[Finding] = []
    outcome = _ECHO_OUTCOMES.get((kind, _credentials(seen)))
    if kind in _HTTP_KINDS and not cleartext:
        # The site's own cleartext origin, without credentials (or on a cleartext page): nothing more than
        # anyone can read by asking, as with an allowlist.
        findings.append(Finding("cors.allowlist", label, f"{label} is allowed, without credentials"))
    elif outcome is not None and _credentials(seen):
        findings.append(Finding(outcome, label, f"{label} was echoed with Access-Control-Allow-Credentials: true"))
    elif outcome is not None:
        note = f"{label} was echoed without credentials"
        if seen["allow_credentials"] is not None:
            note += f" (Access-Control-Allow-Credentials: {seen['allow_credentials']} is not exactly 'true')"
        findings.append(Finding(outcome, label, note))
    if not seen["vary_origin"]:
        findings.append(Finding("cors.vary_missing", label, f"{label}: the Origin is echoed without Vary: Origin"))
    return findings


#: How many cookie names a finding's note quotes (the probe's details list them all, up to LIST_LIMIT), and how
#: many characters of each: a site chooses them, up to 4 KB each.
_NOTE_COOKIES = 5
_NOTE_COOKIE_CHARS = 64


def _quoted_names(names: tuple[str, ...]) -> str:
    """The first of `names` for a note; a cookie set by a line without a name ("Set-Cookie: abc", which browsers
    keep and send back as "abc") has the empty name."""
    shown = (as_utf8(name) or "(a cookie without a name)" for name in names)
    return ", ".join(listed(tuple(shown), _NOTE_COOKIES, each=_NOTE_COOKIE_CHARS))


def _cookies_note(probe: CorsProbe) -> str:
    """What went with a request whose answer let its origin read the page with credentials: the cookies a
    browser that loaded the page sends from that origin, and so what an attacker's page of it reads the page
    with. It matters most when they hold the site's session cookie; when the site's cookies all stay home
    (SameSite Lax, Strict or unset, Partitioned), the answer was read without them, as that page would read it."""
    if probe.cookies:
        sessions = [as_utf8(name) for name in probe.cookies if classify(name) == "session"]
        note = f"; the request carried the cookies browsers send from that origin: {_quoted_names(probe.cookies)}"
        if sessions:
            note += f" (the session cookie {listed(sessions, 1, each=_NOTE_COOKIE_CHARS)[0]} among them)"
        return note
    if probe.cookies_withheld:
        withheld = _quoted_names(probe.cookies_withheld)
        return (
            f"; the request carried none of the site's cookies ({withheld}: SameSite Lax, Strict or unset, or"
            " Partitioned, which browsers keep from that origin), so the page was read as by a visitor without them"
        )
    return ""


def _fold_echoes(findings: list[Finding], judged: list[Finding], cookies_note: str = "") -> list[Finding]:
    """`findings` plus `judged`, where an echo that an earlier echo already covers (it exposes the site at
    least as widely) becomes a note on that earlier finding: a server echoing every Origin, `null` included,
    has one misconfiguration and loses its points once, as much as one that echoes all but `null`. A finding
    that lets the origin read with credentials and stands on its own gets `cookies_note` (`_cookies_note`)."""
    merged = list(findings)
    for finding in judged:
        exposure = _EXPOSURE.get(finding.outcome)
        covering = next(
            (
                index
                for index, earlier in enumerate(merged)
                if exposure is not None and _EXPOSURE.get(earlier.outcome, 0) >= exposure
            ),
            None,
        )
        if covering is None:
            credentialed = exposure is not None and exposure >= _EXPOSURE["cors.http_origin_credentials"]
            merged.append(replace(finding, note=f"{finding.note}{cookies_note}") if credentialed else finding)
            continue
        earlier = merged[covering]
        if (earlier.outcome, earlier.subject) != (finding.outcome, finding.subject):  # not one fixed value again
            merged[covering] = replace(earlier, more_notes=(*earlier.more_notes, f"{finding.note} as well"))
    return merged


def _shown(seen: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in seen.items() if not k.startswith("_")}


def _cookie_details(probe: CorsProbe) -> dict[str, list[str]]:
    """The cookies the probe carried and those it did not (a browser keeps them from that origin), when the site
    set any: by name, as the cookies section names them."""
    if not probe.cookies and not probe.cookies_withheld:
        return {}
    return {
        "cookies_sent": listed([as_utf8(name) for name in probe.cookies], LIST_LIMIT),
        "cookies_withheld": listed([as_utf8(name) for name in probe.cookies_withheld], LIST_LIMIT),
    }


#: The order probes are judged in, whatever order they were sent in: the foreign probe follows the look-alike
#: on the wire, but its echo is the broader finding (every Origin), which a look-alike echo is a note on. For a
#: page on another port than 443, http://host (port 80) comes before http://host:port, so a site echoing both
#: keeps the subject its finding had before the second probe was sent (the diff and monitors key on it).
_JUDGED_ORDER: tuple[CorsProbeKind, ...] = ("foreign", "lookalike", "http_port_80", "http", "null")


def check_cors(snapshot: SiteSnapshot) -> CheckResult:
    secure_page = snapshot.main.final_url.startswith("https://")
    plain = _observe(snapshot.final, None)
    page_redirected = snapshot.final is not None and snapshot.final.is_redirect
    details: dict[str, Any] = {}
    findings: list[Finding] = []
    unanswered: list[Finding] = []
    for probe in sorted(snapshot.cors_probes, key=lambda probe: _JUDGED_ORDER.index(probe.kind)):
        label = f"Origin: {probe.origin}"
        seen = _observe(probe.response, probe.origin)
        if seen is None:
            why = shown(probe.failure.message) if probe.failure else "no response"
            details[f"{probe.kind}_origin"] = {"origin_sent": probe.origin, "error": why, **_cookie_details(probe)}
            # docs/scoring.md, "could not check": an origin whose request got no answer may be granted
            # anything, so the site is never called unexposed then; what the other requests saw still counts.
            note = f"the request with {label} got no answer ({why}), so what that origin may read is unknown"
            unanswered.append(Finding("check.error", label, note))
            continue
        details[f"{probe.kind}_origin"] = {**_shown(seen), **_cookie_details(probe)}
        if probe.response is not None and probe.response.is_redirect and not page_redirected:
            # A gate (consent, bot check, login) answered the probe instead of the page: its headers say nothing
            # of what the page grants that origin, as an unanswered probe says nothing.
            where = trim_http_whitespace(probe.response.location or "")
            where = where if len(where) <= 120 else where[:100] + "..."
            note = f"the request with {label} was answered with a redirect to {where!r}, not with the page"
            unanswered.append(Finding("check.error", label, note))
            continue
        findings = _fold_echoes(findings, _judge_probe(seen, probe.kind, label, secure_page), _cookies_note(probe))
    details["no_origin"] = _shown(plain) if plain else None
    if not snapshot.cors_probes:
        unanswered.append(Finding("check.error", note="no request with an Origin was made"))
    # A `*` (or a fixed origin) sent to every visitor, without any Origin, is judged like a probe answer.
    if plain is not None and plain["_acao"] and not findings:
        findings.extend(_judge_probe({**plain, "origin_sent": ""}, "page", "no Origin", secure_page))
    findings += unanswered
    if not findings:
        findings.append(Finding("cors.not_exposed"))
    return CheckResult(SECTION, tuple(findings), details)
