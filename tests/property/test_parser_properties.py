"""Property-based tests: every parser of untrusted input either parses or says why, never crashes.

Hostile sites send arbitrary bytes; a parser that raises an unexpected exception would turn a
finding into a `check.error` (or worse). These properties run each parser over generated text.
"""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from tests.factories import make_snapshot
from websec_app.scanner.checks.csp import evaluate
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.errors import InvalidTarget
from websec_app.scanner.fetch.guard import refusal_reason
from websec_app.scanner.findings import SEVERITIES, STATUSES
from websec_app.scanner.records.cookies import Malformed, ParsedCookie, parse_set_cookie
from websec_app.scanner.records.csp import parse_header_policies, parse_meta_policies
from websec_app.scanner.records.header_values import parse_hsts, parse_referrer_policy_header
from websec_app.scanner.records.security_txt import parse_security_txt
from websec_app.scanner.records.structured_fields import StructuredFieldError, parse_dictionary
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.target import parse_target

# Header values arrive as latin-1 text (fetch/http.py decodes them so); include the separators parsers split on.
header_text = st.text(
    alphabet=st.sampled_from(list(" \t;,=\"'*:/.-_()<>@?#[]\\0123456789abcdefXYZ") + ["\x00", "é", "ÿ"]),
    max_size=120,
) | st.text(max_size=60)


@given(st.text(max_size=200))
def test_target_parsing_normalises_or_rejects(text: str) -> None:
    try:
        target = parse_target(text)
    except InvalidTarget:
        return
    assert target.scheme in ("http", "https") and target.host and target.path.startswith("/")
    assert parse_target(target.url) == target  # normalisation is idempotent


@given(st.ip_addresses(v=4))
def test_an_ipv4_mapped_address_is_judged_like_the_address_it_embeds(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    assert (refusal_reason(mapped) is None) == (refusal_reason(address) is None)


@given(st.ip_addresses())
def test_only_global_unicast_addresses_are_allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    if refusal_reason(address) is None:
        assert address.is_global and not address.is_multicast


@given(header_text)
def test_csp_parsing_and_evaluation_never_crash(text: str) -> None:
    policies = parse_header_policies([text]) + parse_meta_policies(text)[0]
    evaluate(policies)


@given(header_text)
def test_set_cookie_lines_parse_or_are_reported_malformed(line: str) -> None:
    parsed = parse_set_cookie(line)
    assert isinstance(parsed, ParsedCookie | Malformed)
    if isinstance(parsed, ParsedCookie):
        assert ";" not in parsed.name


@given(header_text)
def test_hsts_and_referrer_policy_parse_without_crashing(text: str) -> None:
    policy = parse_hsts(text)
    if policy.error is None and policy.max_age is not None:
        assert policy.max_age >= 0
    parse_referrer_policy_header(text)


@given(header_text)
def test_structured_fields_parse_or_raise_their_own_error(text: str) -> None:
    try:
        parse_dictionary(text)
    except StructuredFieldError:
        pass


# Feature-Policy directives as sites write them, with the names and origins that once broke the translation.
feature_policy_words = st.sampled_from(
    ["camera", "Geolocation", "3d", "caméra", "a_b", "'self'", "'none'", "'src'", "*", "self",
     "https://maps.example", "https://a\\b", 'https://x"y', "https://ä.example", "https://x/\x7f", "http://[::1]"]
)  # fmt: skip
feature_policy_values = st.lists(
    st.lists(feature_policy_words | header_text, min_size=1, max_size=5).map(" ".join), max_size=5
).map("; ".join)


@given(feature_policy_values | header_text)
def test_the_feature_policy_translation_is_a_permissions_policy_that_parses(value: str) -> None:
    # The fix for a site sending only Feature-Policy is that policy in the new syntax (checks/headers.py)
    [finding] = [
        f
        for f in check_headers(make_snapshot(headers=[("Feature-Policy", value)])).findings
        if f.subject == "Permissions-Policy"
    ]
    assert finding.outcome == "permissions.feature_policy_only"
    parse_dictionary(finding.fix_vars["permissions_policy"])  # raises StructuredFieldError if it does not


@given(st.text(max_size=400) | st.lists(header_text, max_size=12).map("\n".join))
def test_security_txt_parsing_never_crashes(text: str) -> None:
    parse_security_txt(text)


security_header_names = st.sampled_from(
    [
        "Content-Security-Policy",
        "Content-Security-Policy-Report-Only",
        "Strict-Transport-Security",
        "X-Frame-Options",
        "X-Content-Type-Options",
        "Referrer-Policy",
        "Permissions-Policy",
        "Feature-Policy",
        "Set-Cookie",
        "Access-Control-Allow-Origin",
        "Access-Control-Allow-Credentials",
        "Server",
        "X-Powered-By",
        "Cross-Origin-Opener-Policy",
        "Cross-Origin-Embedder-Policy",
        "Cross-Origin-Resource-Policy",
        "Content-Type",
        "Vary",
    ]
)
html_fragments = st.lists(
    st.sampled_from(
        [
            "<script src='http://a.test/x.js'>",
            "<script src='https://cdn.test/x.js' integrity='sha384-xx'>",
            "<link rel=stylesheet href='//c.test/s.css'>",
            "<img srcset='http://i.test/a.png 1x, , 2x'>",
            "<base href='https://evil.test/'>",
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'\">",
            "<meta name=referrer content=unsafe-url>",
            "<form action='http://f.test/'>",
            "<iframe src=javascript:alert(1)>",
            "<",
            "</",
            "&#x0;",
            "\x00",
        ]
    )
    | header_text,
    max_size=15,
).map("".join)


@given(
    headers=st.lists(st.tuples(security_header_names, header_text), max_size=12),
    body=html_fragments | st.binary(max_size=300),
)
def test_any_response_is_graded_without_a_check_error(headers: list[tuple[str, str]], body: str | bytes) -> None:
    # The factory's snapshot has no CORS probes, security.txt or http:// fetch: those sections
    # rightly say "not checked". Every section graded from the response itself must not.
    report = grade_snapshot(make_snapshot(headers=headers, body=body, content_type=None))
    assert 0 <= report.score <= 100 and report.grade in {"A+", "A", "B", "C", "D", "F"}
    for name, section in report.sections.items():
        findings = section.get("findings")
        entries = findings if findings is not None else list(section.values())
        for entry in entries:
            assert entry["status"] in STATUSES and entry["severity"] in SEVERITIES, (name, entry)
            if name not in ("cors", "security_txt", "redirection"):
                assert entry.get("check") != "check.error", (name, entry)
