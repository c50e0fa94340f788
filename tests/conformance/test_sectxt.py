# Test cases adapted from sectxt 0.9.8 (DigitalTrustCenter, https://github.com/DigitalTrustCenter/sectxt), the
# security.txt validator of internet.nl. Licensed under the EUPL (EUPL-1.2; the licence, copied unchanged:
# tests/conformance/files/sectxt.LICENCE); this file is available under EUPL-1.2.
# ruff: noqa: E501  (case tables: one sectxt input and its reason per line)
"""Conformance with sectxt's test/test_sectxt.py (docs/conformance.md): each input served by a loopback site and
scanned by websec's real fetch and check, its findings held to sectxt's code through sectxt_map.toml.

A Parser test's file is served at /.well-known/security.txt as `text/plain; charset=utf-8` (the Parser reads no
HTTP); a SecurityTXT test's answers are served as its mock gives them, a location the mock makes fail (a connect
timeout) answering 404. The cases of `__init__.py` raise, each, a code sectxt's tests never raise, with the input
sectxt/__init__.py raises it for.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.conformance._sectxt import (
    HOST_IN_TESTS,
    IN_TEN_DAYS,
    LEGACY,
    SECTXT,
    SIGNED_EXAMPLE,
    THIS_YEAR,
    WELL_KNOWN,
    Answer,
    Case,
    file,
    params,
)
from tests.fixtures.sites import SAME, Request, Response, Site, html
from websec_app.scanner import scan

TESTS = "test_sectxt.py"
CODE = "__init__.py"  # cases for the codes sectxt's tests never raise, built from sectxt/__init__.py
VALID_START = f"Expires: {IN_TEN_DAYS}T18:37:07z\nContact: mailto:security@example.com\n"
SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
CSAF = "CSAF: https://example.com/.well-known/csaf/provider-metadata.json"
TRUNCATED_SIGNATURE = SIGNED_EXAMPLE.replace(
    "wpwEAQEIABAFAmTHcawJEDs4gPMoG10dAACN5wP/UozhFqHcUWRNhg4KwfY4", "wpwEAQEIABAFAmTH"
).replace("HHXU8bf222naeYJHgaHadLTJJ8YQIQ9N5fYF7K4BM0jPZc48aaUPaBdhNxw+", "HHXU8bf222naeYJHga")
UNKNOWN_FIELDS = (
    f"Expires: {IN_TEN_DAYS}T18:37:07z\n"
    "Contact: mailto:security@example.com\n"
    "Last-updated: {date.today().isoformat()}T12:00:00z\n"  # sic: not an f-string in sectxt's test
    "Unknown: value\n"
    "Encryption: https://example.com/pgp-key.txt\n"
)
CONTACTS = SIGNED_EXAMPLE.replace(
    "Contact: mailto:security@example.com",
    "Contact: mailto:security@example.com\n"
    "Contact: mailto:security%2Buri%2Bencoded@example.com\n"
    "Contact: mailto:not_a_valid_email\n"
    "Contact: tel:+1-201-555-0123\n"
    "Contact: https://example.com/security-contact.html",
)
BOMS = b"\xef\xbb\xbf\xef\xbb\xbfContact: mailto:me@example.com\n" + f"Expires: {IN_TEN_DAYS}T18:37:07z\n".encode()


#: the divergences' reasons (docs/conformance.md lists them)
NO_FIELD = "RFC 5322 3.6.8 (RFC 9116 4): a field name ends at the colon, holds no blank and is not empty, so the answer's one field-like line is no field and websec reads it as no security.txt (security_txt.missing, the 2 points of security_txt.invalid)"
UNKNOWN = "RFC 9116 2.4 and 4 (ext-field): a file may carry fields a reader does not know, which it ignores; a misspelt Contact or Expires is reported missing"
SOFT_404 = "3 of its 4 lines are no field and it has no Expires: websec reads such a 200 answer as some other text (a soft 404), not a security.txt, and asks /security.txt (RFC 9116 3)"
NOT_SIGNED = "RFC 9116 2.3 recommends a signature, but an unverified one proves nothing (the scanner has no key the site vouches for) and most files have none: websec records `signed` in the section's details and grades nothing"
NO_ENCRYPTION = "sectxt's own advice: RFC 9116 2.5.4 makes Encryption optional and ties it to no Contact"


def case(test: str, label: str, code: str, text: str, ours: tuple[str, ...], why: str | None = None) -> Case:
    """A Parser test: its file at the well-known location, as text/plain; charset=utf-8."""
    return Case(f"{TESTS}: {test}", label, code, file(text), ours, why=why)


CASES = [
    case(
        "test_future_expires",
        "#0",
        "long_expiry",
        f"Expires: {THIS_YEAR + 3}-01-01T12:00:00Z\n",
        ("security_txt.invalid", "security_txt.expires_far"),
    ),
    case("test_invalid_expires", "#0 Nonsense", "invalid_expiry", "Expires: Nonsense\n", ("security_txt.invalid",)),
    case(
        "test_invalid_expires",
        "#1 RFC 5322 date",
        "invalid_expiry",
        "Expires: Thu, 15 Sep 2022 06:03:46 -0700\n",
        ("security_txt.invalid",),
    ),
    case("test_expired", "#0", "expired", "Expires: 2020-01-01T12:00:00Z\n", ("security_txt.invalid",)),
    case(
        "test_long_expiry",
        "#0 # Wow is a comment",
        "long_expiry",
        "Expires: 2030-01-01T12:00:00Z\n# Wow",
        ("security_txt.invalid", "security_txt.expires_far", "security_txt.lint"),
    ),
    case(
        "test_preferred_languages",
        "#0 English",
        "invalid_lang",
        VALID_START + "Preferred-Languages: English",
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_preferred_languages",
        "#1 nl, Invalid",
        "invalid_lang",
        VALID_START + "Preferred-Languages: nl, Invalid",
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_preferred_languages",
        "#2 En, dUT",
        "!invalid_lang",
        VALID_START + "Preferred-Languages: En, dUT",
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_prec_ws", "#0", "prec_ws", "Contact : mailto:me@example.com\n# Wow", ("security_txt.missing",), NO_FIELD
    ),
    case("test_empty_key", "#0", "empty_key", ": mailto:me@example.com\n# Wow", ("security_txt.missing",), NO_FIELD),
    case("test_empty_key2", "#0", "empty_key", " : mailto:me@example.com\n# Wow", ("security_txt.missing",), NO_FIELD),
    case(
        "test_missing_space",
        "#0",
        "no_space",
        "Contact:mailto:me@example.com\n# Wow",
        ("security_txt.invalid", "security_txt.lint"),
    ),
    case("test_missing_value", "#0", "empty_value", "Contact: \n# Wow", ("security_txt.invalid", "security_txt.lint")),
    case(
        "test_no_https",
        "#0",
        "no_https",
        "Contact: http://example.com/contact\n# Wow",
        ("security_txt.invalid", "security_txt.lint"),
    ),
    case(
        "test_no_uri", "#0", "no_uri", "Contact: me@example.com\n# Wow", ("security_txt.invalid", "security_txt.lint")
    ),
    case("test_signed", "#0", "valid", SIGNED_EXAMPLE, ("security_txt.present",)),
    case(
        "test_signed_invalid_pgp",
        "#0 no signature header",
        "pgp_data_error",
        SIGNED_EXAMPLE.replace(SIGNATURE, ""),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_signed_invalid_pgp",
        "#1 dash-escaped line in the signature",
        "pgp_data_error",
        SIGNED_EXAMPLE.replace(SIGNATURE, f"{SIGNATURE}\n- \n"),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_signed_invalid_pgp",
        "#2 signature data cut",
        "pgp_error",
        TRUNCATED_SIGNATURE,
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_signed_no_canonical",
        "#0",
        "no_canonical",
        SIGNED_EXAMPLE.replace("Canonical: https://example.com/.well-known/security.txt", ""),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_signed_dash_escaped",
        "#0",
        "valid",
        SIGNED_EXAMPLE.replace("Expires", "- Expires"),
        ("security_txt.present",),
    ),
    case(
        "test_pgp_signed_formatting",
        "#0",
        "signed_format_issue",
        "\r\n" + SIGNED_EXAMPLE,
        ("security_txt.lint", "security_txt.present"),
    ),
    case("test_unknown_fields", "#0 valid", "valid", UNKNOWN_FIELDS, ("security_txt.present",)),
    case(
        "test_unknown_fields",
        "#1 Last-updated, Unknown",
        "unknown_field",
        UNKNOWN_FIELDS,
        ("security_txt.present",),
        UNKNOWN,
    ),
    case(
        "test_no_line_separators",
        "#0 one line",
        "no_line_separators",
        f"Contact: mailto:security@example.com  Expires: {IN_TEN_DAYS}T18:37:07z  # All on a single line",
        ("security_txt.invalid", "security_txt.lint"),
    ),
    case(
        "test_no_line_separators",
        "#1 four lines",
        "no_line_separators",
        "line 1\nline 2\nline 3\nContact: mailto:security@example.com  Expires",
        ("security_txt.missing",),
        SOFT_404,
    ),
    case(
        "test_csaf_https_uri",
        "#0",
        "no_https",
        SIGNED_EXAMPLE.replace(CSAF, CSAF.replace("https:", "http:")),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_csaf_provider_file",
        "#0",
        "no_csaf_file",
        SIGNED_EXAMPLE.replace(CSAF, CSAF.replace("provider-metadata", "other_provider_name")),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_multiple_csaf_notification",
        "#0 valid",
        "valid",
        SIGNED_EXAMPLE.replace("# CSAF link", "# CSAF link\n" + CSAF.replace("example.com", "example2.com")),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_multiple_csaf_notification",
        "#1",
        "multiple_csaf_fields",
        SIGNED_EXAMPLE.replace("# CSAF link", "# CSAF link\n" + CSAF.replace("example.com", "example2.com")),
        ("security_txt.lint", "security_txt.present"),
    ),
    case(
        "test_multiple_signed_messages",
        "#0",
        "pgp_data_error",
        SIGNED_EXAMPLE.replace(SIGNATURE, f"{SIGNATURE}\n{SIGNATURE}"),
        ("security_txt.lint", "security_txt.present"),
    ),
    case("test_contact_field_properties", "#0", "valid", CONTACTS, ("security_txt.lint", "security_txt.present")),
    Case(
        f"{TESTS}: test_valid_security_txt",
        "#0 text/plain",
        "valid",
        Answer(f"Contact: mailto:me@example.com\nExpires: {IN_TEN_DAYS}T18:37:07z\n".encode(), "text/plain"),
        ("security_txt.lint", "security_txt.present"),
        legacy=file(SIGNED_EXAMPLE, None),
    ),
    Case(
        f"{TESTS}: test_not_correct_path",
        "#0 legacy location",
        "location",
        Answer(b"", None, 404),
        ("security_txt.invalid", "security_txt.legacy_location", "security_txt.lint"),
        legacy=file(SIGNED_EXAMPLE, None),
    ),
    Case(
        f"{TESTS}: test_invalid_uri_scheme",
        "#0 http only",
        "invalid_uri_scheme",
        file(SIGNED_EXAMPLE, None),
        ("security_txt.invalid", "security_txt.lint"),
        https=False,
    ),
    case(
        "test_byte_order_mark_parser", "#0", "bom_in_file", BOMS.decode(), ("security_txt.invalid", "security_txt.lint")
    ),
    Case(
        f"{TESTS}: test_byte_order_mark",
        "#0",
        "bom_in_file",
        Answer(BOMS, "text/plain"),
        ("security_txt.invalid", "security_txt.lint"),
    ),
    case(
        "test_too_many_final_newlines_signed",
        "#0",
        "too_many_line_separators",
        SIGNED_EXAMPLE + "\n",
        ("security_txt.lint", "security_txt.present"),
    ),
    # The codes sectxt's tests never raise, each with an input sectxt/__init__.py raises it for
    Case(CODE, "no_expire", "no_expire", file("Contact: mailto:security@example.com\n"), ("security_txt.invalid",)),
    Case(
        CODE,
        "multi_expire",
        "multi_expire",
        file(VALID_START + f"Expires: {IN_TEN_DAYS}T18:37:07z\n"),
        ("security_txt.invalid",),
    ),
    Case(CODE, "no_contact", "no_contact", file(f"Expires: {IN_TEN_DAYS}T18:37:07z\n"), ("security_txt.invalid",)),
    Case(
        CODE,
        "no_canonical_match",
        "no_canonical_match",
        file(VALID_START + "Canonical: https://elsewhere.example.com/.well-known/security.txt\n"),
        ("security_txt.canonical_mismatch", "security_txt.present"),
    ),
    Case(
        CODE, "invalid_media", "invalid_media", file(VALID_START, "text/html; charset=utf-8"), ("security_txt.invalid",)
    ),
    Case(
        CODE,
        "invalid_charset",
        "invalid_charset",
        file(VALID_START, "text/plain; charset=iso-8859-1"),
        ("security_txt.invalid",),
    ),
    Case(CODE, "no_content_type", "no_content_type", file(VALID_START, None), ("security_txt.invalid",)),
    Case(
        CODE,
        "utf8",
        "utf8",
        Answer(VALID_START.encode() + b"# Caf\xe9\n"),
        ("security_txt.lint", "security_txt.present"),
    ),
    Case(
        CODE,
        "data_after_sig",
        "data_after_sig",
        file(SIGNED_EXAMPLE + "Contact: mailto:other@example.com\n"),
        ("security_txt.lint", "security_txt.present"),
    ),
    Case(
        CODE,
        "invalid_line",
        "invalid_line",
        file(VALID_START + "no field here\n"),
        ("security_txt.lint", "security_txt.present"),
    ),
    Case(
        CODE,
        "multi_lang",
        "multi_lang",
        file(VALID_START + "Preferred-Languages: en\nPreferred-Languages: nl\n"),
        ("security_txt.lint", "security_txt.present"),
    ),
    Case(CODE, "no_security_txt", "no_security_txt", Answer(b"not found\n", status=404), ("security_txt.missing",)),
    Case(CODE, "not_signed", "not_signed", file(VALID_START), ("security_txt.present",), why=NOT_SIGNED),
    Case(CODE, "no_encryption", "no_encryption", file(VALID_START), ("security_txt.present",), why=NO_ENCRYPTION),
]

GROUPS = {TESTS: [c for c in CASES if c.test.startswith(TESTS)], CODE: [c for c in CASES if c.test == CODE]}
#: sectxt's tests that are not ported, and why (docs/conformance.md lists them)
NOT_PORTED = {
    "test_unknown_fields": "its `recommend_unknown_fields=False` half: an option of sectxt's own",
    "test_local_file": "sectxt reading a file from disk: test_signed's file, which is ported",
}


def serve(answer: Answer) -> Any:
    def handler(request: Request) -> Response:
        body = answer.body.replace(HOST_IN_TESTS.encode(), (request.host or "").encode())
        headers = [("Content-Type", answer.content_type)] if answer.content_type else []
        return Response(answer.status, headers, body)

    return handler


@pytest.mark.parametrize("case", params(CASES))
async def test_sectxt(case: Case, site_factory, scan_settings) -> None:
    page = html("<!doctype html><html><head><title>Home</title></head><body><p>Hello</p></body></html>")
    routes = {"/": page, WELL_KNOWN: serve(case.well_known), LEGACY: serve(case.legacy)}
    site = Site(names=(site_factory.unique_host("sectxt-conformance"),), routes=routes)
    if not case.https:
        site = replace(site, tls=None, http=SAME)
    running = site_factory(site)
    report = (await scan(running.url if case.https else f"http://{running.host}/", scan_settings)).to_dict()
    findings = [(f["check"], f["note"] or "") for f in report["security_txt"]["findings"]]
    SECTXT.assert_conforms(case, findings)
