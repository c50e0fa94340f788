"""MTA-STS (RFC 8461): the _mta-sts TXT record, the policy file, and which MX hosts its mx patterns cover."""

from __future__ import annotations

import random

import pytest

from websec_app.scanner.records.mta_sts import (
    parse_sts_policy,
    sts_near_misses,
    sts_record_problem,
    sts_records,
    uncovered_mx,
)


def matches_pairwise(host: str, pattern: str) -> bool:
    """RFC 8461 4.1 read one host and one pattern at a time: the rule uncovered_mx must keep."""
    host, pattern = host.rstrip(".").lower(), pattern.rstrip(".").lower()
    if pattern.startswith("*."):
        label, _, rest = host.partition(".")
        return bool(label) and rest == pattern[2:]
    return host == pattern


@pytest.mark.parametrize(
    ("host", "covered"),
    [
        ("mx1.example.com", True),  # listed by name
        ("MX2.Example.COM.", True),  # *.example.com: one more label, any case, a final dot
        ("example.com", False),  # the wildcard needs one more label
        ("a.b.example.com", False),  # and exactly one
        ("mx.example.net", False),
    ],
)
def test_an_mx_is_covered_by_its_name_or_a_wildcard_of_one_label(host, covered) -> None:
    assert (uncovered_mx([host], ["mx1.example.com", "*.example.com."]) == []) is covered


def test_each_uncovered_host_is_named_once_in_order() -> None:
    assert uncovered_mx(["b.example.net", "a.example.net", "B.example.net."], ["x.example.net"]) == [
        "b.example.net",
        "a.example.net",
    ]


def test_the_set_lookups_agree_with_the_pairwise_rule() -> None:
    rng = random.Random(20261128)  # fixed: the same names on every run
    labels = ["a", "b", "mx", "*", "example", "com", ""]

    def name() -> str:
        return ".".join(rng.choice(labels) for _ in range(rng.randint(1, 4))) + rng.choice(["", "."])

    for _ in range(3000):
        hosts = [name().lstrip("*") for _ in range(rng.randint(0, 4))]
        patterns = [name() for _ in range(rng.randint(0, 4))]
        expected = list(dict.fromkeys(h.rstrip(".").lower() for h in hosts))
        expected = [h for h in expected if not any(matches_pairwise(h, p) for p in patterns)]
        assert uncovered_mx(hosts, patterns) == expected, (hosts, patterns)


# -- the _mta-sts TXT record (RFC 8461 3.1) ---------------------------------------------------------------------


def test_records_not_beginning_with_the_version_and_a_separator_are_discarded_before_counting() -> None:
    # "records that do not begin with "v=STSv1;" are discarded. If the number of resulting records is not one ..."
    texts = ["v=STSv1", "v=STSv1 id=2", "V=STSv1; id=3", " v=STSv1; id=4", "v=STSv1; id=1", "v=spf1 -all"]
    assert sts_records(texts) == ["v=STSv1; id=1"]
    assert sts_near_misses(texts) == ["v=STSv1", "v=STSv1 id=2", "V=STSv1; id=3", " v=STSv1; id=4"]
    assert sts_records(["v=STSv1 ; id=1", "v=STSv1\t;id=2"]) == ["v=STSv1 ; id=1", "v=STSv1\t;id=2"]  # sts-sep's *WSP


def test_a_record_of_another_version_is_discarded_and_no_near_miss() -> None:
    # "v=STSv10" names version 10, not v1 mistyped: like "v=STSv2", the domain has no v1 record (mox: ErrNoRecord),
    # where it was reported as a v1 record senders discard (dns.mta_sts_invalid)
    texts = ["v=STSv10", "v=STSv10; id=1", "V=STSv12; id=1", "v=STSv2; id=1"]
    assert sts_records(texts) == []
    assert sts_near_misses(texts) == []
    # v1 mistyped, its ";" and space left out included ("v=STSv1id=abc" was taken for another version)
    typos = ["v=STSv1", "v=STSv1 id=1", "v=STSv1,id=1", "v=STSv1id=abc", "v=STSv1a; id=1", "v=STSv1\u0661; id=1"]
    assert sts_near_misses(typos) == typos


@pytest.mark.parametrize(
    "record",
    [
        "v=STSv1; id=20260101T000000",
        "v=STSv1;id=abc",
        "v=STSv1; id=abc;",
        "v=STSv1; id=abc; ",  # sts-sep = *WSP ";" *WSP, the last one optional
        "v=STSv1 ;\tid=abc",
        "v=STSv1; id=" + "a" * 32,
        "v=STSv1; ext.field_1=x-1:y/z; id=abc",  # an extension field, ignored
        "v=STSv1; id=abc; id=not-an-id",  # a repeated field: only the first counts (3.2)
    ],
)
def test_a_record_in_the_grammar_with_an_id_is_valid(record) -> None:
    assert sts_record_problem(record) is None


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("v=STSv1; id = abc", "'id = abc' is not name=value"),  # %s"id=": nothing around the "="
        ("v=STSv1; id =abc", "'id =abc' is not name=value"),
        ("v=STSv1; id=abc ", "id=abc  is not 1 to 32 letters and digits"),  # a space after the last value
        ("v=STSv1; id=2026-01-01", "id=2026-01-01 is not 1 to 32 letters and digits"),
        ("v=STSv1; id=" + "a" * 33, "is not 1 to 32 letters and digits"),
        ("v=STSv1; ID=abc", "the record has no id field (field names are case-sensitive)"),
        ("v=STSv1;", "no field follows v=STSv1"),
        ("v=STSv1; id=abc;; x=1", "an empty field (two ';' in a row)"),
        ("v=STSv1; id=abc; comment", "'comment' is not name=value"),
        ("v=STSv1; id=abc; _x=1", "'_x=1' is not name=value"),  # sts-ext-name begins with a letter or digit
        ("v=STSv1; id=abc; x=a b", "x=a b is not a field value (printable, without space, '=' or ';')"),
        ("v=STSv1; id=abc; x=", "x= is not a field value"),
        ("v=STSv1; id=abc; x=a=b", "x=a=b is not a field value"),
    ],
)
def test_a_record_outside_the_grammar_is_invalid_as_senders_find_it(record, problem) -> None:
    # RFC 8461 3.1: "if the resulting record is syntactically invalid, senders MUST assume the recipient domain
    # does not have an available MTA-STS Policy"
    found = sts_record_problem(record)
    assert found is not None and problem in found


# -- the policy file (RFC 8461 3.2) -----------------------------------------------------------------------------

POLICY_LINES = ["version: STSv1", "mode: enforce", "mx: mx1.example.com", "mx: *.example.net", "max_age: 604800"]


@pytest.mark.parametrize(
    "text",
    [
        "\r\n".join(POLICY_LINES) + "\r\n",
        "\n".join(POLICY_LINES) + "\n",
        "\n".join(POLICY_LINES),  # the last terminator is optional
        "version: STSv1\r\nmode: enforce\nmx: mx1.example.com\r\nmx: *.example.net\nmax_age: 604800",  # mixed
        "version:STSv1\nmode:\tenforce  \nmx: mx1.example.com\t\nmx: *.example.net\nmax_age: 604800",  # *WSP
        "\n".join([*POLICY_LINES, "comment: any text, even with spaces ünd UTF-8", "x-ext.1: y"]),  # ignored
    ],
)
def test_a_policy_in_the_grammar_is_read(text) -> None:
    policy = parse_sts_policy(text)
    assert policy.errors == []
    assert (policy.mode, policy.max_age, policy.mx) == ("enforce", 604800, ["mx1.example.com", "*.example.net"])


def test_a_repeated_field_counts_at_its_first_occurrence_but_mx_at_every_one() -> None:
    # 3.2: "If any non-repeated field -- i.e., all fields excluding "mx" -- is duplicated, all entries except for
    # the first SHALL be ignored"
    text = "\n".join([*POLICY_LINES, "mode: testing", "max_age: 99999999999", "version: STSv2", "mx: mx2.example.org"])
    policy = parse_sts_policy(text)
    assert policy.errors == []
    assert (policy.mode, policy.max_age) == ("enforce", 604800)
    assert policy.mx == ["mx1.example.com", "*.example.net", "mx2.example.org"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("mode : enforce", "'mode : enforce' is not 'key: value'"),  # field-delim is ":" *WSP, right after the name
        (" mode: enforce", "' mode: enforce' is not 'key: value'"),
        ("\tmx: mx1.example.com", "is not 'key: value'"),
        ("mode enforce", "'mode enforce' is not 'key: value'"),
        ("mode: enforce\rmax_age: 1", "mode must be enforce, testing or none, not 'enforce\\rmax_age: 1'"),  # CR alone
        ("Mode: enforce", "mode must be enforce, testing or none, not None (field names are case-sensitive: 'Mode' is"),
        ("mode: Enforce", "mode must be enforce, testing or none, not 'Enforce'"),  # %s"enforce": case-sensitive
        ("version: stsv1", "version must be STSv1, not 'stsv1'"),
        ("max_age: 31557601", "max_age must be a number of seconds up to 31557600"),
        ("max_age: 00000000001", "max_age must be a number of seconds up to 31557600"),  # 1*10DIGIT
        ("max_age: -1", "max_age must be a number of seconds up to 31557600"),
        ("mx: mx1.example.com.", "mx 'mx1.example.com.' is not a host name or *.domain pattern"),  # no final dot
        ("mx: mx_1.example.com", "mx 'mx_1.example.com' is not a host name"),
        ("mx: *.*.example.com", "mx '*.*.example.com' is not a host name"),  # "*." leads, once
        ("mx: mx*.example.com", "mx 'mx*.example.com' is not a host name"),
        ("mx: *example.com", "mx '*example.com' is not a host name"),
        ("mx: mäil.example.com", "mx 'mäil.example.com' is not a host name"),  # A-labels, not U-labels
        ("mx: -mx.example.com", "mx '-mx.example.com' is not a host name"),
        ("mx:", "mx '' is not a host name"),
        ("note:", "'note:' is not 'key: value' (an empty value, or control characters)"),
        ("note: a\x01b", "is not 'key: value' (an empty value, or control characters)"),
        ("a" * 33 + ": x", "is not 'key: value'"),  # sts-policy-ext-name: at most 32 characters
    ],
)
def test_a_policy_line_outside_the_grammar_is_an_error(text, error) -> None:
    lines = [line for line in POLICY_LINES if line.split(":")[0] != text.split(":")[0].strip().lower()]
    policy = parse_sts_policy("\n".join([*lines[:2], text, *lines[2:]]) + "\n")
    assert any(error in found for found in policy.errors), policy.errors


def test_empty_lines_are_skipped_as_senders_skip_them() -> None:
    # The grammar has no empty line, but files often end with one and senders read past it (postfix-mta-sts-
    # resolver): an error here told owners senders ignore a policy they enforce
    for text in (
        "\r\n".join(POLICY_LINES) + "\r\n",
        "\r\n".join(POLICY_LINES) + "\r\n\r\n",
        "\n".join(POLICY_LINES) + "\n\n",
        "\n".join([*POLICY_LINES[:2], "", " \t", *POLICY_LINES[2:]]),
    ):
        policy = parse_sts_policy(text)
        assert policy.errors == [], repr(text)
        assert (policy.mode, policy.max_age) == ("enforce", 604800)


@pytest.mark.parametrize(
    ("text", "errors"),
    [
        ("version: STSv1\nmode: none\nmax_age: 0\n", []),  # mode none needs no mx; max_age may be 0
        ("version: STSv1\nmode: testing\nmax_age: 86400\n", ["no mx line: the policy allows no mail server"]),
        (
            "version: STSv1\nmode: enforce\nMX: mx1.example.com\nmax_age: 1\n",
            ["no mx line: the policy allows no mail server (field names are case-sensitive: 'MX' is not 'mx')"],
        ),
        ("mode: enforce\nmx: a.example.com\nmax_age: 1\n", ["version must be STSv1"]),
    ],
)
def test_required_fields(text, errors) -> None:
    assert parse_sts_policy(text).errors == errors
