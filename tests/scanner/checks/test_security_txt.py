"""Stories for the security.txt check (RFC 9116), over hand-made fetches of the file."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import FIXED_NOW, make_response, make_snapshot
from websec_app.scanner.checks.security_txt import check_security_txt
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.grading import grade
from websec_app.scanner.records.security_txt import MAX_FILE_BYTES, is_security_txt
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import Failure, FetchChain, HttpResponse
from websec_app.settings import ScanLimits

WELL_KNOWN = "https://example.com/.well-known/security.txt"
LEGACY = "https://example.com/security.txt"
CONTEXT = {"host": "example.com", "domain": "example.com", "origin": "https://example.com"}
# FIXED_NOW is 2026-11-22: this file is valid for about seven months.
GOOD = "Contact: mailto:security@example.com\nExpires: 2027-06-30T23:00:00Z\n"


def security_txt_of(
    body: str | bytes,
    *,
    url: str = WELL_KNOWN,
    status: int = 200,
    content_type: str | None = "text/plain; charset=utf-8",
    start_url: str | None = None,
) -> CheckResult:
    response = make_response(url, status, body=body, content_type=content_type)
    chain = FetchChain(start_url or url, (response,))
    return check_security_txt(make_snapshot("https://example.com/", security_txt=chain))


def outcomes(result: CheckResult) -> set[str]:
    return {f.outcome for f in result.findings}


def notes(result: CheckResult) -> str:
    return " | ".join(f.note or "" for f in result.findings)


def section(result: CheckResult) -> dict[str, object]:
    return grade([result], default_rulebook(), CONTEXT).sections["security_txt"]


# --- the check --------------------------------------------------------------------------------


def test_a_valid_file_is_good_and_its_fields_are_reported() -> None:
    # Given a complete security.txt at the well-known location
    body = (
        "# Our policy\n"
        "Contact: mailto:security@example.com\n"
        "Contact: https://example.com/report\n"
        "Expires: 2027-06-30T23:00:00Z\n"
        "Encryption: https://example.com/pgp-key.txt\n"
        "Policy: https://example.com/security-policy\n"
        "Preferred-Languages: en, fr\n"
        f"Canonical: {WELL_KNOWN}\n"
        "X-Custom-Field: ignored\n"
    )
    result = security_txt_of(body)
    # Then it is good and the fields are in the section
    assert outcomes(result) == {"security_txt.present"}
    assert result.details["found"] is True
    assert result.details["contacts"] == ["mailto:security@example.com", "https://example.com/report"]
    assert result.details["expires"] == "2027-06-30T23:00:00Z"
    assert result.details["preferred_languages"] == ["en", "fr"]
    assert result.details["canonical"] == [WELL_KNOWN]
    assert result.details["encryption"] == ["https://example.com/pgp-key.txt"]
    assert result.details["url"] == WELL_KNOWN and result.details["signed"] is False
    assert section(result)["deduction"] == 0


def test_a_missing_file_costs_two_minor_points() -> None:
    result = security_txt_of("Not Found", status=404, content_type="text/plain")
    assert outcomes(result) == {"security_txt.missing"}
    graded = section(result)
    assert graded["status"] == "missing" and graded["deduction"] == 2
    assert graded["findings"][0]["severity"] == "minor"
    assert "security@example.com" in graded["findings"][0]["fix"]


def test_a_server_error_or_rate_limit_is_not_graded_as_missing() -> None:
    # Given the file's URL answering 500, 503 or 429: whether a file exists there is unknown
    for status in (500, 502, 503, 429):
        result = security_txt_of("Service Unavailable", status=status, content_type="text/html")
        # Then the section could not be checked, says why, and costs nothing
        assert outcomes(result) == {"check.error"}, status
        assert f"HTTP {status}" in notes(result)
        assert section(result)["deduction"] == 0
    # While 404, 410 and other client errors say there is no file
    for status in (404, 410, 403, 401):
        assert outcomes(security_txt_of("Nope", status=status, content_type="text/plain")) == {
            "security_txt.missing"
        }, status


def test_an_html_page_served_with_200_is_not_a_security_txt() -> None:
    # Given a single-page app answering every path with its HTML shell, which mentions "Contact:"
    html = "<!DOCTYPE html><html><body><p>Contact: mailto:sales@example.com</p></body></html>"
    result = security_txt_of(html, content_type="text/html; charset=utf-8")
    # Then it counts as missing, with the reason
    assert outcomes(result) == {"security_txt.missing"}
    assert "HTML page" in notes(result)


def test_html_mislabelled_as_text_is_still_not_a_security_txt() -> None:
    result = security_txt_of("<html><body>Contact: mailto:a@example.com</body></html>", content_type="text/plain")
    assert outcomes(result) == {"security_txt.missing"}
    # Nor is one that opens with a comment or a <div> (MIME Sniffing §7.1's HTML patterns)
    for page in ("<!-- shell -->\n<div id=app></div>\nContact: mailto:a@example.com", "<div>\nContact: x\n</div>"):
        assert outcomes(security_txt_of(page, content_type="text/plain")) == {"security_txt.missing"}, page


def test_a_real_file_served_as_text_html_is_invalid_not_missing() -> None:
    # Given a complete security.txt that the server labels text/html (RFC 9116 §3 asks for text/plain)
    result = security_txt_of(GOOD, content_type="text/html; charset=utf-8")
    # Then researchers can still read its contact: it is there, served with the wrong Content-Type
    assert outcomes(result) == {"security_txt.invalid"}
    assert "Content-Type is text/html, not text/plain" in notes(result)
    assert result.details["found"] is True
    assert result.details["contacts"] == ["mailto:security@example.com"]
    assert section(result)["status"] != "missing"
    # While an HTML-labelled page without a single security.txt field is no file at all
    not_found = security_txt_of("Page not found", content_type="text/html")
    assert outcomes(not_found) == {"security_txt.missing"}
    assert "HTML page" in notes(not_found)


def test_a_text_page_that_merely_mentions_contact_is_not_a_security_txt() -> None:
    prose = (
        "Welcome to our site!\n"
        "We sell fine things.\n"
        "Contact: call us any time\n"
        "Opening hours are nine to five.\n"
        "Thanks for visiting.\n"
    )
    result = security_txt_of(prose, content_type="text/plain")
    assert outcomes(result) == {"security_txt.missing"}


def test_a_file_with_crlf_line_ends_is_valid() -> None:
    assert outcomes(security_txt_of(GOOD.replace("\n", "\r\n").encode("utf-8"))) == {"security_txt.present"}


def test_a_byte_order_mark_is_read_past_with_a_note() -> None:
    # RFC 9116 4's grammar has no place for U+FEFF: a reader that keeps it (internet.nl's sectxt) sees the first
    # field as "\ufeffContact", unknown, and the file as one without Contact. It was graded without a word.
    result = security_txt_of(("\ufeff" + GOOD.replace("\n", "\r\n")).encode("utf-8"))
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "byte order mark" in notes(result)
    assert result.details["contacts"] == ["mailto:security@example.com"]


def test_a_carriage_return_without_a_line_feed_ends_no_line_and_says_so() -> None:
    # §4: eol = *WSP [CR] LF. A file with old Mac line ends is one line: its Expires is inside the Contact value
    result = security_txt_of(GOOD.replace("\n", "\r"))
    assert outcomes(result) == {"security_txt.invalid", "security_txt.lint"}
    assert "line(s) 1 hold a carriage return not followed by a line feed" in notes(result)


def test_bytes_that_are_not_utf8_are_noted() -> None:
    result = security_txt_of(b"# Sicherheit f\xfcr alle\n" + GOOD.encode())
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "byte 15 is not UTF-8" in notes(result)


def test_a_signed_file_is_accepted() -> None:
    body = (
        "-----BEGIN PGP SIGNED MESSAGE-----\r\nHash: SHA256\r\n\r\n"
        + GOOD.replace("\n", "\r\n")
        + f"Canonical: {WELL_KNOWN}\r\n"
        + "-----BEGIN PGP SIGNATURE-----\r\n\r\nwsFzBAEBCAAnBQJl\r\n-----END PGP SIGNATURE-----\r\n"
    )
    result = security_txt_of(body)
    assert outcomes(result) == {"security_txt.present"}
    assert result.details["signed"] is True


def test_a_signed_file_whose_signature_ends_the_file_without_a_line_feed_is_accepted() -> None:
    # Go's openpgp armor writer (golang.org/x/crypto, ProtonMail go-crypto) ends "-----END PGP SIGNATURE-----" with
    # no LF; RFC 9116 4's sign-footer is RFC 4880 7's signature, not a `line`, and GnuPG verifies such a file
    body = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        + GOOD
        + f"Canonical: {WELL_KNOWN}\n"
        + "-----BEGIN PGP SIGNATURE-----\n\nwsFzBAEBCAAnBQJl\n-----END PGP SIGNATURE-----"
    )
    result = security_txt_of(body)
    assert outcomes(result) == {"security_txt.present"}, notes(result)


def test_a_signature_whose_checksum_does_not_match_is_noted_with_who_refuses_it() -> None:
    body = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        + GOOD
        + f"Canonical: {WELL_KNOWN}\n"
        + "-----BEGIN PGP SIGNATURE-----\n\nwsFzBAEBCAAnBQJl\n=AAAA\n-----END PGP SIGNATURE-----\n"
    )
    result = security_txt_of(body)
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "CRC-24 checksum does not match its data (GnuPG refuses it; RFC 9580 readers ignore the checksum)" in (
        notes(result)
    )


def test_a_signed_file_without_its_signature_block_gets_a_lint_note() -> None:
    body = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n" + GOOD
    result = security_txt_of(body)
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "no signature block" in notes(result)


def test_two_expires_fields_make_the_file_invalid() -> None:
    result = security_txt_of(GOOD + "Expires: 2027-12-31T23:00:00Z\n")
    assert outcomes(result) == {"security_txt.invalid"}
    assert "exactly one" in notes(result)
    assert section(result)["deduction"] == 2


def test_a_file_without_contact_is_invalid() -> None:
    result = security_txt_of("Expires: 2027-06-30T23:00:00Z\nPolicy: https://example.com/policy\n")
    assert outcomes(result) == {"security_txt.invalid"}
    assert "no Contact" in notes(result)


def test_a_file_without_expires_is_invalid() -> None:
    result = security_txt_of("Contact: mailto:security@example.com\n")
    assert outcomes(result) == {"security_txt.invalid"}


def test_an_expires_that_is_not_rfc3339_is_invalid() -> None:
    result = security_txt_of("Contact: mailto:security@example.com\nExpires: 30/06/2027\n")
    assert outcomes(result) == {"security_txt.invalid"}
    assert "RFC 3339" in notes(result)


def test_a_contact_in_another_uri_scheme_is_usable() -> None:
    # RFC 9116 2.5.3 asks for a URI (RFC 3986); only web URIs are held to https://
    result = security_txt_of("Contact: xmpp:security@example.com\nExpires: 2027-06-30T23:00:00Z\n")

    assert outcomes(result) == {"security_txt.present"}


def test_contacts_must_be_uris() -> None:
    # Given one bare e-mail address (a common slip) and one http:// page
    only_bad = security_txt_of(
        "Contact: security@example.com\nContact: http://example.com/report\nExpires: 2027-06-30T23:00:00Z\n"
    )
    some_good = security_txt_of("Contact: security@example.com\n" + GOOD)
    # Then a file with no usable contact is invalid, one with a usable contact gets a note
    assert outcomes(only_bad) == {"security_txt.invalid"}
    assert "without mailto:" in notes(only_bad) and "https://" in notes(only_bad)
    assert outcomes(some_good) == {"security_txt.present", "security_txt.lint"}


def test_an_expired_file_is_weak() -> None:
    result = security_txt_of("Contact: mailto:security@example.com\nExpires: 2026-01-01T00:00:00Z\n")
    assert outcomes(result) == {"security_txt.expired"}
    graded = section(result)
    assert graded["status"] == "weak" and graded["deduction"] == 2


def test_an_expiry_a_calendar_year_and_an_hour_away_is_more_than_a_year() -> None:
    # §2.5.5: "less than a year into the future". FIXED_NOW (2026-11-22) to 2027-11-22 is 365 days: the check
    # allowed 366, so a file expiring a year and up to a day on was taken for less than a year away
    def expiring(moment: datetime) -> set[str]:
        stamp = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return outcomes(security_txt_of(f"Contact: mailto:security@example.com\nExpires: {stamp}\n"))

    a_year_on = FIXED_NOW.replace(year=FIXED_NOW.year + 1)
    assert expiring(a_year_on + timedelta(hours=1)) == {"security_txt.present", "security_txt.expires_far"}
    assert expiring(a_year_on - timedelta(hours=1)) == {"security_txt.present"}


def test_an_expiry_more_than_a_year_away_is_a_note() -> None:
    result = security_txt_of("Contact: mailto:security@example.com\nExpires: 2030-01-01T00:00:00Z\n")
    assert outcomes(result) == {"security_txt.present", "security_txt.expires_far"}
    assert section(result)["deduction"] == 0


def test_an_expiry_at_the_ends_of_the_rfc3339_range_is_a_date_not_a_crash() -> None:
    """RFC 3339 §5.6 allows years 0000-9999: in UTC these fall past datetime's range (OverflowError, once
    check.crashed and an F). The far end stays far in the future, the near end long expired."""
    far = security_txt_of("Contact: mailto:security@example.com\nExpires: 9999-12-31T23:59:59-01:00\n")
    assert outcomes(far) == {"security_txt.present", "security_txt.expires_far"}
    assert section(far)["deduction"] == 0
    for ancient in ("0001-01-01T00:00:00+01:00", "0000-06-30T23:00:00Z"):
        result = security_txt_of(f"Contact: mailto:security@example.com\nExpires: {ancient}\n")
        assert outcomes(result) == {"security_txt.expired"}, ancient


def test_expiry_is_judged_against_the_snapshot_time() -> None:
    day_after = FIXED_NOW.replace(day=FIXED_NOW.day + 1).isoformat().replace("+00:00", "Z")
    result = security_txt_of(f"Contact: mailto:security@example.com\nExpires: {day_after}\n")
    assert outcomes(result) == {"security_txt.present"}


def test_the_legacy_location_is_accepted_with_a_note() -> None:
    result = security_txt_of(GOOD, url=LEGACY)
    assert outcomes(result) == {"security_txt.present", "security_txt.legacy_location"}
    assert result.details["legacy_location"] is True


def test_a_well_known_location_redirecting_to_the_legacy_one_is_not_legacy() -> None:
    # Given /.well-known/security.txt redirecting to the file at /security.txt
    redirect = make_response(WELL_KNOWN, 301, headers={"Location": "/security.txt"}, content_type=None)
    file = make_response(LEGACY, 200, body=GOOD, content_type="text/plain; charset=utf-8")
    chain = FetchChain(WELL_KNOWN, (redirect, file))
    result = check_security_txt(make_snapshot("https://example.com/", security_txt=chain))
    # Then the well-known location serves it (RFC 9116 §3): no legacy-location note
    assert outcomes(result) == {"security_txt.present"}
    assert result.details["legacy_location"] is False and result.details["url"] == LEGACY


def test_canonical_may_list_the_url_asked_for_when_it_redirected() -> None:
    # §2.5.2: the URI used to retrieve the file: the one asked, or where its redirects led (internet.nl's validator:
    # "either the first or last web URI of the redirect chain must match"). Only the last counted: it was
    # security_txt.canonical_mismatch, a point off, for a file that lists the URL it is asked at.
    # Given /.well-known/security.txt redirecting to the file at /security.txt, which names the first as Canonical
    redirect = make_response(WELL_KNOWN, 301, headers={"Location": "/security.txt"}, content_type=None)

    def served(canonical: str) -> CheckResult:
        file = make_response(
            LEGACY, 200, body=GOOD + f"Canonical: {canonical}\n", content_type="text/plain; charset=utf-8"
        )
        chain = FetchChain(WELL_KNOWN, (redirect, file))
        return check_security_txt(make_snapshot("https://example.com/", security_txt=chain))

    assert outcomes(served(WELL_KNOWN)) == {"security_txt.present"}
    # while a Canonical naming neither is still a mismatch, and says where the file was asked
    elsewhere = served("https://other.example.net/security.txt")
    assert outcomes(elsewhere) == {"security_txt.present", "security_txt.canonical_mismatch"}
    assert f"fetched from {LEGACY} (asked at {WELL_KNOWN})" in notes(elsewhere)


def test_canonical_must_list_the_url_the_file_came_from() -> None:
    result = security_txt_of(GOOD + "Canonical: https://other.example.net/.well-known/security.txt\n")
    assert outcomes(result) == {"security_txt.present", "security_txt.canonical_mismatch"}
    # and the fix names the URL it came from, port included (it wrote https://{host}/..., for a site on port 8443 the
    # very URL its Canonical already listed)
    on_a_port = "https://example.com:8443/.well-known/security.txt"
    listed = security_txt_of(GOOD + "Canonical: https://example.com/.well-known/security.txt\n", url=on_a_port)
    [finding] = [f for f in section(listed)["findings"] if f["check"] == "security_txt.canonical_mismatch"]
    assert finding["fix"] == f"List every URL the file is served at, this one too: `Canonical: {on_a_port}`"
    same_with_other_case = security_txt_of(GOOD + "Canonical: https://EXAMPLE.com:443/.well-known/security.txt\n")
    assert outcomes(same_with_other_case) == {"security_txt.present"}


def test_the_wrong_content_type_makes_the_file_invalid() -> None:
    result = security_txt_of(GOOD, content_type="application/octet-stream")
    assert outcomes(result) == {"security_txt.invalid"}
    assert "text/plain" in notes(result)


def test_text_plain_without_utf8_charset_is_a_note() -> None:
    result = security_txt_of(GOOD, content_type="text/plain")
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "charset=utf-8" in notes(result)


def test_text_plain_in_another_charset_is_invalid() -> None:
    # §3: "MUST have a Content-Type of text/plain with the default charset parameter set to utf-8": a reader
    # decodes the file in the charset named (it was a note, like a missing charset)
    for charset in ("iso-8859-1", '"windows-1252"', "us-ascii"):
        result = security_txt_of(GOOD, content_type=f"text/plain; charset={charset}")
        assert outcomes(result) == {"security_txt.invalid"}, charset
        assert "RFC 9116 requires charset=utf-8" in notes(result)
    for charset in ("UTF-8", "utf8", '"utf-8"'):
        assert outcomes(security_txt_of(GOOD, content_type=f"text/plain; charset={charset}")) == {
            "security_txt.present"
        }, charset


def test_a_file_served_over_http_is_invalid() -> None:
    result = security_txt_of(GOOD, url="http://example.com/.well-known/security.txt")
    assert outcomes(result) == {"security_txt.invalid"}
    assert "HTTPS" in notes(result)


def test_stray_lines_and_missing_spaces_are_lint() -> None:
    result = security_txt_of("Contact:mailto:security@example.com\nthis line is junk\nExpires: 2027-06-30T23:00:00Z\n")
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "line(s) 2" in notes(result) and "one space" in notes(result)
    assert result.details["contacts"] == ["mailto:security@example.com"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("Policy: http://example.com/policy", "Policy 'http://example.com/policy' uses http://"),
        ("Acknowledgments: our hall of fame", "Acknowledgments 'our hall of fame' is not a URI"),
        ("Encryption: -----BEGIN PGP PUBLIC KEY BLOCK-----", "Encryption holds a key"),
        ("Hiring: jobs.example.com/security", "Hiring 'jobs.example.com/security' is not a URI"),
        ("Canonical: http://example.com/.well-known/security.txt", "uses http://"),
        ("CSAF: http://example.com/.well-known/csaf/provider-metadata.json", "CSAF 'http://"),
        ("Preferred-Languages: en_US, de", "'en_US' is not a language tag"),
        ("Preferred-Languages: English (UK)", "'English (UK)' is not a language tag"),
        ("Preferred-Languages: en,, fr", "an empty entry is not a language tag"),
    ],
)
def test_fields_naming_a_resource_are_https_uris_and_languages_are_tags(line: str, problem: str) -> None:
    # §2.5: each of these fields is a URI, a web one beginning https://; §2.5.8: RFC 5646 language tags. They were
    # not looked at. A note each: the file still says whom to tell
    result = security_txt_of(GOOD + line + "\n")
    assert "security_txt.lint" in outcomes(result) and "security_txt.invalid" not in outcomes(result)
    assert problem in notes(result)


def test_fields_naming_a_resource_in_their_usual_forms_are_not_remarked() -> None:
    lines = (
        "Encryption: openpgp4fpr:5f2de5521c63a801ab59ccb603d49de44b29100f\n"
        "Encryption: dns:5d2d37ab76d47d36._openpgpkey.example.com?type=OPENPGPKEY\n"
        "Acknowledgments: https://example.com/hall-of-fame.html\n"
        "Preferred-Languages: en, pt-BR, zh-Hant-TW, x-klingon\n"
        "CSAF: https://example.com/.well-known/csaf/provider-metadata.json\n"
    )
    assert outcomes(security_txt_of(GOOD + lines)) == {"security_txt.present"}


def test_thousands_of_bad_uri_fields_make_ten_notes_and_a_count() -> None:
    result = security_txt_of(GOOD + "".join(f"Policy: http://example.com/{n}\n" for n in range(3000)))
    uri_notes = [f.note or "" for f in result.findings if "Policy" in (f.note or "") or "more field" in (f.note or "")]
    assert len(uri_notes) == 11 and uri_notes[-1] == "and 2,990 more field values that are not https:// URIs"


def test_a_fetch_failure_is_not_graded_as_missing() -> None:
    chain = FetchChain(WELL_KNOWN, failure=Failure("timeout", "read timed out"))
    result = check_security_txt(make_snapshot(security_txt=chain))
    assert outcomes(result) == {"check.error"}
    assert "timeout" in notes(result)
    assert section(result)["deduction"] == 0


def test_not_requesting_the_file_is_not_graded() -> None:
    result = check_security_txt(make_snapshot(security_txt=None))
    assert outcomes(result) == {"check.error"}


# --- a file the fetch cut (at MAX_FILE_BYTES, or its time budget): graded on the lines read ---------------------

COMMENTS = "".join(f"# {n:05} a line of history\n" for n in range(4000))  # 96 KiB


def cut_file(body: str, *, at: int = MAX_FILE_BYTES, note: str | None = None) -> CheckResult:
    """The check of `body` as the fetch keeps it when it cuts it at `at` bytes."""
    kept = dataclasses.replace(
        make_response(WELL_KNOWN, body=body.encode()[:at], content_type="text/plain; charset=utf-8"),
        body_truncated=True,
        body_note=note or f"the body is larger than the {at:,} bytes the scanner reads; only its beginning was kept",
    )
    return check_security_txt(make_snapshot("https://example.com/", security_txt=FetchChain(WELL_KNOWN, (kept,))))


def test_the_size_the_check_names_is_what_the_fetch_reads() -> None:
    assert MAX_FILE_BYTES == ScanLimits().max_security_txt_bytes


def test_a_file_cut_before_its_fields_is_a_security_txt_not_graded_missing() -> None:
    # Given a file of 96 KiB of comments, then its fields, cut at 64 KiB by the fetch
    result = cut_file(COMMENTS + GOOD)
    # Then it is a security.txt (the code before: "it contains no security.txt fields", security_txt.missing), with
    # nothing reported missing (the code before would then have said: no Contact, no Expires, security_txt.invalid)
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert section(result)["deduction"] == 0
    assert "Contact and Expires are not in the part read, so whether the file has them is not known" in notes(result)
    assert "larger than the 64 KiB the scanner reads" in notes(result) and "RFC 9116 sets no size limit" in notes(
        result
    )
    assert is_security_txt(result_response(COMMENTS + GOOD))


def result_response(body: str) -> HttpResponse:
    return dataclasses.replace(
        make_response(WELL_KNOWN, body=body.encode()[:MAX_FILE_BYTES], content_type="text/plain"), body_truncated=True
    )


def test_a_file_cut_after_its_contact_is_graded_on_the_contact_only() -> None:
    result = cut_file("Contact: mailto:security@example.com\n" + COMMENTS + "Expires: 2027-06-30T23:00:00Z\n")
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "Expires is not in the part read" in notes(result)
    assert section(result)["contacts"] == ["mailto:security@example.com"]


def test_the_line_the_cut_falls_in_is_left_out() -> None:
    # Given a file whose second Contact and whose Expires come after 60 KiB of comments
    contact, second, expires = (
        "Contact: mailto:security@example.com\n",
        "Contact: mailto:security@example.net\n",
        "Expires: 2027-06-30T23:00:00Z\n",
    )
    head = contact + COMMENTS[: COMMENTS.index("\n", 60 * 1024) + 1]
    body = head + second + expires
    # When the fetch cuts it within either line
    for start, line, read in ((len(head), second, [contact]), (len(head + second), expires, [contact, second])):
        for at in range(start + 1, start + len(line) - 1):
            result = cut_file(body, at=at)
            # Then the cut line is not read: no cut address is a Contact, no cut date is an Expires (the code before:
            # "Expires '2027-0' is not an RFC 3339 date-time", security_txt.invalid)
            assert outcomes(result) == {"security_txt.present", "security_txt.lint"}, (at, notes(result))
            assert section(result)["contacts"] == [value.removeprefix("Contact: ").strip() for value in read]
            assert "Expires is not in the part read" in notes(result)


def test_in_a_cut_file_what_may_follow_the_cut_is_not_graded() -> None:
    # Unusable contacts only, a Canonical naming another URL, a signed message without its signature block: the
    # usable Contact, the right Canonical and the signature may follow the cut
    head = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nContact: nobody\nCanonical: https://example.org/x\n"
    result = cut_file(head + COMMENTS + GOOD)
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert "no Contact in the part read is usable" in notes(result)
    assert "Canonical lists https://example.org/x (in the part read)" in notes(result)
    assert "no signature block" not in notes(result)
    # While what was read is graded: two Expires, or one that is no date
    assert outcomes(cut_file(f"Expires: 2027-06-30T23:00:00Z\nExpires: never\n{COMMENTS}")) >= {"security_txt.invalid"}


def test_a_file_cut_by_the_time_budget_says_so_without_blaming_its_size() -> None:
    note = "the body took longer than the scan allows; only what arrived was kept"
    result = cut_file(COMMENTS + GOOD, at=3000, note=note)
    assert outcomes(result) == {"security_txt.present", "security_txt.lint"}
    assert f"the file was not read whole ({note})" in notes(result)
    assert "size limit" not in notes(result)


def test_a_cut_text_that_is_no_security_txt_stays_none() -> None:
    # A large text page of prose at a soft 404 is no file because the fetch cut it
    result = cut_file("Page not found. " * 6000)
    assert outcomes(result) == {"security_txt.missing"}


def test_a_broken_file_never_costs_more_than_no_file() -> None:
    book = default_rulebook()
    missing = book.rule("security_txt.missing").deduction
    for outcome, rule in book.rules.items():
        if outcome.startswith("security_txt.") and outcome != "security_txt.missing":
            assert rule.deduction <= missing, outcome
    worst = security_txt_of(
        "Contact: nobody\nExpires: never\nExpires: again\nCanonical: https://elsewhere.example.org/\n",
        content_type="application/x-foo",
    )
    expired = security_txt_of(GOOD.replace("2027", "2025") + "Canonical: https://elsewhere.example.org/\n")
    assert section(worst)["deduction"] <= missing
    assert section(expired)["deduction"] <= missing


def test_grading_turns_the_security_txt_result_into_json() -> None:
    result = security_txt_of(GOOD + "Canonical: https://elsewhere.example.org/security.txt\n", url=LEGACY)
    graded = grade([result], default_rulebook(), CONTEXT)
    body = json.loads(json.dumps(graded.sections["security_txt"]))
    assert body["found"] is True and body["legacy_location"] is True
    assert {f["check"] for f in body["findings"]} == {
        "security_txt.present",
        "security_txt.legacy_location",
        "security_txt.canonical_mismatch",
    }


def test_the_fixes_of_a_site_on_a_port_of_its_own_name_that_port() -> None:
    # Given https://example.com:8443/ without a security.txt: the file belongs at that origin (RFC 9116 §3)
    missing = make_response("https://example.com:8443/.well-known/security.txt", 404, body="", content_type=None)
    chain = FetchChain("https://example.com:8443/.well-known/security.txt", (missing,))
    report = grade_snapshot(make_snapshot("https://example.com:8443/", security_txt=chain)).to_dict()
    [finding] = report["security_txt"]["findings"]
    # Then the fix says to publish it there (it said https://example.com/.well-known/security.txt)
    assert finding["check"] == "security_txt.missing"
    assert finding["fix"].startswith("Publish https://example.com:8443/.well-known/security.txt as text/plain")
