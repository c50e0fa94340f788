"""Parsing security.txt files (RFC 9116 §4) without judging them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.factories import make_response
from websec_app.scanner.records.security_txt import (
    is_security_txt,
    not_security_txt,
    parse_rfc3339,
    parse_security_txt,
    read_security_txt,
)


def test_a_bom_and_crlf_line_ends_are_read_transparently() -> None:
    parsed = parse_security_txt("\ufeffContact: mailto:a@example.com\r\n# comment\r\nExpires: 2027-01-01T00:00:00Z\r\n")
    assert parsed.values("contact") == ["mailto:a@example.com"]
    assert parsed.values("EXPIRES") == ["2027-01-01T00:00:00Z"]
    assert parsed.invalid_lines == ()


def test_a_cleartext_signed_file_is_unwrapped_and_dash_escapes_removed() -> None:
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\n"
        "Hash: SHA512\n"
        "\n"
        "Contact: mailto:security@example.com\n"
        "- -not-a-field-but-a-dash-escaped-line\n"
        "Expires: 2027-06-30T23:00:00Z\n"
        "-----BEGIN PGP SIGNATURE-----\n"
        "\n"
        "iQIzBAEBCgAdFiEE...\n"
        "-----END PGP SIGNATURE-----\n"
    )
    parsed = parse_security_txt(text)
    assert parsed.signed and parsed.signature_complete
    assert parsed.values("contact") == ["mailto:security@example.com"]
    assert parsed.invalid_lines == (5,)  # the unescaped "-not-a-field..." line, numbered as served


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2027-06-30T23:00:00Z", datetime(2027, 6, 30, 23, tzinfo=UTC)),
        ("2027-06-30t23:00:00.123z", datetime(2027, 6, 30, 23, tzinfo=UTC)),
        ("2027-07-01T04:30:00+05:30", datetime(2027, 6, 30, 23, tzinfo=UTC)),
        ("2027-06-30 23:00:00Z", None),
        ("2027-06-30", None),
        ("Wed, 30 Jun 2027 23:00:00 GMT", None),
        ("2027-02-30T00:00:00Z", None),
        # §5.6: years 0000-9999; past datetime's range in UTC, the value is clamped, not an OverflowError.
        ("9999-12-31T23:59:59-01:00", datetime.max.replace(tzinfo=UTC)),
        ("9999-12-31T23:59:59+01:00", datetime(9999, 12, 31, 22, 59, 59, tzinfo=UTC)),
        ("0001-01-01T00:00:00+01:00", datetime.min.replace(tzinfo=UTC)),
        ("0000-02-29T12:00:00Z", datetime.min.replace(tzinfo=UTC)),  # year 0 is a leap year
        ("0000-02-30T12:00:00Z", None),
        # §5.6 time-second is 00-60: 60 is a leap second, anything above is no time at all.
        ("2027-06-30T23:59:60Z", datetime(2027, 6, 30, 23, 59, 59, tzinfo=UTC)),
        ("2027-06-30T23:00:61Z", None),
        ("2027-06-30T23:00:99Z", None),
        # RFC 5234 DIGIT is ASCII 0-9: Arabic-Indic or fullwidth digits are not a date.
        ("\u0662\u0660\u0662\u0667-06-30T23:00:00Z", None),
        ("2027-06-30T23:00:00.\u0661Z", None),
        ("\uff12\uff10\uff12\uff17-06-30T23:00:00Z", None),
    ],
)
def test_expires_must_be_an_rfc3339_date_time(value: str, expected: datetime | None) -> None:
    assert parse_rfc3339(value) == expected


def test_lines_end_at_line_feeds_only_so_line_numbers_are_the_files() -> None:
    # RFC 9116 §4: eol = *WSP [CR] LF. A form feed, NEL or U+2028 inside a line does not end it.
    text = (
        "# Sicherheitskontakt\u2028bitte verschl\u00fcsselt\x0c\n"  # line 1, one comment
        "Contact: mailto:a@example.com\x85\r\n"  # line 2
        "this line is junk\x1e still junk\n"  # line 3
        "Expires: 2027-06-30T23:00:00Z\r\n"  # line 4
    )
    parsed = parse_security_txt(text)
    assert parsed.invalid_lines == (3,)
    assert [(f.number, f.name) for f in parsed.fields] == [(2, "Contact"), (4, "Expires")]
    assert parsed.values("expires") == ["2027-06-30T23:00:00Z"]


def test_a_response_is_a_security_txt_by_its_body_not_its_content_type() -> None:
    good = "Contact: mailto:security@example.com\nExpires: 2027-06-30T23:00:00Z\n"
    url = "https://example.com/.well-known/security.txt"
    assert is_security_txt(make_response(url, body=good, content_type="text/plain; charset=utf-8"))
    assert is_security_txt(make_response(url, body=good, content_type="text/html"))  # mislabelled, still the file
    soft_404s = [
        make_response(url, body="<!doctype html><html><body>Contact: x</body></html>", content_type="text/plain"),
        make_response(url, body="Page not found", content_type="text/plain"),
        make_response(url, body="Page not found", content_type="text/html"),
        make_response(url, 404, body=good, content_type="text/plain"),
    ]
    for response in soft_404s:
        assert not is_security_txt(response), response
    reason = not_security_txt(soft_404s[2], read_security_txt(soft_404s[2]))
    assert reason == "it is an HTML page"


def test_a_page_browsers_sniff_as_html_is_no_security_txt_whatever_follows_its_first_tag() -> None:
    # Given an HTML page served as text/plain whose <html> tag ends in a newline, with security.txt lines inside:
    # Chromium sniffs `<html` alone, with no space or ">" after it (records/html.sniffs_as_html)
    page = "<html\nlang=en>\nContact: mailto:a@example.com\nExpires: 2030-01-01T00:00:00Z\n</html>\n"
    response = make_response("https://example.com/.well-known/security.txt", body=page, content_type="text/plain")
    # Then it is an HTML page, not a security.txt, and the fetch layer asks for the legacy /security.txt
    assert not is_security_txt(response)
    assert not_security_txt(response, read_security_txt(response)) == "it is an HTML page"


def test_an_html_page_behind_a_byte_order_mark_is_no_security_txt() -> None:
    # Browsers sniff a BOM-led body as text/plain, but it is an HTML page all the same, not the file
    page = "\ufeff<html><body>\nContact: mailto:a@example.com\nExpires: 2030-01-01T00:00:00Z\n</body></html>\n"
    response = make_response("https://example.com/.well-known/security.txt", body=page, content_type="text/plain")
    assert not is_security_txt(response)
    assert not_security_txt(response, read_security_txt(response)) == "it is an HTML page"
