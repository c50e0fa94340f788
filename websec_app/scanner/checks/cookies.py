"""Cookies: Secure, HttpOnly, SameSite, prefixes and Domain scope of every Set-Cookie.

Every response of the main chain is read (a redirect can set cookies too), and for an https://
target the port-80 redirect of its http:// form as well (fetched for the redirection check), each
`Set-Cookie` line is parsed the way browsers parse it (records/cookies.py, RFC 6265bis)
and judged by what it is for. What is graded is what Chromium's cookie store keeps: every line goes through it
(records/cookie_jar.py) in the order the responses came, and a cookie it evicts past 180 for a site is not graded,
whichever response set it (cookie.too_many counts them and names the first); of the lines that store no cookie
(malformed, refused, deletions) the first 180 are graded. A session cookie without Secure or HttpOnly is a real
risk; the same on a language preference is housekeeping. Anti-CSRF cookies are read
by JavaScript on purpose (the double-submit pattern, OWASP CSRF Prevention Cheat
Sheet), so a missing HttpOnly on them is not reported. Cookies that load balancers, CDNs and
bot-protection edges set on their own (`_INFRASTRUCTURE`) are not the site's login, even when
their name contains "session" (Heroku's `heroku-session-affinity`): they are graded on their own.

Cookie values never leave this module: the report names cookies, never their content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..findings import LIST_LIMIT, STATUSES, CheckResult, Finding
from ..records.cookie_jar import DOMAIN_MAX_COOKIES, ChromiumCookieJar, StoredCookie
from ..records.cookies import (
    Malformed,
    ParsedCookie,
    Rejection,
    default_path,
    domain_matches,
    parse_set_cookie,
    rejection,
    scope_domain,
    storage_key,
)
from ..records.header_text import as_utf8
from ..records.header_values import kept_hsts
from ..registrable import registrable_domain
from ..rules import default_rulebook
from ..snapshot import HttpResponse, SiteSnapshot
from ..target import ip_literal
from ._shown import first_fitting, listed, shown

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
# Session cookies whose names hold none of those words, matched whole and case-sensitively as the
# frameworks write them: Drupal's SESS / SSESS (over HTTPS) + 32 hex digits of a hash of the cookie domain
# (core/lib/Drupal/Core/Session/SessionConfiguration.php), ASP.NET Core cookie authentication's default
# .AspNetCore.Cookies (CookieAuthenticationDefaults; a large ticket is split into ...C1, ...C2 by
# ChunkingCookieManager), TYPO3's frontend and backend user sessions.
_SESSION_NAMES = re.compile(r"S?SESS[0-9a-f]{32}|\.AspNetCore\.Cookies(?:C\d+)?|[fb]e_typo_user")
# Anti-CSRF tokens: Django `csrftoken`, Angular/Laravel `XSRF-TOKEN`, Express `_csrf`,
# ASP.NET `__RequestVerificationToken` and `.AspNetCore.Antiforgery.*`.
_CSRF_SUBSTRINGS = ("csrf", "xsrf", "antiforgery", "requestverificationtoken")
_CSRF_EXACT = frozenset({"_token"})
# A JSON Web Token in a cookie is almost always a login (RFC 7519 compact serialisation).
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

# Cookies that infrastructure in front of the application sets on its own: load-balancer
# stickiness ("affinity") and CDN / bot-protection state. Their value names a backend or records
# that a browser passed a check; it is not a login. Matched case-sensitively (cookie names are,
# RFC 6265bis 5.7) against the exact names the platforms document:
_INFRASTRUCTURE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (platform, re.compile(pattern))
    for platform, pattern in (
        # docs.aws.amazon.com/elasticloadbalancing/latest/application/sticky-sessions.html:
        # AWSALB / AWSALBCORS (duration-based), AWSALBTG / AWSALBTGCORS (target group),
        # AWSALBAPP-0..n (application-based, next to the application's own cookie).
        ("AWS Application Load Balancer", r"AWSALB(?:CORS|TG|TGCORS)?|AWSALBAPP-\d+"),
        # docs.aws.amazon.com/elasticloadbalancing/latest/classic/elb-sticky-sessions.html
        ("AWS Classic Load Balancer", r"AWSELB(?:CORS)?"),
        # learn.microsoft.com/azure/app-service/configure-common ("Session affinity"), ARR cookies
        ("Azure App Service", r"ARRAffinity(?:SameSite)?"),
        # learn.microsoft.com/azure/application-gateway/configuration-http-settings (cookie-based affinity)
        ("Azure Application Gateway", r"ApplicationGatewayAffinity(?:CORS)?"),
        # learn.microsoft.com/azure/frontdoor/routing-methods ("Session affinity")
        ("Azure Front Door", r"ASLBSA(?:CORS)?"),
        # cloud.google.com/load-balancing/docs/backend-service ("Generated cookie affinity")
        ("Google Cloud Load Balancing", r"GCLB|GCILB"),
        # devcenter.heroku.com/articles/session-affinity
        ("Heroku router", r"heroku-session-affinity"),
        # F5 K6917 / K83419154: cookie persistence names the cookie BIGipServer<pool name>
        ("F5 BIG-IP", r"BIGipServer.+"),
        # Citrix ADC (NetScaler) cookie-insert persistence: NSC_<encoded virtual server name>
        ("Citrix NetScaler", r"NSC_.+"),
        # docs.haproxy.org configuration manual, "cookie" keyword: the examples' SERVERID
        ("HAProxy", r"SERVERID"),
        # nginx-sticky-module-ng (default name "route") and nginx.org "sticky cookie srv_id"
        ("nginx sticky", r"route|srv_id"),
        # doc.traefik.io "Sticky sessions": v1 default _TRAEFIK_BACKEND, v2+ "_" + 5 hex of a sha1
        ("Traefik", r"_TRAEFIK_BACKEND|_[0-9a-f]{5}"),
        # kubernetes.github.io/ingress-nginx "Sticky sessions": session-cookie-name default
        ("Kubernetes ingress-nginx", r"INGRESSCOOKIE"),
        # docs.netlify.com split testing: the branch a visitor was assigned to
        ("Netlify", r"nf_ab"),
        # developers.cloudflare.com/fundamentals/reference/policies-compliances/cloudflare-cookies/
        ("Cloudflare", r"__cf_bm|__cflb|cf_clearance|_cfuvid|__cfruid|__cfwaitingroom|cf_ob_info|cf_use_ob|cf_chl_.+"),
        # techdocs.akamai.com Bot Manager cookies, and Adaptive Acceleration's AKA_A2
        ("Akamai", r"ak_bmsc|bm_sv|bm_sz|bm_mi|_abck|AKA_A2"),
        # docs.imperva.com "Cookies set by Imperva" (Cloud Application Security)
        ("Imperva", r"visid_incap_\d+|incap_ses_[\d_]+|nlbi_\d+(?:_\d+)?|reese84"),
        # docs.sucuri.net WAF: sucuri_cloudproxy_uuid_<hash>
        ("Sucuri", r"sucuri_cloudproxy_uuid_[0-9a-f]+"),
    )
)
# Not listed, for want of a documented cookie: Fly.io (its proxy routes with the fly-replay
# header, not a cookie), Render and Railway (no stickiness cookie documented). A name that says
# it is for affinity or stickiness is one whatever the platform.
_AFFINITY_WORDS = frozenset({"affinity", "sticky"})

#: details.cookies, details.superseded and details.ignored list LIST_LIMIT each; `count` says how many were
#: graded, details.not_listed how many more the other two had. Every string of theirs is `shown` (a cookie's
#: name may be 4,096 bytes of 0xFF, 24,576 characters in the stored JSON: 50 such made a 607 KB list), and
#: details.cookies lists the first whose entries store in COOKIES_LISTED_BUDGET characters (an ordinary entry
#: is 300 to 400: 50 fit), the other two lists in findings.LIST_BUDGET.
COOKIES_LISTED_BUDGET = 32_768
#: The most evicted cookies cookie.too_many names, each by its first 64 characters.
_NAMED_EVICTED = 10
_NAME_SHOWN = 64

#: The most lines that store no cookie (malformed, refused, deletions) a scan grades; the rest are counted. They
#: take no room in the browser's store, so nothing else bounds them: 40,000 refused lines took 0.86 s to check,
#: 0.26 s with the bound (reading each, for what it does to the store).
MAX_GRADED_UNSTORED = DOMAIN_MAX_COOKIES

# What became of a Set-Cookie line, as Chromium's cookie store saw it: graded (kept, replaced by a later response,
# or stored not at all: malformed, refused, a deletion), superseded (a later line of its response set the same
# cookie), evicted (dropped to make room, kDomainMaxCookies), or past the bound (a line that stores no cookie, past
# the first MAX_GRADED_UNSTORED).
_GRADED, _SUPERSEDED, _EVICTED, _PAST_BOUND = 0, 1, 2, 3

_NO_SECURE = {"session": "cookie.session_no_secure", "csrf": "cookie.csrf_no_secure", "other": "cookie.no_secure"}
#: The same, for a cookie the page's HSTS policy keeps off plain HTTP while browsers hold it (_Hsts.covers)
_NO_SECURE_UNDER_HSTS = {
    "session": "cookie.session_no_secure_hsts",
    "csrf": "cookie.csrf_no_secure_hsts",
    "other": "cookie.no_secure_hsts",
}
#: Mozilla's Observatory counts HSTS as protecting cookies from max-age=15768000 (six months, where websec's
#: hsts.short_max_age ends): a shorter policy lapses long before the cookies it would protect.
HSTS_PROTECTS_FROM_SECONDS = 15_768_000
_NO_HTTPONLY = {"session": "cookie.session_no_httponly", "other": "cookie.no_httponly"}
_NO_SAMESITE = {
    "session": "cookie.session_no_samesite",
    "csrf": "cookie.csrf_no_samesite",
    "other": "cookie.no_samesite",
}


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)  # authToken -> auth Token
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def infrastructure_platform(name: str) -> str | None:
    """The platform that sets this load-balancer / CDN cookie, or None for the site's own cookies."""
    for platform, pattern in _INFRASTRUCTURE:
        if pattern.fullmatch(name):
            return platform
    if _AFFINITY_WORDS.intersection(_words(name)):
        return "a load balancer (affinity cookie)"
    return None


def classify(name: str, value: str = "") -> str:
    """ "infrastructure", "session", "csrf" or "other", from the cookie's name (and a JWT-shaped value)."""
    if infrastructure_platform(name) is not None:
        return "infrastructure"
    lowered = name.lower()
    if lowered in _CSRF_EXACT or any(s in lowered for s in _CSRF_SUBSTRINGS):
        return "csrf"
    if any(s in lowered for s in _SESSION_SUBSTRINGS) or lowered.startswith(_SESSION_PREFIXES):
        return "session"
    if _SESSION_NAMES.fullmatch(name):
        return "session"
    if _SESSION_WORDS.intersection(_words(name)) or _JWT.fullmatch(value):
        return "session"
    return "other"


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _judge_infrastructure(cookie: ParsedCookie) -> list[Finding]:
    """A load-balancer or CDN cookie: only a missing Secure is worth a word, and it costs nothing.

    Its value names a backend server (or records that a browser passed a bot check), not a user:
    a script that reads it learns nothing that logs anyone in, so HttpOnly is not asked for; it
    carries no authority a forged cross-site request could use, so SameSite is not asked for
    (AWS's *CORS variants are SameSite=None on purpose). Without Secure it still travels over
    plain HTTP, where it tells an observer which backend serves the user (F5's default BIG-IP
    cookie even encodes the pool member's internal address and port, F5 K6917): advice, worth no
    points, since the site owner often cannot change the attributes the platform sets.
    """
    name = cookie.name
    platform = infrastructure_platform(name)
    if cookie.secure:
        return [Finding("cookie.infrastructure", name, f"{name}: set by {platform}")]
    note = f"{name}: set by {platform}, sent without Secure"
    return [Finding("cookie.infrastructure_no_secure", name, note, {"cookie": shown(name)})]


@dataclass(frozen=True)
class _Hsts:
    """The final page's HSTS policy, as browsers keep it, when it protects cookies (`_page_hsts`)."""

    host: str
    max_age: int
    include_subdomains: bool

    def covers(self, cookie: ParsedCookie, url: str) -> bool:
        """Whether every host the cookie is sent to is under the policy (RFC 6797 §8.3: a browser holding it
        requests them over HTTPS only, so the cookie never goes out in clear): a host-only cookie of the policy's
        host (or of a host below it, with includeSubDomains); a Domain cookie only with includeSubDomains, its
        domain the policy's host or below it."""
        domain = scope_domain(cookie, url)
        reach = domain or (urlsplit(url).hostname or "").lower()  # the Domain, or the one host of a host-only cookie
        if domain is None and reach == self.host:
            return True
        return self.include_subdomains and domain_matches(reach, self.host)

    @property
    def words(self) -> str:
        subdomains = "; includeSubDomains" if self.include_subdomains else ""
        return f"the HSTS policy of {self.host} (max-age={self.max_age}{subdomains})"


def _page_hsts(snapshot: SiteSnapshot) -> _Hsts | None:
    """The final page's HSTS policy when browsers keep it (RFC 6797 §8.1: its first Strict-Transport-Security
    field, valid, over HTTPS with a certificate they accept) for at least HSTS_PROTECTS_FROM_SECONDS."""
    final, tls = snapshot.main.final, snapshot.tls
    if final is None or urlsplit(final.url).scheme != "https" or tls is None or tls.failure is not None:
        return None
    host = (urlsplit(final.url).hostname or "").lower()
    policy = kept_hsts(final.headers.get_all("strict-transport-security"))
    if policy is None or ip_literal(host) is not None or tls.host.lower() != host:
        return None
    max_age = policy.max_age or 0
    if max_age < HSTS_PROTECTS_FROM_SECONDS or tls.refused_by_browsers(snapshot.fetched_at):
        return None
    return _Hsts(host, max_age, policy.include_subdomains)


def _judge(
    cookie: ParsedCookie, response: HttpResponse, kind: str, plain_http_site: bool, hsts: _Hsts | None
) -> list[Finding]:
    """The findings for one stored cookie (not a deletion, not rejected). `plain_http_site`: the final page
    is plain HTTP; `hsts`: its HSTS policy when browsers keep it long enough to protect cookies."""
    if kind == "infrastructure":
        return _judge_infrastructure(cookie)
    name = cookie.name
    findings: list[Finding] = []
    fix_vars = {"cookie": shown(name)}  # the fix's example line names it; the snippets edit it whole (grading.py)

    if cookie.samesite == "None" and not cookie.secure:
        # 6265bis §5.7 (Chromium since M80): SameSite=None needs Secure. Firefox and Safari
        # still store it, so it is sent on every cross-site request and over plain HTTP.
        findings.append(Finding("cookie.samesite_none_insecure", name, None, fix_vars))
    elif not cookie.secure:
        note = None
        if plain_http_site:
            note = (
                f"{name}: the page itself is plain HTTP, so the cookie travels unencrypted; serve the site over "
                "HTTPS, then add Secure"
            )
        elif urlsplit(response.url).scheme == "http" and 300 <= response.status_code < 400:
            # The site is HTTPS but its http:// redirect sets the cookie: it goes out in clear before the browser
            # reaches HTTPS, whatever the HTTPS pages do.
            note = (
                f"{name}: a plain-HTTP response sets it, before the browser reaches HTTPS; stop setting cookies "
                "on the HTTP redirect and set them only on the HTTPS pages"
            )
        elif urlsplit(response.url).scheme == "http":
            # The site is HTTPS, but its http:// URL serves a page of its own (no redirect) that sets the cookie:
            # a visitor who arrives over HTTP never reaches HTTPS, and the cookie goes out in clear
            note = (
                f"{name}: the site's plain-HTTP page sets it, and visitors who arrive over HTTP stay there; redirect "
                "HTTP to HTTPS and set cookies only on the HTTPS pages"
            )
        outcome = _NO_SECURE[kind]
        if note is None and hsts is not None and hsts.covers(cookie, response.url):
            # Mozilla's Observatory: "cookies-without-secure-flag-but-protected-by-hsts", a quarter of the penalty
            outcome = _NO_SECURE_UNDER_HSTS[kind]
            note = (
                f"{name}: {hsts.words} keeps it off plain HTTP in browsers that hold the policy; Secure keeps it "
                "off in the others"
            )
        findings.append(Finding(outcome, name, note, fix_vars))

    if not cookie.httponly and kind in _NO_HTTPONLY:
        findings.append(Finding(_NO_HTTPONLY[kind], name, None, fix_vars))

    if cookie.samesite_raw is not None:
        note = f"{name}: SameSite={cookie.samesite_raw!r} is not Strict, Lax or None"
        findings.append(Finding("cookie.samesite_invalid", name, note, fix_vars))
    elif cookie.samesite is None:
        findings.append(Finding(_NO_SAMESITE[kind], name, None, fix_vars))

    host = (urlsplit(response.url).hostname or "").lower()
    domain = scope_domain(cookie, response.url)
    if (
        kind in ("session", "csrf")
        and domain is not None
        and ip_literal(domain) is None
        and domain == registrable_domain(host)
    ):
        note = f"{name}: Domain={domain} also sends it to every subdomain of {domain}"
        findings.append(Finding("cookie.broad_domain", name, note, fix_vars))
    return findings


def _worst_status(findings: list[Finding]) -> str:
    book = default_rulebook()
    statuses = [book.rule(f.outcome).status for f in findings] or ["good"]
    return max(statuses, key=STATUSES.index)


def _visits(snapshot: SiteSnapshot) -> list[list[tuple[HttpResponse, bool]]]:
    """The visits whose cookies a browser takes, each a fresh cookie store, every response with whether its lines
    are graded there: the main chain, then for an https:// target the chain of its http:// form (its port-80
    redirect often sets a session cookie of its own), whose responses already in the main chain (the final page)
    are graded once, in the main chain, but still fill its store."""
    visits = [[(response, True) for response in snapshot.main.responses]]
    upgrade = snapshot.http_upgrade
    if upgrade is not None and upgrade is not snapshot.main:
        main_urls = {response.url for response in snapshot.main.responses}
        visits.append([(response, response.url not in main_urls) for response in upgrade.responses])
    return visits


#: A Set-Cookie line of a visit: its response's index, then its own.
_Line = tuple[int, int]


class _Fates:
    """What became of each Set-Cookie line of one visit, every line put through Chromium's cookie store in the order
    it came (records/cookie_jar.py).

    The lines graded are those of the cookies the store keeps to the end, each as every response set it (a line
    replaced by a later response was sent in its own and with the next request), and those it never stores
    (malformed, refused, deletions), each reported; not the cookies it evicts to make room, whichever response set
    them, nor a line a later line of its own response replaced.
    """

    def __init__(self, visit: list[tuple[HttpResponse, bool]], now: datetime, unstored_budget: int) -> None:
        self.lines: list[tuple[str, ...]] = []  # by response, its Set-Cookie lines
        self.of: list[bytearray] = []  # by response, then line: _GRADED, _SUPERSEDED, _EVICTED or _PAST_BOUND
        self.unstored_budget = unstored_budget  # how many more lines that store no cookie may be graded
        self.replaced_in_response: dict[_Line, int] = {}  # a line -> how many earlier lines of its response it replaced
        self._jar: ChromiumCookieJar[_Line | None] = ChromiumCookieJar()
        self._earlier: dict[_Line, list[_Line]] = {}  # a stored line -> the lines of earlier responses it replaced
        self.first_evicted: list[_Line] = []  # the lines whose cookies were evicted first, in that order (a few)
        for index, (response, graded) in enumerate(visit):
            self._read(index, response, graded, now)

    def _unstored(self, fate: bytearray, line_index: int, graded: bool) -> None:
        """A line that stores no cookie: graded while the budget lasts."""
        if not graded:
            return
        if self.unstored_budget:
            self.unstored_budget -= 1
        else:
            fate[line_index] = _PAST_BOUND

    def _read(self, index: int, response: HttpResponse, graded: bool, now: datetime) -> None:
        every_line = response.headers.get_all("set-cookie")
        fate = bytearray(len(every_line))
        self.lines.append(every_line)
        self.of.append(fate)
        last: dict[tuple[object, ...], int] = {}  # the line of this response that last set each cookie
        for line_index, line in enumerate(every_line):
            # A line without a name is reported as malformed whatever becomes of it, but Chromium stores it (with an
            # empty name), so it takes a place in the store: it is put there with no line to mark.
            parsed = parse_set_cookie(line, nameless=True)
            if isinstance(parsed, Malformed) or rejection(parsed, response.url) is not None:
                self._unstored(fate, line_index, graded)
                continue  # never stored, and replaces nothing
            identity = storage_key(parsed, response.url)
            token = (index, line_index) if parsed.name else None
            if not token:
                self._unstored(fate, line_index, graded)  # reported as malformed
            # 6265bis 5.7: a stored line replaces the cookie of the same name, domain and path, so of one response's
            # lines for one cookie the browser keeps the last (Chromium 156 too), and only it is graded.
            if token and (earlier := last.get(identity)) is not None:
                fate[earlier] = _SUPERSEDED
                self.replaced_in_response[token] = self.replaced_in_response.pop((index, earlier), 0) + 1
            last[identity] = line_index
            site = registrable_domain(identity[1])
            partition = registrable_domain(_host(response)) if parsed.partitioned else None
            if parsed.deletes(now):
                if token:
                    self._unstored(fate, line_index, graded)
                if (deleted := self._jar.delete(site, partition, identity).replaced) is not None:
                    self._earlier.pop(deleted, None)  # deleted by the site, not evicted: they stay graded
                continue
            size = len(parsed.name) + len(parsed.value)  # header values are latin-1: one character, one byte
            departure = self._jar.set(
                site, partition, identity, StoredCookie(token, parsed.secure, parsed.priority, size)
            )
            if token and (old := departure.replaced) is not None:
                lineage = self._earlier.pop(old, [])
                if old[0] != index:
                    lineage.append(old)
                if lineage:
                    self._earlier[token] = lineage
            for gone in departure.evicted:
                if gone is not None:
                    self._mark_evicted(gone)

    def _mark_evicted(self, gone: _Line) -> None:
        """The cookie `gone` set is evicted: that line and those of earlier responses it replaced are not graded."""
        for index, line_index in (gone, *self._earlier.pop(gone, ())):
            if self.of[index][line_index] == _GRADED:
                self.of[index][line_index] = _EVICTED
                if len(self.first_evicted) < LIST_LIMIT:  # enough to name _NAMED_EVICTED still evicted at the end
                    self.first_evicted.append((index, line_index))


def _host(response: HttpResponse) -> str:
    return (urlsplit(response.url).hostname or "").lower()


def _set_by(response: HttpResponse) -> str:
    """Where a cookie came from, for a note on a cookie not set by the final page."""
    if 300 <= response.status_code < 400:
        return f" (set by the redirect response from {response.url})"
    return f" (set by the response from {response.url})"


def check_cookies(snapshot: SiteSnapshot) -> CheckResult:
    now = snapshot.fetched_at
    final = snapshot.main.final
    plain_http_site = final is not None and urlsplit(final.url).scheme == "http"
    hsts = _page_hsts(snapshot)
    findings: list[Finding] = []
    cookies: list[dict[str, Any]] = []  # the first LIST_LIMIT graded
    ignored: list[dict[str, str]] = []
    superseded: list[dict[str, str]] = []  # lines a later line of the same response replaced
    graded = ignored_count = superseded_count = only_deletions = 0
    evicted: list[str] = []  # the names of the first _NAMED_EVICTED cookies Chromium evicts, in that order
    evicted_count = past_bound = 0
    unstored_budget = MAX_GRADED_UNSTORED
    # (outcome, cookie name) of the findings whose notes say which response set the cookie (_line_findings): the
    # final page's, with their places in `findings`, and the other responses'
    from_final: dict[tuple[str, str | None], list[int]] = {}
    set_elsewhere: set[tuple[str, str | None]] = set()

    for visit in _visits(snapshot):
        fates = _Fates(visit, now, unstored_budget)
        unstored_budget = fates.unstored_budget
        for index, line_index in fates.first_evicted:
            response, graded_here = visit[index]
            if graded_here and fates.of[index][line_index] == _EVICTED and len(evicted) < _NAMED_EVICTED:
                gone = parse_set_cookie(fates.lines[index][line_index])
                if isinstance(gone, ParsedCookie):  # always: only a line with a name is marked evicted
                    evicted.append(shown(as_utf8(gone.name), _NAME_SHOWN))
        for index, ((response, graded_here), fate) in enumerate(zip(visit, fates.of, strict=True)):
            if not graded_here or not fate:
                continue
            where = "" if response is final else _set_by(response)
            for line_index, line in enumerate(fates.lines[index]):
                if fate[line_index] == _EVICTED:
                    evicted_count += 1
                    continue
                if fate[line_index] == _PAST_BOUND:
                    past_bound += 1
                    continue
                if fate[line_index] == _SUPERSEDED:
                    if superseded_count < LIST_LIMIT and isinstance(gone := parse_set_cookie(line), ParsedCookie):
                        superseded.append({"name": shown(as_utf8(gone.name)), "set_by": shown(response.url)})
                    superseded_count += 1
                    continue
                parsed = parse_set_cookie(line)
                if isinstance(parsed, Malformed):
                    if ignored_count < LIST_LIMIT:
                        ignored.append({"set_by": shown(response.url), "reason": shown(parsed.reason)})
                    ignored_count += 1
                    findings.append(Finding("cookie.malformed", None, f"A Set-Cookie line{where}: {parsed.reason}"))
                    continue
                refused = rejection(parsed, response.url)
                kind = classify(parsed.name, parsed.value)
                deletes = parsed.deletes(now)
                # what the report shows and the fix writes: a name set in UTF-8 as its characters (its bytes decided
                # what the jar above kept)
                parsed = replace(parsed, name=as_utf8(parsed.name))
                earlier = fates.replaced_in_response.get((index, line_index), 0)
                cookie_findings = _line_findings(
                    parsed, response, kind, refused, deletes, where, plain_http_site, earlier, hsts
                )
                for finding in cookie_findings:
                    if finding.outcome not in _WHERE_NOT_NOTED:
                        key = (finding.outcome, finding.subject)
                        if where:
                            set_elsewhere.add(key)
                        else:
                            from_final.setdefault(key, []).append(len(findings))
                    findings.append(finding)
                graded += 1
                only_deletions += deletes
                if len(cookies) < LIST_LIMIT:
                    cookies.append(_described(parsed, response, kind, refused, deletes, cookie_findings, final))

    if final is not None:
        # A cookie the final page sets as another response does (the site's http:// page) is one finding with a note
        # naming that response: the final page is named too, or it read as if that response alone set the cookie
        for key in from_final.keys() & set_elsewhere:
            for index in from_final[key]:
                finding = findings[index]
                findings[index] = replace(
                    finding, more_notes=(*finding.more_notes, f"{finding.subject}{_set_by(final)}")
                )
    if not graded and not ignored_count:
        findings.append(Finding("cookie.none"))
    elif graded and only_deletions == graded and not ignored_count:
        findings.append(Finding("cookie.none", note="The only Set-Cookie headers delete cookies"))
    if evicted_count or past_bound:
        findings.append(Finding("cookie.too_many", note=_too_many_note(evicted_count, evicted, past_bound)))
    details: dict[str, Any] = {"cookies": first_fitting(cookies, LIST_LIMIT, COOKIES_LISTED_BUDGET), "count": graded}
    ignored, superseded = first_fitting(ignored, LIST_LIMIT), first_fitting(superseded, LIST_LIMIT)
    if evicted_count:
        details["evicted"] = evicted_count
    if past_bound:
        details["not_graded"] = past_bound
    if ignored:
        details["ignored"] = ignored
    if superseded:
        details["superseded"] = superseded
    not_listed = {"ignored": ignored_count - len(ignored), "superseded": superseded_count - len(superseded)}
    if any(not_listed.values()):
        details["not_listed"] = {key: count for key, count in not_listed.items() if count}
    return CheckResult(SECTION, tuple(findings), details)


def _too_many_note(evicted_count: int, evicted: list[str], past_bound: int) -> str:
    """cookie.too_many's note: how many lines set cookies Chromium evicts, naming the first it evicts, and how many
    lines that store no cookie were past MAX_GRADED_UNSTORED."""
    parts = []
    if evicted_count:
        more = f" and {evicted_count - len(evicted):,} more" if evicted_count > len(evicted) else ""
        parts.append(
            f"Chromium keeps at most {DOMAIN_MAX_COOKIES} cookies for a site and evicts the least recently set past "
            f"that: the cookies of {evicted_count:,} of these Set-Cookie lines are evicted, so they were not graded: "
            f"{', '.join(evicted)}{more}"
        )
    if past_bound:
        parts.append(
            f"{past_bound:,} more Set-Cookie lines that store no cookie (malformed, refused by browsers or deleting "
            f"one) were not graded: the scan grades the first {MAX_GRADED_UNSTORED} such lines"
        )
    return "; ".join(parts)


#: Outcomes of a graded line whose notes do not end by naming the response that set it (_line_findings): the rest do
#: when it is not the final page.
_WHERE_NOT_NOTED = frozenset({"cookie.ok", "cookie.rejected", "cookie.prefix_violation"})


def _line_findings(
    parsed: ParsedCookie,
    response: HttpResponse,
    kind: str,
    refused: Rejection | None,
    deletes: bool,
    where: str,
    plain_http_site: bool,
    earlier: int,
    hsts: _Hsts | None,
) -> list[Finding]:
    """The findings for one graded line; `where` says which response set it when not the final page, `earlier` how
    many earlier lines of its response it replaced, `hsts` the page's policy when it protects cookies."""
    if refused is not None:
        outcome = "cookie.prefix_violation" if refused.kind == "prefix" else "cookie.rejected"
        cookie_findings = [Finding(outcome, parsed.name, f"{parsed.name}{where}: {refused.reason}")]
    elif deletes:
        cookie_findings = []  # clearing a cookie: its flags protect nothing
    else:
        cookie_findings = _judge(parsed, response, kind, plain_http_site, hsts)
        if where:  # say which response set it when it was not the final page
            cookie_findings = [replace(f, more_notes=(*f.more_notes, f"{f.subject}{where}")) for f in cookie_findings]
    if not cookie_findings and not deletes:
        cookie_findings = [Finding("cookie.ok", parsed.name)]
    if earlier:
        lines_word = "line" if earlier == 1 else f"{earlier:,} lines"
        again = (
            f"{parsed.name}: an earlier Set-Cookie {lines_word} of the same response set it too; browsers keep only "
            "this last one"
        )
        cookie_findings = [replace(f, more_notes=(*f.more_notes, again)) for f in cookie_findings]
    return cookie_findings


def _described(
    parsed: ParsedCookie,
    response: HttpResponse,
    kind: str,
    refused: Rejection | None,
    deletes: bool,
    cookie_findings: list[Finding],
    final: HttpResponse | None,
) -> dict[str, Any]:
    """One cookie as details.cookies lists it (never its value)."""
    domain = scope_domain(parsed, response.url)
    skipped = list(parsed.ignored_attributes)
    if parsed.domain is not None and domain is None:
        skipped.append(f"Domain={parsed.domain} (a public suffix: browsers keep the cookie for this host only)")
    return {
        "name": shown(parsed.name),
        "secure": parsed.secure,
        "httponly": parsed.httponly,
        "samesite": parsed.samesite if parsed.samesite_raw is None else shown(parsed.samesite_raw),
        "path": shown(parsed.path or default_path(response.url)),
        "domain": None if domain is None else shown(domain),
        "expires": _iso(parsed.expires),
        "max_age": parsed.max_age,
        "prefix": parsed.prefix,
        "kind": kind,
        "platform": infrastructure_platform(parsed.name) if kind == "infrastructure" else None,
        "status": _worst_status(cookie_findings),
        "set_by": shown(response.url),
        "final_response": response is final,
        "deletes": deletes,
        "rejected": shown(refused.reason) if refused else None,
        "ignored_attributes": listed(skipped, LIST_LIMIT, more=" attributes browsers skip"),
    }
