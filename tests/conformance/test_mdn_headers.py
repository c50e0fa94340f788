# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the MDN Observatory's header tests (docs/conformance.md): test/csp-parser.test.js (which httpobs
0.9.3 did not port: its test_csp_parser.py neither), and what is new or changed in test/csp.test.js,
test/x-frame-options.test.js and test/cookies.test.js.

The MDN tests set headers on the final response of https://mozilla.org/ and read <meta http-equiv> policies from
an HTML page of test/files/; here they are a hand-made snapshot of that response.

csp-parser.test.js asserts the policy its parser makes of a list of Content-Security-Policy header values (their
intersection, as it reads them), not a result. Each of its cases sends those values as header lines and is held
to the result the MDN CSP analyzer (src/analyzer/tests/csp.js) gives that policy: the label names the policy the
test asserts, and csp.js reads nothing else. Likewise the two csp.test.js tests of several policies in one header
assert the policy and that it passes: theirs is the result csp.js gives the asserted policy.

Cookies are the test's Set-Cookie lines as written, Domain=mozilla.org included (tough-cookie keeps it, so each
is a domain cookie, not host-only as the httpobs port had it); the HSTS of the two tests that set one is sent on
the same response.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance._mdn_observatory import URL, assert_conforms, fixture
from tests.conformance._observatory import Case, params
from tests.factories import make_snapshot
from websec_app.scanner.checks.cookies import check_cookies
from websec_app.scanner.checks.headers import check_headers

CSP = "Content-Security-Policy"
PARSER_TEST = "csp-parser.test.js"
CSP_TEST = "csp.test.js"
XFO_TEST = "x-frame-options.test.js"
COOKIES_TEST = "cookies.test.js"


def csp(*values: str) -> dict[str, Any]:
    """The given of a case sending each value as one Content-Security-Policy line."""
    return {"headers": [(CSP, value) for value in values]}


PARSE = f"{PARSER_TEST}: should parse policy correctly"
PARSER_CASES = [
    Case(
        PARSE,
        "#0 \"default-src 'none'\" -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src 'none'"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#1 \"default-src 'none'; script-src 'self' https://mozilla.org\" -> the same",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src 'none'; script-src 'self' https://mozilla.org"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#2 two identical policies -> default-src 'none'; script-src 'self' https://mozilla.org",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp(
            "default-src 'none'; script-src 'self' https://mozilla.org",
            "default-src 'none'; script-src 'self' https://mozilla.org",
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#3 the second adds https://example.com -> default-src 'none'; script-src 'self' https://mozilla.org",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp(
            "default-src 'none'; script-src 'self' https://mozilla.org",
            "default-src 'none'; script-src 'self' https://mozilla.org https://example.com",
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#4 the same, sources reordered -> default-src 'none'; script-src 'self' https://mozilla.org",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp(
            "default-src 'none'; script-src 'self' https://mozilla.org",
            "default-src 'none'; script-src https://example.com 'self' https://mozilla.org",
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#5 'default-src https://mozilla.org' + 'default-src https://mozilla.com' -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src https://mozilla.org", "default-src https://mozilla.com"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#6 two hosts each, none shared -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp(
            "default-src https://mozilla.org https://mozilla.net", "default-src https://mozilla.com https://mozilla.io"
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#7 four hosts each, two shared -> default-src https://mozilla.net https://mozilla.org",
        "csp-implemented-with-no-unsafe",
        csp(
            "default-src https://mozilla.org https://mozilla.net https://mozilla.com https://mozilla.io",
            "default-src https://mozilla.pizza https://mozilla.ninja https://mozilla.net https://mozilla.org",
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#8 four policies, two hosts shared -> default-src https://mozilla.net https://mozilla.org",
        "csp-implemented-with-no-unsafe",
        csp(
            "default-src https://mozilla.org https://mozilla.net https://mozilla.com https://mozilla.io",
            "default-src https://mozilla.pizza https://mozilla.ninja https://mozilla.net https://mozilla.org",
            "default-src https://mozilla.net https://mozilla.fox https://mozilla.fire https://mozilla.org",
            "default-src https://mozilla.browser https://mozilla.web https://mozilla.net https://mozilla.org",
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#9 'default-src https://mozilla.org/fire' + 'default-src https://mozilla.org/firefox/' -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src https://mozilla.org/fire", "default-src https://mozilla.org/firefox/"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#10 '.../firefox/' + '.../firefox/download/' -> default-src https://mozilla.org/firefox/download/",
        "csp-implemented-with-no-unsafe",
        csp("default-src https://mozilla.org/firefox/", "default-src https://mozilla.org/firefox/download/"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#11 '.../firefox/download/' + '.../firefox/' -> default-src https://mozilla.org/firefox/download/",
        "csp-implemented-with-no-unsafe",
        csp("default-src https://mozilla.org/firefox/download/", "default-src https://mozilla.org/firefox/"),
        ("csp.no_base_uri",),
    ),
    Case(
        PARSE,
        "#12 'default-src http:' + 'default-src https:' -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src http:", "default-src https:"),
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
        why="CSP3 \"scheme-part match\": http: also matches https: URLs, so together the policies let scripts and plugins load from any https: URL (Chromium 156 runs one), not 'none'",
    ),
    Case(
        PARSE,
        "#13 'default-src http: http:' + 'default-src https: https:' -> default-src 'none'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src http: http:", "default-src https: https:"),
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
        why="CSP3 \"scheme-part match\": http: also matches https: URLs, so together the policies let scripts and plugins load from any https: URL (Chromium 156 runs one), not 'none'",
    ),
    Case(
        f"{PARSER_TEST}: should throw error for invalid policies",
        "#2 '\\r\\n' six times",
        "csp-header-invalid",
        csp("\r\n" * 6),
        ("csp.invalid",),
    ),
    Case(
        f"{PARSER_TEST}: should parse this example header correctly",
        "#0 the cnn.com policy",
        "csp-implemented-with-unsafe-inline",
        csp(
            "default-src 'self' blob: https://*.cnn.com:* http://*.cnn.com:* *.cnn.io:* *.cnn.net:* *.turner.com:* *.turner.io:* *.ugdturner.com:* courageousstudio.com *.vgtf.net:*; script-src 'unsafe-eval' 'unsafe-inline' 'self' *; style-src 'unsafe-inline' 'self' blob: *; child-src 'self' blob: *; frame-src 'self' *; object-src 'self' *; img-src 'self' data: blob: *; media-src 'self' data: blob: *; font-src 'self' data: *; connect-src 'self' data: *; frame-ancestors 'self' https://*.cnn.com:* http://*.cnn.com https://*.cnn.io:* http://*.cnn.io:* *.turner.com:* courageousstudio.com;"
        ),
        (
            "csp.broad_script_source",
            "csp.unsafe_inline_script",
            "csp.unsafe_eval",
            "csp.no_object_src",
            "csp.no_base_uri",
            "csp.unsafe_inline_style",
        ),
    ),
    Case(
        f"{PARSER_TEST}: should parse a policy with duplicate report-uri entries and report those duplicates",
        "#0 two report-uri -> report-uri (and a duplicate warning)",
        "csp-implemented-with-unsafe-inline",
        csp(
            "report-uri https://www.dropbox.com/csp_log?policy_name=metaserver-whitelist ; report-uri https://www.dropbox.com/csp_log?policy_name=metaserver-dynamic"
        ),
        ("csp.no_script_restriction", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        f"{PARSER_TEST}: should parse a policy with duplicate report-to entries and report those duplicates",
        "#0 two report-to -> report-to (and a duplicate warning)",
        "csp-implemented-with-unsafe-inline",
        csp("report-to some_name ; report-to some_other_name"),
        ("csp.no_script_restriction", "csp.no_object_src", "csp.no_base_uri"),
    ),
]

CSP_CASES = [
    Case(
        f"{CSP_TEST}: insecure scheme broad and unsafe",
        "#0 \"default-src 'none'; script-src https://*\"",
        "csp-implemented-with-unsafe-inline",
        csp("default-src 'none'; script-src https://*"),
        ("csp.broad_script_source", "csp.no_base_uri"),
    ),
    Case(
        f"{CSP_TEST}: insecure scheme broad and unsafe",
        "#1 \"default-src 'none'; script-src 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline",
        csp("default-src 'none'; script-src 'unsafe-inline'"),
        ("csp.unsafe_inline_script", "csp.no_base_uri"),
    ),
    Case(
        f"{CSP_TEST}: unsafe inline",
        "#13 \"default-src 'none'; script-src 'none'; object-src *\"",
        "csp-implemented-with-unsafe-inline",
        csp("default-src 'none'; script-src 'none'; object-src *"),
        ("csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        f"{CSP_TEST}: no unsafe default src none",
        "#0 header 'default-src http:', <meta> test_parse_http_equiv_headers_csp2 (default-src https:)",
        "csp-implemented-with-no-unsafe-default-src-none",
        {**csp("default-src http:"), "body": "test_parse_http_equiv_headers_csp2.html"},
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
        why="CSP3 \"scheme-part match\": http: also matches https: URLs, so together the policies let scripts and plugins load from any https: URL (Chromium 156 runs one), not 'none'",
    ),
    Case(
        f"{CSP_TEST}: no unsafe default src none",
        "#7 header \"default-src 'none'\", <meta> test_parse_http_equiv_headers_csp1",
        "csp-implemented-with-no-unsafe-default-src-none",
        {**csp("default-src 'none'"), "body": "test_parse_http_equiv_headers_csp1.html"},
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: no unsafe default src none",
        "#8 header \"default-src 'none'\", <meta> test_parse_http_equiv_headers_csp2 (default-src https:)",
        "csp-implemented-with-no-unsafe-default-src-none",
        {**csp("default-src 'none'"), "body": "test_parse_http_equiv_headers_csp2.html"},
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: no unsafe default src none",
        "#9 header \"img-src 'none'\", <meta> test_parse_http_equiv_headers_csp1",
        "csp-implemented-with-no-unsafe-default-src-none",
        {**csp("img-src 'none'"), "body": "test_parse_http_equiv_headers_csp1.html"},
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: strict dynamic",
        "#2 \"default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' https://*\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' https://*"),
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: report only",
        "#0 Content-Security-Policy-Report-Only: \"default-src 'none'; report-to /_/csp-reports\"",
        "csp-not-implemented-but-reporting-enabled",
        {"headers": [("Content-Security-Policy-Report-Only", "default-src 'none'; report-to /_/csp-reports")]},
        ("csp.report_only_only",),
    ),
    Case(
        f"{CSP_TEST}: multiple CSP headers combined per RFC 9110 are not treated as invalid",
        "#0 the same policy twice, comma-separated -> default-src 'none'; script-src 'self'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp("default-src 'none'; script-src 'self', default-src 'none'; script-src 'self'"),
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: multiple CSP headers with differing policies produce correct intersection",
        "#0 three comma-separated policies -> default-src 'none'; script-src 'self'; style-src 'self'",
        "csp-implemented-with-no-unsafe-default-src-none",
        csp(
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline', default-src 'none'; style-src 'self', default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'"
        ),
        ("csp.no_base_uri",),
    ),
    Case(
        f"{CSP_TEST}: ignore frame-anchestors in http-equiv",
        "#0 <meta> test_parse_http_equiv_headers_not_allowed (frame-ancestors 'none')",
        "csp-not-implemented",
        {"body": "test_parse_http_equiv_headers_not_allowed.html"},
        ("csp.missing",),
    ),
    Case(
        f"{CSP_TEST}: ignore frame-anchestors in http-equiv",
        "#1 the same page, header \"frame-anchestors 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {**csp("frame-anchestors 'none'"), "body": "test_parse_http_equiv_headers_not_allowed.html"},
        ("csp.invalid",),
        why="frame-anchestors is no CSP directive: browsers act on none of the header (Chromium 156 runs every script), so it is graded as a header that enforces nothing",
    ),
]

XFO_CASES = [
    Case(
        f"{XFO_TEST}: does not obey x-frame-options in meta equiv tags",
        "#0 <meta> test_parse_http_equiv_headers_x_frame_options (DENY)",
        "x-frame-options-not-implemented",
        {"body": "test_parse_http_equiv_headers_x_frame_options.html"},
        ("xfo.missing",),
    ),
]


def cookie_case(
    title: str, obs: str, lines: list[str], ours: tuple[str, ...], hsts: str | None = None, why: str | None = None
) -> Case:
    given: dict[str, Any] = {"cookies": lines} if hsts is None else {"cookies": lines, "hsts": hsts}
    names = " + ".join(line.split("=", 1)[0] for line in lines)
    label = f"#0 {names}" + (f", hsts={hsts!r}" if hsts else "")
    return Case(f"{COOKIES_TEST}: {title}", label, obs, given, ours, why)


#: Why a Domain cookie under a policy without includeSubDomains is not protected by it (the MDN cases set both)
DOMAIN_COOKIE_BEYOND_HSTS = (
    "Domain=mozilla.org sends the cookie to every subdomain too, and max-age=15768000 without includeSubDomains "
    "covers mozilla.org alone (RFC 6797 §8.2): a request to a subdomain over plain HTTP carries it in clear"
)


# "secure with httponly sessions and samesite" and "...not awarded if not all cookies samesite" assert that the
# test passes and whether SameSite is awarded, which cookies.js sets only with these results.
COOKIE_CASES = [
    cookie_case(
        "checks secure with httponly sessions",
        "cookies-secure-with-httponly-sessions",
        [
            "SESSIONID=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly",
            "foo=bar; Domain=mozilla.org; Secure; Path=/",
            "heroku-session-affinity=bar; Domain=mozilla.org; Path=/",
        ],
        (
            "cookie.session_no_samesite",
            "cookie.broad_domain",
            "cookie.no_httponly",
            "cookie.no_samesite",
            "cookie.infrastructure_no_secure",
        ),
    ),
    cookie_case(
        "checks secure with httponly sessions and samesite",
        "cookies-secure-with-httponly-sessions-and-samesite",
        [
            "SESSIONID_SAMESITE_STRICT=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=Strict",
            "SESSIONID_SAMESITE_LAX=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=Lax",
            "SESSIONID_SAMESITE_NONE=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=None",
        ],
        ("cookie.broad_domain", "cookie.broad_domain", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks secure with httponly sessions and samesite not awarded if not all cookies samesite",
        "cookies-secure-with-httponly-sessions",
        [
            "SESSIONID_SAMESITE_STRICT=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=Strict",
            "SESSIONID_SAMESITE_NO_SAMESITE=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly",
            "SESSIONID_SAMESITE_LAX=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=Lax",
            "SESSIONID_SAMESITE_NONE=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=None",
        ],
        (
            "cookie.broad_domain",
            "cookie.session_no_samesite",
            "cookie.broad_domain",
            "cookie.broad_domain",
            "cookie.broad_domain",
        ),
    ),
    cookie_case(
        "checks anticsrf without samesite",
        "cookies-anticsrf-without-samesite-flag",
        ["CSRFTOKEN=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly"],
        ("cookie.csrf_no_samesite", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks samesite invalid empty",
        "cookies-samesite-flag-invalid",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite="],
        ("cookie.samesite_invalid", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks samesite invalid true",
        "cookies-samesite-flag-invalid",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=True"],
        ("cookie.samesite_invalid", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks samesite invalid",
        "cookies-samesite-flag-invalid",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; Secure; HttpOnly; SameSite=Invalid"],
        ("cookie.samesite_invalid", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks regular cookie no secure but hsts",
        "cookies-without-secure-flag-but-protected-by-hsts",
        ["foo=bar; Domain=mozilla.org; Path=/"],
        ("cookie.no_secure", "cookie.no_httponly", "cookie.no_samesite"),
        hsts="max-age=15768000",
        why=DOMAIN_COOKIE_BEYOND_HSTS,
    ),
    cookie_case(
        "checks session cookie no secure but hsts",
        "cookies-session-without-secure-flag-but-protected-by-hsts",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; HttpOnly"],
        ("cookie.session_no_secure", "cookie.session_no_samesite", "cookie.broad_domain"),
        hsts="max-age=15768000",
        why=DOMAIN_COOKIE_BEYOND_HSTS,
    ),
    cookie_case(
        "checks no secure",
        "cookies-without-secure-flag",
        ["foo=bar; Domain=mozilla.org; Path=/"],
        ("cookie.no_secure", "cookie.no_httponly", "cookie.no_samesite"),
    ),
    cookie_case(
        "checks session no httponly",
        "cookies-session-without-httponly-flag",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; Secure"],
        ("cookie.session_no_httponly", "cookie.session_no_samesite", "cookie.broad_domain"),
    ),
    cookie_case(
        "checks session no secure",
        "cookies-session-without-secure-flag",
        ["SESSIONID=bar; Domain=mozilla.org; Path=/; HttpOnly"],
        ("cookie.session_no_secure", "cookie.session_no_samesite", "cookie.broad_domain"),
    ),
    Case(
        f"{COOKIES_TEST}: checks session no secure",
        "#1 SESSIONID (no attribute but Domain and Path)",
        "cookies-session-without-secure-flag",
        {"cookies": ["SESSIONID=bar; Domain=mozilla.org; Path=/"]},
        ("cookie.session_no_secure", "cookie.session_no_httponly", "cookie.session_no_samesite", "cookie.broad_domain"),
    ),
]

GROUPS = {
    PARSER_TEST: PARSER_CASES,
    CSP_TEST: CSP_CASES,
    XFO_TEST: XFO_CASES,
    COOKIES_TEST: COOKIE_CASES,
}
SUBJECTS = {PARSER_TEST: CSP, CSP_TEST: CSP, XFO_TEST: "X-Frame-Options"}


@pytest.mark.parametrize("case", params(PARSER_CASES + CSP_CASES + XFO_CASES))
def test_header(case: Case) -> None:
    subject = SUBJECTS[case.test.split(":")[0]]
    body = fixture(case.given["body"]) if "body" in case.given else b""
    snapshot = make_snapshot(URL, headers=case.given.get("headers", []), body=body)
    assert_conforms(case, [f.outcome for f in check_headers(snapshot).findings if f.subject == subject])


@pytest.mark.parametrize("case", params(COOKIE_CASES))
def test_cookies(case: Case) -> None:
    lines = [("Set-Cookie", line) for line in case.given["cookies"]]
    if "hsts" in case.given:
        lines.append(("Strict-Transport-Security", case.given["hsts"]))
    result = check_cookies(make_snapshot(URL, headers=lines))
    assert_conforms(case, [f.outcome for f in result.findings])
