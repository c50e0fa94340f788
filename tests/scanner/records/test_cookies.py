"""Stories for the Set-Cookie parser: real-world lines, read the way browsers read them (RFC 6265bis)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from websec_app.scanner.records.cookies import Malformed, ParsedCookie, parse_cookie_date, parse_set_cookie


def test_an_expires_date_with_a_comma_stays_one_cookie() -> None:
    # Given a cookie whose Expires date contains a comma (the reason Set-Cookie is never comma-split)
    parsed = parse_set_cookie("id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure")
    # Then it is one cookie with the date understood and the flag after the date kept
    assert isinstance(parsed, ParsedCookie)
    assert parsed.name == "id" and parsed.value == "a3fWa"
    assert parsed.expires == datetime(2015, 10, 21, 7, 28, tzinfo=UTC)
    assert parsed.secure


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wed, 21 Oct 2015 07:28:00 GMT", datetime(2015, 10, 21, 7, 28, tzinfo=UTC)),
        ("Wed, 21-Oct-2015 07:28:00 GMT", datetime(2015, 10, 21, 7, 28, tzinfo=UTC)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
        ("Sun Nov  6 08:49:37 1994", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
        ("Thu, 01 Jan 1970 00:00:00 GMT", datetime(1970, 1, 1, tzinfo=UTC)),
        ("31 Feb 2030 00:00:00", None),
        ("tomorrow", None),
    ],
)
def test_cookie_dates_are_parsed_with_the_forgiving_browser_algorithm(text: str, expected: datetime | None) -> None:
    assert parse_cookie_date(text) == expected


def test_the_last_of_a_duplicated_attribute_wins_and_names_are_case_insensitive() -> None:
    # Given duplicated and upper-case attributes
    parsed = parse_set_cookie("SID=31d4; PATH=/a; Path=/; SAMESITE=None; SameSite=STRICT; SECURE; HTTPONLY")
    # Then the last value of each counts, whatever its case
    assert isinstance(parsed, ParsedCookie)
    assert parsed.path == "/"
    assert parsed.samesite == "Strict"
    assert parsed.secure and parsed.httponly


def test_quoted_and_json_values_keep_their_name() -> None:
    quoted = parse_set_cookie('theme="dark mode"; Path=/')
    json_value = parse_set_cookie('prefs={"a":"b=c","d":1}; Path=/')
    assert isinstance(quoted, ParsedCookie) and quoted.name == "theme" and quoted.value == '"dark mode"'
    assert isinstance(json_value, ParsedCookie) and json_value.name == "prefs"
    assert json_value.value == '{"a":"b=c","d":1}'


def test_flag_values_are_ignored_so_secure_false_is_still_secure() -> None:
    parsed = parse_set_cookie("a=b; Secure=false; HttpOnly=no")
    assert isinstance(parsed, ParsedCookie) and parsed.secure and parsed.httponly


@pytest.mark.parametrize("line", ["justavalue", "=value; Secure", "  ; Path=/", "a=b\x01c"])
def test_lines_without_a_usable_name_are_malformed(line: str) -> None:
    assert isinstance(parse_set_cookie(line), Malformed)


def test_max_age_beats_expires_whatever_the_order() -> None:
    parsed = parse_set_cookie("a=b; Max-Age=0; Expires=Wed, 21 Oct 2099 07:28:00 GMT")
    assert isinstance(parsed, ParsedCookie)
    assert parsed.deletes(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("line", "priority"),
    [
        ("a=b", "Medium"),
        ("a=b; Priority=High", "High"),
        ("a=b; priority=low", "Low"),
        ("a=b; Priority=HIGH; Priority=urgent", "Medium"),  # the last counts, and an unknown value is the default
    ],
)
def test_chromiums_priority_is_read_as_its_cookie_store_reads_it(line: str, priority: str) -> None:
    parsed = parse_set_cookie(line)
    assert isinstance(parsed, ParsedCookie) and parsed.priority == priority


@pytest.mark.parametrize(("line", "value"), [("justavalue; Path=/", "justavalue"), ("=value; Secure", "value")])
def test_a_line_without_a_name_is_the_nameless_cookie_chromium_stores(line: str, value: str) -> None:
    # Chromium 156 stores "abc" and "=abc" with an empty name (6265bis 5.6); the cookies check still reports them
    parsed = parse_set_cookie(line, nameless=True)
    assert isinstance(parsed, ParsedCookie) and parsed.name == "" and parsed.value == value


@pytest.mark.parametrize("line", ["=", "=a=b", "=__Secure-x; Secure", "__Host-x", "  ; Path=/"])
def test_a_nameless_line_chromium_refuses_is_malformed_either_way(line: str) -> None:
    assert isinstance(parse_set_cookie(line, nameless=True), Malformed)
