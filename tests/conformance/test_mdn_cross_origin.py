# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the MDN Observatory's cross-origin isolation tests (docs/conformance.md):
test/cross-origin-opener-policy.test.js, test/cross-origin-embedder-policy.test.js and
test/cross-origin-resource-policy.test.js, which httpobs 0.9.3 did not have.

Each test sets the header on the final response of https://mozilla.org/ (a list of values: that many header
lines); websec grades it in the cross_origin section.
"""

from __future__ import annotations

import pytest

from tests.conformance._mdn_observatory import URL, assert_conforms
from tests.conformance._observatory import Case, params
from tests.factories import make_snapshot
from websec_app.scanner.checks.cross_origin import COEP, COOP, CORP, check_cross_origin

COOP_TEST = "cross-origin-opener-policy.test.js"
COEP_TEST = "cross-origin-embedder-policy.test.js"
CORP_TEST = "cross-origin-resource-policy.test.js"

COOP_CASES = [
    Case(
        f"{COOP_TEST}: checks for missing", "#0 nothing sent", "coop-not-implemented", {"values": []}, ("coop.missing",)
    ),
    Case(
        f"{COOP_TEST}: checks header validity",
        "#0 'whimsy'",
        "coop-header-invalid",
        {"values": ["whimsy"]},
        ("coop.invalid",),
    ),
    Case(
        f"{COOP_TEST}: checks for same-origin",
        "#0 'same-origin'",
        "coop-implemented-with-same-origin",
        {"values": ["same-origin"]},
        ("coop.good",),
    ),
    Case(
        f"{COOP_TEST}: checks for same-origin-allow-popups",
        "#0 'same-origin-allow-popups'",
        "coop-implemented-with-same-origin-allow-popups",
        {"values": ["same-origin-allow-popups"]},
        ("coop.allow_popups",),
    ),
    Case(
        f"{COOP_TEST}: checks for noopener-allow-popups",
        "#0 'noopener-allow-popups'",
        "coop-implemented-with-noopener-allow-popups",
        {"values": ["noopener-allow-popups"]},
        ("coop.allow_popups",),
    ),
    Case(
        f"{COOP_TEST}: checks for unsafe-none",
        "#0 'unsafe-none'",
        "coop-implemented-with-unsafe-none",
        {"values": ["unsafe-none"]},
        ("coop.unsafe_none",),
    ),
    Case(
        f"{COOP_TEST}: checks for same-origin with report-to directive",
        "#0 'same-origin; report-to=\"coop-endpoint\"'",
        "coop-implemented-with-same-origin",
        {"values": ['same-origin; report-to="coop-endpoint"']},
        ("coop.good",),
    ),
    Case(
        f"{COOP_TEST}: checks for same-origin-allow-popups with report-to directive",
        "#0 'same-origin-allow-popups; report-to=\"coop-endpoint\"'",
        "coop-implemented-with-same-origin-allow-popups",
        {"values": ['same-origin-allow-popups; report-to="coop-endpoint"']},
        ("coop.allow_popups",),
    ),
    Case(
        f"{COOP_TEST}: checks for same-origin with a value-less report-to parameter",
        "#0 'same-origin; report-to'",
        "coop-implemented-with-same-origin",
        {"values": ["same-origin; report-to"]},
        ("coop.good",),
    ),
    Case(
        f"{COOP_TEST}: checks for a malformed structured field",
        "#0 'same-origin; report-to=coop endpoint'",
        "coop-header-invalid",
        {"values": ["same-origin; report-to=coop endpoint"]},
        ("coop.invalid",),
    ),
    Case(
        f"{COOP_TEST}: checks that a quoted string is not a valid token",
        "#0 '\"same-origin\"'",
        "coop-header-invalid",
        {"values": ['"same-origin"']},
        ("coop.invalid",),
    ),
    Case(
        f"{COOP_TEST}: checks for multiple headers",
        "#0 'same-origin' + 'unsafe-none'",
        "coop-header-invalid",
        {"values": ["same-origin", "unsafe-none"]},
        ("coop.invalid",),
    ),
]

COEP_CASES = [
    Case(
        f"{COEP_TEST}: checks for missing", "#0 nothing sent", "coep-not-implemented", {"values": []}, ("coep.missing",)
    ),
    Case(
        f"{COEP_TEST}: checks header validity",
        "#0 'whimsy'",
        "coep-header-invalid",
        {"values": ["whimsy"]},
        ("coep.invalid",),
    ),
    Case(
        f"{COEP_TEST}: checks for require-corp",
        "#0 'require-corp'",
        "coep-implemented-with-require-corp",
        {"values": ["require-corp"]},
        ("coep.good",),
    ),
    Case(
        f"{COEP_TEST}: checks for credentialless",
        "#0 'credentialless'",
        "coep-implemented-with-credentialless",
        {"values": ["credentialless"]},
        ("coep.good",),
    ),
    Case(
        f"{COEP_TEST}: checks for unsafe-none",
        "#0 'unsafe-none'",
        "coep-implemented-with-unsafe-none",
        {"values": ["unsafe-none"]},
        ("coep.unsafe_none",),
    ),
    Case(
        f"{COEP_TEST}: checks for require-corp with report-to directive",
        "#0 'require-corp; report-to=\"coep-endpoint\"'",
        "coep-implemented-with-require-corp",
        {"values": ['require-corp; report-to="coep-endpoint"']},
        ("coep.good",),
    ),
    Case(
        f"{COEP_TEST}: checks for credentialless with report-to directive",
        "#0 'credentialless; report-to=\"coep-endpoint\"'",
        "coep-implemented-with-credentialless",
        {"values": ['credentialless; report-to="coep-endpoint"']},
        ("coep.good",),
    ),
    Case(
        f"{COEP_TEST}: checks for require-corp with a value-less report-to parameter",
        "#0 'require-corp; report-to'",
        "coep-implemented-with-require-corp",
        {"values": ["require-corp; report-to"]},
        ("coep.good",),
    ),
    Case(
        f"{COEP_TEST}: checks for a malformed structured field",
        "#0 'require-corp; report-to=coep endpoint'",
        "coep-header-invalid",
        {"values": ["require-corp; report-to=coep endpoint"]},
        ("coep.invalid",),
    ),
    Case(
        f"{COEP_TEST}: checks that a quoted string is not a valid token",
        "#0 '\"require-corp\"'",
        "coep-header-invalid",
        {"values": ['"require-corp"']},
        ("coep.invalid",),
    ),
    Case(
        f"{COEP_TEST}: checks for multiple headers",
        "#0 'require-corp' + 'unsafe-none'",
        "coep-header-invalid",
        {"values": ["require-corp", "unsafe-none"]},
        ("coep.invalid",),
    ),
]

CORP_CASES = [
    Case(
        f"{CORP_TEST}: checks for missing", "#0 nothing sent", "corp-not-implemented", {"values": []}, ("corp.missing",)
    ),
    Case(
        f"{CORP_TEST}: checks header validity",
        "#0 'whimsy'",
        "corp-header-invalid",
        {"values": ["whimsy"]},
        ("corp.invalid",),
    ),
    Case(
        f"{CORP_TEST}: checks for same-site",
        "#0 'same-site'",
        "corp-implemented-with-same-site",
        {"values": ["same-site"]},
        ("corp.good",),
    ),
    Case(
        f"{CORP_TEST}: checks for same-origin",
        "#0 'same-origin'",
        "corp-implemented-with-same-origin",
        {"values": ["same-origin"]},
        ("corp.good",),
    ),
    Case(
        f"{CORP_TEST}: checks for cross-origin",
        "#0 'cross-origin'",
        "corp-implemented-with-cross-origin",
        {"values": ["cross-origin"]},
        ("corp.cross_origin",),
    ),
]

GROUPS = {COOP_TEST: COOP_CASES, COEP_TEST: COEP_CASES, CORP_TEST: CORP_CASES}
SUBJECTS = {COOP_TEST: COOP, COEP_TEST: COEP, CORP_TEST: CORP}


@pytest.mark.parametrize("case", params(COOP_CASES + COEP_CASES + CORP_CASES))
def test_cross_origin(case: Case) -> None:
    subject = SUBJECTS[case.test.split(":")[0]]
    snapshot = make_snapshot(URL, headers=[(subject, value) for value in case.given["values"]])
    assert_conforms(case, [f.outcome for f in check_cross_origin(snapshot).findings if f.subject == subject])
