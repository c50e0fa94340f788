# Test cases adapted from Mozilla's http-observatory (httpobs 0.9.3, MPL-2.0,
# https://github.com/mozilla/http-observatory); this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the Observatory's test_headers.py: CSP, cookies, Referrer-Policy, HSTS, X-Content-Type-Options,
X-Frame-Options and X-XSS-Protection (docs/conformance.md).

Every Observatory test scans https://{HOST}/ and sets headers on its responses; here they are the final
response of a hand-made snapshot. HPKP (TestPublicKeyPinning) is not ported: browsers removed HPKP (Chrome 72,
Firefox 72) and websec has no HPKP check. Cookies are written as the Set-Cookie line the Observatory's
http.cookiejar.Cookie stands for, host-only: its analyzer never reads the Domain that Cookie() demands, and
`SameSite: None` / `SameSite: True` in its `rest` are a bare `SameSite` attribute.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conformance._observatory import URL, Case, assert_conforms, fixture, params
from tests.factories import make_snapshot
from websec_app.scanner.checks.cookies import check_cookies
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.snapshot import SiteSnapshot, TlsHandshake

HEADERS = {
    "csp": "Content-Security-Policy",
    "referrer": "Referrer-Policy",
    "hsts": "Strict-Transport-Security",
    "xcto": "X-Content-Type-Options",
    "xfo": "X-Frame-Options",
    "xxp": "X-XSS-Protection",
}
# The header object each Observatory test class grades (test_policy_analysis's antiClickjacking: X-Frame-Options).
SUBJECTS = {
    "TestContentSecurityPolicy": "Content-Security-Policy",
    "TestReferrerPolicy": "Referrer-Policy",
    "TestStrictTransportSecurity": "Strict-Transport-Security",
    "TestXContentTypeOptions": "X-Content-Type-Options",
    "TestXFrameOptions": "X-Frame-Options",
    "TestXXSSProtection": "X-XSS-Protection",
}


def snapshot(given: dict[str, Any]) -> SiteSnapshot:
    url = given.get("url", URL)
    headers = [(HEADERS[key], value) for key, value in given.items() if key in HEADERS]
    headers += [("Set-Cookie", line) for line in given.get("cookies", ())]
    extra: dict[str, Any] = {}
    if given.get("untrusted"):  # the Observatory's `verified = False`
        host = urlsplit(url).hostname or ""
        extra["tls"] = TlsHandshake(
            host=host, port=443, protocol="TLSv1.3", trusted=False, verify_error="self-signed certificate"
        )
    body = fixture(given["body"]) if "body" in given else b""
    return make_snapshot(url, headers=headers, body=body, **extra)


def header_outcomes(case: Case) -> list[str]:
    subject = SUBJECTS[case.test.split(".")[0]]
    if case.test.endswith("test_policy_analysis"):
        subject = "X-Frame-Options"
    return [f.outcome for f in check_headers(snapshot(case.given)).findings if f.subject == subject]


CSP_CASES = [
    Case("TestContentSecurityPolicy.test_missing", "#0 nothing sent", "csp-not-implemented", {}, ("csp.missing",)),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#0 '  '",
        "csp-header-invalid",
        {"csp": "  "},
        ("csp.invalid",),
    ),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#1 '\\r\\n'",
        "csp-header-invalid",
        {"csp": "\r\n"},
        ("csp.invalid",),
    ),
    Case("TestContentSecurityPolicy.test_header_invalid", "#2 ''", "csp-header-invalid", {"csp": ""}, ("csp.invalid",)),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#3 \"default-src 'none'; default-src 'none'\"",
        "csp-header-invalid",
        {"csp": "default-src 'none'; default-src 'none'"},
        ("csp.no_base_uri",),
        why="CSP3 §2.2.1 parse: a repeated directive is ignored (console warning) and the first applies; browsers enforce the policy",
    ),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#4 \"default-src 'none'; img-src 'self'; default-src 'none'\"",
        "csp-header-invalid",
        {"csp": "default-src 'none'; img-src 'self'; default-src 'none'"},
        ("csp.no_base_uri",),
        why="CSP3 §2.2.1 parse: a repeated directive is ignored (console warning) and the first applies; browsers enforce the policy",
    ),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#5 \"default-src 'none'; script-src 'strict-dynamic'\"",
        "csp-header-invalid",
        {"csp": "default-src 'none'; script-src 'strict-dynamic'"},
        ("csp.no_base_uri",),
        why="CSP3 §8.2: 'strict-dynamic' without a nonce or hash lets no script run; browsers enforce this valid, strictest policy",
    ),
    Case(
        "TestContentSecurityPolicy.test_header_invalid",
        "#6 'defa'",
        "csp-header-invalid",
        {"csp": "defa"},
        ("csp.invalid",),
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme",
        "#0 'default-src http://mozilla.org'",
        "csp-implemented-with-insecure-scheme",
        {"csp": "default-src http://mozilla.org"},
        ("csp.insecure_source", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme",
        "#1 \"default-src 'none'; script-src http://mozilla.org\"",
        "csp-implemented-with-insecure-scheme",
        {"csp": "default-src 'none'; script-src http://mozilla.org"},
        ("csp.insecure_source", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme",
        "#2 \"default-src 'none'; script-src http://mozilla.org\"",
        "csp-implemented-with-insecure-scheme",
        {"csp": "default-src 'none'; script-src http://mozilla.org"},
        ("csp.insecure_source", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme",
        "#3 \"default-src 'none'; script-src ftp://mozilla.org\"",
        "csp-implemented-with-insecure-scheme",
        {"csp": "default-src 'none'; script-src ftp://mozilla.org"},
        ("csp.no_base_uri",),
        why="ftp: can load no script: Chrome 95 and Firefox 90 removed FTP, so the source matches nothing fetchable",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#0 \"default-src 'none'; img-src http://mozilla.org\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'none'; img-src http://mozilla.org"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#1 \"default-src 'self'; img-src ftp:\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'self'; img-src ftp:"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#2 \"default-src 'self'; img-src http:\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'self'; img-src http:"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#3 \"default-src 'none'; img-src https:; media-src http://mozilla.org\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'none'; img-src https:; media-src http://mozilla.org"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#4 \"default-src 'none'; img-src http: https:; script-src 'self'; style-src 'self'\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'none'; img-src http: https:; script-src 'self'; style-src 'self'"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#5 \"default-src 'none'; img-src 'none'; media-src http:; script-src 'self'; style-src 'self'\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'none'; img-src 'none'; media-src http:; script-src 'self'; style-src 'self'"},
        ("csp.no_base_uri",),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_insecure_scheme_in_passive_content_only",
        "#6 \"default-src 'none'; img-src 'none'; media-src http:; script-src 'self'; style-src 'unsafe-inline'\"",
        "csp-implemented-with-insecure-scheme-in-passive-content-only",
        {"csp": "default-src 'none'; img-src 'none'; media-src http:; script-src 'self'; style-src 'unsafe-inline'"},
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
        why="not graded in CSP: browsers upgrade or block http: images/media themselves (Mixed Content L2); page.mixed_passive grades real ones",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#0 \"script-src 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src 'unsafe-inline'"},
        ("csp.unsafe_inline_script", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#1 'script-src data:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src data:"},
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#2 'script-src http:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src http:"},
        ("csp.broad_script_source", "csp.insecure_source", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#3 'script-src ftp:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src ftp:"},
        ("csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#4 \"default-src 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'unsafe-inline'"},
        ("csp.unsafe_inline_script", "csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#5 \"default-src 'UNSAFE-INLINE'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'UNSAFE-INLINE'"},
        ("csp.unsafe_inline_script", "csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#6 \"DEFAULT-SRC 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "DEFAULT-SRC 'none'"},
        ("csp.no_base_uri",),
        why="CSP3 §2.2.1: directive names are ASCII-lowercased, so DEFAULT-SRC 'none' is enforced by every browser",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#7 \"script-src 'unsafe-inline'; SCRIPT-SRC 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src 'unsafe-inline'; SCRIPT-SRC 'none'"},
        ("csp.unsafe_inline_script", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#8 'upgrade-insecure-requests'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "upgrade-insecure-requests"},
        ("csp.no_script_restriction", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#9 \"script-src 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src 'none'"},
        ("csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#10 'script-src https:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src https:"},
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#11 'script-src https://mozilla.org https:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "script-src https://mozilla.org https:"},
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#12 'default-src https://mozilla.org https:'",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src https://mozilla.org https:"},
        ("csp.broad_script_source", "csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#13 \"default-src 'none'; script-src *\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'none'; script-src *"},
        ("csp.broad_script_source", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#14 \"default-src *; script-src *; object-src 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src *; script-src *; object-src 'none'"},
        ("csp.broad_script_source", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#15 \"default-src 'none'; script-src 'none', object-src *\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'none'; script-src 'none', object-src *"},
        ("csp.no_base_uri",),
        why="CSP3 §2.2.2: the comma starts a second policy; both are enforced, and the first's default-src 'none' blocks objects",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#16 \"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'"},
        ("csp.unsafe_inline_script", "csp.unsafe_eval", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#17 \"default-src 'none'; script-src 'unsafe-inline' http:\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "default-src 'none'; script-src 'unsafe-inline' http:"},
        ("csp.broad_script_source", "csp.insecure_source", "csp.unsafe_inline_script", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline",
        "#18 \"object-src https:; script-src 'none'\"",
        "csp-implemented-with-unsafe-inline",
        {"csp": "object-src https:; script-src 'none'"},
        ("csp.no_object_src", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_eval",
        "#0 \"default-src 'none'; script-src 'unsafe-eval'\"",
        "csp-implemented-with-unsafe-eval",
        {"csp": "default-src 'none'; script-src 'unsafe-eval'"},
        ("csp.unsafe_eval", "csp.no_base_uri"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#0 \"object-src 'none'; script-src 'none'; style-src 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "object-src 'none'; script-src 'none'; style-src 'unsafe-inline'"},
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#1 \"default-src 'none'; script-src https://mozilla.org; style-src 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'none'; script-src https://mozilla.org; style-src 'unsafe-inline'"},
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#2 \"default-src 'unsafe-inline'; script-src https://mozilla.org\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'unsafe-inline'; script-src https://mozilla.org"},
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#3 \"default-src 'none';;; ;;;style-src 'self' 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'none';;; ;;;style-src 'self' 'unsafe-inline'"},
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#4 \"default-src 'none'; style-src data:\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'none'; style-src data:"},
        ("csp.no_base_uri",),
        why="scope: websec grades inline style only; broad external style sources (data:, *, https:) have no outcome",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#5 \"default-src 'none'; style-src *\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'none'; style-src *"},
        ("csp.no_base_uri",),
        why="scope: websec grades inline style only; broad external style sources (data:, *, https:) have no outcome",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#6 \"default-src 'none'; style-src https:\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {"csp": "default-src 'none'; style-src https:"},
        ("csp.no_base_uri",),
        why="scope: websec grades inline style only; broad external style sources (data:, *, https:) have no outcome",
    ),
    Case(
        "TestContentSecurityPolicy.test_unsafe_inline_in_style_src_only",
        "#7 \"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB=' 'unsafe-inline'\"",
        "csp-implemented-with-unsafe-inline-in-style-src-only",
        {
            "csp": "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB=' 'unsafe-inline'"
        },
        ("csp.no_base_uri", "csp.unsafe_inline_style"),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#0 'default-src https://mozilla.org'",
        "csp-implemented-with-no-unsafe",
        {"csp": "default-src https://mozilla.org"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#1 \"default-src https://mozilla.org;;; ;;;script-src 'none'\"",
        "csp-implemented-with-no-unsafe",
        {"csp": "default-src https://mozilla.org;;; ;;;script-src 'none'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#2 \"object-src 'none'; script-src https://mozilla.org; style-src https://mozilla.org; upgrade-insecure-requests;\"",
        "csp-implemented-with-no-unsafe",
        {
            "csp": "object-src 'none'; script-src https://mozilla.org; style-src https://mozilla.org; upgrade-insecure-requests;"
        },
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#3 \"object-src 'none'; script-src 'strict-dynamic' 'nonce-abc' 'unsafe-inline'; style-src 'none'\"",
        "csp-implemented-with-no-unsafe",
        {"csp": "object-src 'none'; script-src 'strict-dynamic' 'nonce-abc' 'unsafe-inline'; style-src 'none'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#4 \"object-src 'none'; style-src 'self';script-src 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBA='\"",
        "csp-implemented-with-no-unsafe",
        {"csp": "object-src 'none'; style-src 'self';script-src 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBA='"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#5 \"object-src 'none'; style-src 'self'; script-src 'unsafe-inline' 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBA=''sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB='\"",
        "csp-implemented-with-no-unsafe",
        {
            "csp": "object-src 'none'; style-src 'self'; script-src 'unsafe-inline' 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBA=''sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB='"
        },
        ("csp.unsafe_inline_script", "csp.no_base_uri"),
        why="CSP3 §2.3.1 grammar: the two hashes lack a space, so the token is no hash-source, browsers drop it and 'unsafe-inline' applies",
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#6 \"object-src 'none'; script-src 'unsafe-inline' 'nonce-abc123' 'unsafe-inline'; style-src 'none'\"",
        "csp-implemented-with-no-unsafe",
        {"csp": "object-src 'none'; script-src 'unsafe-inline' 'nonce-abc123' 'unsafe-inline'; style-src 'none'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#7 \"default-src https://mozilla.org; style-src 'unsafe-inline' 'nonce-abc123' 'unsafe-inline'\"",
        "csp-implemented-with-no-unsafe",
        {"csp": "default-src https://mozilla.org; style-src 'unsafe-inline' 'nonce-abc123' 'unsafe-inline'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe",
        "#8 \"default-src https://mozilla.org; style-src 'unsafe-inline' 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB=' 'unsafe-inline'\"",
        "csp-implemented-with-no-unsafe",
        {
            "csp": "default-src https://mozilla.org; style-src 'unsafe-inline' 'sha256-hqBEA/HXB3aJU2FgOnYN8rkAgEVgyfi3Vs1j2/XMPBB=' 'unsafe-inline'"
        },
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#0 'default-src'",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#1 \"default-src 'none'; script-src 'strict-dynamic' 'nonce-abc123' 'unsafe-inline'\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; script-src 'strict-dynamic' 'nonce-abc123' 'unsafe-inline'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#2 \"default-src 'none'; script-src https://mozilla.org;style-src https://mozilla.org; upgrade-insecure-requests;\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {
            "csp": "default-src 'none'; script-src https://mozilla.org;style-src https://mozilla.org; upgrade-insecure-requests;"
        },
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#3 \"default-src 'none'; object-src https://mozilla.org\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; object-src https://mozilla.org"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#4 parse_http_equiv_headers_csp1",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"body": "test_parse_http_equiv_headers_csp1.html"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#5 parse_http_equiv_headers_csp_multiple_http_equiv1",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"body": "test_parse_http_equiv_headers_csp_multiple_http_equiv1.html"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_no_unsafe_default_src_none",
        "#6 parse_http_equiv_headers_csp_multiple_http_equiv1, csp='script-src https://mozilla.org;'",
        "csp-implemented-with-no-unsafe-default-src-none",
        {
            "body": "test_parse_http_equiv_headers_csp_multiple_http_equiv1.html",
            "csp": "script-src https://mozilla.org;",
        },
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_strict_dynamic",
        "#0 \"default-src 'none'; script-src 'strict-dynamic' 'nonce-abc123'\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; script-src 'strict-dynamic' 'nonce-abc123'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_strict_dynamic",
        "#1 \"default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123'\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123'"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_strict_dynamic",
        "#2 \"default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' https://\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' https://"},
        ("csp.no_base_uri",),
    ),
    Case(
        "TestContentSecurityPolicy.test_strict_dynamic",
        "#3 \"default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' 'unsafe-inline'\"",
        "csp-implemented-with-no-unsafe-default-src-none",
        {"csp": "default-src 'none'; script-src 'strict-dynamic' 'sha256-abc123' 'unsafe-inline'"},
        ("csp.no_base_uri",),
    ),
]

# test_policy_analysis asserts policy flags, not results: antiClickjacking is ported (our X-Frame-Options
# object reads frame-ancestors); insecureBaseUri/unsafeObjects/insecureFormAction/insecureSchemePassive are not.
POLICY_CASES = [
    Case(
        "TestContentSecurityPolicy.test_policy_analysis",
        "#0 \"default-src 'none'\"",
        "policy.antiClickjacking=false",
        {"csp": "default-src 'none'"},
        ("xfo.missing",),
    ),
    Case(
        "TestContentSecurityPolicy.test_policy_analysis",
        "#1 'frame-ancestors *'",
        "policy.antiClickjacking=false",
        {"csp": "frame-ancestors *"},
        ("xfo.frame_ancestors_permissive",),
    ),
    Case(
        "TestContentSecurityPolicy.test_policy_analysis",
        "#2 'frame-ancestors http:'",
        "policy.antiClickjacking=false",
        {"csp": "frame-ancestors http:"},
        ("xfo.frame_ancestors_permissive",),
    ),
    Case(
        "TestContentSecurityPolicy.test_policy_analysis",
        "#3 'frame-ancestors https:'",
        "policy.antiClickjacking=false",
        {"csp": "frame-ancestors https:"},
        ("xfo.frame_ancestors_permissive",),
    ),
    Case(
        "TestContentSecurityPolicy.test_policy_analysis",
        "#4 \"default-src *; frame-ancestors 'none'\"",
        "policy.antiClickjacking=true",
        {"csp": "default-src *; frame-ancestors 'none'"},
        ("xfo.csp_frame_ancestors",),
    ),
]

REFERRER_CASES = [
    Case(
        "TestReferrerPolicy.test_header_private",
        "#0 'no-referrer'",
        "referrer-policy-private",
        {"referrer": "no-referrer"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#1 'same-origin'",
        "referrer-policy-private",
        {"referrer": "same-origin"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#2 'strict-origin'",
        "referrer-policy-private",
        {"referrer": "strict-origin"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#3 'STRICT-ORIGIN'",
        "referrer-policy-private",
        {"referrer": "STRICT-ORIGIN"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#4 'strict-origin-when-cross-origin'",
        "referrer-policy-private",
        {"referrer": "strict-origin-when-cross-origin"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#5 parse_http_equiv_headers_referrer1",
        "referrer-policy-private",
        {"body": "test_parse_http_equiv_headers_referrer1.html"},
        ("referrer.missing",),
        why='HTML "referrer" metadata name: content must be ONE policy token; "no-referrer, same-origin" is ignored (Chromium, Firefox)',
    ),
    Case(
        "TestReferrerPolicy.test_header_private",
        "#6 parse_http_equiv_headers_referrer1, referrer='unsafe-url'",
        "referrer-policy-private",
        {"body": "test_parse_http_equiv_headers_referrer1.html", "referrer": "unsafe-url"},
        ("referrer.unsafe_url",),
        why='HTML "referrer" metadata name: the comma-list <meta> is ignored, so the header\'s unsafe-url stays in force',
    ),
    Case(
        "TestReferrerPolicy.test_header_no_referrer_when_downgrade",
        "#0 'no-referrer-when-downgrade'",
        "referrer-policy-no-referrer-when-downgrade",
        {"referrer": "no-referrer-when-downgrade"},
        ("referrer.full_url_cross_origin",),
    ),
    Case(
        "TestReferrerPolicy.test_missing",
        "#0 nothing sent",
        "referrer-policy-not-implemented",
        {},
        ("referrer.missing",),
    ),
    Case(
        "TestReferrerPolicy.test_header_invalid",
        "#0 'whimsy'",
        "referrer-policy-header-invalid",
        {"referrer": "whimsy"},
        ("referrer.invalid",),
    ),
    Case(
        "TestReferrerPolicy.test_header_unsafe",
        "#0 'origin'",
        "referrer-policy-unsafe",
        {"referrer": "origin"},
        ("referrer.origin_on_downgrade",),
    ),
    Case(
        "TestReferrerPolicy.test_header_unsafe",
        "#1 'origin-when-cross-origin'",
        "referrer-policy-unsafe",
        {"referrer": "origin-when-cross-origin"},
        ("referrer.origin_on_downgrade",),
    ),
    Case(
        "TestReferrerPolicy.test_header_unsafe",
        "#2 'unsafe-url'",
        "referrer-policy-unsafe",
        {"referrer": "unsafe-url"},
        ("referrer.unsafe_url",),
    ),
    Case(
        "TestReferrerPolicy.test_multiple_value_header_all_valid",
        "#0 'origin-when-cross-origin, no-referrer, unsafe-url'",
        "referrer-policy-unsafe",
        {"referrer": "origin-when-cross-origin, no-referrer, unsafe-url"},
        ("referrer.unsafe_url",),
    ),
    Case(
        "TestReferrerPolicy.test_multiple_value_header_all_valid",
        "#1 'no-referrer, unsafe-url'",
        "referrer-policy-unsafe",
        {"referrer": "no-referrer, unsafe-url"},
        ("referrer.unsafe_url",),
    ),
    Case(
        "TestReferrerPolicy.test_multiple_value_header_mix",
        "#0 'no-referrer, whimsy'",
        "referrer-policy-private",
        {"referrer": "no-referrer, whimsy"},
        ("referrer.good",),
    ),
    Case(
        "TestReferrerPolicy.test_multiple_value_header_invalid",
        "#0 'whimsy, whimsy1, whimsy2'",
        "referrer-policy-header-invalid",
        {"referrer": "whimsy, whimsy1, whimsy2"},
        ("referrer.invalid",),
    ),
]

HSTS_CASES = [
    Case("TestStrictTransportSecurity.test_missing", "#0 nothing sent", "hsts-not-implemented", {}, ("hsts.missing",)),
    Case(
        "TestStrictTransportSecurity.test_header_invalid",
        "#0 'includeSubDomains; preload'",
        "hsts-header-invalid",
        {"hsts": "includeSubDomains; preload"},
        ("hsts.invalid",),
    ),
    Case(
        "TestStrictTransportSecurity.test_header_invalid",
        "#1 'max-age=15768000; includeSubDomains, max-age=15768000; includeSubDomains'",
        "hsts-header-invalid",
        {"hsts": "max-age=15768000; includeSubDomains, max-age=15768000; includeSubDomains"},
        ("hsts.invalid",),
    ),
    Case(
        "TestStrictTransportSecurity.test_no_https",
        "#0 hsts='max-age=15768000', http://http-observatory.security.mozilla.org/",
        "hsts-not-implemented-no-https",
        {"hsts": "max-age=15768000", "url": "http://http-observatory.security.mozilla.org/"},
        ("hsts.not_https",),
    ),
    Case(
        "TestStrictTransportSecurity.test_invalid_cert",
        "#0 hsts='max-age=15768000; includeSubDomains; preload', untrusted certificate",
        "hsts-invalid-cert",
        {"hsts": "max-age=15768000; includeSubDomains; preload", "untrusted": True},
        ("hsts.ignored_tls_error",),
    ),
    Case(
        "TestStrictTransportSecurity.test_max_age_too_low",
        "#0 'max-age=86400'",
        "hsts-implemented-max-age-less-than-six-months",
        {"hsts": "max-age=86400"},
        ("hsts.short_max_age", "hsts.no_include_subdomains"),
    ),
    Case(
        "TestStrictTransportSecurity.test_implemented",
        "#0 'max-age=15768000; includeSubDomains; preload'",
        "hsts-implemented-max-age-at-least-six-months",
        {"hsts": "max-age=15768000; includeSubDomains; preload"},
        ("hsts.under_one_year",),
        why="stricter: 15768000 s is under the 1 year hstspreload.org and Chromium's preload list require (hsts.under_one_year, warn)",
    ),
    Case(
        "TestStrictTransportSecurity.test_preloaded",
        "#0 https://bugzilla.mozilla.org/",
        "hsts-preloaded",
        {"url": "https://bugzilla.mozilla.org/"},
        ("hsts.missing",),
        why="no bundled preload list: hstspreload.org requires the header to stay served, so a preloaded host without it is graded missing",
    ),
    Case(
        "TestStrictTransportSecurity.test_preloaded",
        "#1 https://facebook.com/",
        "hsts-preloaded",
        {"url": "https://facebook.com/"},
        ("hsts.missing",),
        why="no bundled preload list: hstspreload.org requires the header to stay served, so a preloaded host without it is graded missing",
    ),
    Case(
        "TestStrictTransportSecurity.test_preloaded",
        "#2 https://dropboxusercontent.com/",
        "hsts-not-implemented",
        {"url": "https://dropboxusercontent.com/"},
        ("hsts.missing",),
    ),
]

XCTO_CASES = [
    Case(
        "TestXContentTypeOptions.test_missing",
        "#0 nothing sent",
        "x-content-type-options-not-implemented",
        {},
        ("xcto.missing",),
    ),
    Case(
        "TestXContentTypeOptions.test_header_invalid",
        "#0 'whimsy'",
        "x-content-type-options-header-invalid",
        {"xcto": "whimsy"},
        ("xcto.invalid",),
    ),
    Case(
        "TestXContentTypeOptions.test_header_invalid",
        "#1 'nosniff, nosniff'",
        "x-content-type-options-header-invalid",
        {"xcto": "nosniff, nosniff"},
        ("xcto.good",),
        why='Fetch "determine nosniff": only the first list value counts, so "nosniff, nosniff" sniffs nothing in every browser',
    ),
    Case(
        "TestXContentTypeOptions.test_nosniff",
        "#0 'nosniff'",
        "x-content-type-options-nosniff",
        {"xcto": "nosniff"},
        ("xcto.good",),
    ),
    Case(
        "TestXContentTypeOptions.test_nosniff",
        "#1 'nosniff '",
        "x-content-type-options-nosniff",
        {"xcto": "nosniff "},
        ("xcto.good",),
    ),
]

XFO_CASES = [
    Case("TestXFrameOptions.test_missing", "#0 nothing sent", "x-frame-options-not-implemented", {}, ("xfo.missing",)),
    Case(
        "TestXFrameOptions.test_header_invalid",
        "#0 'whimsy'",
        "x-frame-options-header-invalid",
        {"xfo": "whimsy"},
        ("xfo.invalid",),
    ),
    Case(
        "TestXFrameOptions.test_header_invalid",
        "#1 'SAMEORIGIN, SAMEORIGIN'",
        "x-frame-options-header-invalid",
        {"xfo": "SAMEORIGIN, SAMEORIGIN"},
        ("xfo.good",),
        why="HTML XFO processing lowercases values into a set, so duplicates collapse to one SAMEORIGIN that browsers honour",
    ),
    Case(
        "TestXFrameOptions.test_allow_from_origin",
        "#0 'ALLOW-FROM https://mozilla.org'",
        "x-frame-options-allow-from-origin",
        {"xfo": "ALLOW-FROM https://mozilla.org"},
        ("xfo.allow_from",),
        why="HTML XFO processing: ALLOW-FROM is invalid and ignored (Firefox 70+, never in Chrome/Safari), so the page is frameable",
    ),
    Case(
        "TestXFrameOptions.test_deny", "#0 'DENY'", "x-frame-options-sameorigin-or-deny", {"xfo": "DENY"}, ("xfo.good",)
    ),
    Case(
        "TestXFrameOptions.test_deny",
        "#1 'DENY '",
        "x-frame-options-sameorigin-or-deny",
        {"xfo": "DENY "},
        ("xfo.good",),
    ),
    Case(
        "TestXFrameOptions.test_enabled_via_csp",
        "#0 xfo='DENY', csp='frame-ancestors https://mozilla.org'",
        "x-frame-options-implemented-via-csp",
        {"xfo": "DENY", "csp": "frame-ancestors https://mozilla.org"},
        ("xfo.csp_frame_ancestors",),
    ),
]

XXSS_CASES = [
    Case(
        "TestXXSSProtection.test_missing",
        "#0 nothing sent",
        "x-xss-protection-not-implemented",
        {},
        ("xxp.good",),
        why="Chrome 78 / Edge / Safari removed the XSS filter and Firefox never had one; OWASP and MDN advise omitting it or sending 0",
    ),
    Case(
        "TestXXSSProtection.test_header_invalid",
        "#0 'whimsy'",
        "x-xss-protection-header-invalid",
        {"xxp": "whimsy"},
        ("xxp.enabled",),
        why="an invalid value leaves legacy browsers on their default (filter on); we report xxp.enabled, the filter's own risks (MDN)",
    ),
    Case(
        "TestXXSSProtection.test_header_invalid",
        "#1 '2; mode=block'",
        "x-xss-protection-header-invalid",
        {"xxp": "2; mode=block"},
        ("xxp.enabled",),
        why="an invalid value leaves legacy browsers on their default (filter on); we report xxp.enabled, the filter's own risks (MDN)",
    ),
    Case(
        "TestXXSSProtection.test_header_invalid",
        "#2 '1; mode=block; mode=block'",
        "x-xss-protection-header-invalid",
        {"xxp": "1; mode=block; mode=block"},
        ("xxp.enabled",),
        why="an invalid value leaves legacy browsers on their default (filter on); we report xxp.enabled, the filter's own risks (MDN)",
    ),
    Case(
        "TestXXSSProtection.test_header_invalid",
        "#3 '1; mode=block, 1; mode=block'",
        "x-xss-protection-header-invalid",
        {"xxp": "1; mode=block, 1; mode=block"},
        ("xxp.enabled",),
        why="an invalid value leaves legacy browsers on their default (filter on); we report xxp.enabled, the filter's own risks (MDN)",
    ),
    Case(
        "TestXXSSProtection.test_disabled",
        "#0 '0'",
        "x-xss-protection-disabled",
        {"xxp": "0"},
        ("xxp.good",),
        why="0 is the OWASP Secure Headers recommendation: the legacy filter enabled cross-site leaks and selective script blocking",
    ),
    Case(
        "TestXXSSProtection.test_enabled_noblock",
        "#0 '1'",
        "x-xss-protection-enabled",
        {"xxp": "1"},
        ("xxp.enabled",),
        why="enabling the removed filter only matters to legacy browsers, where it enabled XS-leaks (MDN, OWASP): xxp.enabled",
    ),
    Case(
        "TestXXSSProtection.test_enabled_noblock",
        "#1 '1 '",
        "x-xss-protection-enabled",
        {"xxp": "1 "},
        ("xxp.enabled",),
        why="enabling the removed filter only matters to legacy browsers, where it enabled XS-leaks (MDN, OWASP): xxp.enabled",
    ),
    Case(
        "TestXXSSProtection.test_enabled_block",
        "#0 '1; mode=block'",
        "x-xss-protection-enabled-mode-block",
        {"xxp": "1; mode=block"},
        ("xxp.enabled",),
        why="enabling the removed filter only matters to legacy browsers, where it enabled XS-leaks (MDN, OWASP): xxp.enabled",
    ),
    Case(
        "TestXXSSProtection.test_enabled_via_csp",
        "#0 \"object-src 'none'; script-src 'none'\"",
        "x-xss-protection-not-needed-due-to-csp",
        {"csp": "object-src 'none'; script-src 'none'"},
        ("xxp.good",),
    ),
]

COOKIE_CASES = [
    Case("TestCookies.test_missing", "#0 no cookies", "cookies-not-found", {"cookies": []}, ("cookie.none",)),
    Case(
        "TestCookies.test_secure_with_httponly_sessions",
        "#0 SESSIONID + foo + __cfduid + heroku-session-affinity",
        "cookies-secure-with-httponly-sessions",
        {
            "cookies": [
                "SESSIONID=bar; Path=/; Secure; HttpOnly",
                "foo=bar; Path=/; Secure",
                "__cfduid=bar; Path=/",
                "heroku-session-affinity=bar; Path=/",
            ]
        },
        (
            "cookie.session_no_samesite",
            "cookie.no_httponly",
            "cookie.no_samesite",
            "cookie.no_secure",
            "cookie.no_httponly",
            "cookie.no_samesite",
            "cookie.infrastructure_no_secure",
        ),
        why="__cfduid is graded like any site cookie: Cloudflare retired it in 2021, it is not on its documented cookie list, it lacks Secure",
    ),
    Case(
        "TestCookies.test_secure_with_httponly_sessions_and_samesite",
        "#0 SESSIONID_SAMESITE_STRICT + SESSIONID_SAMESITE_LAX + SESSIONID_SAMESITE_NONE",
        "cookies-secure-with-httponly-sessions-and-samesite",
        {
            "cookies": [
                "SESSIONID_SAMESITE_STRICT=bar; Path=/; Secure; HttpOnly; SameSite=Strict",
                "SESSIONID_SAMESITE_LAX=bar; Path=/; Secure; HttpOnly; SameSite=Lax",
                "SESSIONID_SAMESITE_NONE=bar; Path=/; Secure; HttpOnly; SameSite=None",
            ]
        },
        ("cookie.ok", "cookie.ok", "cookie.ok"),
    ),
    Case(
        "TestCookies.test_secure_with_httponly_sessions_and_samesite_not_awarded_if_not_all_cookies_samesite",
        "#0 SESSIONID_SAMESITE_STRICT + SESSIONID_NO_SAMESITE + SESSIONID_SAMESITE_LAX + SESSIONID_SAMESITE_NONE",
        "cookies-secure-with-httponly-sessions",
        {
            "cookies": [
                "SESSIONID_SAMESITE_STRICT=bar; Path=/; Secure; HttpOnly; SameSite=Strict",
                "SESSIONID_NO_SAMESITE=bar; Path=/; Secure; HttpOnly",
                "SESSIONID_SAMESITE_LAX=bar; Path=/; Secure; HttpOnly; SameSite=Lax",
                "SESSIONID_SAMESITE_NONE=bar; Path=/; Secure; HttpOnly; SameSite=None",
            ]
        },
        ("cookie.ok", "cookie.session_no_samesite", "cookie.ok", "cookie.ok"),
    ),
    Case(
        "TestCookies.test_anticsrf_without_samesite",
        "#0 CSRFTOKEN",
        "cookies-anticsrf-without-samesite-flag",
        {"cookies": ["CSRFTOKEN=bar; Path=/; Secure; HttpOnly"]},
        ("cookie.csrf_no_samesite",),
    ),
    Case(
        "TestCookies.test_samesite_invalid_empty",
        "#0 SESSIONID",
        "cookies-samesite-flag-invalid",
        {"cookies": ["SESSIONID=bar; Path=/; Secure; HttpOnly; SameSite"]},
        ("cookie.samesite_invalid",),
    ),
    Case(
        "TestCookies.test_samesite_invalid_true",
        "#0 SESSIONID",
        "cookies-samesite-flag-invalid",
        {"cookies": ["SESSIONID=bar; Path=/; Secure; HttpOnly; SameSite"]},
        ("cookie.samesite_invalid",),
    ),
    Case(
        "TestCookies.test_samesite_invalid",
        "#0 SESSIONID",
        "cookies-samesite-flag-invalid",
        {"cookies": ["SESSIONID=bar; Path=/; Secure; HttpOnly; SameSite=Invalid"]},
        ("cookie.samesite_invalid",),
    ),
    Case(
        "TestCookies.test_regular_cookie_no_secure_but_hsts",
        "#0 foo, hsts='max-age=15768000'",
        "cookies-without-secure-flag-but-protected-by-hsts",
        {"cookies": ["foo=bar; Path=/"], "hsts": "max-age=15768000"},
        ("cookie.no_secure_hsts", "cookie.no_httponly", "cookie.no_samesite"),
    ),
    Case(
        "TestCookies.test_session_cookie_no_secure_but_hsts",
        "#0 SESSIONID, hsts='max-age=15768000'",
        "cookies-session-without-secure-flag-but-protected-by-hsts",
        {"cookies": ["SESSIONID=bar; Path=/; HttpOnly"], "hsts": "max-age=15768000"},
        ("cookie.session_no_secure_hsts", "cookie.session_no_samesite"),
    ),
    Case(
        "TestCookies.test_no_secure",
        "#0 foo",
        "cookies-without-secure-flag",
        {"cookies": ["foo=bar; Path=/"]},
        ("cookie.no_secure", "cookie.no_httponly", "cookie.no_samesite"),
    ),
    Case(
        "TestCookies.test_session_no_httponly",
        "#0 SESSIONID",
        "cookies-session-without-httponly-flag",
        {"cookies": ["SESSIONID=bar; Path=/; Secure"]},
        ("cookie.session_no_httponly", "cookie.session_no_samesite"),
    ),
    Case(
        "TestCookies.test_session_no_secure",
        "#0 SESSIONID",
        "cookies-session-without-secure-flag",
        {"cookies": ["SESSIONID=bar; Path=/; HttpOnly"]},
        ("cookie.session_no_secure", "cookie.session_no_samesite"),
    ),
    Case(
        "TestCookies.test_session_no_secure",
        "#1 SESSIONID",
        "cookies-session-without-secure-flag",
        {"cookies": ["SESSIONID=bar; Path=/"]},
        ("cookie.session_no_secure", "cookie.session_no_httponly", "cookie.session_no_samesite"),
    ),
]

GROUPS = {
    "TestContentSecurityPolicy": CSP_CASES + POLICY_CASES,
    "TestCookies": COOKIE_CASES,
    "TestReferrerPolicy": REFERRER_CASES,
    "TestStrictTransportSecurity": HSTS_CASES,
    "TestXContentTypeOptions": XCTO_CASES,
    "TestXFrameOptions": XFO_CASES,
    "TestXXSSProtection": XXSS_CASES,
}


@pytest.mark.parametrize(
    "case", params(CSP_CASES + POLICY_CASES + REFERRER_CASES + HSTS_CASES + XCTO_CASES + XFO_CASES + XXSS_CASES)
)
def test_header(case: Case) -> None:
    assert_conforms(case, header_outcomes(case))


@pytest.mark.parametrize("case", params(COOKIE_CASES))
def test_cookies(case: Case) -> None:
    lines = [("Set-Cookie", line) for line in case.given["cookies"]]
    if "hsts" in case.given:
        lines.append(("Strict-Transport-Security", case.given["hsts"]))
    result = check_cookies(make_snapshot(URL, headers=lines))
    assert_conforms(case, [f.outcome for f in result.findings])
