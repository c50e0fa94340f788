"""The header-value parsers: Strict-Transport-Security (RFC 6797) and Fetch header lists."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.header_values import parse_hsts, split_header_list


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


def test_header_list_splitting_follows_fetch() -> None:
    assert split_header_list("a, b ,c") == ["a", "b", "c"]
    assert split_header_list('"a, b", c') == ['"a, b"', "c"]
    assert split_header_list("") == [""]
    assert split_header_list('"unterminated, x') == ['"unterminated, x']
