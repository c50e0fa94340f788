# Test cases adapted from the RFC 7208 test suite (openspf.org release 2014.04, rfc7208-tests.yml as shipped in
# pyspf 2.0.14), (C) 2006-2008 Stuart D Gathman, 2007-2008 Julian Mehnle, 2014 Scott Kitterman. All rights
# reserved. Used under its BSD licence, reproduced in full in tests/conformance/files/rfc7208-tests.LICENSE.
# ruff: noqa: E501  (case tables: one suite test and its reason per line)
"""Conformance of the dns check's SPF findings with the RFC 7208 test suite (docs/conformance.md, _rfc7208.py).

Each case names a test of files/rfc7208-tests.yml (its zone data, domain and expected result are read from there)
and gives websec's SPF outcome ids for that domain. `sender`: the test's result is its sender's own, and why
(websec is then held only to evaluating the record: a verdict, no error).
"""

from __future__ import annotations

import hashlib

import pytest

from tests.conformance._rfc7208 import SUITE, Case, assert_conforms, load_suite, run_websec, suite_tests

SCENARIOS = load_suite()
TESTS = suite_tests(SCENARIOS)
#: rfc7208-tests.yml of pyspf 2.0.14 (PyPI sdist), byte for byte
SUITE_SHA256 = "901f561a6e2b1c1590a40a61b1ac7601226fd7045a7aae591a4d25421358d6f9"

# The tests whose identity is no domain name a site has: check_host() is never run for them (RFC 7208 4.3: none),
# and websec scans a URL's host, whose registrable domain it reads SPF at.
NOT_PORTED = {
    "toolonglabel": "a label of 64 octets: no DNS name, and no URL host",
    "emptylabel": "an empty label (A...example.com): no DNS name, and no URL host",
    "helo-not-fqdn": "a single label (A2345678): websec reads mail records only at a domain of two labels or more",
    "helo-domain-literal": "an address literal ([1.2.3.5]): an IP address has no SPF record (dns.ip_literal)",
    "domain-literal": "an address literal ([1.2.3.5]): an IP address has no SPF record (dns.ip_literal)",
}

PTR, STRICT, SOFT, NEUTRAL, OPEN = (
    "dns.spf_ptr",
    "dns.spf_strict",
    "dns.spf_softfail",
    "dns.spf_neutral",
    "dns.spf_pass_all",
)
INVALID, MISSING, ERROR = "dns.spf_invalid", "dns.spf_missing", "check.error"
TOO_MANY, VOID = "dns.spf_too_many_lookups", "dns.spf_void_lookups"
IPV6_ALL, IPV4_ALL = "an IPv6 sender: every IPv4 sender passes", "an IPv4 sender: every IPv6 sender passes"

CASES = [
    # -- Initial processing
    Case("longlabel", (STRICT,)),
    Case("nolocalpart", (STRICT,)),
    Case("non-ascii-policy", (INVALID,)),
    Case("non-ascii-mech", (INVALID,)),
    Case("non-ascii-result", (INVALID,)),
    Case("non-ascii-non-spf", (STRICT,)),
    Case("control-char-policy", (INVALID,)),
    Case("two-spaces", (STRICT,)),
    Case("trailing-space", (STRICT,)),
    Case("null-text", (STRICT,), sender="named by ip4:192.0.2.5"),
    Case("badip4", (INVALID,)),
    # -- Record lookup
    Case("both", (STRICT,)),
    Case("txtonly", (STRICT,)),
    Case("spfonly", (MISSING,)),
    Case("spftimeout", (STRICT,)),
    Case("txttimeout", (ERROR,)),
    Case("nospftxttimeout", (ERROR,)),
    Case("alltimeout", (ERROR,)),
    # -- Selecting records
    Case("nospace1", (MISSING,)),
    Case("empty", (NEUTRAL,)),
    Case("nospace2", (NEUTRAL,), sender="named by mx: the address of the domain's MX host"),
    Case("spfoverride", (STRICT,)),
    Case("multitxt1", ("dns.spf_multiple",)),
    Case("multitxt2", ("dns.spf_multiple",)),
    Case("multispf1", (STRICT,)),  # an RRset holds two identical records once: the suite accepts fail
    Case("multispf2", (OPEN,)),
    Case("nospf", (MISSING,)),
    Case("case-insensitive", (SOFT,)),
    # -- Record evaluation
    Case("detect-errors-anywhere", (INVALID,)),
    Case("modifier-charset-good", (STRICT,), sender="named by ip4:1.2.3.4"),
    Case("modifier-charset-bad1", (INVALID,)),
    Case("modifier-charset-bad2", (INVALID,)),
    Case("redirect-after-mechanisms1", (SOFT,)),
    Case("redirect-after-mechanisms2", (STRICT,)),
    Case("default-result", (NEUTRAL,)),
    Case("redirect-is-modifier", (INVALID,)),
    Case("invalid-domain", (INVALID,)),
    Case("invalid-domain-empty-label", (INVALID,)),
    Case("invalid-domain-long", (INVALID,)),
    # a:%{H}.bar: a server whose HELO name is a label of its own under .bar passes (RFC 7208 7.3, 11.5)
    Case(
        "invalid-domain-long-via-macro",
        (OPEN,),
        sender="its HELO name decides (a:%{H}.bar): one of 64 octets names no domain, and a server naming its own under .bar passes",
    ),
    # -- ALL mechanism syntax
    Case("all-dot", (INVALID,)),
    Case("all-arg", (INVALID,)),
    Case("all-cidr", (INVALID,)),
    Case("all-neutral", (NEUTRAL,)),
    Case("all-double", (OPEN,)),
    # -- PTR mechanism syntax
    Case("ptr-cidr", (INVALID,)),
    Case("ptr-match-target", (PTR, STRICT), sender="named by ptr:example.com: its validated name"),
    Case("ptr-match-implicit", (PTR, STRICT), sender="named by ptr: its validated name"),
    Case("ptr-nomatch-invalid", (PTR, STRICT)),
    Case("ptr-match-ip6", (PTR, STRICT), sender="named by ptr: its validated name"),
    Case("ptr-empty-domain", (INVALID,)),
    Case("ptr-case-change", (PTR, STRICT), sender="named by ptr:example.Com: its validated name"),
    Case("ptr-cname-loop", (PTR, NEUTRAL)),
    # -- A mechanism syntax
    Case("a-cidr6", (STRICT,)),
    Case("a-bad-cidr4", (INVALID,)),
    Case("a-bad-cidr6", (INVALID,)),
    Case("a-dual-cidr-ip4-match", (STRICT,), sender="named by a/24: the domain's /24"),
    Case("a-dual-cidr-ip4-err", (INVALID,)),
    Case("a-dual-cidr-ip6-match", (STRICT,), sender="named by a//64: the domain's /64"),
    Case("a-dual-cidr-ip4-default", (STRICT,)),
    Case("a-dual-cidr-ip6-default", (STRICT,)),
    Case("a-multi-ip1", (NEUTRAL,), sender="named by a:foo.example.com/24"),
    Case("a-multi-ip2", (NEUTRAL,), sender="named by a:foo.example.com/24"),
    Case("a-bad-domain", (INVALID,)),
    Case("a-nxdomain", (STRICT,)),
    Case("a-cidr4-0", (OPEN,)),
    Case("a-cidr4-0-ip6", (OPEN,), sender=f"{IPV6_ALL} a/0"),
    Case("a-cidr6-0-ip4", (OPEN,), sender=f"{IPV4_ALL} a//0"),
    Case("a-cidr6-0-ip4mapped", (OPEN,), sender=f"{IPV4_ALL} a//0"),
    Case("a-cidr6-0-ip6", (OPEN,)),
    Case("a-ip6-dualstack", (STRICT,), sender="named by a: the domain's AAAA"),
    Case("a-cidr6-0-nxdomain", (STRICT,)),
    Case("a-null", (INVALID,)),
    Case("a-numeric", (INVALID,)),
    Case("a-numeric-toplabel", (INVALID,)),
    Case("a-dash-in-toplabel", (STRICT,), sender="named by a:foo.example.xn--zckzah"),
    Case("a-bad-toplabel", (INVALID,)),
    Case("a-only-toplabel", (INVALID,)),
    Case("a-only-toplabel-trailing-dot", (INVALID,)),
    Case("a-colon-domain", (NEUTRAL,), sender="named by a:foo:bar/baz.example.com"),
    Case("a-colon-domain-ip4mapped", (NEUTRAL,), sender="named by a:foo:bar/baz.example.com"),
    Case("a-empty-domain", (INVALID,)),
    # -- Include mechanism semantics and syntax
    Case("include-fail", (SOFT,)),
    Case("include-softfail", (OPEN,)),
    Case("include-neutral", (STRICT,)),
    Case("include-temperror", (ERROR,)),
    Case("include-permerror", (INVALID,)),
    Case("include-syntax-error", (INVALID,)),
    Case("include-cidr", (INVALID,)),
    Case("include-none", (INVALID,)),
    Case("include-empty-domain", (INVALID,)),
    # -- MX mechanism syntax
    Case("mx-cidr6", (STRICT,)),
    Case("mx-bad-cidr4", (INVALID,)),
    Case("mx-bad-cidr6", (INVALID,)),
    Case("mx-multi-ip1", (NEUTRAL,), sender="named by mx:foo.example.com/24"),
    Case("mx-multi-ip2", (NEUTRAL,), sender="named by mx:foo.example.com/24"),
    Case("mx-bad-domain", (INVALID,)),
    Case("mx-nxdomain", (STRICT,)),
    Case("mx-cidr4-0", (OPEN,)),
    Case("mx-cidr4-0-ip6", (OPEN,), sender=f"{IPV6_ALL} mx/0"),
    Case("mx-cidr6-0-ip4", (OPEN,), sender=f"{IPV4_ALL} mx//0"),
    Case("mx-cidr6-0-ip4mapped", (OPEN,), sender=f"{IPV4_ALL} mx//0"),
    Case("mx-cidr6-0-ip6", (OPEN,)),
    Case("mx-cidr6-0-nxdomain", (STRICT,)),
    Case("mx-null", (INVALID,)),
    Case("mx-numeric-top-label", (INVALID,)),
    Case("mx-colon-domain", (NEUTRAL,), sender="named by mx:foo:bar/baz.example.com"),
    Case("mx-colon-domain-ip4mapped", (NEUTRAL,), sender="named by mx:foo:bar/baz.example.com"),
    Case("mx-bad-toplab", (INVALID,)),
    Case("mx-empty", (NEUTRAL,)),
    Case("mx-implicit", (NEUTRAL,)),
    Case("mx-empty-domain", (INVALID,)),
    # -- EXISTS mechanism syntax
    Case("exists-empty-domain", (INVALID,)),
    Case("exists-implicit", (INVALID,)),
    Case("exists-cidr", (INVALID,)),
    Case("exists-ip4", (OPEN,)),
    Case("exists-ip6", (OPEN,)),
    Case("exists-ip6only", (STRICT,)),
    Case("exists-dnserr", (ERROR,)),
    # -- IP4 mechanism syntax
    Case("cidr4-0", (OPEN,)),
    Case("cidr4-32", (STRICT,), sender="named by ip4:1.2.3.4/32"),
    Case("cidr4-33", (INVALID,)),
    Case("cidr4-032", (INVALID,)),
    Case("bare-ip4", (INVALID,)),
    Case("bad-ip4-port", (INVALID,)),
    Case("bad-ip4-short", (INVALID,)),
    Case("ip4-dual-cidr", (INVALID,)),
    Case("ip4-mapped-ip6", (NEUTRAL,), sender="named by -ip4:1.2.3.4: an IPv4-mapped address is IPv4"),
    # -- IP6 mechanism syntax
    Case("bare-ip6", (INVALID,)),
    Case("cidr6-0-ip4", (OPEN,), sender=f"{IPV4_ALL} ip6:::1.1.1.1/0"),
    Case("cidr6-ip4", (OPEN,), sender=f"{IPV4_ALL} ip6:::1.1.1.1/0"),
    Case("cidr6-0", (OPEN,)),
    Case("cidr6-129", (INVALID,)),
    Case("cidr6-bad", (INVALID,)),
    Case("cidr6-33", (NEUTRAL,), sender="named by ip6:Cafe:Babe:8000::/33"),
    Case("cidr6-33-ip4", (NEUTRAL,)),
    Case("ip6-bad1", (INVALID,)),
    # -- Semantics of exp and other modifiers (websec never reads the explanation: only the result counts)
    Case("redirect-none", (INVALID,)),
    Case("redirect-cancels-exp", (STRICT,)),
    Case("redirect-syntax-error", (INVALID,)),
    Case("include-ignores-exp", (STRICT,)),
    Case("redirect-cancels-prior-exp", (STRICT,)),
    Case("invalid-modifier", (INVALID,)),
    Case("empty-modifier-name", (INVALID,)),
    Case("dorky-sentinel", (STRICT,)),
    Case("exp-multiple-txt", (STRICT,)),
    Case("exp-no-txt", (STRICT,)),
    Case("exp-dns-error", (STRICT,)),
    Case("exp-empty-domain", (INVALID,)),
    Case("explanation-syntax-error", (STRICT,)),
    Case("exp-syntax-error", (INVALID,)),
    Case("exp-twice", (INVALID,)),
    Case("redirect-empty-domain", (INVALID,)),
    Case("redirect-twice", (INVALID,)),
    Case("unknown-modifier-syntax", (INVALID,)),
    Case("default-modifier-obsolete", (NEUTRAL,)),
    Case("default-modifier-obsolete2", (NEUTRAL,)),
    Case("non-ascii-exp", (STRICT,)),
    Case("two-exp-records", (STRICT,)),
    Case("exp-void", (STRICT,)),
    Case("redirect-implicit", (STRICT,), sender="named by the redirect target's a: its own address (6.1)"),
    # -- Macro expansion rules
    Case("trailing-dot-domain", (SOFT,), sender="named by ip4:192.168.218.40, through redirect=%{d}... and include:"),
    Case("trailing-dot-exp", (STRICT,)),
    Case("exp-only-macro-char", (INVALID,)),
    Case("invalid-macro-char", (INVALID,)),
    Case("invalid-embedded-macro-char", (INVALID,)),
    Case("invalid-trailing-macro-char", (INVALID,)),
    Case("macro-mania-in-domain", (STRICT,), sender="named by a:macro%%percent%_%_space%-url-space.example.com"),
    Case("exp-txt-macro-char", (STRICT,)),
    Case("domain-name-truncation", (STRICT,)),
    Case("v-macro-ip4", (STRICT,)),
    Case("v-macro-ip6", (STRICT,)),
    Case("undef-macro", (INVALID,)),
    Case("p-macro-ip4-novalid", (STRICT,)),
    Case("p-macro-ip4-valid", (STRICT,)),
    Case("p-macro-ip6-novalid", (STRICT,)),
    Case("p-macro-ip6-valid", (STRICT,)),
    Case("p-macro-multiple", (NEUTRAL,), sender="its validated name (%{p}) decides"),
    Case("upper-macro", (STRICT,)),
    # a:%{H}: every server can name a HELO domain of its own that resolves to its address (RFC 7208 7.3, 11.5)
    Case("hello-macro", (OPEN,)),
    Case(
        "invalid-hello-macro",
        (OPEN,),
        sender="its HELO name decides (a:%{H}): one that is no name names no domain, and a server naming its own passes",
    ),
    Case(
        "hello-domain-literal",
        (OPEN,),
        sender="its HELO name decides (a:%{H}): one that is no name names no domain, and a server naming its own passes",
    ),
    Case(
        "require-valid-helo", (STRICT,), sender="in ip4:1.2.3.0/24, failed first by its HELO name (-include: -a:%{h})"
    ),
    Case(
        "macro-reverse-split-on-dash", (NEUTRAL,), sender="its address and local part (exists:%{i}.%{l2r-}...) decide"
    ),
    Case("macro-multiple-delimiters", (NEUTRAL,), sender="its local part (exists:%{l2r+-}...) decides"),
    # -- Processing limits
    Case("redirect-loop", (INVALID,)),
    Case("include-loop", (INVALID,)),
    Case("mx-limit", ("dns.spf_too_many_lookups",)),
    Case("ptr-limit", (PTR, NEUTRAL)),
    Case("false-a-limit", (STRICT,), sender="named by a: the domain's 12th A record"),
    # e6 has no AAAA: an IPv6 sender's a and mx terms find none, and the third (its 3rd term) is a void lookup
    # (RFC 7208 4.6.4), a permerror of IPv6 senders alone (pyspf 2.0.14 agrees); the test's sender is IPv4
    Case(
        "mech-at-limit",
        (VOID, PTR, STRICT),
        sender="named by ip4:1.2.3.4, after the 10th lookup",
        other_family=(VOID,),
    ),
    # e7 has no MX: its third mx, the 6th term, is the third void lookup, where receivers stop (RFC 7208 4.6.4): the
    # 11th lookup and the ptr after it are never reached
    Case("mech-over-limit", ("dns.spf_void_lookups",)),
    # and for IPv6 senders, inc's second a is the third void lookup (no name here has an AAAA record)
    Case(
        "include-at-limit",
        (TOO_MANY, VOID),
        sender="named by ip4:1.2.3.4, after the 10th lookup",
        other_family=(VOID,),
        why="websec judges the record for the senders it does not name: for them mx is the 11th DNS lookup, a permerror (RFC 7208 4.6.4); the suite's sender matches ip4:1.2.3.4 before it",
    ),
    Case("include-over-limit", (TOO_MANY, VOID), other_family=(VOID,)),
    Case("void-at-limit", (NEUTRAL,)),
    Case("void-over-limit", ("dns.spf_void_lookups",)),
    # -- Test cases from implementation bugs
    Case("bytes-bug", (PTR, STRICT), sender="named by ptr:fe.example.org, through redirect="),
    Case("cname-aliasing", (STRICT,)),
]

#: The cases of each section of the suite (its scenarios' descriptions), in the suite's order.
SECTIONS: dict[str, list[Case]] = {}
for _case in CASES:
    SECTIONS.setdefault(TESTS[_case.name].section, []).append(_case)


@pytest.fixture(scope="module")
def ours() -> dict[str, tuple[str, ...]]:
    return run_websec(SCENARIOS, {case.name: TESTS[case.name] for case in CASES})


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_rfc7208(case: Case, ours: dict[str, tuple[str, ...]]) -> None:
    assert_conforms(case, TESTS[case.name], ours[case.name])


def test_every_test_of_the_suite_is_a_case_or_says_why_not() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)) and not set(names) & NOT_PORTED.keys()
    assert sorted([*names, *NOT_PORTED]) == sorted(TESTS)


def test_the_suite_is_the_published_file_unchanged() -> None:
    assert hashlib.sha256(SUITE.read_bytes()).hexdigest() == SUITE_SHA256
