# Test cases adapted from web-platform-tests (https://github.com/web-platform-tests/wpt, BSD 3-Clause licence:
# tests/conformance/files/wpt.LICENSE).
# ruff: noqa: E501  (case tables: one WPT test and its reason per line)
"""Conformance of the X-Content-Type-Options, X-Frame-Options and cross-origin isolation findings with the header
parsing tests of web-platform-tests (docs/conformance.md), taken as stored from web-platform-tests/wpt:

- fetch/nosniff/resources/x-content-type-options.json (run by parsing-nosniff.window.js): a script served as x/x
  with the input's header lines loads (no nosniff) or not (nosniff);
- x-frame-options/deny.sub.html, sameorigin.sub.html, invalid.sub.html, multiple.sub.html, commas.sub.html: a
  same-origin or cross-origin frame of a page with the test's X-Frame-Options lines (and CSP) loads or not;
- html/cross-origin-opener-policy/header-parsing.https.html: a popup with the test's COOP value keeps its opener
  (no policy) or not (same-origin);
- html/cross-origin-embedder-policy/header-parsing.https.html and reporting-report-to-must-be-string.https.window.js:
  a nested frame under the test's COEP lines is blocked (require-corp) or not;
- fetch/cross-origin-resource-policy/syntax.any.js: a no-cors fetch of a response with the test's CORP value
  succeeds (the header is ignored).

Each test's header lines are served byte for byte by one fixture HTTPS site and scanned (_wpt_headers.py). A test
whose input the ported MDN HTTP Observatory or httpobs suites already send is not repeated (docs/conformance.md).
"""

from __future__ import annotations

import pytest

from tests.conformance._wpt_headers import Answer, WptCase, answer_all, assert_conforms, params
from tests.fixtures.sites import SiteFactory
from websec_app.scanner.checks.cross_origin import COEP, COOP, CORP
from websec_app.scanner.checks.headers import XCTO, XFO
from websec_app.settings import Settings

NOSNIFF_FILE = "x-content-type-options.json"
COOP_FILE = "coop/header-parsing.https.html"
COEP_FILE = "coep/header-parsing.https.html"
COEP_REPORT_TO_FILE = "coep/reporting-report-to-must-be-string.https.window.js"
CORP_FILE = "corp/syntax.any.js"

#: Chromium 156 does not trim a form feed from a header value, so nosniff does not apply (nor does it for websec).
FORM_FEED_KEPT = "a form feed is no HTTP whitespace (RFC 9110 5.6.3), so it stays in the value and nosniff\\f is not nosniff: Chromium 156 runs the x/x script, and websec grades the value invalid (the suite expects nosniff applied)"
#: Chromium 156 and websec read these as the HTML Standard does; the stored test expects otherwise.
XFO_CONFLICT = "HTML X-Frame-Options processing: distinct values with DENY, SAMEORIGIN or ALLOWALL among them refuse every frame, an invalid one included; Chromium 156 refuses the same-origin frame too, as websec's note says (the stored test expects SAMEORIGIN alone to apply)"
TAB_TRIMMED = "a tab around a header value is HTTP whitespace (RFC 9110 5.5), trimmed before the structured field is parsed: Chromium 156 applies same-origin (the stored test expects no policy)"
PARAMETERS = "RFC 8941 allows parameters on the item and HTML reads its token alone: Chromium 156 enforces require-corp (the stored test, written before RFC 8941, expects no policy)"


def line(name: str, value: str) -> bytes:
    return f"{name}: {value}".encode()


def lines(name: str, *values: str) -> tuple[bytes, ...]:
    return tuple(line(name, value) for value in values)


# --- X-Content-Type-Options ----------------------------------------------------------------------------------------


def nosniff(raw_input: str, applies: bool, ours: tuple[str, ...] | None, why: str | None = None) -> WptCase:
    """One entry of x-content-type-options.json: its `input` (header lines joined by CRLF) and `nosniff`."""
    sent = tuple(part.encode() for part in raw_input.split("\r\n"))
    return WptCase(NOSNIFF_FILE, raw_input, XCTO, sent, "nosniff" if applies else "sniffs", ours, why)


GOOD, INVALID, MISSING = ("xcto.good",), ("xcto.invalid",), ("xcto.missing",)
NOSNIFF_CASES = [
    nosniff("X-Content-Type-Options: NOSNIFF", True, GOOD),
    nosniff("x-content-type-OPTIONS: nosniff", True, GOOD),
    nosniff("X-Content-Type-Options: nosniff,,@#$#%%&^&^*()()11!", True, GOOD),
    nosniff("X-Content-Type-Options: @#$#%%&^&^*()()11!,nosniff", False, INVALID),
    nosniff("X-Content-Type-Options: nosniff\r\nX-Content-Type-Options: no", True, GOOD),
    nosniff("X-Content-Type-Options: no\r\nX-Content-Type-Options: nosniff", False, INVALID),
    nosniff("X-Content-Type-Options:\r\nX-Content-Type-Options: nosniff", False, INVALID),
    nosniff("X-Content-Type-Options: ,nosniff", False, INVALID),
    nosniff("X-Content-Type-Options: nosniff\x0c", True, INVALID, FORM_FEED_KEPT),
    nosniff("X-Content-Type-Options: nosniff\x0b", False, INVALID),
    nosniff("X-Content-Type-Options: nosniff\x0b,nosniff", False, INVALID),
    nosniff("X-Content-Type-Options: 'NosniFF'", False, INVALID),
    nosniff('X-Content-Type-Options: "nosniFF"', False, INVALID),
    nosniff("Content-Type-Options: nosniff", False, MISSING),
]

# --- X-Frame-Options ------------------------------------------------------------------------------------------------


def xfo(
    file: str, label: str, sent: tuple[bytes, ...], expected: str, ours: tuple[str, ...], why: str | None = None
) -> WptCase:
    return WptCase(f"x-frame-options/{file}", label, XFO, sent, expected, ours, why)


XFO_GOOD, XFO_INVALID, XFO_ALLOW_FROM = ("xfo.good",), ("xfo.invalid",), ("xfo.allow_from",)
XFO_CASES = [
    xfo("deny.sub.html", "`XFO: denY` blocks same-origin framing.", lines(XFO, "denY"), "blocks-same-origin", XFO_GOOD),
    xfo(
        "deny.sub.html",
        '`XFO: "DENY"` allows same-origin framing.',
        lines(XFO, '"DENY"'),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "deny.sub.html", "`XFO: denY` blocks cross-origin framing.", lines(XFO, "denY"), "blocks-cross-origin", XFO_GOOD
    ),
    xfo(
        "deny.sub.html",
        '`XFO: "DENY"` allows cross-origin framing.',
        lines(XFO, '"DENY"'),
        "allows-cross-origin",
        XFO_INVALID,
    ),
    xfo(
        "deny.sub.html",
        "`XFO: DENY` blocks framing when CSP is present without a frame-ancestors directive.",
        (line(XFO, "DENY"), line("Content-Security-Policy", "default-src 'self'")),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "deny.sub.html",
        "`XFO: DENY` does not blocks framing when CSP is present with a frame-ancestors directive.",
        (line(XFO, "DENY"), line("Content-Security-Policy", "frame-ancestors 'self'")),
        "allows-same-origin",
        ("xfo.csp_frame_ancestors",),
    ),
    xfo(
        "sameorigin.sub.html",
        "`XFO: SAMEORIGIN` allows same-origin framing.",
        lines(XFO, "SAMEORIGIN"),
        "allows-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "sameorigin.sub.html",
        "`XFO: sameOriGin` allows same-origin framing.",
        lines(XFO, "sameOriGin"),
        "allows-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "sameorigin.sub.html",
        '`XFO: "SAMEORIGIN"` allows same-origin framing.',
        lines(XFO, '"SAMEORIGIN"'),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "sameorigin.sub.html",
        "`XFO: SAMEORIGIN` blocks cross-origin framing.",
        lines(XFO, "SAMEORIGIN"),
        "blocks-cross-origin",
        XFO_GOOD,
    ),
    xfo(
        "sameorigin.sub.html",
        "`XFO: sameOriGin` blocks cross-origin framing.",
        lines(XFO, "sameOriGin"),
        "blocks-cross-origin",
        XFO_GOOD,
    ),
    xfo(
        "sameorigin.sub.html",
        '`XFO: "SAMEORIGIN"` allows cross-origin framing.',
        lines(XFO, '"SAMEORIGIN"'),
        "allows-cross-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: INVALID` allows same-origin framing.",
        lines(XFO, "INVALID"),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: INVALID` allows cross-origin framing.",
        lines(XFO, "INVALID"),
        "allows-cross-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOW-FROM` allows same-origin framing.",
        lines(XFO, "ALLOW-FROM https://example.com/"),
        "allows-same-origin",
        XFO_ALLOW_FROM,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOW-FROM` allows cross-origin framing.",
        lines(XFO, "ALLOW-FROM https://example.com/"),
        "allows-cross-origin",
        XFO_ALLOW_FROM,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOW-FROM=` allows same-origin framing.",
        lines(XFO, "ALLOW-FROM=https://example.com/"),
        "allows-same-origin",
        XFO_ALLOW_FROM,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOW-FROM=` allows cross-origin framing.",
        lines(XFO, "ALLOW-FROM=https://example.com/"),
        "allows-cross-origin",
        XFO_ALLOW_FROM,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOWALL` allows same-origin framing.",
        lines(XFO, "ALLOWALL"),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "`XFO: ALLOWALL` allows cross-origin framing.",
        lines(XFO, "ALLOWALL"),
        "allows-cross-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "Empty `XFO:` allows same-origin framing.",
        lines(XFO, ""),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "invalid.sub.html",
        "Empty `XFO:` allows cross-origin framing.",
        lines(XFO, ""),
        "allows-cross-origin",
        XFO_INVALID,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN; XFO: SAMEORIGIN` allows same-origin framing.",
        lines(XFO, "SAMEORIGIN", "SAMEORIGIN"),
        "allows-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: INVALID; XFO: SAMEORIGIN` allows same-origin framing.",
        lines(XFO, "INVALID", "SAMEORIGIN"),
        "allows-same-origin",
        XFO_GOOD,
        XFO_CONFLICT,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN; XFO: INVALID` allows same-origin framing.",
        lines(XFO, "SAMEORIGIN", "INVALID"),
        "allows-same-origin",
        XFO_GOOD,
        XFO_CONFLICT,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN,SAMEORIGIN` allows same-origin framing.",
        lines(XFO, "SAMEORIGIN,SAMEORIGIN"),
        "allows-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: INVALID,SAMEORIGIN` allows same-origin framing.",
        lines(XFO, "INVALID,SAMEORIGIN"),
        "allows-same-origin",
        XFO_GOOD,
        XFO_CONFLICT,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN,INVALID` allows same-origin framing.",
        lines(XFO, "SAMEORIGIN,INVALID"),
        "allows-same-origin",
        XFO_GOOD,
        XFO_CONFLICT,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN; XFO: DENY` blocks same-origin framing.",
        lines(XFO, "SAMEORIGIN", "DENY"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: DENY; XFO: SAMEORIGIN` blocks same-origin framing.",
        lines(XFO, "DENY", "SAMEORIGIN"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN; XFO: SAMEORIGIN` blocks cross-origin framing.",
        lines(XFO, "SAMEORIGIN", "SAMEORIGIN"),
        "blocks-cross-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN,DENY` blocks same-origin framing.",
        lines(XFO, "SAMEORIGIN,DENY"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: DENY,SAMEORIGIN` blocks same-origin framing.",
        lines(XFO, "DENY,SAMEORIGIN"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "multiple.sub.html",
        "`XFO: SAMEORIGIN,SAMEORIGIN` blocks cross-origin framing.",
        lines(XFO, "SAMEORIGIN,SAMEORIGIN"),
        "blocks-cross-origin",
        XFO_GOOD,
    ),
    xfo(
        "commas.sub.html",
        "SAMEORIGIN,DENY blocks same-origin framing",
        lines(XFO, "SAMEORIGIN,DENY"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "commas.sub.html",
        ",SAMEORIGIN,,DENY, blocks same-origin framing",
        lines(XFO, ",SAMEORIGIN,,DENY,"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
    xfo(
        "commas.sub.html",
        'SAMEORIGIN,"DENY" allows same-origin framing',
        lines(XFO, 'SAMEORIGIN,"DENY"'),
        "allows-same-origin",
        XFO_GOOD,
        XFO_CONFLICT,
    ),
    xfo(
        "commas.sub.html",
        '"SAMEORIGIN,DENY" allows same-origin framing',
        lines(XFO, '"SAMEORIGIN,DENY"'),
        "allows-same-origin",
        XFO_INVALID,
    ),
    xfo(
        "commas.sub.html",
        "  SAMEORIGIN,    DENY blocks same-origin framing",
        lines(XFO, "  SAMEORIGIN,    DENY"),
        "blocks-same-origin",
        XFO_GOOD,
    ),
]

# --- Cross-Origin-Opener-Policy --------------------------------------------------------------------------------------


def coop(value: str, recognised: bool, ours: tuple[str, ...] | None, why: str | None = None) -> WptCase:
    """One entry of header-parsing.https.html's table: [SAME_ORIGIN, value, expected opener]."""
    expected = "coop-same-origin" if recognised else "coop-unrecognised"
    return WptCase(COOP_FILE, value, COOP, lines(COOP, value), expected, ours, why)


COOP_GOOD, COOP_INVALID = ("coop.good",), ("coop.invalid",)
COOP_CASES = [
    coop("same\u2014origin", False, COOP_INVALID),
    coop("same-origin;", False, COOP_INVALID),
    coop("\x0bsame-origin\x0b", False, COOP_INVALID),
    coop("\x0csame-origin\x0c", False, COOP_INVALID),
    coop("Same-origin", False, COOP_INVALID),
    coop("same-origin;\tfoo=bar", False, COOP_INVALID),
    coop("same-origin ;foo=bar", False, COOP_INVALID),
    coop("same-origin; foo=bar;", False, COOP_INVALID),
    coop(":c2FtZS1vcmlnaW4=:", False, COOP_INVALID),
    coop("?1", False, COOP_INVALID),
    coop("1", False, COOP_INVALID),
    coop("$same-origin", False, COOP_INVALID),
    coop("same-origin same-origin", False, COOP_INVALID),
    coop("same-origin,same-origin", False, COOP_INVALID),
    coop("*same-origin ", False, COOP_INVALID),
    coop(" same-origin", True, COOP_GOOD),
    coop("same-origin ", True, COOP_GOOD),
    coop("\tsame-origin", False, COOP_GOOD, TAB_TRIMMED),
    coop("same-origin\t", False, COOP_GOOD, TAB_TRIMMED),
    coop("same-origin;same-origin", True, COOP_GOOD),
    coop("same-origin; foo=bar", True, COOP_GOOD),
    WptCase(
        COOP_FILE,
        "repeated COOP header (resources/coop-same-origin-repeated.asis)",
        COOP,
        lines(COOP, "same-origin", "same-origin"),
        "coop-unrecognised",
        COOP_INVALID,
    ),
]

# --- Cross-Origin-Embedder-Policy ------------------------------------------------------------------------------------


def coep(values: list[str], recognised: bool, ours: tuple[str, ...] | None, why: str | None = None) -> WptCase:
    """One test of header-parsing.https.html: its list of values (one COEP line each), navigation blocked or not."""
    expected = "coep-require-corp" if recognised else "coep-unrecognised"
    label = f"navigation {'blocked' if recognised else 'allowed'} for {values!r}"
    return WptCase(COEP_FILE, label, COEP, lines(COEP, *values), expected, ours, why)


def report_to(label: str, enforced: str, report_only: str) -> WptCase:
    """One coepReportToTest: both headers' report-to, and the Reporting-Endpoints naming the two endpoints. Every
    one asserts the cross-origin fetch is blocked: the policy is enforced, whatever its report-to."""
    sent = (
        line(COEP, f"require-corp;report-to={enforced}"),
        line(f"{COEP}-Report-Only", f"require-corp;report-to={report_only}"),
        line("Reporting-Endpoints", 'endpoint="/report?a", report-only-endpoint="/report?b"'),
    )
    return WptCase(COEP_REPORT_TO_FILE, label, COEP, sent, "coep-require-corp", COEP_GOOD)


COEP_GOOD, COEP_INVALID = ("coep.good",), ("coep.invalid",)
COEP_CASES = [
    coep([""], False, COEP_INVALID),
    coep(["jibberish"], False, COEP_INVALID),
    coep(["require\u2014corp"], False, COEP_INVALID),
    coep(["require-corp;"], False, COEP_INVALID),
    coep(["Require-corp"], False, COEP_INVALID),
    coep(["require-corp; foo=bar"], False, COEP_GOOD, PARAMETERS),
    coep(["*cmVxdWlyZS1jb3Jw*"], False, COEP_INVALID),
    coep(["require-corp require-corp"], False, COEP_INVALID),
    coep(["require-corp,require-corp"], False, COEP_INVALID),
    coep(["require-corp;require-corp"], False, COEP_GOOD, PARAMETERS),
    coep(["require-corp", "require-corp"], False, COEP_INVALID),
    coep(["", "require-corp"], False, COEP_INVALID),
    coep(["require-corp", ""], False, COEP_INVALID),
    coep([" \trequire-corp"], True, COEP_GOOD),
    coep(["require-corp\t "], True, COEP_GOOD),
    report_to("Cross-Origin-Embedder-Policy ignores a token report-to", "endpoint", '"report-only-endpoint"'),
    report_to(
        "Cross-Origin-Embedder-Policy-Report-Only ignores a token report-to", '"endpoint"', "report-only-endpoint"
    ),
    report_to(
        "Cross-Origin-Embedder-Policy ignores a byte sequence report-to", ":ZW5kcG9pbnQ=:", '"report-only-endpoint"'
    ),
    report_to(
        "Cross-Origin-Embedder-Policy-Report-Only ignores a byte sequence report-to",
        '"endpoint"',
        ":cmVwb3J0LW9ubHktZW5kcG9pbnQ=:",
    ),
]

# --- Cross-Origin-Resource-Policy ------------------------------------------------------------------------------------

CORP_CASES = [
    WptCase(
        CORP_FILE,
        f"Parsing Cross-Origin-Resource-Policy: {value}",
        CORP,
        lines(CORP, value),
        "corp-ignored",
        ("corp.invalid",),
    )
    for value in (
        "same",
        "same, same-origin",
        "SAME-ORIGIN",
        "Same-Origin",
        "same-origin, <>",
        "same-origin, same-origin",
        "https://www.example.com",
    )
]

#: Tests of the ported files (and files beside them) left out, each with its reason (docs/conformance.md).
NOT_PORTED = {
    "x-frame-options/deny.sub.html: `XFO: DENY` blocks same-origin framing, blocks cross-origin framing": "already ported: httpobs's TestXFrameOptions.test_deny sends the same line",
    "x-frame-options/sameorigin.sub.html: the five `nested` tests": "they test the chain of ancestors a SAMEORIGIN frame is checked against, not how the header is read; websec grades the header against framing by other sites",
    "COOP header-parsing.https.html: the quoted same-origin; COEP header-parsing.https.html: no header, the quoted require-corp, require-corp": "already ported: the MDN Observatory's cross-origin isolation tests send the same lines",
    "COOP header-parsing.https.html: same-origin between two CRs": "a bare CR inside a header line is HTTP framing, not the value: Chromium ends the line there, websec's HTTP client (h11) refuses the response",
    "COEP header-parsing.https.html: require-corp and a NUL": "a NUL in a header line: Chromium refuses the whole response (ERR_INVALID_HTTP_RESPONSE), and so does websec's HTTP client",
    "fetch/nosniff/parsing-nosniff.html and its .asis files": "the older form of parsing-nosniff.window.js: its values (first-empty, first-empty-double, weird-tokens, form-feed, line-tabulation) are entries of x-content-type-options.json, ported above",
    "referrer-policy/generic/multiple-headers.html, -combined, -and-values, -one-invalid, -one-unknown-token": "their Referrer-Policy lines are in .html.headers files, which the stored copy of web-platform-tests does not hold: the pages name no value, and none is ported from memory",
}

GROUPS = {
    "fetch/nosniff": NOSNIFF_CASES,
    "x-frame-options": XFO_CASES,
    "html/cross-origin-opener-policy": COOP_CASES,
    "html/cross-origin-embedder-policy": COEP_CASES,
    "fetch/cross-origin-resource-policy": CORP_CASES,
}
CASES = [case for cases in GROUPS.values() for case in cases]


@pytest.fixture(scope="module")
def answers(site_factory: SiteFactory, scan_settings: Settings) -> dict[WptCase, Answer]:
    return answer_all(site_factory, scan_settings, CASES)


@pytest.mark.parametrize("case", params(CASES))
def test_wpt_headers(case: WptCase, answers: dict[WptCase, Answer]) -> None:
    assert_conforms(case, answers[case])
