# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the MDN Observatory's test/subresource-integrity.test.js (docs/conformance.md): its cases that
are new or changed since httpobs 0.9.3.

Each page is one of the MDN tests' HTML pages (copied to tests/conformance/files/mdn/), served as the final
response for https://mozilla.org/ (https://www.mozilla.org/ where the test makes it the final redirect), with the
test's http:// route as the snapshot's http:// chain; websec grades it in the page_analysis section. The MDN
version reads a script's origin, not its site: another host of the page's site is a foreign origin, and a
protocol-relative URL counts as https:// when the http:// site redirects to HTTPS.
"""

from __future__ import annotations

import pytest

from tests.conformance._mdn_observatory import DEFAULT_ROUTE, URL, assert_conforms, fixture, http_chain
from tests.conformance._observatory import Case, params
from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.page import check_page

SRI_TEST = "subresource-integrity.test.js"
NO_REDIRECT = (("http://mozilla.org/", 200),)  # the tests' "HTTP does NOT redirect to HTTPS"
PROTOCOL_RELATIVE_OVER_HTTP = "URL Standard: //host resolves against the page's scheme, so on this https: page the script loads over HTTPS; the site's http:// page is graded once, by redirect.missing"

SRI_CASES = [
    Case(
        f"{SRI_TEST}: checks for same origin",
        "#1 content_sri_sameorigin_noproto",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin_noproto.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        f"{SRI_TEST}: checks for same origin",
        "#2 content_sri_sameorigin_https",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin_https.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        f"{SRI_TEST}: checks for same origin",
        "#3 content_sri_sameorigin_https, status 404",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin_https.html", "status": 404},
        ("page.no_mixed_content",),
    ),
    Case(
        f"{SRI_TEST}: skips a src that fails to resolve instead of crashing",
        "#0 content_sri_malformed_src",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_malformed_src.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        f"{SRI_TEST}: treats a different subdomain as a distinct origin",
        "#0 content_sri_cross_origin_subdomain",
        "sri-not-implemented-but-external-scripts-loaded-securely",
        {"body": "test_content_sri_cross_origin_subdomain.html"},
        ("page.no_mixed_content",),
        why="SRI guards against a third party's compromise: cdn.mozilla.org is on the page's own site (Public Suffix List), under the same control, so no integrity is asked of it",
    ),
    Case(
        f"{SRI_TEST}: derives the base origin from the final redirect",
        "#0 content_sri_www_subdomain, final URL https://www.mozilla.org/",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_www_subdomain.html", "final": "https://www.mozilla.org/"},
        ("page.no_mixed_content",),
    ),
    Case(
        f"{SRI_TEST}: checks if implemented with external scripts and no protocol",
        "#0 content_sri_impl_external_noproto, http:// redirects to https://",
        "sri-implemented-and-external-scripts-loaded-securely",
        {"body": "test_content_sri_impl_external_noproto.html"},
        ("page.no_mixed_content", "page.sri_ok"),
    ),
    Case(
        f"{SRI_TEST}: checks if implemented with external scripts and no protocol",
        "#1 content_sri_impl_external_noproto, http:// answers 200",
        "sri-implemented-but-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_impl_external_noproto.html", "route": NO_REDIRECT},
        ("page.no_mixed_content", "page.sri_ok"),
        why=PROTOCOL_RELATIVE_OVER_HTTP,
    ),
    Case(
        f"{SRI_TEST}: checks if not implemented with external scripts and no protocol",
        "#0 content_sri_notimpl_external_noproto, http:// redirects to https://",
        "sri-not-implemented-but-external-scripts-loaded-securely",
        {"body": "test_content_sri_notimpl_external_noproto.html"},
        ("page.no_mixed_content", "page.sri_missing_script"),
    ),
    Case(
        f"{SRI_TEST}: checks if not implemented with external scripts and no protocol",
        "#1 content_sri_notimpl_external_noproto, http:// answers 200",
        "sri-not-implemented-and-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_notimpl_external_noproto.html", "route": NO_REDIRECT},
        ("page.no_mixed_content", "page.sri_missing_script"),
        why=PROTOCOL_RELATIVE_OVER_HTTP,
    ),
    Case(
        f"{SRI_TEST}: checks if not implemented with external scripts and no protocol",
        "#2 content_sri_notimpl_external_noproto, nothing on http://",
        "sri-not-implemented-but-external-scripts-loaded-securely",
        {"body": "test_content_sri_notimpl_external_noproto.html", "route": None},
        ("page.no_mixed_content", "page.sri_missing_script"),
    ),
    Case(
        f"{SRI_TEST}: checks if not implemented with external scripts and no protocol",
        "#3 content_sri_notimpl_external_noproto, http:// to http://www, then https://www",
        "sri-not-implemented-but-external-scripts-loaded-securely",
        {
            "body": "test_content_sri_notimpl_external_noproto.html",
            "route": (
                ("http://mozilla.org/", 301),
                ("http://www.mozilla.org/", 301),
                ("https://www.mozilla.org/", 200),
            ),
        },
        ("page.no_mixed_content", "page.sri_missing_script"),
    ),
]

GROUPS = {SRI_TEST: SRI_CASES}


@pytest.mark.parametrize("case", params(SRI_CASES))
def test_subresource_integrity(case: Case) -> None:
    given = case.given
    final = given.get("final", URL)
    redirects = [] if final == URL else [make_response(URL, 301, {"Location": final}, content_type=None)]
    snapshot = make_snapshot(
        final,
        body=fixture(given["body"]),
        status=given.get("status", 200),
        redirects=redirects,
        http_upgrade=http_chain(given.get("route", DEFAULT_ROUTE)),
    )
    assert_conforms(case, [f.outcome for f in check_page(snapshot).findings])
