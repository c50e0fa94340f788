"""Stories for the cookies check: real-world Set-Cookie lines, judged the way browsers read them."""

from __future__ import annotations

import json

import pytest

from tests.factories import make_certificate, make_handshake, make_response, make_snapshot
from websec_app.scanner.checks.cookies import check_cookies, classify
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import FetchChain, TlsHandshake

CONTEXT = {"host": "www.example.com", "domain": "example.com", "origin": "https://www.example.com"}


def cookies_of(*lines: str, url: str = "https://www.example.com/", **overrides: object) -> CheckResult:
    return check_cookies(make_snapshot(url, headers=[("Set-Cookie", line) for line in lines], **overrides))


def outcomes(result: CheckResult) -> set[str]:
    return {f.outcome for f in result.findings}


def subjects(result: CheckResult, outcome: str) -> list[str | None]:
    return [f.subject for f in result.findings if f.outcome == outcome]


def section(result: CheckResult) -> dict[str, object]:
    return grade([result], default_rulebook(), CONTEXT).sections["cookies"]


def cookie(result: CheckResult, name: str) -> dict[str, object]:
    return next(c for c in result.details["cookies"] if c["name"] == name)


# --- classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("PHPSESSID", "session"),
        ("JSESSIONID", "session"),
        ("ASP.NET_SessionId", "session"),
        ("connect.sid", "session"),
        ("laravel_session", "session"),
        ("_myapp_session", "session"),
        ("sessionid", "session"),
        ("auth_token", "session"),
        ("authToken", "session"),
        ("jwt", "session"),
        (".ASPXAUTH", "session"),
        ("wordpress_logged_in_5c2a", "session"),
        ("__Host-next-auth.session-token", "session"),
        ("SESS4a2b1f7e9c0d3b5a6e8f1c2d3b4a5e6f", "session"),  # Drupal over HTTP
        ("SSESS4a2b1f7e9c0d3b5a6e8f1c2d3b4a5e6f", "session"),  # Drupal over HTTPS
        (".AspNetCore.Cookies", "session"),  # ASP.NET Core cookie authentication
        (".AspNetCore.CookiesC1", "session"),  # ... its first chunk
        ("fe_typo_user", "session"),  # TYPO3 frontend
        ("be_typo_user", "session"),  # TYPO3 backend
        ("csrftoken", "csrf"),
        ("XSRF-TOKEN", "csrf"),
        ("_csrf", "csrf"),
        ("__RequestVerificationToken", "csrf"),
        ("next-auth.csrf-token", "csrf"),
        ("_token", "csrf"),
        ("_ga", "other"),
        ("_gid", "other"),
        ("lang", "other"),
        ("consider_banner", "other"),
        ("router_pref", "other"),
        ("SESS4a2b1f7e", "other"),  # not 32 hex digits: not Drupal's
        ("typo_user_pref", "other"),
    ],
)
def test_cookie_names_are_classified_by_purpose(name: str, kind: str) -> None:
    assert classify(name) == kind


def test_a_jwt_value_marks_a_session_cookie_whatever_its_name() -> None:
    assert classify("u", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_abc-123") == "session"


@pytest.mark.parametrize(
    "name",
    [
        "heroku-session-affinity",  # Heroku
        "AWSALB",  # AWS Application Load Balancer, duration-based stickiness
        "AWSALBCORS",
        "AWSALBTG",  # AWS ALB, target-group stickiness
        "AWSALBTGCORS",
        "AWSALBAPP-0",  # AWS ALB, application-based stickiness
        "AWSELB",  # AWS Classic Load Balancer
        "AWSELBCORS",
        "ARRAffinity",  # Azure App Service
        "ARRAffinitySameSite",
        "ApplicationGatewayAffinity",  # Azure Application Gateway
        "ApplicationGatewayAffinityCORS",
        "ASLBSA",  # Azure Front Door
        "ASLBSACORS",
        "GCLB",  # Google Cloud external Application Load Balancer
        "GCILB",
        "BIGipServerpool_web_443",  # F5 BIG-IP
        "NSC_wtfswfs_iuuq",  # Citrix NetScaler / ADC
        "SERVERID",  # HAProxy
        "route",  # nginx sticky
        "_TRAEFIK_BACKEND",  # Traefik v1
        "INGRESSCOOKIE",  # Kubernetes ingress-nginx
        "__cf_bm",  # Cloudflare
        "__cflb",
        "cf_clearance",
        "_cfuvid",
        "__cfruid",
        "ak_bmsc",  # Akamai Bot Manager
        "bm_sv",
        "visid_incap_123456",  # Imperva
        "incap_ses_987_123456",
        "nlbi_123456",
    ],
)
def test_load_balancer_and_edge_cookies_are_infrastructure_not_sessions(name: str) -> None:
    assert classify(name) == "infrastructure"


@pytest.mark.parametrize("name", ["my_session", "SESSION", "routes_session", "route_sid", "AWSALB_session_token"])
def test_a_login_cookie_that_only_resembles_an_infrastructure_name_stays_a_session(name: str) -> None:
    assert classify(name) == "session"


# --- the check --------------------------------------------------------------------------------


def test_a_site_without_cookies_is_good() -> None:
    # Given a page that sets no cookie
    result = cookies_of()
    # Then the section is good, with nothing to list
    assert outcomes(result) == {"cookie.none"}
    assert result.details == {"cookies": [], "count": 0}
    assert section(result)["deduction"] == 0


def test_a_best_practice_session_cookie_costs_nothing() -> None:
    # Given a session cookie with every protection
    result = cookies_of("__Host-sid=abc; Path=/; Secure; HttpOnly; SameSite=Lax")
    # Then it is listed as good and nothing is deducted
    assert outcomes(result) == {"cookie.ok"}
    entry = cookie(result, "__Host-sid")
    assert entry["kind"] == "session" and entry["prefix"] == "__Host-" and entry["status"] == "good"
    assert section(result)["deduction"] == 0


def test_a_bare_session_cookie_loses_points_for_each_missing_protection() -> None:
    # Given PHP's default session cookie
    result = cookies_of("PHPSESSID=el4ukv0kqbvoirg7nkp4dncpk3; path=/")
    # Then Secure and HttpOnly are important findings, SameSite a minor one
    assert {"cookie.session_no_secure", "cookie.session_no_httponly", "cookie.session_no_samesite"} <= outcomes(result)
    graded = section(result)
    assert graded["status"] == "bad"
    assert graded["deduction"] >= 20
    assert cookie(result, "PHPSESSID")["status"] == "bad"


def test_herokus_affinity_cookie_is_not_graded_as_a_login_session() -> None:
    # Given the router's affinity cookie as Heroku documents it (devcenter.heroku.com/articles/session-affinity)
    line = (
        "heroku-session-affinity=ADaDaANoA24IAbT7r0j___8HRmhk0ZnA6M8Tm4P17Cm0LAAAAAABiAAAAAANoAWEBbgEAkw6Df28AAAAAAA__;"
        " Version=1; Expires=Mon, 23-Nov-2026 12:00:00 GMT; Max-Age=86400; Domain=www.example.com; Path=/; HttpOnly"
    )
    result = cookies_of(line)
    # Then no session finding: it names a dyno, not a user; the missing Secure is advice that costs nothing
    assert outcomes(result) == {"cookie.infrastructure_no_secure"}
    entry = cookie(result, "heroku-session-affinity")
    assert entry["kind"] == "infrastructure" and "Heroku" in entry["platform"]
    graded = section(result)
    assert graded["deduction"] == 0
    assert all(f["severity"] == "minor" for f in graded["findings"])


@pytest.mark.parametrize(
    ("line", "platform"),
    [
        ("AWSALB=o6ExsmQ2P3cTdq9XwN3m1HQ+3BbMmd3k8eGZz9YV; Expires=Sat, 29 Nov 2026 12:00:00 GMT; Path=/", "AWS"),
        (
            "AWSALBCORS=o6ExsmQ2P3cTdq9XwN3m1HQ+3BbMmd3k8eGZz9YV; Expires=Sat, 29 Nov 2026 12:00:00 GMT; Path=/;"
            " SameSite=None; Secure",
            "AWS",
        ),
        (
            "ARRAffinity=5b1b7e7d5d0c0e8e4b3b8d6f5d2e1c0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e;Path=/;HttpOnly;Secure;"
            "Domain=www.example.com",
            "Azure",
        ),
        ("BIGipServerpool_web=1677787402.36895.0000; path=/; Httponly; Secure", "F5 BIG-IP"),
        (
            "NSC_wtfswfs_iuuq=ffffffff09f4f58f45525d5f4f58455e445a4a423660;expires=Sat, 29-Nov-2026 12:00:00 GMT;"
            "path=/",
            "Citrix",
        ),
        ("GCLB=CLiXnq2BqZ-mfxAQAw; path=/; HttpOnly; expires=Sun, 23-Nov-2026 12:00:00 GMT", "Google Cloud"),
        (
            "__cf_bm=Xq3n0mS_example.1763812800-1.0.1.1-abcdefghijklmnop; path=/; expires=Sun, 22-Nov-26 12:30:00"
            " GMT; domain=.example.com; HttpOnly; Secure; SameSite=None",
            "Cloudflare",
        ),
        ("SERVERID=s1; path=/", "HAProxy"),
        ("INGRESSCOOKIE=1683296930.123.45.789012|4f3ef93d8c6a; Path=/; Secure; HttpOnly", "ingress-nginx"),
    ],
)
def test_real_infrastructure_set_cookie_lines_never_cost_points(line: str, platform: str) -> None:
    result = cookies_of(line)
    assert outcomes(result) <= {"cookie.infrastructure", "cookie.infrastructure_no_secure"}
    entry = result.details["cookies"][0]
    assert entry["kind"] == "infrastructure" and platform in entry["platform"]
    assert section(result)["deduction"] == 0


def test_an_infrastructure_cookie_with_secure_is_good_without_httponly_or_samesite() -> None:
    result = cookies_of("AWSALBTG=abc; Expires=Sat, 29 Nov 2026 12:00:00 GMT; Path=/; Secure")
    assert outcomes(result) == {"cookie.infrastructure"}
    assert cookie(result, "AWSALBTG")["status"] == "good"


def test_an_infrastructure_cookie_browsers_refuse_is_still_reported() -> None:
    result = cookies_of("SERVERID=s1; Domain=other.example; Path=/")
    assert outcomes(result) == {"cookie.rejected"}


def test_a_csrf_cookie_may_be_readable_by_scripts_but_must_be_secure() -> None:
    # Given an Angular-style XSRF cookie, readable by JavaScript on purpose, sent without Secure
    result = cookies_of("XSRF-TOKEN=abc123; Path=/; SameSite=Lax")
    # Then the missing HttpOnly is not reported, the missing Secure is
    assert outcomes(result) == {"cookie.csrf_no_secure"}
    assert cookie(result, "XSRF-TOKEN")["kind"] == "csrf"


def test_a_csrf_cookie_without_samesite_is_reported() -> None:
    result = cookies_of("csrftoken=abc; Secure; Path=/")
    assert outcomes(result) == {"cookie.csrf_no_samesite"}


def test_other_cookies_weigh_less_than_session_cookies() -> None:
    # Given a preference cookie without any attribute
    result = cookies_of("lang=en")
    # Then it costs a few points, as minor findings
    assert outcomes(result) == {"cookie.no_secure", "cookie.no_httponly", "cookie.no_samesite"}
    graded = section(result)
    assert 2 <= graded["deduction"] <= 5
    assert all(f["severity"] == "minor" for f in graded["findings"])


def test_missing_samesite_on_an_ordinary_cookie_is_only_a_note() -> None:
    result = cookies_of("theme=dark; Secure; HttpOnly")
    assert outcomes(result) == {"cookie.no_samesite"}
    assert section(result)["deduction"] == 0


def test_samesite_none_without_secure_is_bad_and_not_counted_twice() -> None:
    # Given a cross-site cookie without Secure
    result = cookies_of("tracker=1; SameSite=None; HttpOnly")
    # Then SameSite=None without Secure is the finding (not also a plain missing Secure)
    assert outcomes(result) == {"cookie.samesite_none_insecure"}
    graded = section(result)
    assert graded["status"] == "bad" and graded["deduction"] == 10


def test_an_unknown_samesite_value_is_reported_and_shown_as_written() -> None:
    result = cookies_of("sid=1; Secure; HttpOnly; SameSite=Lax,Strict")
    assert outcomes(result) == {"cookie.samesite_invalid"}
    assert cookie(result, "sid")["samesite"] == "Lax,Strict"


@pytest.mark.parametrize(
    "line",
    [
        "__Host-id=1; Secure; Path=/; Domain=example.com",  # Domain not allowed
        "__Host-id=1; Secure",  # Path=/ missing
        "__HOST-id=1; Path=/",  # Secure missing (prefixes match case-insensitively)
        "__Secure-id=1; Path=/; HttpOnly",  # Secure missing
        # __Http- needs Secure and HttpOnly; __Host-Http- the __Host- rules too (6265bis §4.1.3.3, 4.1.3.4;
        # Chromium 156 refuses each of these with InvalidPrefix)
        "__Http-sid=1; Secure; Path=/",  # HttpOnly missing
        "__http-sid=1; Secure; Path=/",  # the same, whatever the case of the prefix
        "__Http-sid=1; Path=/; HttpOnly",  # Secure missing
        "__Host-Http-sid=1; Secure; Path=/",  # HttpOnly missing
        "__HOST-HTTP-sid=1; Secure; HttpOnly",  # Path=/ missing
        "__Host-Http-sid=1; Secure; HttpOnly; Path=/; Domain=example.com",  # Domain not allowed
    ],
)
def test_broken_cookie_prefixes_are_reported_without_flag_noise(line: str) -> None:
    result = cookies_of(line)
    assert outcomes(result) == {"cookie.prefix_violation"}


def test_a_prefix_violation_names_the_prefix_and_what_it_lacks() -> None:
    result = cookies_of("__Host-Http-sid=1; Secure; Path=/; SameSite=Lax")
    entry = cookie(result, "__Host-Http-sid")
    assert entry["prefix"] == "__Host-Http-"
    assert entry["rejected"] == "the __Host-Http- prefix requires HttpOnly"


@pytest.mark.parametrize(
    "line",
    [
        "__Http-sid=1; Secure; HttpOnly; SameSite=Lax",
        "__Host-Http-sid=1; Secure; HttpOnly; SameSite=Lax; Path=/",
    ],
)
def test_cookies_that_keep_the_rules_of_the_http_prefixes_are_good(line: str) -> None:
    assert outcomes(cookies_of(line)) == {"cookie.ok"}


def test_a_session_cookie_shared_with_every_subdomain_is_noted() -> None:
    # Given a session cookie scoped to the registrable domain
    result = cookies_of("sessionid=1; Domain=.example.com; Path=/; Secure; HttpOnly; SameSite=Lax")
    # Then the broad scope is reported, and the Domain is shown without its dot
    assert outcomes(result) == {"cookie.broad_domain"}
    assert cookie(result, "sessionid")["domain"] == "example.com"


def test_an_empty_last_domain_leaves_the_cookie_on_its_host() -> None:
    # Given a Domain that a later, empty Domain attribute overrides: RFC 6265bis 5.7 reads the last one, and
    # an empty one makes the cookie host-only (Chromium 156 stores it for www.example.com alone)
    result = cookies_of("sid=1; Domain=example.com; Domain=; Secure; HttpOnly; SameSite=Lax")
    # Then it is not shared with the subdomains, and the report says why the Domain was dropped
    assert outcomes(result) == {"cookie.ok"}
    assert cookie(result, "sid")["domain"] is None
    assert any("empty value" in note for note in cookie(result, "sid")["ignored_attributes"])


def test_a_public_suffix_domain_equal_to_the_host_leaves_the_cookie_on_its_host() -> None:
    # Given a site on a public suffix itself that names it as Domain: RFC 6265bis 5.7 step 9 makes the cookie
    # host-only (Chromium 156 stores it for herokuapp.com alone), so no subdomain receives it
    result = cookies_of("sid=1; Domain=herokuapp.com; Secure; HttpOnly; SameSite=Lax", url="https://herokuapp.com/")
    assert outcomes(result) == {"cookie.ok"}
    assert cookie(result, "sid")["domain"] is None
    assert any("public suffix" in note for note in cookie(result, "sid")["ignored_attributes"])
    # ...while from a name under it the same Domain is refused
    under = cookies_of("sid=1; Domain=herokuapp.com; Secure; HttpOnly", url="https://myapp.herokuapp.com/")
    assert outcomes(under) == {"cookie.rejected"}


def test_a_domain_the_host_does_not_match_is_refused_by_browsers() -> None:
    result = cookies_of("sid=1; Domain=other.org; Secure; HttpOnly; SameSite=Lax")
    assert outcomes(result) == {"cookie.rejected"}
    assert "other.org" in cookie(result, "sid")["rejected"]


def test_a_public_suffix_domain_is_refused_by_browsers() -> None:
    result = cookies_of("sid=1; Domain=co.uk; Secure; HttpOnly; SameSite=Lax", url="https://shop.example.co.uk/")
    assert outcomes(result) == {"cookie.rejected"}


@pytest.mark.parametrize("url", ["https://www.example.com/", "http://www.example.com/"])
def test_partitioned_without_secure_is_refused(url: str) -> None:
    # Given a session cookie that adds Partitioned but not Secure: Chromium 156 stores nothing for it, over
    # HTTPS or HTTP, top-level or in a third-party frame (test_cookies_browser.py), so it is not graded as
    # a session cookie without Secure: it is not a cookie at all
    result = cookies_of("sid=abc; HttpOnly; SameSite=Lax; Partitioned", url=url)

    assert outcomes(result) == {"cookie.rejected"}
    assert "Partitioned without Secure" in str(cookie(result, "sid")["rejected"])
    # ...while with Secure it is an ordinary, well-kept cookie
    assert outcomes(cookies_of("sid=abc; Secure; HttpOnly; SameSite=Lax; Partitioned")) == {"cookie.ok"}


def test_a_domain_with_two_leading_dots_matches_no_host() -> None:
    # RFC 6265bis 5.6.3: only one leading dot is removed; ".example.com" matches no host, so browsers
    # ignore the cookie (Chromium does not store it)
    result = cookies_of("sid=abc; Secure; HttpOnly; SameSite=Lax; Domain=..example.com")

    assert outcomes(result) == {"cookie.rejected"}


def test_on_a_plain_http_page_secure_cookies_cannot_be_set() -> None:
    # Given a plain-HTTP site setting one Secure and one ordinary session cookie
    result = cookies_of(
        "sid=1; Secure; HttpOnly; SameSite=Lax",
        "PHPSESSID=2; HttpOnly; SameSite=Lax",
        url="http://www.example.com/",
    )
    # Then the Secure one is refused by browsers, the other travels in clear and says so
    assert subjects(result, "cookie.rejected") == ["sid"]
    assert subjects(result, "cookie.session_no_secure") == ["PHPSESSID"]
    note = next(f.note for f in result.findings if f.outcome == "cookie.session_no_secure")
    assert note is not None and "plain HTTP" in note


def test_cookies_set_by_a_redirect_are_graded_and_attributed() -> None:
    # Given a redirect from http:// that sets a session cookie before the final page
    hop = make_response(
        "http://www.example.com/",
        301,
        headers=[("Location", "https://www.example.com/"), ("Set-Cookie", "laravel_session=x; path=/; httponly")],
    )
    result = cookies_of("theme=dark; Secure; HttpOnly; SameSite=Lax", redirects=[hop])
    # Then the redirect's cookie is graded and the report says where it came from
    entry = cookie(result, "laravel_session")
    assert entry["set_by"] == "http://www.example.com/" and entry["final_response"] is False
    assert cookie(result, "theme")["final_response"] is True
    note = next(f.note for f in result.findings if f.outcome == "cookie.session_no_secure")
    assert note is not None and "redirect" in note
    # And since the site itself is HTTPS, the advice is to stop setting cookies on the HTTP redirect, not
    # to move the site to HTTPS
    assert "stop setting cookies on the HTTP redirect" in note
    assert "plain HTTP, so" not in note and "serve the site over HTTPS" not in note


def test_a_cookie_set_by_a_plain_http_page_that_does_not_redirect_is_told_to_redirect() -> None:
    # Given an HTTPS site whose http:// URL serves a page of its own (200, no redirect) that sets a session cookie
    page = make_response("http://www.example.com/", 200, headers=[("Set-Cookie", "sid=x; path=/; httponly")])
    result = cookies_of("theme=dark; Secure; HttpOnly; SameSite=Lax", redirects=[page])
    finding = next(f for f in result.findings if f.outcome == "cookie.session_no_secure")
    # Then the advice is to redirect HTTP to HTTPS: there is no redirect to stop setting cookies on, and a visitor
    # who arrives over HTTP never reaches HTTPS
    assert finding.note is not None and "redirect HTTP to HTTPS" in finding.note
    assert "on the HTTP redirect" not in finding.note and "before the browser reaches HTTPS" not in finding.note
    # And the response that set it is a note of its own, not joined into this one
    assert finding.more_notes == ("sid (set by the response from http://www.example.com/)",)


def test_on_a_plain_http_site_no_cookie_snippet_adds_secure() -> None:
    # Given a site served over plain HTTP only, setting a session cookie without flags and a SameSite=None one
    snapshot = make_snapshot(
        "http://www.example.com/",
        headers=[("Set-Cookie", "PHPSESSID=abc; path=/"), ("Set-Cookie", "embed=1; SameSite=None")],
    )
    findings = {f["check"]: f for f in grade_snapshot(snapshot).to_dict()["cookies"]["findings"]}
    # Then no snippet adds Secure, which browsers refuse from a plain-HTTP page (the login would be lost):
    # the fixes about Secure say to serve HTTPS first...
    for outcome in ("cookie.session_no_secure", "cookie.samesite_none_insecure"):
        snippets = findings[outcome]["fix_snippets"]
        assert all(text.startswith("Not yet: this page is served over plain HTTP") for text in snippets.values())
        assert all(findings[outcome]["fix"].replace("`", "") in text for text in snippets.values())  # as prose
    # ...and the others add their attributes without Secure
    httponly = findings["cookie.session_no_httponly"]["fix_snippets"]
    assert "proxy_cookie_flags PHPSESSID httponly samesite=lax;" in httponly["nginx"]
    assert "Secure" not in httponly["apache"] and "secure: true" not in httponly["express"]
    # while on an HTTPS page the same cookie's snippets add Secure
    https = grade_snapshot(make_snapshot(headers=[("Set-Cookie", "PHPSESSID=abc; path=/")])).to_dict()["cookies"]
    https_findings = {f["check"]: f for f in https["findings"]}
    nginx = https_findings["cookie.session_no_secure"]["fix_snippets"]["nginx"]
    assert "proxy_cookie_flags PHPSESSID secure httponly samesite=lax;" in nginx


def test_cookies_set_by_the_http_form_of_an_https_target_are_graded_and_attributed() -> None:
    # Given a scan of https://www.example.com/, whose http:// form (fetched for the redirection check)
    # redirects to it while setting a session cookie without Secure
    final = make_response(
        "https://www.example.com/",
        headers=[("Set-Cookie", "laravel_session=x; path=/; secure; httponly; samesite=lax")],
    )
    hop = make_response(
        "http://www.example.com/",
        301,
        headers=[
            ("Location", "https://www.example.com/"),
            ("Set-Cookie", "laravel_session=y; path=/; httponly; samesite=lax"),
        ],
    )
    snapshot = make_snapshot(
        "https://www.example.com/",
        headers=final.headers.items,
        http_upgrade=FetchChain("http://www.example.com/", (hop, final)),
    )
    result = check_cookies(snapshot)
    # Then the redirect's cookie is graded, attributed to the http:// URL, and the final page's cookie is
    # graded once although both chains hold it
    assert subjects(result, "cookie.session_no_secure") == ["laravel_session"]
    finding = next(f for f in result.findings if f.outcome == "cookie.session_no_secure")
    assert finding.more_notes == ("laravel_session (set by the redirect response from http://www.example.com/)",)
    assert [(c["set_by"], c["secure"]) for c in result.details["cookies"]] == [
        ("https://www.example.com/", True),
        ("http://www.example.com/", False),
    ]


def test_a_cookie_the_final_page_sets_as_the_http_page_does_names_both_responses() -> None:
    # Given an HTTPS page and the site's http:// page (no redirect), each setting sid without Secure or HttpOnly,
    # and a cookie only the HTTPS page sets
    final = make_response(
        "https://www.example.com/", headers=[("Set-Cookie", "sid=x; path=/"), ("Set-Cookie", "PHPSESSID=y; path=/")]
    )
    page = make_response("http://www.example.com/", headers=[("Set-Cookie", "sid=x; path=/")])
    snapshot = make_snapshot(
        "https://www.example.com/",
        headers=final.headers.items,
        http_upgrade=FetchChain("http://www.example.com/", (page,)),
    )
    graded = grade_snapshot(snapshot).to_dict()["cookies"]["findings"]
    no_httponly = next(f for f in graded if f["check"] == "cookie.session_no_httponly")
    # Then sid's finding names both responses (it read as if the http:// page alone set it), the HTTPS page first
    assert no_httponly["subjects"] == ["sid", "PHPSESSID"]
    assert no_httponly["notes"] == [
        "sid (set by the response from https://www.example.com/)",
        "sid (set by the response from http://www.example.com/)",
    ]
    # And the http:// page's advice stays beside its own line
    no_secure = next(f for f in graded if f["check"] == "cookie.session_no_secure")
    assert no_secure["notes"][0] == "sid (set by the response from https://www.example.com/)"
    assert no_secure["notes"][1].startswith("sid: the site's plain-HTTP page sets it")
    assert no_secure["notes"][2] == "sid (set by the response from http://www.example.com/)"
    # And a cookie only the final page sets gets no such note (the final page is where cookies come from)
    only_final = check_cookies(make_snapshot(headers=final.headers.items))
    assert all(not f.more_notes for f in only_final.findings)


def test_a_cookie_set_twice_in_one_response_is_graded_as_the_last_line_sets_it() -> None:
    # Given a response that sets sid bare, then again with every protection (same name, host and path)
    result = cookies_of("sid=a; Path=/", "sid=b; Path=/; Secure; HttpOnly; SameSite=Lax")
    # Then only the last line counts, as browsers keep only it (RFC 6265bis 5.7; Chromium 156 stores sid=b),
    # and the report says an earlier line was replaced
    assert outcomes(result) == {"cookie.ok"}
    assert [c["secure"] for c in result.details["cookies"]] == [True]
    assert result.details["superseded"] == [{"name": "sid", "set_by": "https://www.example.com/"}]
    [note] = next(f.notes for f in result.findings if f.outcome == "cookie.ok")
    assert "earlier Set-Cookie line" in note
    # ...and the other way round the bare cookie is the one graded
    assert "cookie.session_no_secure" in outcomes(cookies_of("sid=b; Path=/; Secure; HttpOnly", "sid=a; Path=/"))


@pytest.mark.parametrize(
    "lines",
    [
        ("sid=a; Path=/", "sid=b; Path=/app; Secure; HttpOnly; SameSite=Lax"),  # another path
        ("sid=a", "sid=b; Domain=example.com; Secure; HttpOnly; SameSite=Lax"),  # host-only, then the domain's
        ("sid=a; Path=/", "sid=b; Path=/; Secure; Partitioned; HttpOnly; SameSite=Lax"),  # another partition
    ],
)
def test_cookies_of_one_name_kept_apart_by_browsers_are_all_graded(lines: tuple[str, str]) -> None:
    result = cookies_of(*lines)
    assert result.details["count"] == 2 and "superseded" not in result.details
    assert "cookie.session_no_secure" in outcomes(result)


def test_a_line_browsers_refuse_replaces_nothing() -> None:
    # Given a well-kept cookie, then the same name with a Domain the host does not match
    result = cookies_of("sid=a; Path=/; Secure; HttpOnly; SameSite=Lax", "sid=b; Path=/; Domain=other.org")
    # Then the first is kept and graded, the second is refused
    assert outcomes(result) == {"cookie.ok", "cookie.rejected"}
    assert "superseded" not in result.details


def test_a_cookie_being_deleted_raises_no_alarm() -> None:
    # Given a logout response clearing the session cookie without any flags
    result = cookies_of("PHPSESSID=deleted; expires=Thu, 01-Jan-1970 00:00:01 GMT; Max-Age=0; path=/")
    # Then nothing is wrong: the cookie is going away
    assert outcomes(result) == {"cookie.none"}
    assert cookie(result, "PHPSESSID")["deletes"] is True


def test_malformed_lines_are_reported_as_ignored_without_flag_alarms() -> None:
    # Given a line without a name and a proper cookie
    result = cookies_of("garbage-without-equals; HttpOnly", "a=b; Secure; HttpOnly; SameSite=Strict")
    # Then the malformed line is a note, not a missing-Secure finding, and is not counted as a cookie
    assert outcomes(result) == {"cookie.malformed", "cookie.ok"}
    assert result.details["count"] == 1
    assert result.details["ignored"][0]["reason"].startswith("it has no '='")
    assert section(result)["deduction"] == 0


def test_details_describe_each_cookie_but_never_its_value() -> None:
    # Given a session cookie with a secret value and a Max-Age
    secret = "s3cr3t-v4lue-do-not-leak"
    result = cookies_of(f"sid={secret}; Max-Age=3600; Path=/app; Secure; HttpOnly; SameSite=Strict")
    entry = cookie(result, "sid")
    # Then the fields are there and the value is nowhere in the report
    assert entry["max_age"] == 3600 and entry["expires"] is None
    assert entry["path"] == "/app" and entry["samesite"] == "Strict" and entry["httponly"] is True
    assert secret not in json.dumps(result.details) + json.dumps(section(result))


def test_attributes_browsers_skip_are_listed() -> None:
    result = cookies_of("a=b; Expires=tomorrow; Max-Age=1h; Path=relative; Secure; HttpOnly; SameSite=Lax")
    entry = cookie(result, "a")
    assert entry["expires"] is None and entry["max_age"] is None and entry["path"] == "/"
    assert len(entry["ignored_attributes"]) == 3


def test_the_default_path_is_reported_when_none_is_given() -> None:
    result = cookies_of("a=b; Secure; HttpOnly; SameSite=Lax", url="https://www.example.com/shop/cart")
    assert cookie(result, "a")["path"] == "/shop"


def test_the_same_outcome_on_several_cookies_deducts_once() -> None:
    result = cookies_of("a=1; Secure; SameSite=Lax", "b=2; Secure; SameSite=Lax", "c=3; Secure; SameSite=Lax")
    graded = section(result)
    finding = next(f for f in graded["findings"] if f["check"] == "cookie.no_httponly")
    assert finding["subjects"] == ["a", "b", "c"]
    assert graded["deduction"] == finding["deduction"]


def test_grading_turns_every_cookie_outcome_into_json() -> None:
    # Given a page exercising most cookie outcomes at once
    result = cookies_of(
        "PHPSESSID=1",
        "XSRF-TOKEN=2",
        "lang=en",
        "t=1; SameSite=None",
        "s=1; Secure; HttpOnly; SameSite=Bogus",
        "__Host-x=1",
        "sid=1; Domain=example.com; Secure; HttpOnly; SameSite=Lax",
        "no-equals",
        "ok=1; Secure; HttpOnly; SameSite=Lax",
    )
    # When graded with the real rule table
    graded = grade([result], default_rulebook(), CONTEXT)
    # Then the section is plain JSON with the natural fields next to the findings
    body = json.loads(json.dumps(graded.sections["cookies"]))
    assert body["count"] == 8 and len(body["cookies"]) == 8
    assert {f["check"] for f in body["findings"]} >= {"cookie.session_no_secure", "cookie.prefix_violation"}
    assert all(f["cwe"] is None or f["cwe"].startswith("CWE-") for f in body["findings"])
    assert 0 <= graded.score <= 100


# --- more cookies than Chromium keeps (180 a site, net/cookies/cookie_monster.cc) ----------------
# tests/scanner/test_cookie_jar_browser.py holds each of these to Chromium 156.

#: 180 cookies with every protection: nothing to report on them.
PROTECTED = [f"c{i:03d}=v; Path=/; Secure; HttpOnly; SameSite=Lax" for i in range(180)]
SESSION_OUTCOMES = {"cookie.session_no_secure", "cookie.session_no_httponly", "cookie.session_no_samesite"}


def too_many_note(result: CheckResult) -> str | None:
    (note,) = [f.note for f in result.findings if f.outcome == "cookie.too_many"]
    return note


def test_a_bare_session_cookie_set_after_180_others_is_graded_when_chromium_keeps_it() -> None:
    # Given 180 protected cookies of low priority, then a session cookie without any protection
    result = cookies_of(*(f"{line}; Priority=Low" for line in PROTECTED), "sessionid=abc; Path=/")
    # Then Chromium keeps the session cookie (the 31 oldest Low ones go), so it is graded, and costs points
    assert SESSION_OUTCOMES <= outcomes(result)
    assert grade([result], default_rulebook(), CONTEXT).score < 100
    assert result.details["count"] == 150 and result.details["evicted"] == 31
    assert too_many_note(result) == (
        "Chromium keeps at most 180 cookies for a site and evicts the least recently set past that: the cookies of "
        "31 of these Set-Cookie lines are evicted, so they were not graded: c000, c001, c002, c003, c004, c005, "
        "c006, c007, c008, c009 and 21 more"
    )
    # and the same after 180 cookies without Secure
    assert SESSION_OUTCOMES <= outcomes(cookies_of(*(f"c{i:03d}=v; Path=/" for i in range(180)), "sessionid=abc"))


def test_a_bare_session_cookie_chromium_evicts_is_named_and_not_graded() -> None:
    # Given 180 protected cookies, then a session cookie without any protection
    result = cookies_of(*PROTECTED, "sessionid=abc; Path=/")
    # Then Chromium evicts the session cookie itself (it spares Secure cookies while others of their priority can
    # go), then the 30 oldest: it is not graded, and the note names it first, as Chromium evicts it first
    assert outcomes(result) == {"cookie.ok", "cookie.too_many"}
    assert result.details["count"] == 150 and result.details["evicted"] == 31
    note = too_many_note(result)
    assert note is not None and note.endswith(
        "were not graded: sessionid, c000, c001, c002, c003, c004, c005, c006, c007, c008 and 21 more"
    )


def test_a_session_cookie_set_bare_then_again_protected_after_180_others_is_graded_as_kept() -> None:
    # Given a bare session cookie, 180 protected cookies, then the session cookie again with every protection
    result = cookies_of(*["sessionid=old; Path=/", *PROTECTED, "sessionid=new; Path=/; Secure; HttpOnly; SameSite=Lax"])
    # Then the protected one is what Chromium keeps and what is graded: nothing costs points
    assert outcomes(result) == {"cookie.ok", "cookie.too_many"}
    assert grade([result], default_rulebook(), CONTEXT).score == 100
    assert result.details["count"] == 151 and result.details["evicted"] == 30
    assert result.details["superseded"] == [{"name": "sessionid", "set_by": "https://www.example.com/"}]


def test_a_cookie_a_redirect_and_the_page_both_set_counts_once_towards_the_180() -> None:
    # Given a redirect setting 100 cookies, then the page setting the same 100 again and 80 more
    hop = make_response(
        "https://www.example.com/start",
        302,
        [("Location", "https://www.example.com/"), *(("Set-Cookie", f"c{i:03d}=v; Path=/") for i in range(100))],
    )
    page = [f"c{i:03d}=v; Path=/; Secure; HttpOnly; SameSite=Lax" for i in range(180)]
    result = cookies_of(*page, redirects=[hop])
    # Then Chromium keeps all 180, so nothing is evicted, and each response's lines are graded as it set them
    assert "cookie.too_many" not in outcomes(result)
    assert result.details["count"] == 280
    assert "cookie.no_secure" in outcomes(result)  # the redirect's, sent with the request for the page

    # and when 31 more cookies push the oldest out, the redirect's lines of those go with the page's
    pushed = cookies_of(*page, *(f"d{i:03d}=v; Path=/; Secure" for i in range(31)), redirects=[hop])
    assert pushed.details["evicted"] == 62 and pushed.details["count"] == 280 + 31 - 62
    assert "c000" not in {f.subject for f in pushed.findings} and {"c031", "d030"} <= {
        f.subject for f in pushed.findings
    }


def test_a_cookie_named_in_utf8_is_reported_by_its_characters() -> None:
    # Given a cookie whose name a site sets in UTF-8 (held, as every header, as the latin-1 text of its bytes), and
    # one whose name is a latin-1 byte that spells nothing in UTF-8
    utf8 = "Jürgen=1; Path=/".encode().decode("latin-1")
    latin1 = "caf\xe9=1; Path=/"
    result = check_cookies(make_snapshot(headers=[("Set-Cookie", utf8), ("Set-Cookie", latin1)]))

    # Then the report names the first as DevTools does (Jürgen, not JÃ¼rgen), and the second as it came
    assert {f.subject for f in result.findings} == {"Jürgen", "caf\xe9"}
    assert [c["name"] for c in result.details["cookies"]] == ["Jürgen", "caf\xe9"]


# --- a cookie without Secure under the page's HSTS policy -------------------------------------


def under_hsts(*lines: str, hsts: str = "max-age=63072000", page_tls: TlsHandshake | None = None) -> CheckResult:
    """The cookies of https://www.example.com/, whose page sends `hsts` over a certificate browsers accept."""
    return check_cookies(
        make_snapshot(
            "https://www.example.com/",
            headers=[("Strict-Transport-Security", hsts), *(("Set-Cookie", line) for line in lines)],
            tls=page_tls or make_handshake("www.example.com"),
        )
    )


def test_a_session_cookie_without_secure_under_hsts_loses_a_quarter_of_the_points_and_says_why() -> None:
    # Mozilla's Observatory: "cookies-session-without-secure-flag-but-protected-by-hsts" (10 of its 40)
    result = under_hsts("sessionid=abc; Path=/; HttpOnly; SameSite=Lax")
    [finding] = result.findings
    assert finding.outcome == "cookie.session_no_secure_hsts"
    assert finding.note == (
        "sessionid: the HSTS policy of www.example.com (max-age=63072000) keeps it off plain HTTP in browsers that "
        "hold the policy; Secure keeps it off in the others"
    )
    assert section(result)["deduction"] == 3  # 10 without the policy
    assert outcomes(under_hsts("csrftoken=x; Path=/; SameSite=Lax")) == {"cookie.csrf_no_secure_hsts"}
    assert outcomes(under_hsts("theme=dark; Path=/; HttpOnly; SameSite=Lax")) == {"cookie.no_secure_hsts"}


@pytest.mark.parametrize(
    ("line", "hsts", "protected"),
    [
        # a host-only cookie of the page's host: any policy of six months or more
        ("sid=a; Path=/; HttpOnly; SameSite=Lax", "max-age=15768000", True),
        ("sid=a; Path=/; HttpOnly; SameSite=Lax", "max-age=15767999", False),  # lapses before the cookie would
        ("sid=a; Path=/; HttpOnly; SameSite=Lax", "max-age=0", False),
        ("sid=a; Path=/; HttpOnly; SameSite=Lax", "max-age=63072000; max-age=1", False),  # browsers ignore it
        # a Domain cookie goes to every subdomain: only includeSubDomains covers them
        ("sid=a; Path=/; HttpOnly; SameSite=Lax; Domain=www.example.com", "max-age=63072000", False),
        ("sid=a; Path=/; HttpOnly; SameSite=Lax; Domain=www.example.com", "max-age=63072000; includeSubDomains", True),
        # and one for the whole domain is sent to example.com and its other names, which www's policy never covers
        ("sid=a; Path=/; HttpOnly; SameSite=Lax; Domain=example.com", "max-age=63072000; includeSubDomains", False),
    ],
)
def test_hsts_protects_a_cookie_only_where_every_host_it_goes_to_is_under_the_policy(
    line: str, hsts: str, protected: bool
) -> None:
    found = outcomes(under_hsts(line, hsts=hsts)) & {"cookie.session_no_secure", "cookie.session_no_secure_hsts"}
    assert found == {"cookie.session_no_secure_hsts" if protected else "cookie.session_no_secure"}


def test_a_policy_sent_over_a_certificate_browsers_refuse_protects_no_cookie() -> None:
    # RFC 6797 §8.1: browsers keep no policy from a response with a certificate error
    refused = make_handshake("www.example.com", make_certificate(names=("other.example.net",)))
    found = outcomes(under_hsts("sid=a; Path=/; HttpOnly; SameSite=Lax", page_tls=refused))
    assert found == {"cookie.session_no_secure"}
