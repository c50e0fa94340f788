# Test cases adapted from Let's Encrypt's Boulder (va/caa_test.go, MPL-2.0, https://github.com/letsencrypt/boulder);
# this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one test and its reason per line)
"""Conformance of the dns check's CAA findings with Boulder's CAA tests (docs/conformance.md, _boulder.py).

Each case is a case of a test function of Boulder's va/caa_test.go: the records caaMockDNS answers for its names
(or the record a unit test hands to filterCAA, parseCAARecord or caaValidationMethodMatches, published here at a
name of its own), the identifier Boulder is asked about, Boulder's verdict for Let's Encrypt (account 123 under
https://letsencrypt.org/acct/reg/, http-01 unless the case says otherwise) and websec's CAA outcome ids for the
identifier's host. The Go file holds its records in code, so they are ported here as data, each value as the test
spells it.
"""

from __future__ import annotations

import pytest

from tests.conformance._boulder import Case, assert_conforms, caa, run_websec
from tests.conformance._suite import assert_each_case_in_one_section, sections_by_prefix
from websec_app.scanner.findings import Finding

ISSUE, REFUSE, ERROR = "issue", "refuse", "error"
MISSING, PRESENT, INVALID, FAILED = "dns.caa_missing", "dns.caa_present", "dns.caa_invalid", "check.error"
LE = "letsencrypt.org"

#: caaMockDNS.LookupCAA: each name's records (a name it does not list has none); its errors are in MOCK_ERRORS.
MOCK: dict[str, tuple[str, ...]] = {
    "reserved.com": (caa("ca.com"),),
    "mixedcase.com": (caa("ca.com", tag="iSsUe"),),
    "critical.com": (caa("ca.com", flags=1),),
    "present.com": (caa(LE),),
    "present.servfail.com": (caa(LE),),
    "multi-crit-present.com": (caa("ca.com", flags=1), caa(LE, flags=1)),
    "unknown-critical.com": (caa("bar", tag="foo", flags=128),),
    "unknown-critical2.com": (caa("bar", tag="foo", flags=1),),
    "unknown-noncritical.com": (caa("bar", tag="foo", flags=0x7E),),  # all bits Boulder does not read as critical
    "present-with-parameter.com": (caa("  letsencrypt.org  ;foo=bar;baz=bar"),),
    "present-with-invalid-tag.com": (caa("letsencrypt.org; a_b=123"),),
    "present-with-invalid-value.com": (caa("letsencrypt.org; ab=1 2 3"),),
    "present-dns-only.com": (caa("letsencrypt.org; validationmethods=dns-01"),),
    "present-http-only.com": (caa("letsencrypt.org; validationmethods=http-01"),),
    "present-http-or-dns.com": (caa("letsencrypt.org; validationmethods=http-01,dns-01"),),
    "present-dns-only-correct-accounturi.com": (
        caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/123; validationmethods=dns-01"),
    ),
    "present-http-only-correct-accounturi.com": (
        caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/123; validationmethods=http-01"),
    ),
    "present-http-only-incorrect-accounturi.com": (
        caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/321; validationmethods=http-01"),
    ),
    "present-correct-accounturi.com": (caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/123"),),
    "present-incorrect-accounturi.com": (caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/321"),),
    "present-multiple-accounturi.com": (
        caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/321"),
        caa("letsencrypt.org; accounturi=https://letsencrypt.org/acct/reg/123"),
    ),
    "unsatisfiable.com": (caa(";"),),
    "unsatisfiable-wildcard.com": (caa(";", tag="issuewild"),),
    "unsatisfiable-wildcard-override.com": (caa(LE), caa("ca.com", tag="issuewild")),
    "satisfiable-wildcard-override.com": (caa("ca.com"), caa(LE, tag="issuewild")),
    "satisfiable-multi-wildcard.com": (caa("ca.com", tag="issuewild"), caa(LE, tag="issuewild")),
    "satisfiable-wildcard.com": (caa(LE, tag="issuewild"),),
}
#: The names caaMockDNS fails ("error", "SERVFAIL"): answered SERVFAIL here.
MOCK_ERRORS = ("caa-timeout.com", "servfail.com", "servfail.present.com")


def _checking(identifier: str, verdict: str, ours: tuple[str, ...], found_at: str | None = None) -> Case:
    """A TestCAAChecking case: its identifier, Valid and FoundAt (the identifier's host unless given)."""
    found_at = identifier.removeprefix("*.") if found_at is None else found_at
    return Case(f"checking-{identifier}", identifier, MOCK, verdict, ours, servfail=MOCK_ERRORS, found_at=found_at)


def _filter(
    number: int, records: tuple[str, ...], verdict: str, ours: tuple[str, ...], critical: bool, why: str | None = None
) -> Case:
    name = f"filter-{number}.com"
    return Case(f"filter-{number}", name, {name: records}, verdict, ours, critical=critical, why=why)


def _parsed(
    number: int, value: str, verdict: str, ours: tuple[str, ...], malformed: bool, why: str | None = None
) -> Case:
    """parseCAARecord on an issue value: an error leaves no CA (refuse); else Let's Encrypt iff it is named."""
    name = f"parse-{number}.com"
    return Case(f"parse-{number}", name, {name: (caa(value),)}, verdict, ours, malformed=malformed, why=why)


def _method(
    number: int, parameters: str, method: str, verdict: str, ours: tuple[str, ...], why: str | None = None
) -> Case:
    """caaValidationMethodMatches on a record's parameters (an issue record for letsencrypt.org carrying them)."""
    name = f"method-{number}.com"
    value = f"letsencrypt.org; {parameters}" if parameters else "letsencrypt.org"
    return Case(f"method-{number}", name, {name: (caa(value),)}, verdict, ours, method=method, why=why)


def _account(
    number: int,
    parameters: str,
    prefixes: tuple[str, ...],
    account_id: int,
    verdict: str,
    ours: tuple[str, ...],
    method: str = "http-01",
) -> Case:
    """caaAccountURIMatches on a record's parameters (an issue record for letsencrypt.org carrying them), for the
    account `account_id` under each of Let's Encrypt's account URI `prefixes`."""
    name = f"account-{number}.com"
    value = f"letsencrypt.org; {parameters}" if parameters else "letsencrypt.org"
    uris = tuple(f"{prefix}{account_id}" for prefix in prefixes)
    return Case(f"account-{number}", name, {name: (caa(value),)}, verdict, ours, method=method, account_uris=uris)


V01_REG = "https://acme-v01.api.letsencrypt.org/acme/reg/"
V02_REG = "https://acme-v02.api.letsencrypt.org/acme/reg/"
V01_ACCT = "https://acme-v01.api.letsencrypt.org/acme/acct/"
V02_ACCT = "https://acme-v02.api.letsencrypt.org/acme/acct/"
V03_ACCT = "https://acme-v03.api.letsencrypt.org/acme/acct/"
STAGING_REG = "https://acme-staging.api.letsencrypt.org/acme/reg/"
STAGING_V02_ACCT = "https://acme-staging-v02.api.letsencrypt.org/acme/acct/"

NXDOMAIN_IS_NO_RECORD = (
    "RFC 8659 3 reads each name's CAA RRset by RFC 1034 4.3.2's lookup, where a name that does not exist "
    "(NXDOMAIN) has no records: the climb finds none and any CA may issue (dns.caa_missing); the mock answers the "
    "TLD gonetld with an error named NXDOMAIN, which Boulder takes for a failed lookup"
)
LETS_ENCRYPT_KNOWS_ISSUEMAIL = (
    "Let's Encrypt recognises issuemail (RFC 9495), so a critical issuemail does not stop it; websec reports that a "
    "critical issuemail makes every CA that does not support it refuse (RFC 8659 4.1), and CAs need support only "
    "issue, issuewild and iodef (Baseline Requirements 3.2.2.8): the verdict for Let's Encrypt is the same (its "
    "issue record names another CA)"
)
HYPHEN_IN_PARAMETER_TAG = (
    'RFC 8659 4.2\'s parameter tag is (ALPHA / DIGIT) *( *("-") (ALPHA / DIGIT)), so a-b is a tag and the record '
    "names letsencrypt.org (dns.caa_present); Boulder's parseCAARecord takes letters and digits only and ignores "
    "the record, stricter than the RFC"
)
DUPLICATE_METHODS = (
    "RFC 8657 says nothing of a record with two validationmethods parameters; Boulder refuses it by its own choice "
    "(caaValidationMethodMatches: 'we make the conscious choice to fail'), and websec's note states both lists, "
    "each of which holds http-01"
)

CASES = [
    # -- TestCAAChecking: checkCAARecords for each identifier, http-01, account 123
    _checking("reserved.com", REFUSE, (PRESENT,)),
    _checking("mixedcase.com", REFUSE, (PRESENT,)),
    _checking("critical.com", REFUSE, (PRESENT,)),
    _checking("nx.critical.com", REFUSE, (PRESENT,), found_at="critical.com"),
    _checking("absent.com", ISSUE, (MISSING,), found_at=""),
    _checking("example.co.uk", ISSUE, (MISSING,), found_at=""),
    _checking("present.com", ISSUE, (PRESENT,)),
    _checking("child.present.com", ISSUE, (PRESENT,), found_at="present.com"),
    _checking("present.servfail.com", ISSUE, (PRESENT,)),
    _checking("multi-crit-present.com", ISSUE, (PRESENT,)),
    _checking("unknown-critical.com", REFUSE, (INVALID,)),
    _checking("unknown-critical2.com", REFUSE, (INVALID,)),
    _checking("unknown-noncritical.com", ISSUE, (MISSING,)),
    _checking("present-with-parameter.com", ISSUE, (PRESENT,)),
    _checking("present-with-invalid-tag.com", REFUSE, (INVALID,)),
    _checking("present-with-invalid-value.com", REFUSE, (INVALID,)),
    _checking("present-dns-only.com", REFUSE, (PRESENT,)),
    _checking("present-http-only.com", ISSUE, (PRESENT,)),
    _checking("present-http-or-dns.com", ISSUE, (PRESENT,)),
    _checking("present-correct-accounturi.com", ISSUE, (PRESENT,)),
    _checking("present-http-only-correct-accounturi.com", ISSUE, (PRESENT,)),
    _checking("present-dns-only-correct-accounturi.com", REFUSE, (PRESENT,)),
    _checking("present-http-only-incorrect-accounturi.com", REFUSE, (PRESENT,)),
    _checking("present-incorrect-accounturi.com", REFUSE, (PRESENT,)),
    _checking("present-multiple-accounturi.com", ISSUE, (PRESENT,)),
    _checking("unsatisfiable.com", REFUSE, (PRESENT,)),
    _checking("*.unsatisfiable.com", REFUSE, (PRESENT,)),
    _checking("*.unsatisfiable-wildcard.com", REFUSE, (MISSING,)),
    _checking("*.unsatisfiable-wildcard-override.com", REFUSE, (PRESENT,)),
    _checking("*.satisfiable-wildcard.com", ISSUE, (MISSING,)),
    _checking("*.satisfiable-multi-wildcard.com", ISSUE, (MISSING,)),
    _checking("*.satisfiable-wildcard-override.com", ISSUE, (PRESENT,)),
    # -- TestCAATimeout: the lookup fails, so a DNS problem and no issuance
    Case("timeout-caa-timeout.com", "caa-timeout.com", MOCK, ERROR, (FAILED,), servfail=MOCK_ERRORS),
    # -- TestCAAFailure: checkCAA refuses (a CAA problem) or fails (a DNS problem)
    Case("failure-reserved.com", "reserved.com", MOCK, REFUSE, (PRESENT,), servfail=MOCK_ERRORS),
    Case(
        "failure-example.gonetld",
        "example.gonetld",
        MOCK,
        ERROR,
        (MISSING,),
        servfail=MOCK_ERRORS,
        why=NXDOMAIN_IS_NO_RECORD,
    ),
    # -- TestSelectCAA: a lookup error before the first RRset found hides what it may hold
    Case("select-error-before-records", "servfail.present.com", MOCK, ERROR, (FAILED,), servfail=MOCK_ERRORS),
    # -- TestFilterCAA: which tags filterCAA keeps and whether a flag stops issuance (criticalUnknown); the
    # verdict is validateCAA's for the same records
    _filter(
        1,
        (caa("a"), caa("b", tag="issuewild"), caa("c", tag="iodef"), caa("c", tag="issuemail")),
        REFUSE,
        (PRESENT,),
        critical=False,
    ),
    _filter(
        2,
        (
            caa("a", flags=128),
            caa("b", tag="issuewild", flags=128),
            caa("c", tag="iodef", flags=128),
            caa("c", tag="issuemail", flags=128),
        ),
        REFUSE,
        (INVALID,),
        critical=False,
        why=LETS_ENCRYPT_KNOWS_ISSUEMAIL,
    ),
    _filter(3, (caa("", tag="unknown", flags=2),), ISSUE, (MISSING,), critical=False),
    _filter(4, (caa("", tag="unknown", flags=128),), REFUSE, (INVALID,), critical=True),
    _filter(5, (caa("", tag="unknown", flags=1),), REFUSE, (INVALID,), critical=True),
    _filter(6, (caa("", tag="unknown", flags=9),), REFUSE, (INVALID,), critical=True),
    # -- TestExtractIssuerDomainAndParameters: parseCAARecord on each issue value, in the test's order
    _parsed(1, "", REFUSE, (PRESENT,), malformed=False),
    _parsed(2, ";", REFUSE, (PRESENT,), malformed=False),
    _parsed(3, " ; ", REFUSE, (PRESENT,), malformed=False),
    _parsed(4, "letsencrypt.org", ISSUE, (PRESENT,), malformed=False),
    _parsed(5, "letsencrypt.org;", ISSUE, (PRESENT,), malformed=False),
    _parsed(6, "letsencrypt.org;   ", ISSUE, (PRESENT,), malformed=False),
    _parsed(7, "  letsencrypt.org\t;foo=bar;baz=bar", ISSUE, (PRESENT,), malformed=False),
    _parsed(8, "\tletsencrypt.org ;foo=bar;baz=bar", ISSUE, (PRESENT,), malformed=False),
    _parsed(9, "letsencrypt.org; foo=; baz =\tbar", ISSUE, (PRESENT,), malformed=False),
    _parsed(10, "letsencrypt.org; foo=\t; baz =\tbar", ISSUE, (PRESENT,), malformed=False),
    _parsed(11, "letsencrypt.org; foo=b1,b2,b3\t; baz =\t\ta=b\t", ISSUE, (PRESENT,), malformed=False),
    _parsed(12, "letsencrypt.org; foo=b1,b2,b3\t; foo= b1,b2,b3\t", ISSUE, (PRESENT,), malformed=False),
    _parsed(13, "letsencrypt.org; foo=b1,b2,b3\t; baz =\t\ta = b\t", REFUSE, (INVALID,), malformed=True),
    _parsed(14, "letsencrypt.org; foo=b1,b2,b3\t; baz=a=\tb", REFUSE, (INVALID,), malformed=True),
    _parsed(15, "letsencrypt.org; foo=b1,b2,b3\t; baz =\t\ta;b\t", REFUSE, (INVALID,), malformed=True),
    _parsed(16, "letsencrypt.org; 1=2; baz=a-b", ISSUE, (PRESENT,), malformed=False),
    _parsed(17, "letsencrypt.org; a_b=123", REFUSE, (INVALID,), malformed=True),
    _parsed(18, "letsencrypt.org; ab=1 2 3", REFUSE, (INVALID,), malformed=True),
    _parsed(19, "letsencrypt.org; 1=2; a-b=c", REFUSE, (PRESENT,), malformed=True, why=HYPHEN_IN_PARAMETER_TAG),
    _parsed(20, "letsencrypt.org; foo=a\u2615b", REFUSE, (INVALID,), malformed=True),
    _parsed(21, "letsencrypt.org; foo=b1,b2,b3 baz=a", REFUSE, (INVALID,), malformed=True),
    # -- TestAccountURIMatches: each case's parameters on an issue record for letsencrypt.org, asked for the case's
    # account id under its prefixes (and with the method a validationmethods parameter lists), in the test's order
    _account(1, "", (V01_REG,), 123456, ISSUE, (PRESENT,)),
    _account(2, "validationmethods=tls-alpn-01", (V02_REG,), 123456, ISSUE, (PRESENT,), method="tls-alpn-01"),
    _account(3, "accounturi=\\invalid \U0001f60e/123456", ("\\invalid \U0001f60e",), 123456, REFUSE, (INVALID,)),
    _account(4, f"accounturi={V01_REG}123456", (V01_REG,), 123456, ISSUE, (PRESENT,)),
    _account(
        5,
        f"validationmethods=dns-01; accounturi={V01_REG}123456",
        (V01_REG,),
        123456,
        ISSUE,
        (PRESENT,),
        method="dns-01",
    ),
    _account(6, f"accounturi={V01_REG}123456", (V01_REG,), 123457, REFUSE, (PRESENT,)),
    _account(7, "accounturi=", (V02_REG,), 123456, REFUSE, (INVALID,)),
    _account(8, "accounturi=; accounturi=", (V02_REG,), 123456, REFUSE, (INVALID,)),
    _account(9, f"accounturi=; accounturi={V02_REG}123456", (V02_REG,), 123456, REFUSE, (INVALID,)),
    _account(10, f"accounturi={V02_REG}123456; accounturi={V02_REG}123456", (V02_REG,), 123456, REFUSE, (INVALID,)),
    _account(11, f"accounturi={V02_REG}69; accounturi={V02_REG}420", (V02_REG,), 69, REFUSE, (INVALID,)),
    _account(12, f"accounturi={STAGING_REG}123456", (STAGING_REG, STAGING_V02_ACCT), 123456, ISSUE, (PRESENT,)),
    _account(13, f"accounturi={V02_ACCT}123456", (V01_REG, V02_ACCT), 123456, ISSUE, (PRESENT,)),
    _account(14, f"accounturi={V02_ACCT}123456", (V01_ACCT, V03_ACCT), 123456, REFUSE, (PRESENT,)),
    _account(15, f"accounturi={V02_ACCT}123456", (V01_REG, V02_ACCT, V03_ACCT), 123456, ISSUE, (PRESENT,)),
    _account(16, f"accounturi={V02_ACCT}123456", (V01_REG, V02_ACCT), 654321, REFUSE, (PRESENT,)),
    # -- TestValidationMethodMatches: each case's parameters on an issue record for letsencrypt.org, numbered in
    # the test's order (2 and 8, which pair the method with an account, are not ported)
    _method(1, "", "http-01", ISSUE, (PRESENT,)),
    _method(3, "validationmethods=", "http-01", REFUSE, (INVALID,)),
    _method(4, "validationmethods=,", "http-01", REFUSE, (INVALID,)),
    _method(5, "validationmethods=howdy !", "http-01", REFUSE, (INVALID,)),
    _method(6, "validationmethods=tls-sni-01", "http-01", REFUSE, (PRESENT,)),
    _method(7, "validationmethods=http-01", "http-01", ISSUE, (PRESENT,)),
    _method(9, "validationmethods=; validationmethods=", "http-01", REFUSE, (INVALID,)),
    _method(10, "validationmethods=; validationmethods=http-01", "http-01", REFUSE, (INVALID,)),
    _method(
        11, "validationmethods=http-01; validationmethods=http-01", "http-01", REFUSE, (PRESENT,), why=DUPLICATE_METHODS
    ),
    _method(12, "validationmethods=http-01; validationmethods=dns-01", "http-01", REFUSE, (PRESENT,)),
    _method(13, "validationmethods=dns-01", "http-01", REFUSE, (PRESENT,)),
    _method(14, "validationmethods=http-01,dns-01", "http-01", ISSUE, (PRESENT,)),
    _method(15, "validationmethods=http-01,dns-01", "dns-01", ISSUE, (PRESENT,)),
    _method(16, "validationmethods=http-01,dns-01", "tls-alpn-01", REFUSE, (PRESENT,)),
]

_ACCOUNT = (
    "pairs the method with an accounturi the request's account does not hold: the unit test checks the method "
    "alone, and a record carries both"
)
#: Tests of Boulder's va/caa_test.go (or cases of them) not ported, and why.
NOT_PORTED = {
    "method-2": _ACCOUNT,
    "method-8": _ACCOUNT,
    "TestSelectCAA": "selectCAA on hand-built result lists; its other cases (no result, all empty, records before an error, the first non-empty RRset) are TestCAAChecking's absent.com, present.servfail.com and child.present.com",
    "TestCAALogging": "Boulder's audit log lines",
    "TestIsCAAValidErrMessage": "the wording of Boulder's problem detail for caa-timeout.com, whose verdict TestCAATimeout's case holds",
    "TestIsCAAValidParams": "the RPC's refusal of requests without a validation method or an account",
    "TestDisabledMultiCAARechecking": "multi-perspective rechecking by remote VAs (a feature flag)",
    "TestMultiCAARechecking": "multi-perspective rechecking by remote VAs: quorums of broken and hijacked resolvers",
}

#: The cases of each Go test function, in the file's order.
SECTIONS: dict[str, list[Case]] = sections_by_prefix(
    CASES,
    {
        "TestCAATimeout": "timeout-",
        "TestCAAChecking": "checking-",
        "TestCAAFailure": "failure-",
        "TestFilterCAA": "filter-",
        "TestSelectCAA": "select-",
        "TestAccountURIMatches": "account-",
        "TestValidationMethodMatches": "method-",
        "TestExtractIssuerDomainAndParameters": "parse-",
    },
)
#: What of each Go test function is not ported.
NOT_PORTED_IN: dict[str, list[str]] = {
    "TestCAALogging": ["TestCAALogging"],
    "TestIsCAAValidErrMessage": ["TestIsCAAValidErrMessage"],
    "TestIsCAAValidParams": ["TestIsCAAValidParams"],
    "TestDisabledMultiCAARechecking": ["TestDisabledMultiCAARechecking"],
    "TestMultiCAARechecking": ["TestMultiCAARechecking"],
    "TestSelectCAA": ["TestSelectCAA"],
    "TestValidationMethodMatches": ["method-2", "method-8"],
}


@pytest.fixture(scope="module")
def ours() -> dict[str, list[Finding]]:
    return run_websec(CASES)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_boulder_caa(case: Case, ours: dict[str, list[Finding]]) -> None:
    assert_conforms(case, ours[case.name])


def test_every_case_is_in_one_section_and_named_once() -> None:
    assert_each_case_in_one_section(CASES, SECTIONS, NOT_PORTED, NOT_PORTED_IN)
