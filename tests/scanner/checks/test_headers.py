"""Stories about the security headers check and the header objects it grades into."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import FIXED_NOW, make_certificate, make_handshake, make_snapshot
from websec_app.scanner.checks.headers import _REFERRER_OUTCOMES, HEADERS, check_headers
from websec_app.scanner.data import permissions_policy_features
from websec_app.scanner.findings import STATUSES, CheckResult, Finding
from websec_app.scanner.grading import grade
from websec_app.scanner.records.header_values import REFERRER_POLICIES
from websec_app.scanner.records.structured_fields import parse_dictionary
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import FetchChain, SiteSnapshot, TlsHandshake

CONTEXT = {"host": "example.com", "domain": "example.com", "origin": "https://example.com"}
BEST_PRACTICE = [
    (
        "Content-Security-Policy",
        "script-src 'nonce-r4nd0m' 'strict-dynamic'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "strict-origin-when-cross-origin"),
    ("Permissions-Policy", 'camera=(), microphone=(), geolocation=(self "https://maps.example")'),
]


def findings(snapshot: SiteSnapshot, subject: str) -> list[Finding]:
    return [f for f in check_headers(snapshot).findings if f.subject == subject]


def outcomes(subject: str, headers: list[tuple[str, str]] | None = None, **kwargs: Any) -> list[str]:
    return [f.outcome for f in findings(make_snapshot(headers=headers or [], **kwargs), subject)]


def note(subject: str, headers: list[tuple[str, str]], **kwargs: Any) -> str:
    return "; ".join(note for f in findings(make_snapshot(headers=headers, **kwargs), subject) for note in f.notes)


def header_objects(snapshot: SiteSnapshot) -> dict[str, dict[str, Any]]:
    return grade([check_headers(snapshot)], default_rulebook(), CONTEXT).sections["headers"]


# --- The section as a whole -----------------------------------------------------------------------


def test_a_site_with_every_best_practice_loses_nothing() -> None:
    # Given a page sending every header at its best
    objects = header_objects(make_snapshot(headers=BEST_PRACTICE))

    # Then every header object is good and deducts nothing
    assert {name: o["status"] for name, o in objects.items()} == dict.fromkeys(HEADERS, "good")
    assert sum(o["deduction"] for o in objects.values()) == 0


def test_a_site_without_any_header_loses_the_full_budget_and_is_capped_below_a_plus() -> None:
    graded = grade([check_headers(make_snapshot())], default_rulebook(), CONTEXT)

    deductions = {name: o["deduction"] for name, o in graded.sections["headers"].items()}
    assert deductions == {
        "Content-Security-Policy": 20,
        "Strict-Transport-Security": 15,
        "X-Frame-Options": 8,
        "X-Content-Type-Options": 5,
        "Referrer-Policy": 3,
        "Permissions-Policy": 3,
        "X-XSS-Protection": 0,  # no header is right: the legacy filter is not asked for
    }
    assert graded.score == 46
    assert {"outcome": "hsts.missing", "max_grade": "A"} in graded.caps


@pytest.mark.parametrize(
    "headers",
    [
        [],
        BEST_PRACTICE,
        [
            ("Content-Security-Policy", ""),
            ("Strict-Transport-Security", ""),
            ("X-Frame-Options", ""),
            ("X-Content-Type-Options", ""),
            ("Referrer-Policy", ""),
            ("Permissions-Policy", ""),
        ],
        [
            ("Content-Security-Policy", "default-src * 'unsafe-inline' 'unsafe-eval' http:"),
            ("Strict-Transport-Security", "max-age=0"),
            ("X-Frame-Options", "ALLOW-FROM https://a.example"),
            ("Referrer-Policy", "unsafe-url"),
            ("Permissions-Policy", "geolocation 'none'"),
        ],
    ],
)
def test_every_header_object_follows_spec_2_3(headers: list[tuple[str, str]]) -> None:
    # Given any combination of headers
    result = check_headers(make_snapshot(headers=headers))

    # Then every header has findings and details, and grades into a complete spec 2.3 object
    assert {f.subject for f in result.findings} == set(HEADERS)
    assert set(result.details) == set(HEADERS)
    objects = header_objects(make_snapshot(headers=headers))
    assert list(objects) == list(HEADERS)
    for name, obj in objects.items():
        # spec 2.3's fields, and fix_snippets beside fix (issue 15: null exactly where fix is), and fix_note, and the
        # note's notes one by one
        assert obj["note"] == ("; ".join(obj["notes"]) or None)
        assert set(obj) == {
            "present",
            "value",
            "status",
            "severity",
            "deduction",
            "explanation",
            "fix",
            "note",
            "notes",
            "fix_snippets",
            "fix_note",
        }
        assert (obj["fix_snippets"] is None) == (obj["fix"] is None)
        assert obj["fix"] is not None or obj["fix_note"] is None
        assert obj["status"] in STATUSES
        assert obj["severity"] in ("critical", "important", "minor")
        assert isinstance(obj["deduction"], int) and obj["deduction"] >= 0
        assert obj["explanation"]
        assert obj["present"] == any(k == name for k, _ in headers)
        assert (obj["deduction"] == 0) == (obj["status"] == "good")
        if obj["status"] != "good":
            assert obj["fix"] and "{" not in obj["fix"], (name, obj["fix"])


def test_every_rule_of_the_section_names_a_header_and_a_cwe() -> None:
    book = default_rulebook()
    rules = [r for r in book.rules.values() if r.section == "headers"]

    assert {r.subject for r in rules} == set(HEADERS)
    assert all(r.cwe for r in rules)
    assert all(r.fix for r in rules if r.status != "good")
    for name in HEADERS:
        if name == "X-XSS-Protection":  # a legacy switch best not sent: its absence is the good outcome
            continue
        missing = [r for r in rules if r.subject == name and r.status == "missing"]
        worst = max(r.deduction for r in rules if r.subject == name)
        assert missing and all(r.deduction == worst for r in missing), name  # absence costs the most


def test_no_response_is_a_check_error_not_a_crash() -> None:
    snapshot = make_snapshot()
    snapshot = SiteSnapshot(target=snapshot.target, main=FetchChain(snapshot.target.url), fetched_at=None)

    result = check_headers(snapshot)

    assert [f.outcome for f in result.findings] == ["check.error"]
    assert result.details["Content-Security-Policy"] == {"present": False, "value": None}


# --- Content-Security-Policy -----------------------------------------------------------------------


def test_no_csp_at_all_is_missing() -> None:
    assert outcomes("Content-Security-Policy") == ["csp.missing"]


def test_report_only_alone_is_not_a_policy() -> None:
    # Given only a report-only policy
    headers = [("Content-Security-Policy-Report-Only", "default-src 'self'; report-uri /csp")]

    # When graded
    obj = header_objects(make_snapshot(headers=headers))["Content-Security-Policy"]

    # Then the header counts as missing, with a note, and the fix is to enforce that policy
    assert outcomes("Content-Security-Policy", headers) == ["csp.report_only_only"]
    assert obj["status"] == "missing" and obj["deduction"] == 20 and obj["present"] is False
    assert "does not block" in obj["note"]
    assert obj["fix"] == "default-src 'self'; report-uri /csp"


@pytest.mark.parametrize("value", ["", "  ", ";", "scirpt-src 'self'"])
def test_an_empty_or_unusable_csp_header_is_invalid(value: str) -> None:
    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", value)]) == ["csp.invalid"]


def test_a_policy_that_does_not_touch_scripts() -> None:
    headers = [("Content-Security-Policy", "upgrade-insecure-requests; frame-ancestors 'self'")]

    assert outcomes("Content-Security-Policy", headers) == [
        "csp.no_script_restriction",
        "csp.no_object_src",
        "csp.no_base_uri",
    ]
    obj = header_objects(make_snapshot(headers=headers))["Content-Security-Policy"]
    assert obj["deduction"] == 20  # 15 + 3 + 2, within the header's cap
    # and the fix is a whole policy (no page to build it from: the generic one), keeping its frame-ancestors
    assert obj["fix"] == (
        "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "upgrade-insecure-requests; frame-ancestors 'self'"
    )


def test_google_style_strict_policy_only_loses_points_for_eval() -> None:
    # Given Google's nonce + 'strict-dynamic' policy, with fallbacks for old browsers and 'unsafe-eval'
    value = (
        "script-src 'nonce-q7d8Mz2JvD3kXn0Ff9Q6uA' 'unsafe-inline' 'unsafe-eval' 'strict-dynamic' https: http:;"
        "object-src 'none';base-uri 'self';report-uri https://csp.withgoogle.com/csp/gws/other-hp"
    )

    # When graded
    obj = header_objects(make_snapshot(headers=[("Content-Security-Policy", value)]))["Content-Security-Policy"]

    # Then only 'unsafe-eval' counts, and the fix is the same policy without it
    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", value)]) == ["csp.unsafe_eval"]
    assert obj["status"] == "warn" and obj["deduction"] == 3
    assert "'unsafe-eval'" not in obj["fix"] and "'strict-dynamic'" in obj["fix"]
    assert "'unsafe-inline' in script-src is ignored" in obj["note"]


def test_github_style_allowlist_only_loses_points_for_inline_styles() -> None:
    value = (
        "default-src 'none'; base-uri 'self'; connect-src 'self' api.github.com; font-src github.githubassets.com; "
        "form-action 'self' github.com; frame-ancestors 'none'; img-src 'self' data: github.githubassets.com; "
        "script-src github.githubassets.com; style-src 'unsafe-inline' github.githubassets.com; "
        "upgrade-insecure-requests"
    )

    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", value)]) == ["csp.unsafe_inline_style"]


def test_a_classic_weak_policy_collects_every_problem_worst_first() -> None:
    # Given the policy many CMS plugins ship
    value = "default-src 'self' 'unsafe-inline' 'unsafe-eval' http: data:"

    # Then each problem has its own outcome, weak ones before warnings
    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", value)]) == [
        "csp.broad_script_source",
        "csp.insecure_source",
        "csp.unsafe_inline_script",
        "csp.unsafe_eval",
        "csp.no_object_src",
        "csp.no_base_uri",
        "csp.unsafe_inline_style",
    ]
    obj = header_objects(make_snapshot(headers=[("Content-Security-Policy", value)]))["Content-Security-Policy"]
    assert obj["status"] == "weak"
    assert obj["deduction"] == 20  # capped at what a missing CSP costs
    # and the explanation shown is the worst problem's; the fix replaces the policy (it does not stop XSS)
    worst = default_rulebook().rule("csp.broad_script_source")
    assert obj["explanation"] == worst.explanation
    assert obj["fix"].startswith("default-src 'self'; script-src 'self'; object-src 'none'")
    assert "scripts may load from http: data:" in obj["note"]


def test_the_insecure_source_fix_upgrades_hosts_to_https() -> None:
    value = "script-src 'self' http://cdn.example.com; object-src 'none'; base-uri 'self'"
    headers = [("Content-Security-Policy", value)]

    [finding] = findings(make_snapshot(headers=headers), "Content-Security-Policy")

    assert finding.outcome == "csp.insecure_source"
    expected = "script-src 'self' https://cdn.example.com; object-src 'none'; base-uri 'self'"
    assert finding.fix_vars["csp_proposal"] == expected


def test_an_http_script_source_under_upgrade_insecure_requests_is_good_with_a_note() -> None:
    value = "script-src 'self' http://cdn.example.com; object-src 'none'; base-uri 'self'; upgrade-insecure-requests"

    [finding] = findings(make_snapshot(headers=[("Content-Security-Policy", value)]), "Content-Security-Policy")

    assert finding.outcome == "csp.good"
    assert "fetched over https://, as the policy has upgrade-insecure-requests" in finding.notes[0]


def test_uppercase_directives_and_trailing_semicolons_are_read_like_browsers_do() -> None:
    headers = [("Content-Security-Policy", "DEFAULT-SRC 'NONE'; SCRIPT-SRC 'SELF'; BASE-URI 'SELF';")]

    assert outcomes("Content-Security-Policy", headers) == ["csp.good"]


def test_two_csp_headers_are_both_enforced() -> None:
    # Given a weak first policy and a strict second one
    headers = [
        ("Content-Security-Policy", "script-src * 'unsafe-inline'"),
        ("Content-Security-Policy", "script-src 'self'; object-src 'none'; base-uri 'self'"),
    ]

    # Then the strict one protects: nothing is reported
    assert outcomes("Content-Security-Policy", headers) == ["csp.good"]
    assert "2 policies are enforced together" in note("Content-Security-Policy", headers)


def test_a_comma_joined_header_is_two_policies() -> None:
    # Given a weak policy and a strict one joined by a comma (CSP3 §2.2.2: two policies)
    headers = [("Content-Security-Policy", "default-src * 'unsafe-inline', script-src 'self'; base-uri 'self'")]

    # Then scripts are protected by the second, while styles stay open in both
    assert outcomes("Content-Security-Policy", headers) == ["csp.no_object_src", "csp.unsafe_inline_style"]


def test_a_meta_policy_counts_but_not_its_frame_ancestors() -> None:
    # Given a page whose only CSP is a <meta> in <head>
    body = (
        '<!doctype html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'\"></head>"
        "<body>hi</body></html>"
    )
    snapshot = make_snapshot(body=body)

    # Then the CSP is good (with a note), but frame-ancestors does not protect against framing
    assert [f.outcome for f in findings(snapshot, "Content-Security-Policy")] == ["csp.good"]
    assert "delivered by a <meta> element" in "; ".join(findings(snapshot, "Content-Security-Policy")[0].notes)
    assert [f.outcome for f in findings(snapshot, "X-Frame-Options")] == ["xfo.missing"]
    assert header_objects(snapshot)["Content-Security-Policy"]["present"] is False


def test_a_meta_policy_with_commas_is_several_policies_as_chromium_reads_it() -> None:
    # Given a <meta> policy whose parts are separated by commas: Chromium 156 enforces each, as in a header
    # (tests/scanner/test_headers_browser.py), where CSP3 §3.3 reads one policy: script-src "'none'," img-src *
    content = "script-src 'none', img-src *; object-src 'none', base-uri 'self'"
    body = f'<html><head><meta http-equiv="Content-Security-Policy" content="{content}"></head></html>'

    # Then scripts are blocked everywhere, and the note says how the policy was read
    assert outcomes("Content-Security-Policy", body=body) == ["csp.good"]
    assert "the <meta> policy holds commas" in note("Content-Security-Policy", [], body=body)
    # A part past the bound is left unread, and said to be
    many = "img-src *," * 60 + " script-src 'none'"
    body = f'<html><head><meta http-equiv="Content-Security-Policy" content="{many}"></head></html>'
    assert outcomes("Content-Security-Policy", body=body)[0] == "csp.no_script_restriction"
    assert "only the first 50 comma-separated parts of the <meta> policy were read" in note(
        "Content-Security-Policy", [], body=body
    )


def test_a_meta_policy_in_the_body_is_ignored() -> None:
    body = '<html><body><meta http-equiv="content-security-policy" content="default-src \'none\'"></body></html>'

    assert outcomes("Content-Security-Policy", body=body) == ["csp.missing"]
    assert "inside <body> is ignored" in note("Content-Security-Policy", [], body=body)


@pytest.mark.parametrize("wrapper", ["noscript", "template"])
def test_a_meta_policy_inside_noscript_or_template_is_ignored(wrapper: str) -> None:
    # Given a CSP <meta> in <head>, but inside <noscript> (raw text when scripting is on) or <template>
    # (its contents are not in the document); Chromium runs an inline script past such a policy
    meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; base-uri 'none'\">"
    body = f"<html><head><{wrapper}>{meta}</{wrapper}></head><body>x</body></html>"

    # Then the page has no CSP
    assert outcomes("Content-Security-Policy", body=body) == ["csp.missing"]
    assert "inside <noscript> or <template> is ignored" in note("Content-Security-Policy", [], body=body)


@pytest.mark.parametrize("http_equiv", [" Content-Security-Policy", "Content-Security-Policy\n"])
def test_a_meta_policy_whose_http_equiv_has_spaces_around_it_is_ignored(http_equiv: str) -> None:
    # HTML matches http-equiv whole; Chromium runs the inline script of such a page
    body = f'<html><head><meta http-equiv="{http_equiv}" content="script-src \'none\'"></head></html>'

    assert outcomes("Content-Security-Policy", body=body) == ["csp.missing"]
    assert "is ignored by browsers: spaces around the name count" in note("Content-Security-Policy", [], body=body)


def test_a_meta_policy_after_the_body_is_in_the_body() -> None:
    # Given a CSP <meta> after </body>: HTML's "after body" mode reprocesses it "in body" (libxml2
    # leaves it beside <body>); Chromium does not enforce it
    meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; base-uri 'none'\">"
    body = f"<html><head></head><body>x</body>{meta}</html>"

    assert outcomes("Content-Security-Policy", body=body) == ["csp.missing"]
    assert "inside <body> is ignored" in note("Content-Security-Policy", [], body=body)


def test_a_meta_policy_between_head_and_body_counts() -> None:
    # HTML "after head" mode: a <meta> there is put back into <head>
    meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; base-uri 'none'\">"
    body = f"<html><head></head>{meta}<body>x</body></html>"

    assert outcomes("Content-Security-Policy", body=body) == ["csp.good"]


def test_meta_policies_are_only_read_from_html() -> None:
    body = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'

    assert outcomes("Content-Security-Policy", body=body, content_type="text/plain") == ["csp.missing"]


def test_malformed_html_does_not_crash() -> None:
    body = b"<html><head><meta http-equiv=Content-Security-Policy content=\"default-src 'none'\xff\xfe<<</meta"

    assert outcomes("Content-Security-Policy", body=body)


# --- Strict-Transport-Security ---------------------------------------------------------------------


@pytest.mark.parametrize("url", ["https://93.184.216.34/", "https://[2001:db8::1]/"])
@pytest.mark.parametrize("value", [None, "max-age=31536000; includeSubDomains"])
def test_hsts_does_not_apply_to_an_ip_address(url: str, value: str | None) -> None:
    # RFC 6797 8.1: a host that is an IP literal is never noted as a Known HSTS Host; the header can
    # neither protect nor be missed there
    headers = [("Strict-Transport-Security", value)] if value is not None else []
    snapshot = make_snapshot(url, headers=headers)

    assert [f.outcome for f in findings(snapshot, "Strict-Transport-Security")] == ["hsts.ip_address"]
    assert header_objects(snapshot)["Strict-Transport-Security"]["deduction"] == 0
    sent_note = "browsers ignore it for an IP address" in "; ".join(
        findings(snapshot, "Strict-Transport-Security")[0].notes
    )
    assert sent_note == (value is not None)


def hsts(value: str | None) -> list[str]:
    headers = [("Strict-Transport-Security", value)] if value is not None else []
    return outcomes("Strict-Transport-Security", headers)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("max-age=31536000; includeSubDomains", ["hsts.good"]),
        ('max-age="31536000"; includeSubDomains', ["hsts.good"]),
        ("MAX-AGE=63072000;INCLUDESUBDOMAINS;preload", ["hsts.good"]),
        ("max-age=63072000; includeSubDomains;", ["hsts.good"]),
        ("  max-age=63072000 ; includeSubDomains ; unknown=1", ["hsts.good"]),
        ("max-age=31536000", ["hsts.no_include_subdomains"]),
        ("max-age=15768000; includeSubDomains", ["hsts.under_one_year"]),
        ("max-age=300; includeSubDomains", ["hsts.short_max_age"]),
        ("max-age=300", ["hsts.short_max_age", "hsts.no_include_subdomains"]),
        ("max-age=0", ["hsts.disabled"]),
        ("max-age=0; includeSubDomains", ["hsts.disabled"]),
        ("", ["hsts.invalid"]),
        ("includeSubDomains", ["hsts.invalid"]),
        ("max-age=abc", ["hsts.invalid"]),
        ("max-age=-1", ["hsts.invalid"]),
        ("max-age=", ["hsts.invalid"]),
        ("max-age=31536000; max-age=31536000", ["hsts.invalid"]),
        ("max-age=31536000; includeSubDomains; includeSubDomains", ["hsts.invalid"]),
        # RFC 6797 §6.1 ignores unknown directives, and Chromium keeps a header repeating one, or preload
        ("max-age=31536000; includeSubDomains; preload; preload", ["hsts.good"]),
        ("max-age=31536000; includeSubDomains; foo; foo", ["hsts.good"]),
        ("max-age=31536000, includeSubDomains", ["hsts.invalid"]),
        ('max-age="31536000', ["hsts.invalid"]),
        ("max-age=31536000; includeSubDomains=yes", ["hsts.invalid"]),
        (None, ["hsts.missing"]),
    ],
)
def test_hsts_values(value: str | None, expected: list[str]) -> None:
    assert hsts(value) == expected


def test_missing_and_weak_hsts_cap_the_grade_at_a() -> None:
    book = default_rulebook()

    for outcome in ("hsts.missing", "hsts.not_https", "hsts.invalid", "hsts.disabled", "hsts.short_max_age"):
        assert book.rule(outcome).max_grade == "A", outcome
    assert book.rule("hsts.no_include_subdomains").max_grade is None


def test_hsts_over_plain_http_is_ignored() -> None:
    # Given an HSTS header on a page served over http:// (RFC 6797 §8.1: browsers ignore it)
    headers = [("Strict-Transport-Security", "max-age=31536000; includeSubDomains")]

    assert outcomes("Strict-Transport-Security", headers, url="http://example.com/") == ["hsts.not_https"]
    assert "ignore" in note("Strict-Transport-Security", headers, url="http://example.com/")


def test_only_the_first_of_two_hsts_headers_counts() -> None:
    # Given a strong and a weak header (RFC 6797 §8.1: process only the first)
    weak_first = [
        ("Strict-Transport-Security", "max-age=300"),
        ("Strict-Transport-Security", "max-age=63072000; includeSubDomains"),
    ]
    strong_first = list(reversed(weak_first))

    assert outcomes("Strict-Transport-Security", weak_first) == ["hsts.short_max_age", "hsts.no_include_subdomains"]
    assert outcomes("Strict-Transport-Security", strong_first) == ["hsts.good"]
    assert "browsers use only the first" in note("Strict-Transport-Security", strong_first)


def test_preload_is_noted_with_its_requirements() -> None:
    ready = note(
        "Strict-Transport-Security", [("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload")]
    )
    not_ready = note("Strict-Transport-Security", [("Strict-Transport-Security", "max-age=600; preload")])

    assert "hstspreload.org" in ready
    assert "preload list needs max-age of at least 31536000 and includeSubDomains" in not_ready


@pytest.mark.parametrize(
    ("value", "unreadable"),
    [
        # chromium/hstspreload reads max-age only as digits right after "max-age=" (ParseHeaderString, parseMaxAge),
        # where Chromium takes each of these as a year (a quoted value, spaces around "=", a clamped 21 digits)
        ('max-age="31536000"; includeSubDomains; preload', 'max-age="31536000"'),
        ("max-age =31536000; includeSubDomains; preload", "max-age =31536000"),
        ("max-age=100000000000000000000; includeSubDomains; preload", "max-age=100000000000000000000"),
        # ...and calls any other directive starting with max-age a max-age without a value
        ("max-age=31536000; max-ageing=1; includeSubDomains; preload", "max-ageing=1"),
    ],
)
def test_preload_eligibility_is_read_as_hstspreload_reads_the_header(value: str, unreadable: str) -> None:
    headers = [("Strict-Transport-Security", value)]

    assert outcomes("Strict-Transport-Security", headers) == ["hsts.good"]  # browsers keep the policy
    assert note("Strict-Transport-Security", headers).endswith(
        f"preload is requested, but hstspreload.org cannot read {unreadable} (it takes only unquoted digits right "
        "after max-age=), so the preload list would refuse this header"
    )


def test_a_max_age_over_ten_years_is_noted_as_hstspreload_warns() -> None:
    headers = [("Strict-Transport-Security", "max-age=315360001; includeSubDomains; preload")]

    assert outcomes("Strict-Transport-Security", headers) == ["hsts.good"]
    assert note("Strict-Transport-Security", headers) == (
        "a max-age over 10 years (315360000 seconds) is unusually long (hstspreload.org warns); Chromium keeps at "
        "most 1 year (31536000 seconds) of any max-age; preload is requested; submit the domain at hstspreload.org "
        "to be built into browsers"
    )


def test_a_preload_request_from_a_subdomain_names_the_domain_hstspreload_takes() -> None:
    # hstspreload.org takes whole registered domains only (domain.go preloadableDomainLevel: domain.is_subdomain), and
    # reads the header from that domain's own HTTPS response: a page on www says which domain to submit
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload")]
    for url, domain, host in (
        ("https://www.example.com/", "example.com", "www.example.com"),
        ("https://shop.example.co.uk/", "example.co.uk", "shop.example.co.uk"),
    ):
        said = make_snapshot(url, headers=headers)
        assert "; ".join(n for f in findings(said, "Strict-Transport-Security") for n in f.notes) == (
            f"preload is requested; hstspreload.org takes whole registered domains only, so submit {domain} (not "
            f"{host}), whose own HTTPS responses must send this header too"
        )
    # and a page on the registered domain itself is told to submit it, as before
    assert note("Strict-Transport-Security", headers) == (
        "preload is requested; submit the domain at hstspreload.org to be built into browsers"
    )


def test_two_strict_transport_security_fields_are_refused_by_the_preload_list() -> None:
    # hstspreload's checkSingleHeader (response.go): more than one field is the error response.multiple_headers
    good = "max-age=63072000; includeSubDomains; preload"
    headers = [("Strict-Transport-Security", good), ("Strict-Transport-Security", good)]

    said = note("Strict-Transport-Security", headers)
    assert "submit the domain at hstspreload.org" not in said
    assert said.endswith(
        "preload is requested, but hstspreload.org refuses a response with 2 Strict-Transport-Security headers: "
        "send one"
    )


def test_preload_with_a_value_is_not_taken_for_a_preload_request() -> None:
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload=true")]

    assert outcomes("Strict-Transport-Security", headers) == ["hsts.good"]
    assert note("Strict-Transport-Security", headers) == (
        "preload=true is not a preload request: the preload list (hstspreload.org) needs a bare preload directive"
    )


def test_a_repeated_directive_browsers_accept_is_named_in_the_note() -> None:
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload; preload")]

    assert outcomes("Strict-Transport-Security", headers) == ["hsts.good"]
    assert note("Strict-Transport-Security", headers).startswith(
        "preload is sent more than once (browsers accept this, though RFC 6797 §6.1 asks for each directive once)"
    )


def test_hsts_with_a_certificate_error_is_ignored() -> None:
    # RFC 6797 §8.1: the header is processed only without secure transport errors
    tls = TlsHandshake(host="example.com", port=443, trusted=False, verify_error="self-signed certificate")
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains")]

    assert outcomes("Strict-Transport-Security", headers, tls=tls) == ["hsts.ignored_tls_error"]
    assert "self-signed certificate" in note("Strict-Transport-Security", headers, tls=tls)


@pytest.mark.parametrize(
    ("not_before", "not_after", "said"),
    [
        (FIXED_NOW - timedelta(days=120), FIXED_NOW - timedelta(days=30), "expired on"),
        (FIXED_NOW + timedelta(days=30), FIXED_NOW + timedelta(days=120), "valid only from"),
    ],
    ids=["expired", "not_yet_valid"],
)
def test_hsts_over_a_certificate_outside_its_dates_is_ignored(not_before, not_after, said) -> None:
    # RFC 6797 §8.1: an expired or not-yet-valid leaf is a certificate error for the browser, even though the
    # fetch counts the chain as trusted (the TLS check grades the dates itself)
    leaf = make_certificate(not_before=not_before, not_after=not_after)
    tls = make_handshake(certificate=leaf)
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains")]

    assert tls.trusted and tls.hostname_matches
    assert outcomes("Strict-Transport-Security", headers, tls=tls) == ["hsts.ignored_tls_error"]
    assert said in note("Strict-Transport-Security", headers, tls=tls)


def test_hsts_over_a_certificate_for_other_names_is_ignored_and_the_note_says_which_names() -> None:
    names = ("shop.example.net", "cdn.example.net", "x" * 300, "a.example.net", "b.example.net")
    tls = make_handshake("example.com", make_certificate(names=names))
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains")]

    assert outcomes("Strict-Transport-Security", headers, tls=tls) == ["hsts.ignored_tls_error"]
    # at most three names, none longer than a host name can be (it said "does not match the host name")
    assert note("Strict-Transport-Security", headers, tls=tls) == (
        f"certificate problem: the certificate names shop.example.net, cdn.example.net, {'x' * 253}… and 2 more, "
        "not example.com"
    )


def test_hsts_over_a_certificate_within_its_dates_counts() -> None:
    tls = make_handshake(certificate=make_certificate(not_after=FIXED_NOW + timedelta(days=60)))
    headers = [("Strict-Transport-Security", "max-age=63072000; includeSubDomains")]

    assert outcomes("Strict-Transport-Security", headers, tls=tls) == ["hsts.good"]


def test_no_include_subdomains_fix_keeps_a_long_max_age() -> None:
    headers = [("Strict-Transport-Security", "max-age=63072000")]

    obj = header_objects(make_snapshot(headers=headers))["Strict-Transport-Security"]

    assert obj["fix"] == "Strict-Transport-Security: max-age=63072000; includeSubDomains"
    assert obj["status"] == "warn" and obj["deduction"] == 2


# --- X-Frame-Options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("DENY", "xfo.good"),
        ("sameorigin", "xfo.good"),
        (" SameOrigin ", "xfo.good"),
        ("DENY, DENY", "xfo.good"),
        ("DENY, SAMEORIGIN", "xfo.good"),  # HTML: conflicting values block all framing
        ("ALLOW-FROM https://partner.example", "xfo.allow_from"),
        ("ALLOWALL", "xfo.invalid"),
        ("", "xfo.invalid"),
        ("yes", "xfo.invalid"),
        ("foo, bar", "xfo.invalid"),
    ],
)
def test_x_frame_options_values(value: str, expected: str) -> None:
    assert outcomes("X-Frame-Options", [("X-Frame-Options", value)]) == [expected]


def test_allow_from_fix_moves_the_origin_to_frame_ancestors() -> None:
    obj = header_objects(make_snapshot(headers=[("X-Frame-Options", "ALLOW-FROM https://partner.example")]))

    assert obj["X-Frame-Options"]["fix"] == "Content-Security-Policy: frame-ancestors 'self' https://partner.example"
    assert obj["X-Frame-Options"]["deduction"] == 8


def test_csp_frame_ancestors_replaces_x_frame_options() -> None:
    # Given no X-Frame-Options but an enforced frame-ancestors
    headers = [("Content-Security-Policy", "frame-ancestors 'self'")]

    # Then framing protection is good, with a note naming the directive
    assert outcomes("X-Frame-Options", headers) == ["xfo.csp_frame_ancestors"]
    obj = header_objects(make_snapshot(headers=headers))["X-Frame-Options"]
    assert obj["status"] == "good" and obj["present"] is False
    assert obj["note"] == "frame-ancestors 'self'"


def test_frame_ancestors_beats_an_obsolete_allow_from() -> None:
    headers = [
        ("X-Frame-Options", "ALLOW-FROM https://a.example"),
        ("Content-Security-Policy", "frame-ancestors https://a.example"),
    ]

    assert outcomes("X-Frame-Options", headers) == ["xfo.csp_frame_ancestors"]


def test_a_permissive_frame_ancestors_overrides_x_frame_options_deny() -> None:
    # Given DENY, but frame-ancestors * (browsers then ignore X-Frame-Options)
    headers = [("X-Frame-Options", "DENY"), ("Content-Security-Policy", "frame-ancestors *")]

    assert outcomes("X-Frame-Options", headers) == ["xfo.frame_ancestors_permissive"]
    assert "is ignored because frame-ancestors is present" in note("X-Frame-Options", headers)


def test_report_only_frame_ancestors_does_not_protect() -> None:
    headers = [("Content-Security-Policy-Report-Only", "frame-ancestors 'none'")]

    assert outcomes("X-Frame-Options", headers) == ["xfo.missing"]
    assert "only reports" in note("X-Frame-Options", headers)


# --- X-Content-Type-Options ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("nosniff", "xcto.good"),
        (" NoSniff ", "xcto.good"),
        ("nosniff, nosniff", "xcto.good"),
        ("nosniff, whatever", "xcto.good"),  # Fetch: only the first value counts
        ("whatever, nosniff", "xcto.invalid"),
        ("no-sniff", "xcto.invalid"),
        ("", "xcto.invalid"),
        ('"nosniff"', "xcto.invalid"),
    ],
)
def test_x_content_type_options_values(value: str, expected: str) -> None:
    assert outcomes("X-Content-Type-Options", [("X-Content-Type-Options", value)]) == [expected]


def test_nosniff_sent_twice_is_noted() -> None:
    headers = [("X-Content-Type-Options", "nosniff"), ("X-Content-Type-Options", "nosniff")]

    assert outcomes("X-Content-Type-Options", headers) == ["xcto.good"]
    assert "2 values were sent" in note("X-Content-Type-Options", headers)


def test_missing_x_content_type_options() -> None:
    assert outcomes("X-Content-Type-Options") == ["xcto.missing"]


# --- Referrer-Policy --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("no-referrer", "referrer.good"),
        ("STRICT-ORIGIN-WHEN-CROSS-ORIGIN", "referrer.good"),
        ("no-referrer, strict-origin-when-cross-origin", "referrer.good"),
        ("strict-origin-when-cross-origin, unsafe-url", "referrer.unsafe_url"),  # the last one wins
        ("unsafe-url, no-such-policy", "referrer.unsafe_url"),  # unknown tokens are skipped
        ("no-referrer, , ", "referrer.good"),  # so are empty list elements (RFC 9110 §5.6.1)
        # ...but a token that is not letters and hyphens makes Chromium ignore the header (Referrer Policy §8.1)
        ("unsafe-url, foo_bar", "referrer.invalid"),
        ("unsafe-url, no-referrer;", "referrer.invalid"),
        ('"no-referrer"', "referrer.invalid"),
        ("origin", "referrer.origin_on_downgrade"),
        ("no-referrer-when-downgrade", "referrer.full_url_cross_origin"),
        ("never", "referrer.invalid"),  # a legacy <meta> keyword, not valid in the header
        ("", "referrer.invalid"),
    ],
)
def test_referrer_policy_values(value: str, expected: str) -> None:
    assert outcomes("Referrer-Policy", [("Referrer-Policy", value)]) == [expected]


def test_every_referrer_policy_has_a_grade() -> None:
    assert set(_REFERRER_OUTCOMES) == set(REFERRER_POLICIES)


def test_the_last_recognised_referrer_policy_is_named_in_the_note() -> None:
    headers = [("Referrer-Policy", "no-referrer, strict-origin-when-cross-origin")]

    assert "browsers use the last value they recognise: strict-origin-when-cross-origin" in note(
        "Referrer-Policy", headers
    )


def test_a_malformed_referrer_policy_header_is_ignored_and_the_note_says_why() -> None:
    headers = [("Referrer-Policy", "unsafe-url, foo_bar")]

    assert note("Referrer-Policy", headers) == (
        "foo_bar is not a referrer policy token (letters and hyphens only), so Chromium ignores the whole header "
        "and uses its default, strict-origin-when-cross-origin"
    )


def test_a_meta_referrer_counts_without_a_header() -> None:
    body = '<html><head><meta name="referrer" content="no-referrer"></head></html>'

    assert outcomes("Referrer-Policy", body=body) == ["referrer.good"]


def test_a_meta_referrer_overrides_the_header() -> None:
    # Given a safe header but a legacy "always" (unsafe-url) meta tag
    body = '<html><head><meta name="referrer" content="always"></head></html>'
    headers = [("Referrer-Policy", "no-referrer")]

    assert outcomes("Referrer-Policy", headers, body=body) == ["referrer.unsafe_url"]
    assert "overrides the header" in note("Referrer-Policy", headers, body=body)


def test_an_invalid_meta_referrer_is_ignored() -> None:
    body = '<html><head><meta name="referrer" content="sometimes"></head></html>'

    assert outcomes("Referrer-Policy", [("Referrer-Policy", "same-origin")], body=body) == ["referrer.good"]


@pytest.mark.parametrize("content", [" no-referrer", "no-referrer\n", "\tnever"])
def test_a_meta_referrer_whose_content_has_spaces_around_it_is_ignored(content: str) -> None:
    # HTML only ASCII-lowercases the content; Chromium keeps the header's unsafe-url past such a <meta>
    body = f'<html><head><meta name="referrer" content="{content}"></head></html>'
    headers = [("Referrer-Policy", "unsafe-url")]

    assert outcomes("Referrer-Policy", headers, body=body) == ["referrer.unsafe_url"]
    assert note("Referrer-Policy", headers, body=body) == (
        f'the policy in force is unsafe-url; <meta name="referrer" content={content!r}> is not a referrer policy '
        "and is ignored (spaces around the value count)"
    )


def test_a_meta_referrer_whose_name_has_spaces_around_it_is_ignored() -> None:
    # Chromium sends the full URL past <meta name=" referrer" content="no-referrer"> under an unsafe-url header
    body = '<html><head><meta name=" referrer" content="no-referrer"></head></html>'
    headers = [("Referrer-Policy", "unsafe-url")]

    assert outcomes("Referrer-Policy", headers, body=body) == ["referrer.unsafe_url"]
    assert "<meta name=' referrer'> is ignored by browsers: spaces around the name count" in note(
        "Referrer-Policy", headers, body=body
    )


@pytest.mark.parametrize("wrapper", ["noscript", "template"])
def test_a_meta_referrer_inside_noscript_or_template_is_ignored(wrapper: str) -> None:
    # Chromium sends the full URL as Referer past such a <meta>: only the header counts
    unsafe_header = [("Referrer-Policy", "unsafe-url")]
    safe_meta = f'<html><head><{wrapper}><meta name="referrer" content="no-referrer"></{wrapper}></head></html>'
    unsafe_meta = f'<html><head><{wrapper}><meta name="referrer" content="unsafe-url"></{wrapper}></head></html>'

    assert outcomes("Referrer-Policy", unsafe_header, body=safe_meta) == ["referrer.unsafe_url"]
    assert outcomes("Referrer-Policy", [("Referrer-Policy", "no-referrer")], body=unsafe_meta) == ["referrer.good"]


def test_thousands_of_meta_referrers_are_noted_up_to_a_bound_and_the_policy_in_force_is_named() -> None:
    # Given 5,000 <meta name="referrer"> that are no policy, then one that sets unsafe-url (the last one counts)
    metas = "".join(f'<meta name="referrer" content="bogus{i}">' for i in range(5_000))
    body = f'<html><head>{metas}<meta name="referrer" content="unsafe-url"></head></html>'
    headers = [("Referrer-Policy", "no-referrer")]

    # When the headers are checked
    [finding] = findings(make_snapshot(headers=headers, body=body), "Referrer-Policy")

    # Then the outcome is the last <meta>'s, named first since the note that sets it is not listed, then 50 notes
    # and how many more there were: a note per <meta> made 10,000 of them a 486 KB section
    assert finding.outcome == "referrer.unsafe_url"
    notes = list(finding.notes)
    assert notes[0] == "the policy in force is unsafe-url"
    assert notes[1] == "<meta name=\"referrer\" content='bogus0'> is not a referrer policy and is ignored"
    assert len(notes) == 51 and notes[-1] == "and 4,952 more notes like these, not listed"


def test_a_meta_referrer_of_two_megabytes_is_quoted_cut() -> None:
    # Given a <meta name="referrer"> whose content is 2 MB
    body = '<html><head><meta name="referrer" content="' + "x" * 2_000_000 + '"></head></html>'

    # When the headers are checked
    note_text = note("Referrer-Policy", [("Referrer-Policy", "no-referrer")], body=body)

    # Then the note quotes its first 2,048 characters (quotes included) and says how many more there were (it
    # quoted all 2 MB)
    assert note_text == (
        f'<meta name="referrer" content=\'{"x" * 2047} … (1,997,954 more characters not shown)> is not a referrer '
        "policy and is ignored"
    )


def test_a_meta_policy_of_thousands_of_mistakes_is_noted_up_to_a_bound() -> None:
    # Given a <meta> policy naming 10,000 nonces without their quotes (host names to browsers), each a warning
    sources = " ".join(f"nonce-{i}" for i in range(10_000))
    body = f"""<html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self' {sources}"></head>"""

    # When the headers are checked
    first = findings(make_snapshot(body=body), "Content-Security-Policy")[0]

    # Then its note lists 50 of them and says how many more there were (all 10,000 made 1 MB)
    notes = list(first.notes)
    assert "script-src has nonce-0 without single quotes, so browsers read it as a host name" in notes
    assert len(notes) <= 52 and re.fullmatch(r"and 9,95\d more notes like these, not listed", notes[-1])


def test_missing_referrer_policy() -> None:
    assert outcomes("Referrer-Policy") == ["referrer.missing"]


# --- Permissions-Policy -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("camera=(), microphone=(), geolocation=()", "permissions.good"),
        ('geolocation=(self "https://maps.example"), fullscreen=*', "permissions.good"),
        ("interest-cohort=()", "permissions.good"),
        ("camera=(), fullscreen=*", "permissions.good"),
        # Chromium drops a feature it does not know, and `*` allows every origin: nothing is restricted
        ("camra=()", "permissions.empty"),
        ("camera=*, microphone=*", "permissions.empty"),
        ("camera=(*)", "permissions.empty"),
        ("geolocation 'none'; camera 'none'", "permissions.invalid"),  # Feature-Policy syntax
        ("camera=(", "permissions.invalid"),
        ("Camera=()", "permissions.invalid"),  # keys are lowercase
        ("camera=(),", "permissions.invalid"),
        ("", "permissions.empty"),
    ],
)
def test_permissions_policy_values(value: str, expected: str) -> None:
    assert outcomes("Permissions-Policy", [("Permissions-Policy", value)]) == [expected]


def test_permissions_policy_split_over_two_headers_is_one_dictionary() -> None:
    headers = [("Permissions-Policy", "camera=()"), ("Permissions-Policy", "microphone=(), fullscreen=*")]

    assert outcomes("Permissions-Policy", headers) == ["permissions.good"]
    assert "2 of 3 features restricted" in note("Permissions-Policy", headers)


def test_only_recognised_features_count_and_a_likely_typo_is_named() -> None:
    headers = [("Permissions-Policy", "camra=(), geolocaton=(), usb=(), fullscreen=*, frobnicate=()")]

    assert outcomes("Permissions-Policy", headers) == ["permissions.good"]
    assert note("Permissions-Policy", headers) == (
        "1 of 2 features restricted; features browsers do not know are ignored: camra (did you mean camera?), "
        "geolocaton (did you mean geolocation?), frobnicate"
    )


def test_the_feature_list_is_chromiums_names_without_its_comments() -> None:
    features = permissions_policy_features()

    assert {"camera", "microphone", "geolocation", "interest-cohort", "web-share"} <= features
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", name) for name in features)


def test_a_policy_allowing_every_feature_it_names_everywhere_restricts_nothing() -> None:
    headers = [("Permissions-Policy", "camera=*, microphone=(*)")]

    assert note("Permissions-Policy", headers) == (
        "no feature browsers know is restricted; camera, microphone are allowed to every origin (*)"
    )


def test_feature_policy_syntax_in_permissions_policy_is_explained() -> None:
    headers = [("Permissions-Policy", "geolocation 'none'")]

    assert "old Feature-Policy syntax" in note("Permissions-Policy", headers)


def test_feature_policy_alone_is_weak_and_the_fix_translates_it() -> None:
    # Given only the old header
    headers = [("Feature-Policy", "camera 'none'; geolocation 'self' https://maps.example; fullscreen *")]

    # Then it is weak and the fix is the same policy in the new syntax
    obj = header_objects(make_snapshot(headers=headers))["Permissions-Policy"]
    assert obj["status"] == "weak" and obj["deduction"] == 2
    assert obj["fix"] == 'Permissions-Policy: camera=(), geolocation=(self "https://maps.example"), fullscreen=*'


@pytest.mark.parametrize(
    ("feature_policy", "fix"),
    [
        ("3d 'none'; camera 'none'", "camera=()"),  # a name no feature has is left out
        ("caméra 'none'; microphone 'none'", "microphone=()"),
        ('camera https://a\\b https://x"y', 'camera=("https://a\\\\b" "https://x\\"y")'),  # sf-string escapes
        ("camera 'self' https://ä.example https://x.example/\x7f", "camera=(self)"),  # not sf-string characters
    ],
)
def test_the_translated_feature_policy_always_parses(feature_policy: str, fix: str) -> None:
    [finding] = findings(make_snapshot(headers=[("Feature-Policy", feature_policy)]), "Permissions-Policy")

    assert finding.fix_vars["permissions_policy"] == fix
    parse_dictionary(fix)


def test_missing_permissions_policy() -> None:
    assert outcomes("Permissions-Policy") == ["permissions.missing"]


# --- CSP fallbacks and malformed sources in the report ---------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        # object-src falls back to default-src (CSP3 §6.8, "Get fetch directive fallback list"),
        # so the common baseline restricts plugins
        "default-src 'self'; base-uri 'self'",
        "default-src 'self' https://cdn.example.com; base-uri 'none'; frame-ancestors 'none'",
        "DEFAULT-SRC 'SELF'; BASE-URI 'SELF'",
    ],
)
def test_default_src_self_is_judged_like_the_same_sources_written_out(value: str) -> None:
    written_out = (
        "script-src 'self'; object-src 'self'; style-src 'self'; base-uri 'self'"
        if "cdn" not in value
        else "script-src 'self' https://cdn.example.com; object-src 'self' https://cdn.example.com; base-uri 'none'"
    )
    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", value)]) == ["csp.good"]
    assert outcomes("Content-Security-Policy", [("Content-Security-Policy", written_out)]) == ["csp.good"]


def test_a_broad_default_src_leaves_plugins_open_and_the_note_says_it_is_the_fallback() -> None:
    headers = [("Content-Security-Policy", "default-src https:; script-src 'self'; base-uri 'self'")]

    assert outcomes("Content-Security-Policy", headers) == ["csp.no_object_src"]
    assert "object-src falls back to default-src https:" in note("Content-Security-Policy", headers)


def test_the_object_src_explanation_matches_what_the_check_accepts() -> None:
    # The check accepts object-src 'self' (and default-src 'self' in its place): the explanation must not
    # tell users only 'none' will do.
    explanation = default_rulebook().rule("csp.no_object_src").explanation

    assert "default-src" in explanation
    assert "to 'none'" not in explanation


def test_malformed_sources_in_an_otherwise_good_policy_are_named_in_the_note() -> None:
    # Given a strict policy whose nonce and one keyword do not parse (browsers ignore both)
    value = (
        "script-src 'nonce-abc$' 'sha256-!!' 'strict-dynamic' 'unsafe-everything' 'self'; "
        "object-src 'none'; base-uri 'none'"
    )
    obj = header_objects(make_snapshot(headers=[("Content-Security-Policy", value)]))["Content-Security-Policy"]

    # Then the header says so instead of dropping them silently
    for source in ("'nonce-abc$'", "'sha256-!!'", "'unsafe-everything'"):
        assert source in (obj["note"] or ""), obj["note"]
    assert "ignore" in obj["note"]


# --- Every weak or warn header carries a note (spec 2.3) --------------------------------------------

_UNTRUSTED_TLS = TlsHandshake(host="example.com", port=443, trusted=False, verify_error="self-signed certificate")
_STRICT_CSP = "script-src 'self'; object-src 'none'; base-uri 'none'"
# One snapshot per weak/warn outcome of rules/headers.toml that yields it and nothing else for its header.
WEAK_OR_WARN_EXAMPLES: dict[str, list[dict[str, Any]]] = {
    "csp.invalid": [{"headers": [("Content-Security-Policy", "")]}, {"headers": [("Content-Security-Policy", ",")]}],
    "csp.no_script_restriction": [{"headers": [("Content-Security-Policy", "sandbox allow-scripts; base-uri 'none'")]}],
    "csp.broad_script_source": [
        {"headers": [("Content-Security-Policy", "script-src *; object-src 'none'; base-uri 'none'")]}
    ],
    "csp.insecure_source": [
        {"headers": [("Content-Security-Policy", "script-src http://cdn.example; object-src 'none'; base-uri 'none'")]}
    ],
    "csp.unsafe_inline_script": [
        {"headers": [("Content-Security-Policy", _STRICT_CSP + "; script-src-attr 'unsafe-inline'")]}
    ],
    "csp.unsafe_eval": [
        {"headers": [("Content-Security-Policy", "script-src-elem 'self'; object-src 'none'; base-uri 'none'")]}
    ],
    "csp.no_object_src": [
        {"headers": [("Content-Security-Policy", "script-src 'self'; base-uri 'none'")]},
        {
            "headers": [
                ("Content-Security-Policy", "default-src *; script-src 'self'; style-src 'self'; base-uri 'none'")
            ]
        },
    ],
    "csp.no_base_uri": [
        # a page with a <base> element and a policy without base-uri
        {
            "headers": [("Content-Security-Policy", "default-src 'self'")],
            "body": '<html><head><base href="/app/"></head><body></body></html>',
        },
        {"headers": [("Content-Security-Policy", "script-src 'self'; object-src 'none'; base-uri *")]},
    ],
    "csp.bypassable_script_host": [
        # a host serving JSONP endpoints (www.google.com) allowed whole
        {
            "headers": [
                (
                    "Content-Security-Policy",
                    "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'",
                )
            ]
        }
    ],
    "csp.unsafe_inline_style": [
        {"headers": [("Content-Security-Policy", _STRICT_CSP + "; style-src 'unsafe-inline'")]}
    ],
    "hsts.invalid": [{"headers": [("Strict-Transport-Security", "max-age=abc")]}],
    "hsts.ignored_tls_error": [
        {"headers": [("Strict-Transport-Security", "max-age=63072000; includeSubDomains")], "tls": _UNTRUSTED_TLS}
    ],
    "hsts.short_max_age": [{"headers": [("Strict-Transport-Security", "max-age=600; includeSubDomains")]}],
    "hsts.under_one_year": [{"headers": [("Strict-Transport-Security", "max-age=20000000; includeSubDomains")]}],
    "hsts.no_include_subdomains": [{"headers": [("Strict-Transport-Security", "max-age=63072000")]}],
    "xfo.allow_from": [{"headers": [("X-Frame-Options", "ALLOW-FROM https://a.example")]}],
    "xfo.invalid": [{"headers": [("X-Frame-Options", "")]}, {"headers": [("X-Frame-Options", "yes")]}],
    "xfo.frame_ancestors_permissive": [{"headers": [("Content-Security-Policy", "frame-ancestors *")]}],
    "xcto.invalid": [{"headers": [("X-Content-Type-Options", "")]}, {"headers": [("X-Content-Type-Options", "sniff")]}],
    "referrer.invalid": [
        {"headers": [("Referrer-Policy", "")]},
        {"headers": [("Referrer-Policy", "nope")]},
        {"headers": [("Referrer-Policy", ",")]},
        {"headers": [("Referrer-Policy", "no-referrer, x.y")]},
    ],
    "referrer.full_url_cross_origin": [{"headers": [("Referrer-Policy", "no-referrer-when-downgrade")]}],
    "referrer.origin_on_downgrade": [
        {"headers": [("Referrer-Policy", "origin")]},
        {"headers": [("Referrer-Policy", "Origin-When-Cross-Origin")]},
    ],
    "permissions.invalid": [{"headers": [("Permissions-Policy", "geolocation 'none'")]}],
    "permissions.empty": [
        {"headers": [("Permissions-Policy", "")]},
        {"headers": [("Permissions-Policy", " ")]},
        {"headers": [("Permissions-Policy", "camra=()")]},
        {"headers": [("Permissions-Policy", "camera=*")]},
    ],
    "permissions.feature_policy_only": [{"headers": [("Feature-Policy", "camera 'none'")]}],
    "xxp.enabled": [{"headers": [("X-XSS-Protection", "1; mode=block")]}, {"headers": [("X-XSS-Protection", "")]}],
}


def _weak_or_warn_rules() -> dict[str, str]:
    book = default_rulebook()
    return {
        r.outcome: r.subject
        for r in book.rules.values()
        if r.section == "headers" and r.subject and r.status in ("weak", "warn")
    }


def test_every_weak_or_warn_header_rule_has_an_example() -> None:
    # A new weak/warn row must come with an example here, so the note rule below covers it too
    assert set(WEAK_OR_WARN_EXAMPLES) == set(_weak_or_warn_rules())


@pytest.mark.parametrize(
    ("outcome", "example"),
    [(outcome, example) for outcome, examples in WEAK_OR_WARN_EXAMPLES.items() for example in examples],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_weak_or_warn_header_says_why_in_its_note(outcome: str, example: dict[str, Any]) -> None:
    # Spec 2.3: `note` is "present when status is weak or warn"
    subject = _weak_or_warn_rules()[outcome]
    snapshot = make_snapshot(**example)

    # When the example is checked, the outcome is the one reported for its header...
    found = findings(snapshot, subject)
    assert outcome in [f.outcome for f in found]
    # ...the finding itself says why (not only a neighbour merged into the same header)...
    [finding] = [f for f in found if f.outcome == outcome]
    assert finding.notes, (outcome, example)
    # ...and the graded header object carries a note
    obj = header_objects(snapshot)[subject]
    assert obj["status"] in ("weak", "warn") and obj["note"], obj


_CSP_WORDS = st.sampled_from(
    [
        "default-src", "script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem",
        "style-src-attr", "object-src", "base-uri", "frame-ancestors", "sandbox", "worker-src", "child-src",
        "form-action", "upgrade-insecure-requests", "Default-Src", "scirpt-src", "report-uri",
    ]
)  # fmt: skip
_CSP_SOURCES = st.sampled_from(
    [
        "'self'", "'none'", "*", "https:", "http:", "data:", "'unsafe-inline'", "'unsafe-eval'", "'strict-dynamic'",
        "'nonce-abc'", "'nonce-abc$'", "'bogus'", "http://cdn.example", "cdn.example", "'sha256-!!'",
        "allow-scripts", "'wasm-unsafe-eval'", "self", "script-src",
    ]
)  # fmt: skip
_CSP_VALUES = st.lists(
    st.tuples(_CSP_WORDS, st.lists(_CSP_SOURCES, max_size=4)).map(lambda d: " ".join([d[0], *d[1]])), max_size=6
).map("; ".join) | st.text(alphabet=" ;,'*:abcdefnos-", max_size=40)


def _pick(*values: str) -> st.SearchStrategy[str]:
    return st.sampled_from(values) | st.text(alphabet=" ,;=\"'()*abcdefghilmnorstuwx-0123456789", max_size=30)


_HEADER_VALUES = {
    "Content-Security-Policy": _CSP_VALUES,
    "Content-Security-Policy-Report-Only": _CSP_VALUES,
    "Strict-Transport-Security": _pick(
        "max-age=63072000; includeSubDomains", "max-age=600", "max-age=20000000", "max-age=0", "max-age=x", "preload"
    ),
    "X-Frame-Options": _pick("DENY", "SAMEORIGIN", "ALLOW-FROM https://a.example", "deny, sameorigin", "allowall"),
    "X-Content-Type-Options": _pick("nosniff", "nosniff, nosniff", "sniff"),
    "Referrer-Policy": st.lists(
        st.sampled_from(["no-referrer", "origin", "unsafe-url", "no-referrer-when-downgrade", "x", ""]), max_size=3
    ).map(", ".join),
    "Permissions-Policy": _pick("camera=()", "geolocation=*", "geolocation 'none'", ""),
    "Feature-Policy": _pick("camera 'none'"),
}
_BODIES = st.sampled_from(
    [
        "",
        '<html><head><base href="/x/"></head></html>',
        '<html><head><meta http-equiv="Content-Security-Policy" content="default-src \'self\'"></head></html>',
        '<html><body><meta http-equiv="Content-Security-Policy" content="default-src \'none\'"></body></html>',
        '<html><head><meta name="referrer" content="origin"></head></html>',
        '<html><head><meta name="referrer" content="bogus"></head></html>',
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    headers=st.lists(
        st.sampled_from(sorted(_HEADER_VALUES)).flatmap(lambda n: _HEADER_VALUES[n].map(lambda v: (n, v))), max_size=8
    ),
    body=_BODIES,
    https=st.booleans(),
    trusted=st.booleans(),
)
def test_no_combination_of_headers_yields_a_weak_or_warn_header_without_a_note(
    headers: list[tuple[str, str]], body: str, https: bool, trusted: bool
) -> None:
    tls = TlsHandshake(host="example.com", port=443, trusted=trusted, hostname_matches=True)
    snapshot = make_snapshot(
        "https://example.com/" if https else "http://example.com/", headers=headers, body=body, tls=tls
    )
    book = default_rulebook()

    for finding in check_headers(snapshot).findings:
        if book.rule(finding.outcome).status in ("weak", "warn"):
            assert finding.notes, (finding.outcome, headers, body)
    for name, obj in header_objects(snapshot).items():
        if obj["status"] in ("weak", "warn"):
            assert obj["note"], (name, headers, body)


# --- Purity ----------------------------------------------------------------------------------------


def test_the_check_is_a_pure_function_of_the_snapshot() -> None:
    snapshot = make_snapshot(headers=BEST_PRACTICE, body='<meta name="referrer" content="origin">')

    first: CheckResult = check_headers(snapshot)

    assert check_headers(snapshot) == first


def test_a_one_day_hsts_max_age_is_named_in_the_singular() -> None:
    result = check_headers(make_snapshot(headers=[("Strict-Transport-Security", "max-age=86400; includeSubDomains")]))
    [short] = [f for f in result.findings if f.outcome == "hsts.short_max_age"]
    assert "(1 day)" in (short.note or "")


# --- X-XSS-Protection (MDN; OWASP Secure Headers Project: "X-XSS-Protection: 0") ---------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ["xxp.good"]),  # no header: current browsers have no filter, old ones would use their default
        ("0", ["xxp.good"]),  # the recommended value: the filter off
        (" 0 ", ["xxp.good"]),
        ("1", ["xxp.enabled"]),
        ("1; mode=block", ["xxp.enabled"]),  # the once-common advice, now discouraged
        ("1; report=https://r.example/xss", ["xxp.enabled"]),
    ],
)
def test_only_0_or_no_header_leaves_the_legacy_xss_filter_off(value: str | None, expected: list[str]) -> None:
    headers = [] if value is None else [("X-XSS-Protection", value)]
    assert outcomes("X-XSS-Protection", headers) == expected


def test_the_filter_switched_on_costs_a_point_with_its_fix_and_a_note() -> None:
    snapshot = make_snapshot(headers=[("X-XSS-Protection", "1; mode=block")])
    header = grade_snapshot(snapshot).sections["headers"]["X-XSS-Protection"]
    assert (header["present"], header["status"], header["deduction"]) == (True, "warn", 1)
    assert header["fix"] == "X-XSS-Protection: 0"
    assert "'1; mode=block'" in header["note"]
