"""SMTP TLS Reporting (RFC 8460 3): the `_smtp._tls` TXT record, edge by edge."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.tls_rpt import tlsrpt_near_misses, tlsrpt_problem, tlsrpt_records


def test_records_not_beginning_with_the_version_and_a_separator_are_discarded_before_counting() -> None:
    # "records that do not begin with "v=TLSRPTv1;" are discarded. If the number of resulting records is not one,
    # senders MUST assume the recipient domain does not implement TLSRPT."
    texts = ["v=TLSRPTv1", "V=TLSRPTv1; rua=mailto:a@example.com", "v=TLSRPTv1; rua=mailto:b@example.com", "x"]
    assert tlsrpt_records(texts) == ["v=TLSRPTv1; rua=mailto:b@example.com"]
    assert tlsrpt_near_misses(texts) == ["v=TLSRPTv1", "V=TLSRPTv1; rua=mailto:a@example.com"]
    assert tlsrpt_records(["v=TLSRPTv1 ;rua=mailto:a@example.com"]) == ["v=TLSRPTv1 ;rua=mailto:a@example.com"]


def test_a_record_of_another_version_is_discarded_and_no_near_miss() -> None:
    # "v=TLSRPTv10" names version 10, not v1 mistyped: like "v=TLSRPTv2", the domain has no v1 record (mox:
    # ErrNoRecord), where it was reported as a v1 record senders discard (dns.tlsrpt_invalid)
    texts = ["v=TLSRPTv10", "v=TLSRPTv10; rua=mailto:a@example.com", "V=TLSRPTv12", "v=TLSRPTv2; rua=mailto:a@x.org"]
    assert tlsrpt_records(texts) == []
    assert tlsrpt_near_misses(texts) == []
    # v1 mistyped, its ";" and space left out included ("v=TLSRPTv1rua=..." was taken for another version)
    typos = ["v=TLSRPTv1", "v=TLSRPTv1 rua=mailto:a@example.com", "v=TLSRPTv1rua=mailto:a@example.com"]
    assert tlsrpt_near_misses(typos) == typos


@pytest.mark.parametrize(
    "record",
    [
        "v=TLSRPTv1; rua=mailto:tls@example.com",
        "v=TLSRPTv1;rua=https://reports.example.com/v1/tlsrpt",
        "v=TLSRPTv1; rua=mailto:tls@example.com , https://reports.example.com/x;",  # *WSP "," *WSP between URIs
        "v=TLSRPTv1 ; rua=mailto:tls@example.com; ext.1=y",  # an extension field, ignored
        "v=TLSRPTv1; rua=mailto:tls@example.com; rua=ftp://x",  # only the first rua counts
        "v=TLSRPTv1; rua=mailto:tls%2Breports@example.com",  # percent-encoded (RFC 6068)
        "v=TLSRPTv1; rua=mailto:tls@example.com?subject=tlsrpt",
    ],
)
def test_a_record_in_the_grammar_with_a_rua_is_valid(record) -> None:
    assert tlsrpt_problem(record) is None


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("v=TLSRPTv1; rua = mailto:tls@example.com", "'rua = mailto:tls@example.com' is not name=value"),
        ("v=TLSRPTv1; RUA=mailto:tls@example.com", "no rua= field (where reports go) (field names are case-sensitive)"),
        ("v=TLSRPTv1;", "no field follows v=TLSRPTv1"),
        ("v=TLSRPTv1; ext=1", "the record has no rua= field"),
        ("v=TLSRPTv1; rua=mailto:tls@example.com;; x=1", "an empty field (two ';' in a row)"),
        ("v=TLSRPTv1; rua=mailto:tls@example.com; x=a b", "x=a b is not a field value"),
        ("v=TLSRPTv1; rua=mailto:tls@example.com ", "'mailto:tls@example.com ' is not a URI"),  # space at the end
        ("v=TLSRPTv1; rua=https://r.example.com/a b", "'https://r.example.com/a b' is not a URI"),
        ("v=TLSRPTv1; rua=mailto:tls@example.com!10m", "is not a URI (a space, or a ',', '!' or ';'"),  # no size
        ("v=TLSRPTv1; rua=https://r.example.com/!x", "is not a URI"),
        ("v=TLSRPTv1; rua=ftp://x.example.com", "'ftp://x.example.com' is not a mailto: or https: URI"),
        ("v=TLSRPTv1; rua=https://", "'https://' names no host to send reports to"),
        ("v=TLSRPTv1; rua=mailto:tls@", "'mailto:tls@' is not a mail address"),
        ("v=TLSRPTv1; rua=", "'' is not a mailto: or https: URI"),
        ("v=TLSRPTv1; rua=mailto:a@example.com,", "'' is not a mailto: or https: URI"),
    ],
)
def test_a_record_outside_the_grammar_or_without_a_usable_rua_is_invalid(record, problem) -> None:
    found = tlsrpt_problem(record)
    assert found is not None and problem in found
