"""Where the SPF evaluation stops, and what it says of the terms after (RFC 7208 4.6, 4.6.2, 4.6.4, 5).

Receivers stop at the first term that matches the sender (4.6.2), and at the first error (a permerror: a syntax
error of a record reached, the 11th DNS lookup, the third void lookup; a failed lookup: temperror). Nothing after
either is evaluated, so no finding comes from it. A term that matches every sender of one address family
(ip4:0.0.0.0/0, a/0 of a name with only an IPv4 address) leaves the other family's senders walking on: what they
meet after it is theirs, and the report says so. A lookup the evaluation reaches and the snapshot lacks was never
made: it reads as a failed one, never as an answer."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer, make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import Finding
from websec_app.scanner.snapshot import DnsAnswer

DOMAIN = "example.com"
GONE = " ".join(f"a:gone{n}.example.com" for n in (1, 2, 3))  # three void lookups: the third is a permerror


def txt(name: str, *values: str, rcode: str = "NOERROR") -> DnsAnswer:
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values), rcode=rcode)


def addresses(name: str, *, a: str = "192.0.2.25", aaaa: str = "2001:db8::25") -> list[DnsAnswer]:
    """The A and AAAA answers of `name` ("" for a type it has none of, "NXDOMAIN" for a name that does not exist)."""
    if "NXDOMAIN" in (a, aaaa):
        return [dns_answer(name, t, rcode="NXDOMAIN") for t in ("A", "AAAA")]
    return [dns_answer(name, "A", *([a] if a else [])), dns_answer(name, "AAAA", *([aaaa] if aaaa else []))]


GONE_ANSWERS = [x for n in (1, 2, 3) for x in addresses(f"gone{n}.example.com", a="NXDOMAIN")]


def spf_findings(record: str, *answers: DnsAnswer) -> list[Finding]:
    """The dns check's SPF findings (and its check.errors naming spf) for `record` and the answers of its terms."""
    snapshot = make_snapshot(f"https://{DOMAIN}/", dns=make_dns(DOMAIN, txt(DOMAIN, record), *answers))
    found = check_dns(snapshot).findings
    return [f for f in found if f.outcome.startswith("dns.spf") or (f.outcome == "check.error" and "spf" in f.families)]


def outcomes(findings: list[Finding]) -> list[str]:
    return [f.outcome for f in findings]


def note(findings: list[Finding], outcome: str) -> str:
    (found,) = [f.note or "" for f in findings if f.outcome == outcome]
    return found


# -- a term that matches every sender ends the evaluation for them -----------------------------------------------


@pytest.mark.parametrize(
    ("record", "answers"),
    [
        pytest.param(
            f"v=spf1 exists:ok.example.net {GONE} -all",
            [dns_answer("ok.example.net", "A", "127.0.0.2"), *GONE_ANSWERS],
            id="exists-then-three-void-lookups",
        ),
        pytest.param(
            f"v=spf1 include:open.example.net {GONE} -all",
            [txt("open.example.net", "v=spf1 +all"), *GONE_ANSWERS],
            id="include-of-plus-all-then-three-void-lookups",
        ),
        pytest.param(
            "v=spf1 a/0//0 " + "a " * 10 + "-all",
            addresses(DOMAIN),
            id="a-of-both-families-then-the-11th-lookup",
        ),
        pytest.param(
            "v=spf1 mx/0//0 include:broken.example.net -all",
            [
                dns_answer(DOMAIN, "MX", "10 mail.example.com."),
                *addresses("mail.example.com"),
                txt("broken.example.net", "v=spf1 ip4:192.0.2.0/33 -all"),
            ],
            id="mx-of-both-families-then-an-included-syntax-error",
        ),
        pytest.param(
            "v=spf1 ip4:0.0.0.0/0 ip6:::/0 include:down.example.net -all",
            [txt("down.example.net", rcode="SERVFAIL")],
            id="both-networks-then-a-failed-include",
        ),
    ],
)
def test_what_comes_after_a_term_that_passes_every_sender_is_never_reached(
    record: str, answers: list[DnsAnswer]
) -> None:
    # Given a term that lets every sender pass, then an error (RFC 7208 4.6.2: the evaluation stops at the first
    # match, and the limits are counted as terms are evaluated, 4.6.4)
    findings = spf_findings(record, *answers)
    # Then every sender passes: the error after it is reached by no receiver, and is no finding
    assert outcomes(findings) == ["dns.spf_pass_all"]
    assert "every server on the internet" in note(findings, "dns.spf_pass_all")


@pytest.mark.parametrize(
    ("record", "answers", "error"),
    [
        pytest.param(
            f"v=spf1 ip4:0.0.0.0/0 {GONE} -all", GONE_ANSWERS, "dns.spf_void_lookups", id="ip4-then-void-lookups"
        ),
        pytest.param(
            f"v=spf1 a/0 {GONE} -all",
            [*addresses(DOMAIN, aaaa=""), *GONE_ANSWERS],
            "dns.spf_void_lookups",
            id="a-with-only-an-ipv4-address-then-void-lookups",
        ),
        pytest.param(
            "v=spf1 ip4:0.0.0.0/0 " + "a " * 11 + "-all",
            addresses(DOMAIN),
            "dns.spf_too_many_lookups",
            id="ip4-then-the-11th-lookup",
        ),
        pytest.param(
            "v=spf1 ip4:0.0.0.0/0 include:broken.example.net -all",
            [txt("broken.example.net", "v=spf1 ip4:192.0.2.0/33 -all")],
            "dns.spf_invalid",
            id="ip4-then-an-included-syntax-error",
        ),
    ],
)
def test_after_a_term_that_passes_every_ipv4_sender_the_ipv6_senders_walk_on(
    record: str, answers: list[DnsAnswer], error: str
) -> None:
    # Given a term that lets every IPv4 sender pass, then an error
    findings = spf_findings(record, *answers)
    # Then both are true: every IPv4 server passes, and IPv6 senders meet the permerror (no pass for them)
    assert outcomes(findings) == [error, "dns.spf_pass_all"]
    assert "every IPv4 server on the internet passes" in note(findings, "dns.spf_pass_all")
    assert note(findings, error).endswith(" (for IPv6 senders: every IPv4 sender is matched before it)")


def test_an_a_term_is_void_for_the_ipv6_senders_walking_when_its_name_has_no_aaaa() -> None:
    # Given ip4:0.0.0.0/0, then a name with an A record and no AAAA, then two names that do not exist
    record = "v=spf1 ip4:0.0.0.0/0 a:four.example.net a:gone1.example.com a:gone2.example.com -all"
    answers = [*addresses("four.example.net", aaaa=""), *GONE_ANSWERS]
    findings = spf_findings(record, *answers)
    # Then for the IPv6 senders, the only ones walking past ip4:0.0.0.0/0, a:four asks AAAA and finds none: a void
    # lookup (RFC 7208 4.6.4), the third after it a permerror
    assert outcomes(findings) == ["dns.spf_void_lookups", "dns.spf_pass_all"]
    assert "four.example.net, gone1.example.com, gone2.example.com" in note(findings, "dns.spf_void_lookups")


def test_a_syntax_error_anywhere_in_the_record_is_still_a_permerror() -> None:
    # RFC 7208 4.6: the record is parsed before any term is evaluated, so +all is never reached
    assert outcomes(spf_findings("v=spf1 +all ip4:999.1.1.1")) == ["dns.spf_invalid"]
    assert outcomes(spf_findings("v=spf1 ip4:0.0.0.0/0 -all ip6:::/999")) == ["dns.spf_invalid"]


# -- the first error is the one reported ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "answers", "outcome"),
    [
        pytest.param(
            f"v=spf1 {GONE} " + "a " * 8 + "-all",
            [*GONE_ANSWERS, *addresses(DOMAIN)],
            "dns.spf_void_lookups",
            id="third-void-lookup-before-the-11th-lookup",  # the RFC 7208 test suite's mech-over-limit
        ),
        pytest.param(
            "v=spf1 " + "a " * 10 + f"{GONE} -all",
            [*GONE_ANSWERS, *addresses(DOMAIN)],
            "dns.spf_too_many_lookups",
            id="11th-lookup-before-any-void-lookup",
        ),
        pytest.param(
            f"v=spf1 include:broken.example.net {GONE} -all",
            [txt("broken.example.net", "v=spf1 ip4:192.0.2.0/33 -all"), *GONE_ANSWERS],
            "dns.spf_invalid",
            id="included-syntax-error-before-void-lookups",
        ),
        pytest.param(f"v=spf1 {GONE} ptr -all", GONE_ANSWERS, "dns.spf_void_lookups", id="void-lookups-before-a-ptr"),
        pytest.param(
            "v=spf1 mx:many.example.net " + "a " * 10 + "-all",
            [dns_answer("many.example.net", "MX", *(f"{n} mx{n}.example.net." for n in range(11))), *addresses(DOMAIN)],
            "dns.spf_too_many_lookups",
            id="eleven-mx-records-before-the-11th-lookup",
        ),
    ],
)
def test_only_the_first_error_receivers_reach_is_reported(record: str, answers: list[DnsAnswer], outcome: str) -> None:
    # Given two errors, or an error then a ptr: receivers stop at the first and never reach the other (RFC 7208
    # 4.6.4 counts lookups as terms are evaluated)
    findings = spf_findings(record, *answers)
    # Then the first is the finding, for every sender
    assert outcomes(findings) == [outcome]
    assert "senders:" not in note(findings, outcome)


def test_the_lookup_limit_note_names_the_11th_lookup() -> None:
    findings = spf_findings(
        "v=spf1 include:i.example.net a:late.example.net -all",
        txt("i.example.net", "v=spf1 " + "a " * 9 + "-all"),
        *addresses("i.example.net"),
    )
    assert note(findings, "dns.spf_too_many_lookups") == (
        "more than 10 DNS lookups: receivers stop at the 11th, a:late.example.net (RFC 7208 4.6.4)"
    )


# -- a lookup the evaluation reaches and the snapshot lacks -------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "answers", "unasked"),
    [
        pytest.param(
            "v=spf1 mx:relay.example.net/0 -all",
            [dns_answer("relay.example.net", "MX", "10 out.relay.example.net.")],
            ["out.relay.example.net A", "out.relay.example.net AAAA"],
            id="an-mx-terms-hosts",
        ),
        pytest.param(
            f"v=spf1 {GONE} -all",
            GONE_ANSWERS[:4],
            ["gone3.example.com A", "gone3.example.com AAAA"],
            id="an-a-terms-addresses",
        ),
        pytest.param("v=spf1 exists:x.example.net -all", [], ["x.example.net A"], id="an-exists-name"),
    ],
)
def test_a_lookup_the_snapshot_lacks_is_not_checked_never_answered(
    record: str, answers: list[DnsAnswer], unasked: list[str]
) -> None:
    # Given a snapshot the fetch did not say was cut, lacking lookups the evaluation reaches
    findings = spf_findings(record, *answers)
    # Then they are lookups never made: SPF is not checked there, no verdict read from "-all" (it was dns.spf_strict:
    # the mx/0 term lets every IPv4 server pass once a host has an address; gone3 may not exist either)
    assert outcomes(findings) == ["check.error"] * len(unasked)
    assert [f.subject for f in findings] == unasked
    assert all("not asked" in (f.note or "") and f.families == ("spf",) for f in findings)
