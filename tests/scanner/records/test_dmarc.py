"""DMARC (RFC 7489, and DMARCbis's np, psd and t): the policy record of `_dmarc.<domain>`, edge by edge."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer
from websec_app.scanner.records.dmarc import (
    discover,
    external_report_domains,
    is_dmarc,
    mailto_addresses,
    parse_dmarc,
)
from websec_app.scanner.records.dns_text import txt_strings

# -- discovery (RFC 7489 6.6.3 steps 2 and 5) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dmarc"),
    [
        ("v=DMARC1; p=reject", True),
        ("v=DMARC1;p=reject", True),
        ("v = DMARC1 ; p=reject", True),  # dmarc-version: "v" *WSP "=" *WSP, then dmarc-sep: *WSP ";" *WSP
        ("V=DMARC1; p=reject", True),  # the tag name is an ABNF literal: case-insensitive (RFC 5234 2.3)
        ("v=DMARC1", True),  # a consent record is only this (7.1)
        ("v=dmarc1; p=reject", False),  # the value is %x44 %x4d %x41 %x52 %x43 %x31: "MUST match precisely" (6.3)
        ("v=DMARC1p=reject", False),  # no separator: the value of v is "DMARC1p=reject"
        ("v=DMARC1 p=reject", False),
        (" v=DMARC1; p=reject", False),  # v "MUST be the first tag": nothing before it
        ("p=reject; v=DMARC1", False),
        ("v=DMARC10; p=reject", False),
    ],
)
def test_only_a_record_beginning_with_v_dmarc1_and_a_separator_is_a_dmarc_record(text, dmarc) -> None:
    assert is_dmarc(text) is dmarc


def test_a_record_split_over_several_strings_is_read_joined_without_spaces() -> None:
    # RFC 7489 6.1: the character-strings of one TXT record are concatenated, even inside the version tag
    answer = dns_answer("_dmarc.example.com", "TXT", '"v=DMA" "RC1; p=rej" "ect"', '"v=spf1 -all"')
    records, discarded = discover(txt_strings(answer.records))
    assert (records, discarded) == (["v=DMARC1; p=reject"], [])
    assert parse_dmarc(records[0]).policy == "reject"


def test_several_txt_records_of_which_one_is_dmarc_leave_that_one() -> None:
    records, discarded = discover(["google-site-verification=abc", "v=DMARC1; p=quarantine", "v=dmarc1; p=none"])
    assert records == ["v=DMARC1; p=quarantine"] and discarded == ["v=dmarc1; p=none"]


# -- tags: whitespace, case, order, unknown and repeated tags (6.3, 6.4) -----------------------------------------


def test_whitespace_around_equals_and_semicolons_and_the_case_of_names_and_values_do_not_matter() -> None:
    record = parse_dmarc("v=DMARC1 ;\tP = REJECT ; SP=Quarantine;ADKIM = S; pct= 50 ;")
    assert record.errors == []
    assert (record.policy, record.subdomain_policy, record.tags["adkim"], record.pct) == (
        "reject",
        "quarantine",
        "S",
        50,
    )


def test_p_after_other_tags_is_read_as_receivers_read_it() -> None:
    # RFC 7489 6.4 puts p second; OpenDMARC and DMARCbis's grammar take the tags in any order
    record = parse_dmarc("v=DMARC1; rua=mailto:d@example.com; p=reject")
    assert (record.policy, record.errors) == ("reject", [])


def test_unknown_tags_are_ignored() -> None:
    record = parse_dmarc("v=DMARC1; p=reject; foo=bar; x_y=1")
    assert (record.policy, record.errors, record.ignored_tags) == ("reject", [], ["foo", "x_y"])


def test_a_repeated_tag_is_an_error_and_keeps_its_last_value() -> None:
    record = parse_dmarc("v=DMARC1; p=none; p=reject")
    assert record.errors == ["the tag p appears twice"] and record.policy == "reject"


# -- p, sp, np: missing or invalid values (6.6.3 step 6, DMARCbis's policy discovery) ----------------------------


@pytest.mark.parametrize(
    ("text", "policy", "subdomains", "non_existent"),
    [
        ("v=DMARC1; p=reject", "reject", "reject", "reject"),
        ("v=DMARC1; p=reject; sp=none", "reject", "none", "none"),
        ("v=DMARC1; p=reject; sp=quarantine; np=none", "reject", "quarantine", "none"),
        ("v=DMARC1; p=none; sp=reject", "none", "reject", "reject"),
        # without a valid p, sp and np: no DMARC processing without a valid rua ...
        ("v=DMARC1", None, None, None),
        ("v=DMARC1; sp=reject", None, None, None),
        ("v=DMARC1; p=block", None, None, None),
        ("v=DMARC1; p=reject; sp=bogus", None, None, None),
        ("v=DMARC1; p=reject; np=bogus", None, None, None),
        ("v=DMARC1; p=block; rua=mailto:d", None, None, None),  # a rua that is not valid
        # ... and with one, the record is read as "v=DMARC1; p=none": its sp and np go with the rest
        ("v=DMARC1; rua=mailto:d@example.com", "none", "none", "none"),
        ("v=DMARC1; p=block; sp=reject; rua=mailto:d@example.com", "none", "none", "none"),
        ("v=DMARC1; p=reject; sp=bogus; np=reject; rua=mailto:d@example.com", "none", "none", "none"),
        ("v=DMARC1; p=reject; np=bogus; sp=reject; rua=mailto:d@example.com", "none", "none", "none"),
    ],
)
def test_policies_for_the_domain_its_subdomains_and_non_existent_subdomains(
    text, policy, subdomains, non_existent
) -> None:
    record = parse_dmarc(text)
    assert (record.policy, record.subdomain_policy, record.non_existent_policy) == (policy, subdomains, non_existent)


# -- the other known tags: invalid values are errors, defaults apply (6.3, 6.4) ----------------------------------


@pytest.mark.parametrize(
    ("tag", "error"),
    [
        ("pct=101", "pct=101 is not a whole number from 0 to 100"),
        ("pct=-5", "pct=-5 is not a whole number from 0 to 100"),
        ("adkim=x", "adkim=x is not r or s"),
        ("aspf=relaxed", "aspf=relaxed is not r or s"),
        ("fo=2", "fo=2 is not 0, 1, d or s, or a list of them separated by ':'"),
        ("fo=0,1", "fo=0,1 is not 0, 1, d or s, or a list of them separated by ':'"),
        ("fo=d:", "fo=d: is not 0, 1, d or s, or a list of them separated by ':'"),
        ("rf=iodef", "rf=iodef is not afrf, the one registered failure report format"),
        ("rf=afrf:arf", "rf=afrf:arf is not afrf, the one registered failure report format"),
        ("ri=1h", "ri=1h is not a number of seconds (a 32-bit unsigned integer)"),
        ("ri=-1", "ri=-1 is not a number of seconds (a 32-bit unsigned integer)"),
        ("ri=4294967296", "ri=4294967296 is not a number of seconds (a 32-bit unsigned integer)"),
        ("ri=" + "9" * 5000, "a 32-bit unsigned integer"),  # past int()'s 4,300 digits: no ValueError
        ("np=bogus", "np=bogus is not none, quarantine or reject"),
        ("psd=maybe", "psd=maybe is not y or n or u (DMARCbis)"),
        ("t=yes", "t=yes is not y or n (DMARCbis)"),
    ],
)
def test_an_invalid_value_of_a_known_tag_is_an_error(tag, error) -> None:
    (found,) = parse_dmarc(f"v=DMARC1; p=reject; {tag}").errors
    assert error in found


@pytest.mark.parametrize(
    "tag", ["fo=0", "fo=1", "fo=d:s", "fo=0 : D : s", "rf=afrf", "rf=AFRF", "ri=86400", "ri=4294967295", "pct=0"]
)
def test_valid_values_of_the_reporting_tags_are_no_error(tag) -> None:
    assert parse_dmarc(f"v=DMARC1; p=reject; {tag}").errors == []


# -- report URIs (6.2, 6.4, 7.1) ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rua", "valid"),
    [
        ("mailto:d@example.com", True),
        ("MAILTO:d@example.com", True),
        ("mailto:d@example.com!10m", True),
        ("mailto:d@example.com!10M", True),  # ABNF literals are case-insensitive
        ("mailto:d@example.com!18446744073709551615", True),  # the largest unsigned 64-bit number
        ("mailto:d@example.com!18446744073709551616k", False),  # "MUST fit within an unsigned 64-bit integer"
        ("mailto:d@example.com!" + "9" * 5000, False),  # past int()'s 4,300 digits: no ValueError
        ("mailto:d@example.com!١٠m", False),  # 1*DIGIT is ASCII
        ("mailto:d@example.com!10x", False),
        ("mailto:d@example.com!", False),
        ("mailto:d@example.com?subject=dmarc", True),  # RFC 6068 header fields
        ("mailto:dmarc%2Breports@example.com", True),  # percent-encoded: dmarc+reports@
        ("mailto:dmarc%40example.com", True),  # percent-encoded "@"
        ("mailto:d@example.com%2Ce@example.com", True),  # two addresses (RFC 6068 `to`), the comma encoded
        ("mailto:d@example.com%2C", False),
        ("mailto:d", False),
        ("mailto:?subject=x", False),
        ("https://reports.example.com/dmarc", True),
        ("https://", False),
        ("https://[::1/x", False),
        ("http://reports.example.com/dmarc", False),
        ("d@example.com", False),
    ],
)
def test_report_uris(rua, valid) -> None:
    (uri,) = parse_dmarc(f"v=DMARC1; p=reject; rua={rua}").rua
    assert uri.valid is valid, uri.problem


def test_report_uris_are_split_at_commas_with_whitespace_around_them() -> None:
    record = parse_dmarc("v=DMARC1; p=reject; rua=mailto:a@example.com , mailto:b@example.com,\tmailto:c@example.com")
    assert [u.uri for u in record.rua] == ["mailto:a@example.com", "mailto:b@example.com", "mailto:c@example.com"]
    assert all(u.valid for u in record.rua)


def test_mailto_addresses_are_percent_decoded_and_split_at_encoded_commas() -> None:
    assert mailto_addresses("d%2Br@example.com%2Ce@example.net?subject=x") == ["d+r@example.com", "e@example.net"]
    assert mailto_addresses("?to=d@example.com") == []


@pytest.mark.parametrize(
    ("rua", "external"),
    [
        ("mailto:d@example.com,mailto:d@mail.example.com", []),  # the domain's own organisation: no consent asked
        ("mailto:d@Reports.Example.NET.", ["reports.example.net"]),  # the mailbox's domain, as the name is built
        ("mailto:d@reports.example.net?subject=x!10m", ["reports.example.net"]),
        ("mailto:d@reports%2Eexample.net", ["reports.example.net"]),  # percent-decoded
        ("mailto:d@a.example.net%2Ce@b.example.org", ["a.example.net", "b.example.org"]),
        # 7.1 applies to any URI, by "the host portion of the authority component": an https: one too
        ("https://dmarc.example.org:8443/reports", ["dmarc.example.org"]),
        ("https://dmarc.example.com/reports", []),
        ("mailto:x@bad_", []),  # not valid: no report goes there, so no consent is asked
    ],
)
def test_the_report_destinations_outside_the_organisation_whose_consent_is_asked(rua, external) -> None:
    record = parse_dmarc(f"v=DMARC1; p=reject; rua={rua}")
    assert external_report_domains("example.com", record) == external
