# Test cases adapted from Mozilla's http-observatory (httpobs 0.9.3, MPL-2.0,
# https://github.com/mozilla/http-observatory); this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the Observatory's test_content.py: Subresource Integrity (docs/conformance.md).

Each page is one of the Observatory's HTML fixtures (copied to tests/conformance/files/), served as the final
response for https://{HOST}/; websec grades it in the page_analysis section (mixed content and SRI together).
TestContribute is not ported: contribute.json is a Mozilla-properties-only convention and websec has no such check.
"""

from __future__ import annotations

import pytest

from tests.conformance._observatory import URL, Case, assert_conforms, fixture, params
from tests.factories import make_snapshot
from websec_app.scanner.checks.page import check_page

SRI_CASES = [
    Case(
        "TestSubResourceIntegrity.test_no_scripts",
        "#0 content_sri_no_scripts",
        "sri-not-implemented-but-no-scripts-loaded",
        {"body": "test_content_sri_no_scripts.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        "TestSubResourceIntegrity.test_not_html",
        "#0 <![..]>",
        "html-not-parsable",
        {"html": "<![..]>"},
        ("page.no_mixed_content",),
        why="HTML parsing never fails (HTML Standard §13.2 error recovery: a bogus comment); browsers render the page",
    ),
    Case(
        "TestSubResourceIntegrity.test_not_html",
        "#1 {             'foo':, application/json",
        "sri-not-implemented-response-not-html",
        {"html": "\n        {\n            'foo': 'bar'\n        }\n        ", "content_type": "application/json"},
        ("page.not_html",),
    ),
    Case(
        "TestSubResourceIntegrity.test_same_origin",
        "#0 content_sri_sameorigin1",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin1.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        "TestSubResourceIntegrity.test_same_origin",
        "#1 content_sri_sameorigin3",
        "sri-not-implemented-and-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_sameorigin3.html"},
        ("page.no_mixed_content",),
        why="URL Standard / RFC 3986 §5.2: //host resolves against the page's https: scheme, and www.mozilla.org is same-site",
    ),
    Case(
        "TestSubResourceIntegrity.test_same_origin",
        "#2 content_sri_sameorigin2",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin2.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        "TestSubResourceIntegrity.test_same_origin",
        "#3 content_sri_sameorigin2, status 404",
        "sri-not-implemented-but-all-scripts-loaded-from-secure-origin",
        {"body": "test_content_sri_sameorigin2.html", "status": 404},
        ("page.no_mixed_content",),
    ),
    Case(
        "TestSubResourceIntegrity.test_implemented_external_scripts_https",
        "#0 content_sri_impl_external_https1",
        "sri-implemented-and-external-scripts-loaded-securely",
        {"body": "test_content_sri_impl_external_https1.html"},
        ("page.no_mixed_content", "page.sri_ok"),
    ),
    Case(
        "TestSubResourceIntegrity.test_implemented_external_scripts_https",
        "#1 content_sri_impl_external_https2",
        "sri-implemented-and-external-scripts-loaded-securely",
        {"body": "test_content_sri_impl_external_https2.html"},
        ("page.no_mixed_content", "page.sri_ok"),
    ),
    Case(
        "TestSubResourceIntegrity.test_implemented_same_origin",
        "#0 content_sri_impl_sameorigin",
        "sri-implemented-and-all-scripts-loaded-securely",
        {"body": "test_content_sri_impl_sameorigin.html"},
        ("page.no_mixed_content",),
    ),
    Case(
        "TestSubResourceIntegrity.test_not_implemented_external_scripts_https",
        "#0 content_sri_notimpl_external_https",
        "sri-not-implemented-but-external-scripts-loaded-securely",
        {"body": "test_content_sri_notimpl_external_https.html"},
        ("page.no_mixed_content", "page.sri_missing_script"),
    ),
    Case(
        "TestSubResourceIntegrity.test_implemented_external_scripts_http",
        "#0 content_sri_impl_external_http",
        "sri-implemented-but-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_impl_external_http.html"},
        ("page.mixed_active", "page.sri_ok"),
    ),
    Case(
        "TestSubResourceIntegrity.test_implemented_external_scripts_noproto",
        "#0 content_sri_impl_external_noproto",
        "sri-implemented-but-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_impl_external_noproto.html"},
        ("page.no_mixed_content", "page.sri_ok"),
        why="URL Standard / RFC 3986 §5.2: //fb.me on an https: page is fetched over HTTPS, so the script loads securely",
    ),
    Case(
        "TestSubResourceIntegrity.test_not_implemented_external_scripts_http",
        "#0 content_sri_notimpl_external_http",
        "sri-not-implemented-and-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_notimpl_external_http.html"},
        ("page.mixed_active", "page.sri_missing_script"),
    ),
    Case(
        "TestSubResourceIntegrity.test_not_implemented_external_scripts_noproto",
        "#0 content_sri_notimpl_external_noproto",
        "sri-not-implemented-and-external-scripts-not-loaded-securely",
        {"body": "test_content_sri_notimpl_external_noproto.html"},
        ("page.no_mixed_content", "page.sri_missing_script"),
        why="URL Standard / RFC 3986 §5.2: //fb.me on an https: page loads over HTTPS; only the missing integrity is reported",
    ),
]

GROUPS = {"TestSubResourceIntegrity": SRI_CASES}


@pytest.mark.parametrize("case", params(SRI_CASES))
def test_subresource_integrity(case: Case) -> None:
    given = case.given
    body = fixture(given["body"]) if "body" in given else given["html"]
    extra = {"content_type": given["content_type"]} if "content_type" in given else {}
    result = check_page(make_snapshot(URL, body=body, status=given.get("status", 200), **extra))
    assert_conforms(case, [f.outcome for f in result.findings])
