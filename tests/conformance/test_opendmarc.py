# Test cases adapted from OpenDMARC's libopendmarc/tests (trusteddomainproject/OpenDMARC), Copyright (c) 2012, The
# Trusted Domain Project. All rights reserved. Used under its BSD-style licence, reproduced in full in
# tests/conformance/files/opendmarc.LICENSE.
# ruff: noqa: E501  (case tables: one test and its reason per line)
"""Conformance of the dns check's DMARC findings with OpenDMARC's tests (docs/conformance.md, _opendmarc.py).

Each case is a test of OpenDMARC's libopendmarc/tests: the records it publishes or parses, the domain it asks about
and the status it asserts (with the policy and percentage OpenDMARC stores for a record it takes, from
opendmarc_policy_parse_dmarc), and websec's DMARC outcome ids for that domain. The C files hold their records in
code, so they are ported here as data, each record as the test spells it.
"""

from __future__ import annotations

import pytest

from tests.conformance._opendmarc import Case, Ours, assert_conforms, run_websec
from tests.conformance._suite import assert_each_case_in_one_section, sections_by_prefix

OKAY, BAD_VALUE = "DMARC_PARSE_OKAY", "DMARC_PARSE_ERROR_BAD_VALUE"
NONE, ENFORCED, INVALID, MISSING, REPORT_URI = (
    "dns.dmarc_none",
    "dns.dmarc_enforced",
    "dns.dmarc_invalid",
    "dns.dmarc_missing",
    "dns.dmarc_report_uri",
)
#: test_dmarc_parse.c parses every record for abuse.net: here it is the record of _dmarc.abuse.net
PARSED = "abuse.net"
# A bad value in a tag other than v, p and sp: RFC 7489 6.3 keeps the record, OpenDMARC discards it whole.
REMAINDER = (
    "RFC 7489 6.3: syntax errors in the remainder of the record (past v and p) SHOULD be discarded in favor of "
    "default values or ignored, so p applies; websec reports the bad value (dns.dmarc_invalid) beside the policy, "
    "where OpenDMARC discards the whole record (DMARC_PARSE_ERROR_BAD_VALUE)"
)
# OpenDMARC without a Public Suffix List walks up the labels to the parent's record.
NO_PSL_WALK = (
    "OpenDMARC, given no Public Suffix List, walks up the labels to the parent's record; websec always reads the "
    "record of the host's registrable domain in the list (RFC 7489 3.2), and the list holds no rule for .example "
    "(RFC 2606, delegated nowhere), which websec reads as no registrable domain (registrable.py), so it reads the "
    "host's own _dmarc record, which does not exist"
)


def _parsed(
    number: int,
    record: str,
    status: str,
    ours: tuple[str, ...],
    p: str | None = None,
    ignored: tuple[str, ...] = (),
    why: str | None = None,
) -> Case:
    return Case(f"parse-{number}", PARSED, {f"_dmarc.{PARSED}": (record,)}, status, ours, p=p, ignored=ignored, why=why)


CASES = [
    # -- test_dmarc_parse.c: opendmarc_policy_parse_dmarc() on each record
    _parsed(
        1,
        "v=DMARC1; p=none; rf=afrf; rua=mailto:dmarc-a@abuse.net; ruf=mailto:dmarc-f@abuse.net",
        OKAY,
        (NONE,),
        p="none",
    ),
    _parsed(2, "v=DMARC1; p=none;", OKAY, (NONE,), p="none"),
    _parsed(3, "v=DMARC1; p=reject;", OKAY, (ENFORCED,), p="reject"),
    _parsed(4, "v=DMARC1; p=quarantine;", OKAY, (ENFORCED,), p="quarantine"),
    _parsed(
        5,
        "v=DMARC1; p=n;",
        OKAY,
        (INVALID,),
        p="none",
        why="RFC 7489 6.4: p is exactly none, quarantine or reject; OpenDMARC takes any leading part of one (p=n as none, p=r as reject), websec reads p=n as an invalid p, and with no rua no policy applies (6.6.3 step 6)",
    ),
    _parsed(6, "", "DMARC_PARSE_ERROR_EMPTY", (MISSING,)),
    _parsed(7, "V=BOB", "DMARC_PARSE_ERROR_BAD_VERSION", (MISSING,)),
    _parsed(8, "v=DMARC1; p=bob;", BAD_VALUE, (INVALID,)),
    _parsed(9, "v=DMARC1; p=none; sp=bob;", BAD_VALUE, (INVALID,)),
    _parsed(10, "v=DMARC1; p=none; adkim=bob;", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    _parsed(11, "v=DMARC1; p=none; aspf=bob;", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    _parsed(12, "v=DMARC1; p=none; rf=bob;", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    _parsed(13, "v=DMARC1; p=none; ri=bob;", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    _parsed(14, "v=DMARC1; p=none; pct=500;", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    _parsed(15, "v=DMARC1; pct=100;", "DMARC_PARSE_ERROR_NO_REQUIRED_P", (INVALID,)),
    # an ftp: address or a mailto: without a mailbox gets no report: advice beside the record's verdict
    _parsed(16, "v=DMARC1; p=none; rua=ftp://abuse.com", OKAY, (NONE, REPORT_URI), p="none"),
    _parsed(17, "v=DMARC1; p=none; ruf=mailto://abuse.com", OKAY, (NONE, REPORT_URI), p="none"),
    _parsed(
        18,
        "v=DMARC1; p=none; ruf=mailto://abuse.com; foo=bar; buzz=happy;",
        OKAY,
        (NONE, REPORT_URI),
        p="none",
        ignored=("foo", "buzz"),
    ),
    _parsed(19, "v=DMARC1; p=none; rf=000000000000000000000000000000000", BAD_VALUE, (INVALID, NONE), why=REMAINDER),
    # -- test_dmarc_fetch.c: the values OpenDMARC stores for a record (adkim=s and aspf=s as well: websec reports no
    # alignment mode, so only p and pct are compared)
    Case(
        "fetch-1",
        PARSED,
        {
            f"_dmarc.{PARSED}": (
                "v=DMARC1; p=none; sp=none; adkim=s; aspf=s; pct=50; ri=300; rf=afrf; rua=mailto:dmarc-a@abuse.net; ruf=mailto:dmarc-f@abuse.net",
            )
        },
        OKAY,
        (NONE,),
        p="none",
        pct=50,
    ),
    # -- test_subdomain_fallback.c: opendmarc_policy_query_dmarc() for a From domain; websec scans it as a site's host
    Case(
        "fallback-1",
        "sub.parent1.example",
        {"_dmarc.parent1.example": ("v=DMARC1; p=reject; rua=mailto:dmarc@parent1.example",)},
        OKAY,
        (MISSING,),
        p="reject",
        why=NO_PSL_WALK,
    ),
    Case(
        "fallback-2",
        "own-record.example",
        {"_dmarc.own-record.example": ("v=DMARC1; p=quarantine",)},
        OKAY,
        (ENFORCED,),
        p="quarantine",
    ),
    Case(
        "fallback-3",
        "a.b.parent3.example",
        {"_dmarc.parent3.example": ("v=DMARC1; p=none; sp=reject",)},
        OKAY,
        (MISSING,),
        p="none",
        why=NO_PSL_WALK,
    ),
    Case("fallback-4", "sub.nodmarc.example", {}, "DMARC_DNS_ERROR_NO_RECORD", (MISSING,)),
    Case("fallback-5", "sub.bcx.com", {"_dmarc.bcx.com": ("v=DMARC1; p=reject",)}, OKAY, (ENFORCED,), p="reject"),
    Case(
        "fallback-6",
        "own-record.example",
        {"_dmarc.own-record.example": ("v=DMARC1; p=quarantine",)},
        OKAY,
        (ENFORCED,),
        p="quarantine",
    ),
]

_WALK = (
    "a live-DNS test (dmarcwalk.gushi.org) of how OpenDMARC's walk modes (RFC 7489's label walk, RFC 9989's tree "
    "walk with psd=) choose the record for a From domain below the organizational one; websec reads one record, "
    "that of the scanned host's registrable domain in the Public Suffix List"
)
_ALIGNED = (
    "identifier alignment (RFC 7489 3.1) of a message's From domain with a DKIM d= or SPF domain: websec judges a "
    "domain's record and sees no message"
)
#: Tests of OpenDMARC's suite that are not ported, and why.
NOT_PORTED = {
    "fetch-2": "C API only: opendmarc_policy_fetch_ruf() and _rua() with a NULL buffer must not crash (issue #256)",
    **{f"walk-{n}": _WALK for n in range(14)},
    **{f"walk-{n}": _ALIGNED for n in range(14, 17)},
    **{f"alignment-{n}": _ALIGNED for n in range(1, 11)},
}

#: The cases of each C file, in its order.
SECTIONS: dict[str, list[Case]] = sections_by_prefix(
    CASES,
    {
        "test_dmarc_parse.c": "parse-",
        "test_dmarc_fetch.c": "fetch-",
        "test_subdomain_fallback.c": "fallback-",
    },
)
#: The tests of each C file not ported.
NOT_PORTED_IN: dict[str, list[str]] = {
    "test_dmarc_fetch.c": ["fetch-2"],
    "test_dmarc_walk.c": [f"walk-{n}" for n in range(17)],
    "test_alignment.c": [f"alignment-{n}" for n in range(1, 11)],
}


@pytest.fixture(scope="module")
def ours() -> dict[str, Ours]:
    return run_websec(CASES)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_opendmarc(case: Case, ours: dict[str, Ours]) -> None:
    assert_conforms(case, ours[case.name])


def test_every_case_is_in_one_section_and_named_once() -> None:
    assert_each_case_in_one_section(CASES, SECTIONS, NOT_PORTED, NOT_PORTED_IN)
