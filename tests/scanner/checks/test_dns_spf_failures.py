"""SPF terms whose lookup failed (SERVFAIL, REFUSED, a timeout: RCODE other than 0 or 3, RFC 1035 4.1.1).

RFC 7208 5: a mechanism whose DNS query fails stops the evaluation, and check_host() returns temperror (5.2 for an
include's record, 6.1 for redirect's, 5.4 for an mx term's MX and its hosts' addresses). A failed lookup is no void
lookup (4.6.4: NOERROR with no answer, or NXDOMAIN), the term that needs it still counts toward the 10, and a
permerror the evaluation reaches first (the 11th lookup, the third void lookup, an included record's syntax) stands:
receivers never get to the failed term. The dns check reports the temperror as a check.error naming the spf family,
so a diff hides the SPF findings it decides instead of calling them fixed, and invents none from it."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer, make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.checks.spf import SpfEvaluation, evaluate_spf
from websec_app.scanner.findings import Finding
from websec_app.scanner.snapshot import DnsAnswer

DOMAIN = "example.com"


def txt(name: str, *values: str, rcode: str = "NOERROR") -> DnsAnswer:
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values), rcode=rcode)


def evaluated(record: str, *answers: DnsAnswer) -> SpfEvaluation:
    result = evaluate_spf(DOMAIN, make_dns(DOMAIN, txt(DOMAIN, record), *answers))
    assert result is not None
    return result


def spf_findings(record: str, *answers: DnsAnswer) -> list[Finding]:
    """The findings of the spf family check_dns gives for `record` and the answers of its terms."""
    snapshot = make_snapshot(f"https://{DOMAIN}/", dns=make_dns(DOMAIN, txt(DOMAIN, record), *answers))
    return [f for f in check_dns(snapshot).findings if "spf" in f.families]


def outcomes(findings: list[Finding]) -> list[str]:
    return [f.outcome for f in findings]


def errors(findings: list[Finding]) -> list[str | None]:
    return [f.subject for f in findings if f.outcome == "check.error"]


def addresses(name: str, *, a: str = "NOERROR", aaaa: str = "NOERROR") -> list[DnsAnswer]:
    """The A and AAAA answers of `name`: 192.0.2.25 and 2001:db8::25 unless an rcode says otherwise."""
    return [
        dns_answer(name, "A", *(["192.0.2.25"] if a == "NOERROR" else []), rcode=a),
        dns_answer(name, "AAAA", *(["2001:db8::25"] if aaaa == "NOERROR" else []), rcode=aaaa),
    ]


# Each case: a record, the answers its terms get (one of them failed), the term the evaluation stops at, the
# lookups that failed there and the lookups counted (RFC 7208 4.6.4: the failed term is one). The old evaluation
# read each failure as an answer and gave "-all" its verdict (dns.spf_strict): a failed lookup of a name SPF
# follows was reported by nobody, but for an include's (a check.error beside the verdict).
FAILED_TERMS = [
    pytest.param(
        "v=spf1 a:mail.example.net -all",
        [*addresses("mail.example.net", a="SERVFAIL", aaaa="SERVFAIL")],
        "a:mail.example.net",
        ["mail.example.net A", "mail.example.net AAAA"],
        1,
        id="a-servfail",
    ),
    pytest.param(
        "v=spf1 a -all",
        [*addresses(DOMAIN, a="TIMEOUT", aaaa="TIMEOUT")],
        "a",
        [f"{DOMAIN} A", f"{DOMAIN} AAAA"],
        1,
        id="bare-a-timeout",
    ),
    pytest.param(
        "v=spf1 mx:mail.example.net/24 -all",
        [dns_answer("mail.example.net", "MX", rcode="REFUSED")],
        "mx:mail.example.net/24",
        ["mail.example.net MX"],
        1,
        id="mx-refused",
    ),
    pytest.param(
        "v=spf1 mx -all",
        [
            dns_answer(DOMAIN, "MX", "20 mx2.example.com.", "10 mx1.example.com."),
            *addresses("mx1.example.com"),
            *addresses("mx2.example.com", a="SERVFAIL", aaaa="SERVFAIL"),
        ],
        "mx",
        ["mx2.example.com A", "mx2.example.com AAAA"],
        1,
        id="mx-host-addresses-servfail",
    ),
    pytest.param(
        "v=spf1 exists:check.example.net -all",
        [dns_answer("check.example.net", "A", rcode="TIMEOUT")],
        "exists:check.example.net",
        ["check.example.net A"],
        1,
        id="exists-timeout",
    ),
    pytest.param(
        "v=spf1 ~include:_spf.example.net -all",
        [txt("_spf.example.net", rcode="SERVFAIL")],
        "~include:_spf.example.net",
        ["_spf.example.net TXT"],
        1,
        id="include-servfail",
    ),
    pytest.param(
        "v=spf1 include:_spf.example.net -all",
        [
            txt("_spf.example.net", "v=spf1 ip4:192.0.2.0/24 a:out.example.org -all"),
            *addresses("out.example.org", a="SERVFAIL", aaaa="REFUSED"),
        ],
        "a:out.example.org",
        ["out.example.org A", "out.example.org AAAA"],
        2,  # the include and the a term in the record it includes
        id="a-inside-an-include",
    ),
]


@pytest.mark.parametrize(("record", "answers", "term", "failed", "lookups"), FAILED_TERMS)
def test_a_term_whose_lookup_failed_stops_the_evaluation_with_temperror(
    record: str, answers: list[DnsAnswer], term: str, failed: list[str], lookups: int
) -> None:
    # Given a record whose term's lookup failed
    # When it is evaluated
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)

    # Then the report says SPF could not be checked, on the lookups that failed, and says nothing of its result
    assert outcomes(findings) == ["check.error"] * len(failed)
    assert errors(findings) == failed and all(f.families == ("spf",) for f in findings)
    assert all(f"stops at {term}" in (f.note or "") for f in findings)
    # for receivers return temperror there (RFC 7208 5): no verdict on "all", no void lookup, the term counted
    assert result.temperror and not result.permerror and not result.all_known
    assert result.failure is not None and result.failure.term == term
    assert [f"{a.name} {a.rdtype}" for a in result.failure.lookups] == failed
    assert result.void_lookups == 0 and result.lookups == lookups


def test_a_failed_redirect_target_is_a_temperror() -> None:
    # RFC 7208 6.1: the redirected check_host() is the result, its failure included
    result = evaluated("v=spf1 redirect=_spf.example.net", txt("_spf.example.net", rcode="SERVFAIL"))
    findings = spf_findings("v=spf1 redirect=_spf.example.net", txt("_spf.example.net", rcode="SERVFAIL"))
    assert errors(findings) == ["_spf.example.net TXT"] and outcomes(findings) == ["check.error"]
    assert result.temperror and result.lookups == 1 and result.unknown == []


def test_a_failed_lookup_is_no_void_lookup() -> None:
    # Given two void lookups, then an a term whose A lookup failed while its AAAA says NXDOMAIN
    record = "v=spf1 a:gone1.example.com a:gone2.example.com a:flaky.example.com -all"
    answers = [
        *addresses("gone1.example.com", a="NXDOMAIN", aaaa="NXDOMAIN"),
        *addresses("gone2.example.com", a="NXDOMAIN", aaaa="NXDOMAIN"),
        *addresses("flaky.example.com", a="SERVFAIL", aaaa="NXDOMAIN"),
    ]
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)
    # Then for IPv4 senders the third is no void lookup (4.6.4), so no permerror: they get temperror at it (5);
    # IPv6 senders' receivers ask AAAA alone, find NXDOMAIN, and stop at their third void lookup (permerror)
    assert outcomes(findings) == ["check.error", "dns.spf_void_lookups"]
    assert errors(findings) == ["flaky.example.com A"]
    assert "(for IPv4 senders: receivers ask A for them, AAAA for IPv6 senders)" in (findings[0].note or "")
    assert "(for IPv6 senders: IPv4 senders stop before it, at a failed lookup)" in (findings[1].note or "")
    assert result.void_names == ["gone1.example.com", "gone2.example.com", "flaky.example.com"]
    assert result.temperror and result.failure is not None and result.failure.families == ("IPv4",)
    assert result.stopped_families == ("IPv4", "IPv6") and not result.all_known


def test_what_comes_after_the_failed_term_is_not_reached() -> None:
    # Given a failed include, then three void lookups, an included record with a syntax error, and +all
    record = "v=spf1 include:down.example.net a:gone1.example.com a:gone2.example.com a:gone3.example.com"
    record += " include:broken.example.net +all"
    answers = [
        txt("down.example.net", rcode="SERVFAIL"),
        *(a for n in (1, 2, 3) for a in addresses(f"gone{n}.example.com", a="NXDOMAIN", aaaa="NXDOMAIN")),
        txt("broken.example.net", "v=spf1 ip4:192.0.2.0/33 -all"),
    ]
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)
    # Then receivers stop at the include with temperror: the void lookups, the syntax error and +all after it
    # decide nothing while it fails, so none of them is a finding (the diff keeps them hidden, not fixed)
    assert outcomes(findings) == ["check.error"] and errors(findings) == ["down.example.net TXT"]
    assert result.temperror and result.failure is not None and result.failure.term == "include:down.example.net"
    assert (result.lookups, result.void_lookups, result.errors, result.passes_everyone) == (1, 0, [], None)


def test_a_term_that_passes_every_sender_before_the_failed_term_still_counts() -> None:
    # Given ip4:0.0.0.0/0 before a failed include: every IPv4 sender passes before the include is reached
    answers = [txt("down.example.net", rcode="SERVFAIL")]
    before = spf_findings("v=spf1 ip4:0.0.0.0/0 include:down.example.net -all", *answers)
    after = spf_findings("v=spf1 include:down.example.net ip4:0.0.0.0/0 -all", *answers)
    # Then it is still reported; after the failed include it is not reached
    assert outcomes(before) == ["check.error", "dns.spf_pass_all"]
    assert outcomes(after) == ["check.error"]


@pytest.mark.parametrize(
    ("record", "answers", "outcome"),
    [
        pytest.param(
            "v=spf1 a:gone1.example.com a:gone2.example.com a:gone3.example.com include:down.example.net -all",
            [
                *(a for n in (1, 2, 3) for a in addresses(f"gone{n}.example.com", a="NXDOMAIN", aaaa="NXDOMAIN")),
                txt("down.example.net", rcode="SERVFAIL"),
            ],
            "dns.spf_void_lookups",
            id="third-void-lookup-first",
        ),
        pytest.param(
            "v=spf1 include:bad.example.net include:down.example.net -all",
            [txt("bad.example.net", "v=spf1 ip4:192.0.2.0/33 -all"), txt("down.example.net", rcode="SERVFAIL")],
            "dns.spf_invalid",
            id="included-syntax-error-first",
        ),
        pytest.param(
            "v=spf1 a a a a a a a a a a exists:down.example.net -all",
            [*addresses(DOMAIN), dns_answer("down.example.net", "A", rcode="SERVFAIL")],
            "dns.spf_too_many_lookups",
            id="eleventh-lookup-first",
        ),
        pytest.param(
            "v=spf1 mx:many.example.net -all",
            [
                dns_answer("many.example.net", "MX", *(f"{n} mx{n}.example.net." for n in range(11))),
                *addresses("mx0.example.net", a="SERVFAIL", aaaa="SERVFAIL"),
            ],
            "dns.spf_too_many_lookups",
            id="eleven-mx-records-before-their-hosts",
        ),
    ],
)
def test_a_permerror_the_evaluation_reaches_first_stands(record: str, answers: list[DnsAnswer], outcome: str) -> None:
    # Given a permerror before the failed lookup in the order receivers evaluate (RFC 7208 4.6, 4.6.4)
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)
    # Then the result is permerror: receivers never ask the failed lookup, so it is no check.error
    assert outcomes(findings) == [outcome]
    assert result.permerror and not result.temperror


def test_a_failed_lookup_is_reported_beside_the_own_lookups_family() -> None:
    # Given "v=spf1 a -all" and the domain's own A lookup failing: the addresses family reports it as ever
    findings = check_dns(
        make_snapshot(
            f"https://{DOMAIN}/",
            dns=make_dns(DOMAIN, txt(DOMAIN, "v=spf1 a -all"), *addresses(DOMAIN, a="SERVFAIL")),
        )
    ).findings
    # Then it is a check.error for spf too, and SPF's verdict on "-all" is IPv6 senders' alone (receivers ask them
    # AAAA, which was answered: RFC 7208 5.3)
    failures = sorted((f.subject or "", f.families) for f in findings if f.outcome == "check.error")
    assert failures == [(f"{DOMAIN} A", ("addresses",)), (f"{DOMAIN} A", ("spf",))]
    (strict,) = [f for f in findings if f.outcome == "dns.spf_strict"]
    assert "(for IPv6 senders; IPv4 senders' result is not known: a lookup failed)" in (strict.note or "")


@pytest.mark.parametrize(
    ("record", "answers", "failed_lookup"),
    [
        pytest.param("v=spf1 a -all", [*addresses(DOMAIN, aaaa="SERVFAIL")], f"{DOMAIN} AAAA", id="bare-a"),
        pytest.param(
            "v=spf1 mx -all",
            [dns_answer(DOMAIN, "MX", "10 mail.example.com."), *addresses("mail.example.com", aaaa="SERVFAIL")],
            "mail.example.com AAAA",
            id="bare-mx",
        ),
        pytest.param(
            "v=spf1 a:mail.example.com ip4:192.0.2.0/24 -all",
            [*addresses("mail.example.com", aaaa="SERVFAIL")],
            "mail.example.com AAAA",
            id="a-then-ip4",
        ),
    ],
)
def test_a_failed_aaaa_lookup_stops_ipv6_senders_alone(
    record: str, answers: list[DnsAnswer], failed_lookup: str
) -> None:
    # Given a term whose A lookups are answered and whose AAAA lookup failed
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)
    # Then receivers checking an IPv4 sender, who ask A alone (RFC 7208 5.3, 5.4), walk on to "-all"; IPv6 senders
    # get temperror at the term: the verdict is IPv4 senders', and the failure a check.error for spf
    assert outcomes(findings) == ["check.error", "dns.spf_strict"] and errors(findings) == [failed_lookup]
    assert "temperror (RFC 7208 5) (for IPv6 senders: receivers ask AAAA for them" in (findings[0].note or "")
    assert "(for IPv4 senders; IPv6 senders' result is not known: a lookup failed)" in (findings[1].note or "")
    assert result.failure is not None and result.failure.families == ("IPv6",)
    assert result.stopped_families == ("IPv6",) and result.verdict_families == ("IPv4",)
    assert result.all_qualifier == "-" and result.all_known and result.temperror


def test_a_failed_aaaa_lookup_leaves_the_ipv4_senders_walking_into_a_later_failure() -> None:
    # Given a failed AAAA, then an include whose record failed: IPv4 senders reach the include, IPv6 ones do not
    record = "v=spf1 a include:down.example.net -all"
    answers = [*addresses(DOMAIN, aaaa="SERVFAIL"), txt("down.example.net", rcode="SERVFAIL")]
    result = evaluated(record, *answers)
    findings = spf_findings(record, *answers)
    # Then both are temperrors, each its family's, and no verdict is given
    assert outcomes(findings) == ["check.error", "check.error"]
    assert errors(findings) == [f"{DOMAIN} AAAA", "down.example.net TXT"]
    assert [f.families for f in result.failures] == [("IPv6",), ("IPv4",)] and not result.all_known
    assert "(for IPv4 senders: IPv6 senders stop before it, at a failed lookup)" in (findings[1].note or "")
