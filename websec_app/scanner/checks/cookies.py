"""Cookies: Secure, HttpOnly, SameSite, prefixes and Domain scope of every Set-Cookie.

Every response of the main chain is read (a redirect can set cookies too), each
`Set-Cookie` line is parsed the way browsers parse it (`_cookie_parser`, RFC 6265bis)
and judged by what it is for. A session cookie without Secure or HttpOnly is a real
risk; the same on a language preference is housekeeping. Anti-CSRF cookies are read
by JavaScript on purpose (the double-submit pattern, OWASP CSRF Prevention Cheat
Sheet), so a missing HttpOnly on them is not reported.

Cookie values never leave this module: the report names cookies, never their content.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..findings import STATUSES, CheckResult, Finding
from ..registrable import registrable_domain
from ..rules import default_rulebook
from ..snapshot import HttpResponse, SiteSnapshot
from ..target import ip_literal
from ._cookie_parser import Malformed, ParsedCookie, default_path, parse_set_cookie, rejection

SECTION = "cookies"

# Names frameworks give their session and login cookies, matched as whole words of the
# cookie name ("connect.sid" -> connect, sid), so `_gid` or `consider` do not match.
_SESSION_WORDS = frozenset(
    {
        "sid", "sess", "sessid", "auth", "authn", "authtoken", "authorization", "aspxauth", "token", "jwt",
        "identity", "logged", "remember", "sso", "bearer", "credentials", "saml",
    }
)  # fmt: skip
# Substrings that mark a session cookie wherever they appear (PHPSESSID, JSESSIONID,
# ASP.NET_SessionId, laravel_session, next-auth.session-token, KEYCLOAK_SESSION...).
_SESSION_SUBSTRINGS = ("session", "sessid")
_SESSION_PREFIXES = ("wordpress_logged_in", "wordpress_sec_")
# Anti-CSRF tokens: Django `csrftoken`, Angular/Laravel `XSRF-TOKEN`, Express `_csrf`,
# ASP.NET `__RequestVerificationToken` and `.AspNetCore.Antiforgery.*`.
_CSRF_SUBSTRINGS = ("csrf", "xsrf", "antiforgery", "requestverificationtoken")
_CSRF_EXACT = frozenset({"_token"})
# A JSON Web Token in a cookie is almost always a login (RFC 7519 compact serialisation).
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

_NO_SECURE = {"session": "cookie.session_no_secure", "csrf": "cookie.csrf_no_secure", "other": "cookie.no_secure"}
_NO_HTTPONLY = {"session": "cookie.session_no_httponly", "other": "cookie.no_httponly"}
_NO_SAMESITE = {
    "session": "cookie.session_no_samesite",
    "csrf": "cookie.csrf_no_samesite",
    "other": "cookie.no_samesite",
}


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)  # authToken -> auth Token
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def classify(name: str, value: str = "") -> str:
    """ "session", "csrf" or "other", from the cookie's name (and a JWT-shaped value)."""
    lowered = name.lower()
    if lowered in _CSRF_EXACT or any(s in lowered for s in _CSRF_SUBSTRINGS):
        return "csrf"
    if any(s in lowered for s in _SESSION_SUBSTRINGS) or lowered.startswith(_SESSION_PREFIXES):
        return "session"
    if _SESSION_WORDS.intersection(_words(name)) or _JWT.fullmatch(value):
        return "session"
    return "other"


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _judge(cookie: ParsedCookie, response: HttpResponse, kind: str) -> list[Finding]:
    """The findings for one stored cookie (not a deletion, not rejected)."""
    name = cookie.name
    findings: list[Finding] = []
    plain_http = urlsplit(response.url).scheme == "http"
    fix_vars = {"cookie": name}

    if cookie.samesite == "None" and not cookie.secure:
        # 6265bis §5.7 (Chromium since M80): SameSite=None needs Secure. Firefox and Safari
        # still store it, so it is sent on every cross-site request and over plain HTTP.
        findings.append(Finding("cookie.samesite_none_insecure", name, None, fix_vars))
    elif not cookie.secure:
        note = (
            f"{name}: the page itself is plain HTTP, so the cookie travels unencrypted; serve the site over "
            "HTTPS, then add Secure"
            if plain_http
            else None
        )
        findings.append(Finding(_NO_SECURE[kind], name, note, fix_vars))

    if not cookie.httponly and kind in _NO_HTTPONLY:
        findings.append(Finding(_NO_HTTPONLY[kind], name, None, fix_vars))

    if cookie.samesite_raw is not None:
        note = f"{name}: SameSite={cookie.samesite_raw!r} is not Strict, Lax or None"
        findings.append(Finding("cookie.samesite_invalid", name, note, fix_vars))
    elif cookie.samesite is None:
        findings.append(Finding(_NO_SAMESITE[kind], name, None, fix_vars))

    host = (urlsplit(response.url).hostname or "").lower()
    if (
        kind != "other"
        and cookie.domain is not None
        and ip_literal(cookie.domain) is None
        and cookie.domain == registrable_domain(host)
    ):
        note = f"{name}: Domain={cookie.domain} also sends it to every subdomain of {cookie.domain}"
        findings.append(Finding("cookie.broad_domain", name, note, fix_vars))
    return findings


def _worst_status(findings: list[Finding]) -> str:
    book = default_rulebook()
    statuses = [book.rule(f.outcome).status for f in findings] or ["good"]
    return max(statuses, key=STATUSES.index)


def check_cookies(snapshot: SiteSnapshot) -> CheckResult:
    now = snapshot.fetched_at
    final = snapshot.main.final
    findings: list[Finding] = []
    cookies: list[dict[str, Any]] = []
    ignored: list[dict[str, str]] = []

    for response in snapshot.main.responses:
        where = "" if response is final else f" (set by the redirect response from {response.url})"
        for line in response.headers.get_all("set-cookie"):
            parsed = parse_set_cookie(line)
            if isinstance(parsed, Malformed):
                ignored.append({"set_by": response.url, "reason": parsed.reason})
                findings.append(Finding("cookie.malformed", None, f"A Set-Cookie line{where}: {parsed.reason}"))
                continue
            kind = classify(parsed.name, parsed.value)
            refused = rejection(parsed, response.url)
            deletes = parsed.deletes(now)
            if refused is not None:
                outcome = "cookie.prefix_violation" if refused.kind == "prefix" else "cookie.rejected"
                cookie_findings = [Finding(outcome, parsed.name, f"{parsed.name}{where}: {refused.reason}")]
            elif deletes:
                cookie_findings = []  # clearing a cookie: its flags protect nothing
            else:
                cookie_findings = _judge(parsed, response, kind)
                if where:  # say which response set it when it was not the final page
                    cookie_findings = [
                        replace(f, note="; ".join(filter(None, [f.note, f"{f.subject}{where}"])))
                        for f in cookie_findings
                    ]
            if not cookie_findings and not deletes:
                cookie_findings = [Finding("cookie.ok", parsed.name)]
            findings.extend(cookie_findings)
            cookies.append(
                {
                    "name": parsed.name,
                    "secure": parsed.secure,
                    "httponly": parsed.httponly,
                    "samesite": parsed.samesite if parsed.samesite_raw is None else parsed.samesite_raw,
                    "path": parsed.path or default_path(response.url),
                    "domain": parsed.domain,
                    "expires": _iso(parsed.expires),
                    "max_age": parsed.max_age,
                    "prefix": parsed.prefix,
                    "kind": kind,
                    "status": _worst_status(cookie_findings),
                    "set_by": response.url,
                    "final_response": response is final,
                    "deletes": deletes,
                    "rejected": refused.reason if refused else None,
                    "ignored_attributes": list(parsed.ignored_attributes),
                }
            )

    if not cookies and not ignored:
        findings.append(Finding("cookie.none"))
    elif cookies and all(c["deletes"] for c in cookies) and not ignored:
        findings.append(Finding("cookie.none", note="The only Set-Cookie headers delete cookies"))
    details: dict[str, Any] = {"cookies": cookies, "count": len(cookies)}
    if ignored:
        details["ignored"] = ignored
    return CheckResult(SECTION, tuple(findings), details)
