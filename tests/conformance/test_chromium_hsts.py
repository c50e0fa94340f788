# Test cases adapted from Chromium's net/http/http_security_headers_unittest.cc: Copyright 2012 The Chromium Authors.
# Use of this source code is governed by a BSD-style license that can be found in the LICENSE file
# (tests/conformance/files/chromium.LICENSE).
# ruff: noqa: E501  (case tables: one Chromium value per line)
"""Conformance of the Strict-Transport-Security findings with Chromium's header parser tests (docs/conformance.md).

Every value `ParseHSTSHeader` is tested with in http_security_headers_unittest.cc (chromium/chromium, main branch
as of 2026), with what it returns: false, or true and the max-age and includeSubDomains it sets (max-age clamped to
kMaxHSTSAgeSecs, one year). Each is answered by a fixture HTTPS site and scanned (tests/conformance/_hsts.py); the
browser is the truth for whether and how a policy applies.
"""

from __future__ import annotations

import pytest

from tests.conformance._hsts import Answer, ChromiumCase, answer_all, assert_chromium_conforms, params
from tests.fixtures.sites import SiteFactory
from websec_app.settings import Settings

INVALID = ("hsts.invalid",)
SHORT, UNDER_A_YEAR, NO_SUBDOMAINS = "hsts.short_max_age", "hsts.under_one_year", "hsts.no_include_subdomains"
ONE_YEAR = 86400 * 365


def rejected(test: str, values: list[str]) -> list[ChromiumCase]:
    return [ChromiumCase(test, f"#{i} {value!r}", value, False, INVALID) for i, value in enumerate(values)]


LEADING_TRAILING_SEMICOLONS = [
    ChromiumCase("LeadingTrailingSemicolons", f"#{i} {value!r}", value, True, (SHORT, NO_SUBDOMAINS), 123)
    for i, value in enumerate(
        [
            "max-age=123",
            ";max-age=123",
            ";;max-age=123",
            ";;;;max-age=123",
            "; ;max-age=123",
            "; ; max-age=123",
            ";max-age=123;",
            ";;max-age=123;;",
            ";;;;max-age=123;;;;",
            "; ;max-age=123; ;",
            "; ; max-age=123; ; ",
            "max-age=123;",
            "max-age=123;;",
            "max-age=123;;;;",
            "max-age=123; ;",
            "max-age=123; ; ",
        ]
    )
]

INVALID_DIRECTIVE_NAMES = rejected(
    "InvalidDirectiveNames",
    [
        "'max-age'=1",
        '"max-age"=1',
        "max-age=1; max-age=2",
        "max-age=1; MaX-AgE=2",
        "max-age=1; includeSubDomains; iNcLUdEsUbDoMaInS",
        'max-age=1; "',
        'max-age=1; "includeSubdomains',
        'max-age=1; in"cludeSubdomains',
        'max-age=1; includeSubdomains"',
        'max-age=1; "includeSubdomains"',
        'max-age=1; includeSubdomains; non"token',
        "max-age=1; includeSubdomains; non@token",
        "max-age=1; includeSubdomains; non,token",
        "max-age=1; =2",
        "max-age=1; =2; unknownDirective",
    ],
)

INVALID_DIRECTIVE_VALUES = rejected(
    "InvalidDirectiveValues",
    [
        "max-age=",
        "max-age=@",
        "max-age=1a;",
        "max-age=1a2;",
        "max-age=1##;",
        'max-age=12";',
        "max-age=-1;",
        "max-age=+1;",
        "max-age='1';",
        "max-age=1abc;",
        "max-age=1 abc;",
        "max-age=1.5;",
        "max-age=1; includeSubDomains=true",
        "max-age=1; includeSubDomains=false",
        'max-age=1; includeSubDomains=""',
        "max-age=1; includeSubDomains=''",
        'max-age=1; includeSubDomains="true"',
        'max-age=1; includeSubDomains="false"',
        'max-age=1; unknownDirective=non"token',
        "max-age=1; unknownDirective=non@token",
        "max-age=1; unknownDirective=non,token",
        "max-age=1; unknownDirective=",
    ],
)

# The out arguments are left as they were: the test checks max_age 0 and includeSubDomains false after all of them.
BOGUS_HEADERS = rejected(
    "BogusHeaders",
    [
        "",
        "    ",
        "abc",
        "  abc",
        "  abc   ",
        "max-age",
        "  max-age",
        "  max-age  ",
        "max-age=",
        "   max-age=",
        "   max-age  =",
        "   max-age=   ",
        "   max-age  =     ",
        "   max-age  =     xy",
        "   max-age  =     3488a923",
        "max-age=3488a923  ",
        "max-ag=3488923",
        "max-aged=3488923",
        "max-age==3488923",
        "amax-age=3488923",
        "max-age=-3488923",
        "max-age=+3488923",
        "max-age=13####",
        "max-age=9223372036854775807#####",
        "max-age=18446744073709551615####",
        "max-age=999999999999999999999999$.&#!",
        "max-age=3488923     e",
        "max-age=3488923     includesubdomain",
        "max-age=3488923includesubdomains",
        "max-age=3488923=includesubdomains",
        "max-age=3488923 includesubdomainx",
        "max-age=3488923 includesubdomain=",
        "max-age=3488923 includesubdomain=true",
        "max-age=3488923 includesubdomainsx",
        "max-age=3488923 includesubdomains x",
        "max-age=34889.23 includesubdomains",
        "max-age=34889 includesubdomains",
        ";;;; ;;;",
        ";;;; includeSubDomains;;;",
        "   includeSubDomains;  ",
        ";",
        "max-age; ;",
    ],
)


def valid(i: int, value: str, max_age: int | None, include_subdomains: bool, ours: tuple[str, ...]) -> ChromiumCase:
    note = "" if max_age is not None else " (the test asserts only that it is accepted)"
    return ChromiumCase("ValidSTSHeaders", f"#{i} {value!r}{note}", value, True, ours, max_age, include_subdomains)


VALID_STS_HEADERS = [
    valid(0, "max-age=243", 243, False, (SHORT, NO_SUBDOMAINS)),
    valid(1, "max-age=3488923;", None, False, (SHORT, NO_SUBDOMAINS)),
    valid(2, "  Max-agE    = 567", 567, False, (SHORT, NO_SUBDOMAINS)),
    valid(3, "  mAx-aGe    = 890      ", 890, False, (SHORT, NO_SUBDOMAINS)),
    valid(4, "max-age=123;incLudesUbdOmains", 123, True, (SHORT,)),
    valid(5, "incLudesUbdOmains; max-age=123", 123, True, (SHORT,)),
    valid(6, "   incLudesUbdOmains; max-age=123", 123, True, (SHORT,)),
    valid(7, "   incLudesUbdOmains; max-age=123; pumpkin=kitten", 123, True, (SHORT,)),
    valid(8, "   pumpkin=894; incLudesUbdOmains; max-age=123  ", 123, True, (SHORT,)),
    valid(9, "   pumpkin; incLudesUbdOmains; max-age=123  ", 123, True, (SHORT,)),
    valid(10, '   pumpkin; incLudesUbdOmains; max-age="123"  ', 123, True, (SHORT,)),
    valid(11, 'animal="squirrel; distinguished"; incLudesUbdOmains; max-age=123', 123, True, (SHORT,)),
    valid(12, "max-age=394082;  incLudesUbdOmains", 394082, True, (SHORT,)),
    valid(13, "max-age=39408299  ;incLudesUbdOmains", ONE_YEAR, True, ("hsts.good",)),
    valid(14, "max-age=394082038  ; incLudesUbdOmains", ONE_YEAR, True, ("hsts.good",)),
    valid(15, "max-age=394082038  ; incLudesUbdOmains;", ONE_YEAR, True, ("hsts.good",)),
    valid(16, ";; max-age=394082038  ; incLudesUbdOmains; ;", ONE_YEAR, True, ("hsts.good",)),
    valid(17, ";; max-age=394082038  ;", ONE_YEAR, False, (NO_SUBDOMAINS,)),
    valid(18, ";;    ; ; max-age=394082038;;; includeSubdomains     ;;  ;", ONE_YEAR, True, ("hsts.good",)),
    valid(19, "incLudesUbdOmains   ; max-age=394082038 ;;", ONE_YEAR, True, ("hsts.good",)),
    valid(20, "  max-age=0  ;  incLudesUbdOmains   ", 0, True, ("hsts.disabled",)),
    valid(
        21,
        "  max-age=999999999999999999999999999999999999999999999  ;  incLudesUbdOmains   ",
        ONE_YEAR,
        True,
        ("hsts.good",),
    ),
]

GROUPS = {
    "LeadingTrailingSemicolons": LEADING_TRAILING_SEMICOLONS,
    "InvalidDirectiveNames": INVALID_DIRECTIVE_NAMES,
    "InvalidDirectiveValues": INVALID_DIRECTIVE_VALUES,
    "BogusHeaders": BOGUS_HEADERS,
    "ValidSTSHeaders": VALID_STS_HEADERS,
}
CASES = [case for cases in GROUPS.values() for case in cases]


@pytest.fixture(scope="module")
def answers(site_factory: SiteFactory, scan_settings: Settings) -> dict[str, Answer]:
    return answer_all(site_factory, scan_settings, [case.value for case in CASES])


@pytest.mark.parametrize("case", params(CASES))
def test_chromium_hsts(case: ChromiumCase, answers: dict[str, Answer]) -> None:
    assert_chromium_conforms(case, answers[case.value])
