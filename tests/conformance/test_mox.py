# Test cases adapted from mox (https://github.com/mjl-/mox), Copyright 2021 Mechiel Lukkien. Used under the MIT
# licence, reproduced in full in tests/conformance/files/mox.LICENSE.
# ruff: noqa: E501  (case tables: one test and its reason per line)
"""Conformance of the dns check's MTA-STS and TLS-RPT findings with mox's tests (docs/conformance.md, _mox.py).

Each case is one call of a Go test of mox's mtasts and tlsrpt packages, numbered in the order of the test's calls:
the record or policy it parses, or the records its mock resolver holds and the domain it looks up, or the policy its
HTTPS server answers with, and mox's result. A parse test asserts only that a record is bad; mox's result for it is
what LookupRecord (Lookup for TLS-RPT) makes of that record published alone, read from parse.go: a record that does
not begin with the version and its separator is no MTA-STS (TLS-RPT) record, ErrNoRecord, any other error is
ErrRecordSyntax. A policy that does not parse is FetchPolicy's ErrPolicySyntax.
"""

from __future__ import annotations

import pytest

from tests.conformance._mox import Case, Ours, Served, assert_conforms, run_websec
from tests.conformance._suite import assert_each_case_in_one_section, sections_by_prefix
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SiteServer

ENFORCE, TESTING, STS_MISSING, STS_INVALID = (
    "dns.mta_sts_enforce",
    "dns.mta_sts_testing",
    "dns.mta_sts_missing",
    "dns.mta_sts_invalid",
)
PRESENT, RPT_MISSING, RPT_INVALID = "dns.tlsrpt_present", "dns.tlsrpt_missing", "dns.tlsrpt_invalid"
UNKNOWN = "check.error"

#: The domain of the parse tests' records and policies, and of TestFetch: mox's own test domain.
DOMAIN = "mox.example"
#: The MX host every domain names, unless the case is about MX hosts; listed by the policies mox's tests take.
MX_HOST = "mx1.example.com"
#: The record of mox's TestFetch, published for every policy case.
RECORD = "v=STSv1; id=1"
#: The policy the record cases serve, so that a record mox takes comes with a policy: the text mox's
#: TestParsePolicy expects Policy.String() to write for its first policy (mode testing, its three MX hosts).
WRITTEN_POLICY = "version: STSv1\nmode: testing\nmax_age: 1296000\nmx: mx1.example.com\nmx: mx2.example.com\nmx: mx.backup-example.com\n"
WRITTEN = ("testing", 1296000, ("mx1.example.com", "mx2.example.com", "mx.backup-example.com"))
#: What mox's TestFetch server answers with: Go's net/http sniffs the type of a body sent without one.
SNIFFED_TEXT = "text/plain; charset=utf-8"

# RFC 8461 3.1 and RFC 8460 3 discard a record not beginning with the version and ";": mox's ErrNoRecord.
STS_NEAR_MISS = (
    'RFC 8461 3.1 discards a record not beginning with "v=STSv1;", so the domain has no record: mox\'s ErrNoRecord, '
    "and what websec's note says (senders discard it); websec grades this record, v=STSv1 with no separator, as "
    "dns.mta_sts_invalid rather than dns.mta_sts_missing: it is the domain's attempt at an MTA-STS record, which its "
    "owner must correct, where a sender has no reason to tell it from no record"
)
RPT_NEAR_MISS = (
    'RFC 8460 3 discards a record not beginning with "v=TLSRPTv1;", so the domain has no record: mox\'s ErrNoRecord, '
    "and what websec's note says (senders discard it); websec grades this record, v=TLSRPTv1 with no separator, as "
    "dns.tlsrpt_invalid rather than dns.tlsrpt_missing: it is the domain's attempt at a TLS-RPT record, which its "
    "owner must correct, where a sender has no reason to tell it from no record"
)


def _mx(domain: str, host: str = MX_HOST) -> tuple[str, str, str]:
    return (domain, "MX", f"10 {host}.")


def sts_record(number: int, record: str, mox: str, ours: tuple[str, ...], why: str | None = None) -> Case:
    """mtasts/parse_test.go TestRecord: ParseRecord(record), published at _mta-sts.mox.example."""
    records = ((f"_mta-sts.{DOMAIN}", "TXT", record), _mx(DOMAIN))
    policy = WRITTEN if mox == "ok" else None
    served = Served(WRITTEN_POLICY)
    return Case(f"sts-record-{number}", "mta-sts", DOMAIN, records, mox, ours, served, policy=policy, why=why)


def sts_policy(
    number: int,
    body: str,
    ours: tuple[str, ...],
    policy: tuple[str, int, tuple[str, ...]] | None = None,
    why: str | None = None,
) -> Case:
    """mtasts/parse_test.go TestParsePolicy: ParsePolicy(body), served as mox.example's policy."""
    mox = "ok" if policy else "ErrPolicySyntax"
    records = ((f"_mta-sts.{DOMAIN}", "TXT", RECORD), _mx(DOMAIN))
    return Case(f"sts-policy-{number}", "mta-sts", DOMAIN, records, mox, ours, Served(body), policy=policy, why=why)


def sts_lookup(
    number: int,
    domain: str,
    records: tuple[tuple[str, str, str | tuple[str, ...]], ...],
    mox: str,
    ours: tuple[str, ...],
    failing: tuple[str, ...] = (),
) -> Case:
    """mtasts/mtasts_test.go TestLookup: LookupRecord(domain) with the mock resolver's records for it."""
    policy = WRITTEN if mox == "ok" else None
    served = Served(WRITTEN_POLICY)
    return Case(f"sts-lookup-{number}", "mta-sts", domain, (*records, _mx(domain)), mox, ours, served, failing, policy)


#: mtasts/mtasts_test.go TestMatches: the policy it parses, then Matches(host) for each host.
MATCHES_POLICY = "version: STSv1\nmode: enforce\nmax_age: 1\nmx: a.example\nmx: *.b.example\n"


def sts_matches(number: int, host: str, matches: bool) -> Case:
    """The host is mox.example's only MX host: the policy must list it."""
    records = ((f"_mta-sts.{DOMAIN}", "TXT", RECORD), _mx(DOMAIN, host))
    mox, ours = ("match", (ENFORCE,)) if matches else ("no_match", (STS_INVALID,))
    policy = ("enforce", 1, ("a.example", "*.b.example")) if matches else None
    return Case(f"sts-matches-{number}", "mta-sts", DOMAIN, records, mox, ours, Served(MATCHES_POLICY), policy=policy)


def sts_fetch(
    number: int | str,
    domain: str,
    served: Served | None,
    mox: str,
    ours: tuple[str, ...],
    policy: tuple[str, int, tuple[str, ...]] | None = None,
    record: bool = True,
) -> Case:
    """mtasts/mtasts_test.go TestFetch: Get(domain), its resolver holding v=STSv1; id=1 for mox.example and
    other.example, its HTTPS server answering with the status and body for every name but
    mta-sts.doesnotexist.example, whose name does not exist."""
    records = ((f"_mta-sts.{domain}", "TXT", RECORD),) if record else ()
    return Case(f"sts-fetch-{number}", "mta-sts", domain, (*records, _mx(domain)), mox, ours, served, policy=policy)


def fetched(status: int, body: str | bytes, cert: str = "valid", cert_names: tuple[str, ...] | None = None) -> Served:
    """An answer of TestFetch's server: the Location it adds to every one, the type Go sniffs for the body."""
    sniffed = "application/octet-stream" if isinstance(body, bytes) else SNIFFED_TEXT
    return Served(body, status, sniffed, cert, cert_names, location="/other")


def rpt_record(number: int, record: str, mox: str, ours: tuple[str, ...], why: str | None = None) -> Case:
    """tlsrpt/parse_test.go TestRecord: ParseRecord(record), published at _smtp._tls.mox.example."""
    records = ((f"_smtp._tls.{DOMAIN}", "TXT", record), _mx(DOMAIN))
    return Case(f"tlsrpt-record-{number}", "tls-rpt", DOMAIN, records, mox, ours, why=why)


def rpt_lookup(
    number: int,
    domain: str,
    records: tuple[str | tuple[str, ...], ...],
    mox: str,
    ours: tuple[str, ...],
    failing: bool = False,
) -> Case:
    """tlsrpt/lookup_test.go TestLookup: Lookup(domain) with the mock resolver's records for it."""
    name = f"_smtp._tls.{domain}"
    published = (*((name, "TXT", r) for r in records), _mx(domain))
    return Case(f"tlsrpt-lookup-{number}", "tls-rpt", domain, published, mox, ours, failing=(name,) if failing else ())


_64K_AND_2 = bytes(64 * 1024 + 2)
_CERT_FOR_MOX = ("mta-sts.mox.example",)  # fakeCert's only DNS name

CASES = [
    # -- mtasts/parse_test.go TestRecord: good(...), then bad(...)
    sts_record(1, "v=STSv1; id=20160831085700Z;", "ok", (TESTING,)),
    sts_record(2, "v=STSv1; \t id=20160831085700Z  \t;", "ok", (TESTING,)),
    sts_record(3, "v=STSv1; id=a", "ok", (TESTING,)),
    sts_record(4, "v=STSv1; id=a; more=a; ext=2", "ok", (TESTING,)),
    sts_record(5, "v=STSv0", "ErrNoRecord", (STS_MISSING,)),
    sts_record(6, "v=STSv10", "ErrNoRecord", (STS_MISSING,)),
    sts_record(7, "v=STSv2", "ErrNoRecord", (STS_MISSING,)),
    sts_record(8, "v=STSv1", "ErrNoRecord", (STS_INVALID,), why=STS_NEAR_MISS),
    sts_record(9, "v=STSv1;", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(10, "v=STSv1; ext=1", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(11, "v=STSv1; id=", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(12, "v=STSv1; id=012345678901234567890123456789012", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(13, "v=STSv1; id=test-123", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(14, "v=STSv1; id=a; more=", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(15, "v=STSv1; id=a; a12345678901234567890123456789012=1", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(16, "v=STSv1; id=a; 1%=a", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(17, "v=STSv1; id=a; test==", "ErrRecordSyntax", (STS_INVALID,)),
    sts_record(18, "v=STSv1; id=a;;", "ErrRecordSyntax", (STS_INVALID,)),
    # -- mtasts/parse_test.go TestParsePolicy: good(...), then bad(...)
    sts_policy(
        1,
        "version: STSv1\nmode: testing\nmx: mx1.example.com\nmx: mx2.example.com\nmx: mx.backup-example.com\nmax_age: 1296000\n",
        (TESTING,),
        policy=WRITTEN,
    ),
    sts_policy(
        2,
        "version: STSv1\nmode: enforce\t\nmx: *.example.com \nmax_age: 0 \n",
        (ENFORCE,),
        policy=("enforce", 0, ("*.example.com",)),
    ),
    sts_policy(
        3,
        "version:STSv1\r\nmode:\tenforce\r\nmx:  \t\t *.example.com\nmax_age: 1\nmore:ext e  ns ion",
        (ENFORCE,),
        policy=("enforce", 1, ("*.example.com",)),
    ),
    sts_policy(4, "", (STS_INVALID,)),
    sts_policy(5, "version:STSv0\nmode:none\nmax_age:0", (STS_INVALID,)),
    sts_policy(6, "version:STSv10\nmode:none\nmax_age:0", (STS_INVALID,)),
    sts_policy(7, "version:STSv2\nmode:none\nmax_age:0", (STS_INVALID,)),
    sts_policy(8, "version:STSv1\nmax_age:0\nmx:example.com", (STS_INVALID,)),
    sts_policy(9, "version:STSv1\nmode:none", (STS_INVALID,)),
    sts_policy(10, "version:STSv1\nmax_age:0\nmode:enforce", (STS_INVALID,)),
    sts_policy(11, "version:STSv1\nmax_age:0\nmode:testing", (STS_INVALID,)),
    sts_policy(12, "max_age:0\nmode:none", (STS_INVALID,)),
    sts_policy(13, "version:STSv1\nmode:none\nmax_age:01234567890", (STS_INVALID,)),
    sts_policy(14, "version:STSv1\nmode:bad\nmax_age:1", (STS_INVALID,)),
    sts_policy(15, "version:STSv1\nmode:none\nmax_age:a", (STS_INVALID,)),
    sts_policy(16, "version:STSv1\nmode:enforce\nmax_age:0\nmx:", (STS_INVALID,)),
    sts_policy(17, "version:STSv1\nmode:enforce\nmax_age:0\nmx:*.*.example", (STS_INVALID,)),
    sts_policy(18, "version:STSv1\nmode:enforce\nmax_age:0\nmx:**.example", (STS_INVALID,)),
    sts_policy(19, "version:STSv1\nmode:enforce\nmax_age:0\nmx:**.example-", (STS_INVALID,)),
    sts_policy(20, "version:STSv1\nmode:enforce\nmax_age:0\nmx:test.example-", (STS_INVALID,)),
    sts_policy(21, "version:STSv1\nmode:none\nmax_age:0\next:", (STS_INVALID,)),
    sts_policy(22, "version:STSv1\nmode:none\nmax_age:0\na12345678901234567890123456789012:123", (STS_INVALID,)),
    sts_policy(23, "version:STSv1\nmode:none\nmax_age:0\n_bad:test", (STS_INVALID,)),
    sts_policy(24, "version:STSv1\nmode:none\nmax_age:0\nmx: m\u00f8x.example", (STS_INVALID,)),
    # -- mtasts/mtasts_test.go TestLookup: LookupRecord for each domain of the mock resolver
    sts_lookup(1, "absent.example", (), "ErrNoRecord", (STS_MISSING,)),
    sts_lookup(
        2,
        "other.example",
        (("_mta-sts.other.example", "TXT", "bogus"), ("_mta-sts.other.example", "TXT", "more")),
        "ErrNoRecord",
        (STS_MISSING,),
    ),
    sts_lookup(3, "a.example", (("_mta-sts.a.example", "TXT", "v=STSv1; id=1"),), "ok", (TESTING,)),
    sts_lookup(
        4,
        "one.example",
        (("_mta-sts.one.example", "TXT", "v=STSv1; id=1"), ("_mta-sts.one.example", "TXT", "bogus")),
        "ok",
        (TESTING,),
    ),
    sts_lookup(
        5, "bad.example", (("_mta-sts.bad.example", "TXT", "v=STSv1; bogus"),), "ErrRecordSyntax", (STS_INVALID,)
    ),
    sts_lookup(
        6,
        "multiple.example",
        (("_mta-sts.multiple.example", "TXT", "v=STSv1; id=1"), ("_mta-sts.multiple.example", "TXT", "v=STSv1; id=2")),
        "ErrMultipleRecords",
        (STS_INVALID,),
    ),
    sts_lookup(
        7,
        "a.cnames.example",
        (
            ("_mta-sts.a.cnames.example", "CNAME", "_mta-sts.b.cnames.example."),
            ("_mta-sts.b.cnames.example", "CNAME", "_mta-sts.c.cnames.example."),
            ("_mta-sts.c.cnames.example", "TXT", "v=STSv1; id=1"),
        ),
        "ok",
        (TESTING,),
    ),
    sts_lookup(
        8,
        "temperror.example",
        (("_mta-sts.temperror.example", "TXT", "v=STSv1; id=1"),),
        "ErrDNS",
        (UNKNOWN,),
        failing=("_mta-sts.temperror.example",),
    ),
    # the mock fails the CNAME's target; a recursive resolver answers the question itself with SERVFAIL
    sts_lookup(
        9,
        "followtemperror.example",
        (
            ("_mta-sts.followtemperror.example", "CNAME", "_mta-sts.temperror.example."),
            ("_mta-sts.temperror.example", "TXT", "v=STSv1; id=1"),
        ),
        "ErrDNS",
        (UNKNOWN,),
        failing=("_mta-sts.followtemperror.example", "_mta-sts.temperror.example"),
    ),
    # -- mtasts/mtasts_test.go TestMatches: match(...), then not(...)
    sts_matches(1, "a.example", True),
    sts_matches(2, "sub.b.example", True),
    sts_matches(3, "b.example", False),
    sts_matches(4, "sub.sub.b.example", False),
    sts_matches(5, "other", False),
    # -- mtasts/mtasts_test.go TestFetch: Get (and FetchPolicy) with each certificate, domain, status and body
    sts_fetch(1, DOMAIN, fetched(200, "bogus"), "ErrPolicySyntax", (STS_INVALID,)),
    sts_fetch(2, "other.example", fetched(200, "bogus", cert_names=_CERT_FOR_MOX), "ErrPolicyFetch", (STS_INVALID,)),
    sts_fetch(3, DOMAIN, fetched(200, "bogus", cert="expired"), "ErrPolicyFetch", (STS_INVALID,)),
    sts_fetch(4, DOMAIN, fetched(404, "bogus"), "ErrNoPolicy", (STS_INVALID,)),
    # FetchPolicy: no mta-sts.doesnotexist.example; the record is published, without which websec fetches nothing
    sts_fetch(5, "doesnotexist.example", None, "ErrNoPolicy", (STS_INVALID,)),
    # Get: the resolver has no record for doesnotexist.example
    sts_fetch("5-get", "doesnotexist.example", None, "ErrNoRecord", (STS_MISSING,), record=False),
    sts_fetch(6, DOMAIN, fetched(301, "bogus"), "ErrPolicyFetch", (STS_INVALID,)),
    sts_fetch(7, DOMAIN, fetched(500, "bogus"), "ErrPolicyFetch", (STS_INVALID,)),
    sts_fetch(8, DOMAIN, fetched(200, _64K_AND_2), "ErrPolicySyntax", (STS_INVALID,)),
    sts_fetch(
        9,
        DOMAIN,
        fetched(200, "version:STSv1\nmode:none\nmax_age:1"),
        "ok",
        (STS_MISSING,),
        policy=("none", 1, ()),
    ),
    # -- tlsrpt/parse_test.go TestRecord: good(...), then bad(...)
    rpt_record(1, "v=TLSRPTv1; rua=mailto:tlsrpt@mox.example;", "ok", (PRESENT,)),
    rpt_record(
        2,
        "v=TLSRPTv1; rua=mailto:tlsrpt@mox.example , \t\t https://mox.example/tlsrpt  ",
        "ok",
        (RPT_INVALID,),
        why='RFC 8460 3: the record ends with its last field or a field-delim (*WSP ";" *WSP), and tlsrpt-rua = %s"rua=" tlsrpt-uri *(*WSP "," *WSP tlsrpt-uri) has no room for the spaces after the last URI, so the record is outside the grammar; mox is laxer: its rua parser skips whitespace after each URI, though it refuses the same spaces after any other field ("leftover chars")',
    ),
    rpt_record(3, "v=TLSRPTv1; rua=mailto:tlsrpt@mox.example; ext=yes", "ok", (PRESENT,)),
    rpt_record(4, "v=TLSRPTv1 ; rua=mailto:x@x.example; rua=mailto:y@x.example", "ok", (PRESENT,)),
    rpt_record(5, "v=TLSRPTv0", "ErrNoRecord", (RPT_MISSING,)),
    rpt_record(6, "v=TLSRPTv10", "ErrNoRecord", (RPT_MISSING,)),
    rpt_record(7, "v=TLSRPTv2", "ErrNoRecord", (RPT_MISSING,)),
    rpt_record(8, "v=TLSRPTv1", "ErrNoRecord", (RPT_INVALID,), why=RPT_NEAR_MISS),
    rpt_record(9, "v=TLSRPTv1;", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(10, "v=TLSRPTv1; ext=1", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(11, "v=TLSRPTv1; rua=", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(12, "v=TLSRPTv1; rua=noscheme", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(13, "v=TLSRPTv1; rua=,, ,", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(14, "v=TLSRPTv1; rua=mailto:x@x.example; more=", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(
        15, "v=TLSRPTv1; rua=mailto:x@x.example; a12345678901234567890123456789012=1", "ErrRecordSyntax", (RPT_INVALID,)
    ),
    rpt_record(16, "v=TLSRPTv1; rua=mailto:x@x.example; 1%=a", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(17, "v=TLSRPTv1; rua=mailto:x@x.example; test==", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(18, "v=TLSRPTv1; rua=mailto:x@x.example;;", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(19, "v=TLSRPTv1; rua=mailto:x@x.example other", "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_record(20, "v=TLSRPTv1; rua=http://bad/%", "ErrRecordSyntax", (RPT_INVALID,)),
    # -- tlsrpt/lookup_test.go TestLookup: Lookup for each domain of the mock resolver
    rpt_lookup(1, "basic.example", ("v=TLSRPTv1; rua=mailto:tlsrpt@basic.example",), "ok", (PRESENT,)),
    rpt_lookup(2, "one.example", ("v=TLSRPTv1; rua=mailto:tlsrpt@basic.example", "other"), "ok", (PRESENT,)),
    # the mock's two identical records: DNS drops a duplicate record from an RRset (RFC 2181 5), so the second is
    # published as the same text in two character-strings, which every reader concatenates (RFC 8460 3)
    rpt_lookup(
        3,
        "multiple.example",
        ("v=TLSRPTv1; rua=mailto:tlsrpt@basic.example", ("v=TLSRPTv1; ", "rua=mailto:tlsrpt@basic.example")),
        "ErrMultipleRecords",
        (RPT_INVALID,),
    ),
    rpt_lookup(4, "absent.example", (), "ErrNoRecord", (RPT_MISSING,)),
    rpt_lookup(5, "other.example", ("other",), "ErrNoRecord", (RPT_MISSING,)),
    rpt_lookup(6, "malformed.example", ("v=TLSRPTv1; bad",), "ErrRecordSyntax", (RPT_INVALID,)),
    rpt_lookup(7, "temperror.example", (), "ErrDNS", (UNKNOWN,), failing=True),
]

_WRITES = "the String() of a parsed value, which mox writes into the records and policies it publishes for its own domains: websec writes none"
_FUZZ = "a fuzz target's seed corpus: the target asserts only that parsing does not panic, no verdict; the seeds that are test cases are ported with those"
#: Parts of the test files that are not ported, and why.
NOT_PORTED = {
    "sts-record-string": _WRITES,
    "sts-policy-string": _WRITES,
    "tlsrpt-record-string": _WRITES,
    "sts-fuzz-record": _FUZZ,
    "sts-fuzz-policy": _FUZZ,
    "tlsrpt-fuzz-record": _FUZZ,
}

#: The cases of each Go test, in its order.
SECTIONS: dict[str, list[Case]] = sections_by_prefix(
    CASES,
    {
        "mtasts/parse_test.go TestRecord": "sts-record-",
        "mtasts/parse_test.go TestParsePolicy": "sts-policy-",
        "mtasts/mtasts_test.go TestLookup": "sts-lookup-",
        "mtasts/mtasts_test.go TestMatches": "sts-matches-",
        "mtasts/mtasts_test.go TestFetch": "sts-fetch-",
        "tlsrpt/parse_test.go TestRecord": "tlsrpt-record-",
        "tlsrpt/lookup_test.go TestLookup": "tlsrpt-lookup-",
    },
)
#: The parts of each Go test file not ported.
NOT_PORTED_IN: dict[str, list[str]] = {
    "mtasts/parse_test.go TestRecord": ["sts-record-string"],
    "mtasts/parse_test.go TestParsePolicy": ["sts-policy-string"],
    "mtasts/parse_test.go FuzzParseRecord": ["sts-fuzz-record"],
    "mtasts/parse_test.go FuzzParsePolicy": ["sts-fuzz-policy"],
    "tlsrpt/parse_test.go TestRecord": ["tlsrpt-record-string"],
    "tlsrpt/parse_test.go FuzzParseRecord": ["tlsrpt-fuzz-record"],
}


@pytest.fixture(scope="module")
def ours(site_server: SiteServer, pki: Pki) -> dict[str, Ours]:
    return run_websec(CASES, site_server, pki)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_mox(case: Case, ours: dict[str, Ours]) -> None:
    assert_conforms(case, ours[case.name])


def test_every_case_is_in_one_section_and_named_once() -> None:
    assert_each_case_in_one_section(CASES, SECTIONS, NOT_PORTED, NOT_PORTED_IN)
