# Test cases adapted from chromium/hstspreload's header_test.go (https://github.com/chromium/hstspreload, the library
# behind hstspreload.org): Copyright The Chromium Authors, used under its BSD 3-clause licence.
# ruff: noqa: E501  (case tables: one hstspreload value per line)
"""Conformance of the Strict-Transport-Security findings with hstspreload.org's header tests (docs/conformance.md).

Every header string of header_test.go's TestParseHeaderString, TestParseHeaderStringWithErrors and
TestPreloadableHeaderString, with the issue codes each expects (and, for the first, the header it parses to). Each
is answered by a fixture HTTPS site and scanned (tests/conformance/_hsts.py); hstspreload.org is the truth for
whether the header lets the domain onto the preload list.
"""

from __future__ import annotations

import pytest

from tests.conformance._hsts import Answer, PreloadCase, answer_all, assert_preload_conforms, params
from tests.fixtures.sites import SiteFactory
from websec_app.settings import Settings

PARSE, WITH_ERRORS, PRELOADABLE = (
    "TestParseHeaderString",
    "TestParseHeaderStringWithErrors",
    "TestPreloadableHeaderString",
)
INVALID, SHORT, NO_SUBDOMAINS, GOOD = "hsts.invalid", "hsts.short_max_age", "hsts.no_include_subdomains", "hsts.good"
EMPTY_DIRECTIVE, UNKNOWN = "header.parse.empty_directive", "header.parse.unknown_directive"
NO_VALUE = "header.parse.invalid.max_age.no_value"
NO_SUBDOMAINS_ISSUE = "header.preloadable.include_sub_domains.missing"
NO_PRELOAD, NO_MAX_AGE = "header.preloadable.preload.missing", "header.preloadable.max_age.missing"
BELOW_A_YEAR, OVER_TEN_YEARS = "header.preloadable.max_age.below_1_year", "header.preloadable.max_age.over_10_years"


def parsed(
    label: str,
    value: str,
    header: tuple[int | None, bool, bool],
    ours: tuple[str, ...],
    warnings: tuple[str, ...] = (),
) -> PreloadCase:
    """A TestParseHeaderString case: no parse error, these warnings, and the header (max-age, includeSubDomains,
    preload) it parses to."""
    return PreloadCase(PARSE, label, value, (), warnings, ours, parsed=header)


PARSE_CASES = [
    parsed("without preload", "includeSubDomains; max-age=1337", (1337, True, False), (SHORT,)),
    parsed("without includeSubDomains", "preload; max-age=1337", (1337, False, True), (SHORT, NO_SUBDOMAINS)),
    parsed("without max-age", "preload; includeSubDomains", (None, True, True), (INVALID,)),
    parsed("full", "max-age=31536000; includeSubDomains; preload", (31536000, True, True), (GOOD,)),
    parsed("any order", "includeSubDomains; preload; max-age=4321", (4321, True, True), (SHORT,)),
    parsed(
        "extra whitespace",
        "   max-age=10886400  ;     includeSubDomains    ;     preload      ",
        (10886400, True, True),
        (SHORT,),
    ),
    parsed("larger max-age", "includeSubDomains; preload; max-age=12345678", (12345678, True, True), (SHORT,)),
    parsed("reordered", "max-age=10886400; preload; includeSubDomains", (10886400, True, True), (SHORT,)),
    parsed("reordered, without preload", "max-age=10886400; includeSubDomains", (10886400, True, False), (SHORT,)),
    parsed("case-insensitive", "inCLUDESUBDomaINs; max-AGe=12345678", (12345678, True, False), (SHORT,)),
    parsed("empty", "", (None, False, False), (INVALID,), ("header.parse.empty",)),
    parsed(
        "repeated preload",
        "preload; includeSubDomains; preload; max-age=12345678; preload",
        (12345678, True, True),
        (SHORT,),
        ("header.parse.repeated.preload",),
    ),
    parsed(
        "single extra directive",
        "includeSubDomains; max-age=12345678; preload; extraDirective",
        (12345678, True, True),
        (SHORT,),
        (UNKNOWN,),
    ),
    parsed(
        "multiple extra directives",
        "max-age=12345678; extra; includeSubDomains; directives; preload",
        (12345678, True, True),
        (SHORT,),
        (UNKNOWN, UNKNOWN),
    ),
    parsed("semicolon only", ";", (None, False, False), (INVALID,), (EMPTY_DIRECTIVE,)),
    parsed(
        "trailing semicolon",
        "max-age=10886400; includeSubDomains; preload;",
        (10886400, True, True),
        (SHORT,),
        (EMPTY_DIRECTIVE,),
    ),
    parsed(
        "prefixed by semicolon",
        "; max-age=10886400; includeSubDomains; preload",
        (10886400, True, True),
        (SHORT,),
        (EMPTY_DIRECTIVE,),
    ),
    parsed(
        "bad max-age: leading 0",
        "max-age=01234",
        (1234, False, False),
        (SHORT, NO_SUBDOMAINS),
        ("header.parse.max_age.leading_zero",),
    ),
]

WITH_ERRORS_CASES = [
    PreloadCase(
        WITH_ERRORS, "bad max-age: empty value", "max-age=", ("header.parse.max_age.parse_int_error",), (), (INVALID,)
    ),
    PreloadCase(WITH_ERRORS, "bad max-age: no value", "max-age", (NO_VALUE,), (), (INVALID,)),
    PreloadCase(
        WITH_ERRORS, "max-age: minus", "max-age=-101", ("header.parse.max_age.non_digit_characters",), (), (INVALID,)
    ),
    PreloadCase(
        WITH_ERRORS, "max-age: plus", "max-age=+101", ("header.parse.max_age.non_digit_characters",), (), (INVALID,)
    ),
    PreloadCase(
        WITH_ERRORS,
        "error and warning: no max-age value, trailing semicolon",
        "max-age;",
        (NO_VALUE,),
        (EMPTY_DIRECTIVE,),
        (INVALID,),
    ),
    PreloadCase(
        WITH_ERRORS,
        "error and warnings: no max-age value, unknown directive, trailing semicolon",
        "includeDomains; max-age;",
        (NO_VALUE,),
        (UNKNOWN, EMPTY_DIRECTIVE),
        (INVALID,),
        why="browsers ignore a header whose max-age has no value (Chromium's ParseHSTSHeader returns false), so websec names that error alone, not the unknown directive beside it in a header no browser keeps; both call the domain ineligible",
    ),
]

PRELOADABLE_CASES = [
    PreloadCase(PRELOADABLE, "no issues", "max-age=31536000; includeSubDomains; preload", (), (), (GOOD,)),
    PreloadCase(
        PRELOADABLE,
        "max-age > 10 years",
        "max-age=315360001; preload; includeSubDomains",
        (),
        (OVER_TEN_YEARS,),
        (GOOD,),
    ),
    PreloadCase(
        PRELOADABLE, "empty", "", (NO_SUBDOMAINS_ISSUE, NO_PRELOAD, NO_MAX_AGE), ("header.parse.empty",), (INVALID,)
    ),
    PreloadCase(PRELOADABLE, "missing preload", "includeSubDomains; max-age=31536000", (NO_PRELOAD,), (), (GOOD,)),
    PreloadCase(
        PRELOADABLE,
        "missing includeSubdomains",
        "preload; max-age=31536000",
        (NO_SUBDOMAINS_ISSUE,),
        (),
        (NO_SUBDOMAINS,),
    ),
    PreloadCase(PRELOADABLE, "missing max-age", "includeSubDomains; preload", (NO_MAX_AGE,), (), (INVALID,)),
    PreloadCase(PRELOADABLE, "only preload", "preload", (NO_SUBDOMAINS_ISSUE, NO_MAX_AGE), (), (INVALID,)),
    PreloadCase(PRELOADABLE, "only includeSubdomains", "includeSubDomains", (NO_PRELOAD, NO_MAX_AGE), (), (INVALID,)),
    PreloadCase(
        PRELOADABLE, "only max-age", "max-age=123456789", (NO_SUBDOMAINS_ISSUE, NO_PRELOAD), (), (NO_SUBDOMAINS,)
    ),
    PreloadCase(
        PRELOADABLE,
        "max-age without value",
        "includeSubDomains; preload; max-age",
        (NO_VALUE, NO_MAX_AGE),
        (),
        (INVALID,),
    ),
    PreloadCase(
        PRELOADABLE,
        "maxAge=0",
        "includeSubDomains; preload; max-age=0",
        ("header.preloadable.max_age.zero",),
        (),
        ("hsts.disabled",),
    ),
    PreloadCase(PRELOADABLE, "maxAge=100", "includeSubDomains; preload; max-age=100", (BELOW_A_YEAR,), (), (SHORT,)),
    PreloadCase(
        PRELOADABLE, "maxAge=10886400", "includeSubDomains; preload; max-age=10886400", (BELOW_A_YEAR,), (), (SHORT,)
    ),
    PreloadCase(
        PRELOADABLE,
        "missing preload, >10 years",
        "max-age=315360001; includeSubDomains",
        (NO_PRELOAD,),
        (OVER_TEN_YEARS,),
        (GOOD,),
    ),
]

GROUPS = {PARSE: PARSE_CASES, WITH_ERRORS: WITH_ERRORS_CASES, PRELOADABLE: PRELOADABLE_CASES}
CASES = [case for cases in GROUPS.values() for case in cases]


@pytest.fixture(scope="module")
def answers(site_factory: SiteFactory, scan_settings: Settings) -> dict[str, Answer]:
    return answer_all(site_factory, scan_settings, [case.value for case in CASES])


@pytest.mark.parametrize("case", params(CASES))
def test_hstspreload(case: PreloadCase, answers: dict[str, Answer]) -> None:
    assert_preload_conforms(case, answers[case.value])
