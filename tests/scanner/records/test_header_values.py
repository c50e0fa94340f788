"""The header-value parsers: Strict-Transport-Security (RFC 6797) and Fetch header lists."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.header_values import (
    parse_hsts,
    parse_referrer_policy_header,
    split_header_list,
    trim_http_whitespace,
)


@pytest.mark.parametrize(
    ("value", "max_age", "include", "error"),
    [
        ('max-age="31536000"', 31536000, False, False),
        ("max-age=1;includesubdomains", 1, True, False),
        ('max-age="1;2"', None, False, True),
        ('max-age=1; foo="a;b"; includeSubDomains', 1, True, False),
        ("max-age=1; max-AGE=2", None, False, True),
        ("max-age=１", None, False, True),  # a full-width digit is not DIGIT
    ],
)
def test_hsts_parser(value: str, max_age: int | None, include: bool, error: bool) -> None:
    policy = parse_hsts(value)

    assert (policy.max_age, policy.include_subdomains, policy.error is not None) == (max_age, include, error)


@pytest.mark.parametrize(
    ("value", "repeated"),
    [
        ("max-age=31536000; includeSubDomains; preload; preload", ("preload",)),
        ("max-age=31536000; foo; FOO=1; foo", ("FOO",)),
        ("max-age=31536000; preload; foo; Preload; foo", ("Preload", "foo")),
    ],
)
def test_a_repeated_preload_or_unknown_directive_is_noted_not_fatal(value: str, repeated: tuple[str, ...]) -> None:
    # Chromium 156 keeps these headers: it rejects a repeat of max-age or includeSubDomains only
    policy = parse_hsts(value)

    assert policy.error is None and policy.max_age == 31536000
    assert policy.repeated_directives == repeated


@pytest.mark.parametrize(
    "value", ["max-age=1; max-age=1", "max-age=1; includeSubDomains; INCLUDESUBDOMAINS", "max-age=1; Max-Age=2"]
)
def test_a_repeated_max_age_or_include_subdomains_makes_the_header_invalid(value: str) -> None:
    assert parse_hsts(value).error == f"the {value.rsplit('; ', 1)[1].split('=')[0]} directive appears more than once"


@pytest.mark.parametrize("directive", ["preload=true", 'preload=""', 'PRELOAD="a;b"'])
def test_preload_with_a_value_is_no_preload_request(directive: str) -> None:
    # hstspreload.org's ParseHeaderString: "Header contains a `preload` directive with extra parts", not preload
    policy = parse_hsts(f"max-age=31536000; includeSubDomains; {directive}")

    assert policy.error is None
    assert (policy.preload, policy.preload_with_value) == (False, directive)


def test_header_list_splitting_follows_fetch() -> None:
    assert split_header_list("a, b ,c") == ["a", "b", "c"]
    assert split_header_list('"a, b", c') == ['"a, b"', "c"]
    assert split_header_list("") == [""]
    assert split_header_list('"unterminated, x') == ['"unterminated, x']


@pytest.mark.parametrize(
    ("value", "policy", "malformed"),
    [
        ("no-referrer, strict-origin-when-cross-origin", "strict-origin-when-cross-origin", ()),
        ("unsafe-url, some-future-policy", "unsafe-url", ()),
        ("no-referrer,,", "no-referrer", ()),
        ("unsafe-url, foo_bar", None, ("foo_bar",)),
        ('unsafe-url, "no-referrer", x.y', None, ('"no-referrer"', "x.y")),
        ("no-referrer\u00e9", None, ("no-referrer\u00e9",)),  # ALPHA is ASCII
    ],
)
def test_one_token_that_is_not_letters_and_hyphens_voids_the_referrer_policy_header(
    value: str, policy: str | None, malformed: tuple[str, ...]
) -> None:
    parsed = parse_referrer_policy_header(value)

    assert (parsed.policy, parsed.malformed) == (policy, malformed)


@pytest.mark.parametrize(
    ("raw", "trimmed"),
    [(" \tsame-origin\t ", "same-origin"), ("same-origin\xa0", "same-origin\xa0"), ("\x85true", "\x85true")],
)
def test_only_spaces_and_tabs_are_trimmed_around_a_value(raw: str, trimmed: str) -> None:
    # Fetch's HTTP whitespace: U+00A0 and U+0085, which str.strip() would take, are part of the value
    assert trim_http_whitespace(raw) == trimmed
