"""The dns section from hand-made DNS snapshots: names, MX, SPF, DMARC, DKIM, DNSSEC, CAA, MTA-STS, TLS-RPT."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import dns.dnssec
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rrset
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.factories import FIXED_NOW, dns_answer, make_dns, make_handshake, make_response, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.grading import grade
from websec_app.scanner.records.caa import MAX_CAA_NAMES
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import DnsAnswer, Failure, FetchChain, PassedOver

HOST = "example.com"


def txt(name: str, *values: str, rcode: str = "NOERROR") -> DnsAnswer:
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values), rcode=rcode)


def check(*answers: DnsAnswer, host: str = HOST, **snapshot) -> CheckResult:
    return check_dns(make_snapshot(f"https://{host}/", dns=make_dns(host, *answers), **snapshot))


def outcomes(*answers: DnsAnswer, **kwargs) -> list[str]:
    return [f.outcome for f in check(*answers, **kwargs).findings]


def notes(result: CheckResult, outcome: str) -> list[str]:
    """Each finding's notes as the report's `note` joins them."""
    return ["; ".join(f.notes) for f in result.findings if f.outcome == outcome]


def graded(result: CheckResult):
    return grade([result], default_rulebook(), {"host": HOST, "domain": HOST})


def answered(name: str, *, mx: bool = False, dual_stack: bool = False) -> list[DnsAnswer]:
    """What the SPF terms asking `name` read (an a term its addresses, an mx term its MX records and their hosts'
    addresses): the evaluation takes a lookup the snapshot lacks for one that failed. Without `dual_stack` the name
    has no AAAA record: a void lookup for IPv6 senders (RFC 7208 4.6.4)."""
    found = [dns_answer(name, "A", "192.0.2.1"), dns_answer(name, "AAAA", *(("2001:db8::1",) if dual_stack else ()))]
    return [dns_answer(name, "MX", f"10 {name}."), *found] if mx else found


# -- addresses ---------------------------------------------------------------------------------------


def test_an_address_of_the_site_that_opened_no_connection_is_named_with_the_one_the_scan_used() -> None:
    # Given a scan whose connections went past one address of the site (two ports) and one of another host
    passed = (
        PassedOver(HOST, 443, "192.0.2.1", False, "192.0.2.2"),
        PassedOver(HOST, 80, "192.0.2.1", True, "192.0.2.2"),
        PassedOver("reports.example.net", 443, "192.0.2.9", False, "192.0.2.10"),  # a DMARC report receiver's
    )

    result = check(passed_over=passed)

    down = [f for f in result.findings if f.outcome == "dns.address_down"]
    assert [(f.subject, f.note) for f in down] == [
        (
            "192.0.2.1",
            "192.0.2.1 (example.com) refused connections to port 443 and did not answer on port 80 within the connect "
            "timeout, and the scan went on at 192.0.2.2",
        )
    ]
    section = graded(result).sections["dns"]
    finding = next(f for f in section["findings"] if f["check"] == "dns.address_down")
    assert (finding["status"], finding["deduction"], finding["subjects"]) == ("warn", 0, ["192.0.2.1"])
    assert "take that address out of the A and AAAA records of the host named with it" in finding["fix"]


def test_an_address_of_the_mta_sts_policy_host_is_named_too() -> None:
    # Sending mail servers fetch the policy from mta-sts.<domain>: one that tries the dead address first waits
    passed = (
        PassedOver(HOST, 443, "192.0.2.1", False, "192.0.2.2"),
        PassedOver("mta-sts.example.com", 443, "192.0.2.9", True, "192.0.2.10"),
    )

    result = check(passed_over=passed)

    # One note an address; the report joins them with "; ", which no note holds itself (the PDF's Observed line
    # read as one run-on list when each did)
    notes = [f.note for f in result.findings if f.outcome == "dns.address_down"]
    assert notes == [
        "192.0.2.1 (example.com) refused connections to port 443, and the scan went on at 192.0.2.2",
        "192.0.2.9 (mta-sts.example.com) did not answer on port 443 within the connect timeout, and the scan went on "
        "at 192.0.2.10",
    ]
    finding = next(f for f in graded(result).sections["dns"]["findings"] if f["check"] == "dns.address_down")
    assert finding["note"].split("; ") == notes


def test_an_address_refusing_several_ports_is_one_finding_its_ports_in_order() -> None:
    passed = tuple(PassedOver(HOST, port, "2001:db8::7", False, "2001:db8::8") for port in (8443, 80, 443))

    down = [f for f in check(passed_over=passed).findings if f.outcome == "dns.address_down"]

    assert [f.note for f in down] == [
        "2001:db8::7 (example.com) refused connections to ports 80, 443 and 8443, and the scan went on at 2001:db8::8"
    ]


def test_a_scan_that_went_past_no_address_says_nothing_of_it() -> None:
    assert "dns.address_down" not in outcomes()


# -- nothing fetched, failures ---------------------------------------------------------------------


def test_given_no_records_fetched_then_only_resolution_is_reported() -> None:
    assert outcomes() == ["dns.resolves"]


def test_given_a_failed_lookup_then_could_not_check_and_no_deduction() -> None:
    result = check(txt(f"_dmarc.{HOST}", rcode="SERVFAIL"), dns_answer(HOST, "MX", rcode="TIMEOUT"))
    errors = {f.subject for f in result.findings if f.outcome == "check.error"}
    assert errors == {f"_dmarc.{HOST} TXT", f"{HOST} MX"}
    assert graded(result).score == 100


def test_an_ip_literal_has_no_dns_to_check() -> None:
    assert outcomes(host="93.184.216.34") == ["dns.ip_literal"]


# -- names -----------------------------------------------------------------------------------------


def test_ipv6_present_or_missing() -> None:
    assert "dns.ipv6" in outcomes(dns_answer(HOST, "AAAA", "2001:db8::1"))
    assert "dns.no_ipv6" in outcomes(dns_answer(HOST, "AAAA"))


def test_the_fixes_name_the_records_of_the_host_scanned_when_the_page_is_elsewhere() -> None:
    # Given oldbrand.example, without AAAA or DMARC, redirecting to www.newbrand.example (the report's host)
    page = make_snapshot("https://www.newbrand.example/")
    target = make_snapshot("https://oldbrand.example/")
    snapshot = replace(
        page,
        target=target.target,
        main=FetchChain(
            "https://oldbrand.example/",
            (
                make_response("https://oldbrand.example/", 301, {"Location": "https://www.newbrand.example/"}),
                page.main.final,
            ),
        ),
        dns=make_dns(
            "oldbrand.example", dns_answer("oldbrand.example", "AAAA"), txt("_dmarc.oldbrand.example", rcode="NXDOMAIN")
        ),
    )
    fixes = {f["check"]: f["fix"] for f in grade_snapshot(snapshot).to_dict()["dns"]["findings"] if f.get("fix")}
    # Then each fix is for oldbrand.example's own records, which the lookups read (it named newbrand's)
    assert fixes["dns.no_ipv6"].startswith("Give oldbrand.example an IPv6 address")
    assert fixes["dns.dmarc_missing"].startswith('_dmarc.oldbrand.example TXT "v=DMARC1; p=reject')
    assert not any("newbrand" in fix for fix in fixes.values()), fixes


def test_given_www_is_a_cname_to_a_name_that_does_not_exist_then_dangling_and_critical() -> None:
    result = check(
        dns_answer(f"www.{HOST}", "CNAME", "old-app.azurewebsites.net."),
        dns_answer("old-app.azurewebsites.net", "A", rcode="NXDOMAIN"),
        dns_answer("old-app.azurewebsites.net", "AAAA", rcode="NXDOMAIN"),
    )
    finding = next(f for f in result.findings if f.outcome == "dns.dangling_cname")
    assert finding.subject == f"www.{HOST}" and "old-app.azurewebsites.net" in (finding.note or "")
    section = graded(result).sections["dns"]
    dangling = next(f for f in section["findings"] if f["check"] == "dns.dangling_cname")
    assert dangling["severity"] == "critical" and dangling["deduction"] == 25
    assert dangling["fix"].startswith(f"Delete the record now (www.{HOST} CNAME old-app.azurewebsites.net)")
    assert result.details["dangling_cnames"] == [f"www.{HOST}"]


def test_given_a_cname_to_a_name_that_resolves_then_fine() -> None:
    result = check(
        dns_answer(f"www.{HOST}", "CNAME", "cdn.example.net."),
        dns_answer("cdn.example.net", "A", "192.0.2.7"),
        dns_answer("cdn.example.net", "AAAA"),
    )
    assert notes(result, "dns.cnames_resolve") == [f"www.{HOST} -> cdn.example.net"]


def test_a_cname_target_that_could_not_be_resolved_is_not_called_dangling() -> None:
    found = outcomes(
        dns_answer(f"www.{HOST}", "CNAME", "cdn.example.net."),
        dns_answer("cdn.example.net", "A", rcode="SERVFAIL"),
        dns_answer("cdn.example.net", "AAAA", rcode="SERVFAIL"),
    )
    assert "dns.dangling_cname" not in found


# -- MX --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "outcome"),
    [
        (("0 .",), "dns.null_mx"),
        (("0 .", "10 mail.example.com."), "dns.null_mx_invalid"),
        (("10 .",), "dns.null_mx_invalid"),
        ((), "dns.no_mx"),
        (("10 mail.example.com.",), "dns.mx_present"),
    ],
)
def test_mx_records(records, outcome) -> None:
    assert outcome in outcomes(dns_answer(HOST, "MX", *records))


def test_an_mx_host_that_does_not_exist_is_reported() -> None:
    result = check(
        dns_answer(HOST, "MX", "10 mx1.example.com.", "20 gone.example.com."),
        dns_answer("mx1.example.com", "A", "192.0.2.25"),
        dns_answer("mx1.example.com", "AAAA"),
        dns_answer("gone.example.com", "A", rcode="NXDOMAIN"),
        dns_answer("gone.example.com", "AAAA", rcode="NXDOMAIN"),
    )
    assert notes(result, "dns.mx_unresolvable") == ["gone.example.com does not exist"]


# -- SPF -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "outcome", "deduction"),
    [
        ("v=spf1 mx:mail.example.net -all", "dns.spf_strict", 0),
        ("v=spf1 mx:mail.example.net ~all", "dns.spf_softfail", 1),
        ("v=spf1 mx:mail.example.net ?all", "dns.spf_neutral", 3),
        ("v=spf1 mx:mail.example.net", "dns.spf_neutral", 3),
        ("v=spf1 +all", "dns.spf_pass_all", 5),
        ("v=spf1 ip4:999.1.1.1 -all", "dns.spf_invalid", 4),
        ("v=spf1 a:/24 -all", "dns.spf_invalid", 4),  # RFC 7208 12: ":" needs a domain-spec
        # RFC 7208 12: a prefix length is a number with no leading zero, never a netmask; an address has no zone
        ("v=spf1 ip4:192.0.2.0/255.255.255.0 -all", "dns.spf_invalid", 4),
        ("v=spf1 ip4:192.0.2.0/0.0.0.0 -all", "dns.spf_invalid", 4),  # a permerror, not /0 passing everyone
        ("v=spf1 ip4:192.0.2.0/024 -all", "dns.spf_invalid", 4),
        ("v=spf1 ip6:2001:db8::/032 -all", "dns.spf_invalid", 4),
        ("v=spf1 ip6:2001:db8::1%eth0 -all", "dns.spf_invalid", 4),
        ("v=spf1 a/08 -all", "dns.spf_invalid", 4),
        ("v=spf1 -all foo=%abc", "dns.spf_invalid", 4),  # RFC 7208 12: an unknown modifier's value is a macro-string
        ("v=spf1 a:%{c}.example.com -all", "dns.spf_invalid", 4),  # RFC 7208 7.2: c, r, t only in explanation text
        ("v=spf1 -all exp=%{r}.example.com", "dns.spf_invalid", 4),  # exp='s own value is a domain-spec
        ("v=spf1 a:foo:bar/baz.example.com -all", "dns.spf_strict", 0),  # any visible character below the top label
        ("v=spf1 ptr -all", "dns.spf_ptr", 1),
    ],
)
def test_spf_records_are_graded_by_their_all_and_their_syntax(record, outcome, deduction) -> None:
    terms = [*answered("mail.example.net", mx=True), *answered("foo:bar/baz.example.com")]
    result = check(txt(HOST, record, "google-site-verification=x"), *terms)
    assert outcome in [f.outcome for f in result.findings]
    assert graded(result).score == 100 - deduction


def test_spf_missing_and_multiple() -> None:
    assert "dns.spf_missing" in outcomes(txt(HOST, "some-verification=1"))
    assert "dns.spf_multiple" in outcomes(txt(HOST, "v=spf1 mx -all", "v=spf1 a -all"))


def test_the_softfail_fix_is_the_owners_record_with_minus_all() -> None:
    included = txt("_spf.mailer.example", "v=spf1 ip4:198.51.100.0/24 -all")
    section = graded(check(txt(HOST, "v=spf1 include:_spf.mailer.example ~all"), included)).sections["dns"]
    fix = next(f["fix"] for f in section["findings"] if f["check"] == "dns.spf_softfail")
    assert fix == f'{HOST} TXT "v=spf1 include:_spf.mailer.example -all"'


def test_the_softfail_fix_of_a_redirecting_record_goes_to_the_record_it_points_to() -> None:
    # RFC 7208 6.1: the redirect target's "all" decides; "-all" added to the redirecting record would cancel it
    result = check(
        txt(HOST, "v=spf1 redirect=_spf.example.com"), txt("_spf.example.com", "v=spf1 ip4:192.0.2.0/24 ~all")
    )
    fix = next(f["fix"] for f in graded(result).sections["dns"]["findings"] if f["check"] == "dns.spf_softfail")
    assert fix == '_spf.example.com TXT "v=spf1 ip4:192.0.2.0/24 -all"'


@pytest.mark.parametrize(("provider_all", "outcome"), [("~all", "dns.spf_softfail"), ("?all", "dns.spf_neutral")])
def test_the_fix_of_a_redirect_to_another_organisations_record_includes_it_from_the_owners_record(
    provider_all, outcome
) -> None:
    # RFC 7208 6.1, 5.2: the owner cannot edit the provider's "all"; an include of the provider's record lets its
    # senders pass, and the owner's own "-all" decides for the others
    provider = txt("_spf.mailer.example", f"v=spf1 ip4:198.51.100.0/24 {provider_all}")
    result = check(txt(HOST, "v=spf1 ip4:192.0.2.1 redirect=_spf.mailer.example"), provider)
    fix = next(f["fix"] for f in graded(result).sections["dns"]["findings"] if f["check"] == outcome)
    assert fix == f'{HOST} TXT "v=spf1 ip4:192.0.2.1 include:_spf.mailer.example -all"'
    fixed = check(txt(HOST, "v=spf1 ip4:192.0.2.1 include:_spf.mailer.example -all"), provider)
    assert [f.outcome for f in fixed.findings if f.outcome.startswith("dns.spf")] == ["dns.spf_strict"]


def test_spf_redirects_are_followed_to_the_record_that_decides() -> None:
    chained = check(
        txt(HOST, "v=spf1 redirect=a.example.net"),
        txt("a.example.net", "v=spf1 redirect=b.example.net"),
        txt("b.example.net", "v=spf1 ip4:192.0.2.1 -all"),
    )
    assert [f.outcome for f in chained.findings if f.outcome.startswith("dns.spf")] == ["dns.spf_strict"]


@pytest.mark.parametrize(
    "answers",
    [
        (txt(HOST, "v=spf1 redirect=_spf.example.com"), txt("_spf.example.com", rcode="SERVFAIL")),
        (txt(HOST, "v=spf1 redirect=%{d}._spf.example.com"),),  # the target depends on the sender
    ],
)
def test_an_spf_redirect_that_cannot_be_read_is_could_not_check_not_neutral(answers) -> None:
    result = check(*answers)
    found = [f.outcome for f in result.findings if f.outcome.startswith(("dns.spf", "check"))]
    assert found == ["check.error"]
    assert graded(result).score == 100


SIX_INCLUDES = " ".join(f"include:i{n}.mailer.example" for n in range(6))


@pytest.mark.parametrize(
    ("answers", "permerror", "score"),
    [
        ((txt(HOST, "v=spf1 ip4:192.0.2.0/255.255.255.0 +all"),), "dns.spf_invalid", 96),
        ((txt(HOST, "v=spf1 ip4:0.0.0.0/33 ip4:0.0.0.0/0 -all"),), "dns.spf_invalid", 96),
        (
            (
                txt(HOST, "v=spf1 ip4:192.0.2.0/33 include:_spf.mailer.example ~all"),
                txt("_spf.mailer.example", "v=spf1 ip4:198.51.100.0/24 ~all"),
            ),
            "dns.spf_invalid",
            96,
        ),
        (
            (
                txt(HOST, "v=spf1 include:broken.mailer.example ?all"),
                txt("broken.mailer.example", "v=spf1 ip4:1.2.3 -all"),
            ),
            "dns.spf_invalid",
            96,
        ),
        (
            (
                txt(HOST, f"v=spf1 {SIX_INCLUDES} ?all"),
                *(txt(f"i{n}.mailer.example", "v=spf1 a mx -all") for n in range(6)),
                *(a for n in range(4) for a in answered(f"i{n}.mailer.example", mx=True, dual_stack=True)),
            ),
            "dns.spf_too_many_lookups",
            96,
        ),
        (
            (
                txt(HOST, "v=spf1 a:old1.example.com a:old2.example.com a:old3.example.com ~all"),
                *(dns_answer(f"old{n}.example.com", t, rcode="NXDOMAIN") for n in (1, 2, 3) for t in ("A", "AAAA")),
            ),
            "dns.spf_void_lookups",
            96,
        ),
    ],
)
def test_a_record_receivers_reject_gets_no_verdict_on_its_all_nor_a_fix_republishing_it(
    answers, permerror, score
) -> None:
    # RFC 7208 4.6, 4.6.4: a syntax error or a limit passed ends the evaluation with permerror; no "all" is tested,
    # and the record with "-all" would be the same permerror
    result = check(*answers)
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.spf")] == [permerror]
    report = graded(result)
    assert report.score == score
    assert not [f for f in report.sections["dns"]["findings"] if "TXT" in (f.get("fix") or "")]


def test_spf_including_a_record_that_passes_everyone_is_pass_all_not_strict() -> None:
    # RFC 7208 5.2: the include matches for every sender, before -all is reached
    result = check(txt(HOST, "v=spf1 include:evil.example.net -all"), txt("evil.example.net", "v=spf1 +all"))
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.spf")] == ["dns.spf_pass_all"]
    (note,) = notes(result, "dns.spf_pass_all")
    assert "include:evil.example.net" in note
    assert graded(result).score == 95


def test_spf_a_term_of_prefix_length_zero_is_pass_all_not_strict() -> None:
    # RFC 7208 5.3, 5.6: "a/0" compares the sender with the /0 network of the domain's address, which holds every
    # IPv4 address (the RFC 7208 test suite's a-cidr4-0: pass); it was dns.spf_strict, read as a record ending -all
    result = check(txt(HOST, "v=spf1 a/0 -all"), dns_answer(HOST, "A", "192.0.2.1"), dns_answer(HOST, "AAAA"))
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.spf")] == ["dns.spf_pass_all"]
    (note,) = notes(result, "dns.spf_pass_all")
    assert note.startswith("a/0 -> example.com has an IPv4 address")


def test_spf_over_ten_lookups_through_includes() -> None:
    includes = " ".join(f"include:s{n}.mailer.example" for n in range(4))
    answers = [txt(HOST, f"v=spf1 {includes} -all")]
    answers += [txt(f"s{n}.mailer.example", "v=spf1 a mx ptr:x.example -all") for n in range(4)]
    answers += [a for n in range(3) for a in answered(f"s{n}.mailer.example", mx=True)]
    result = check(*answers)
    assert "dns.spf_too_many_lookups" in [f.outcome for f in result.findings]
    assert "dns.spf_strict" not in [f.outcome for f in result.findings]


def test_spf_with_more_than_two_void_lookups_is_a_permerror_not_strict() -> None:
    result = check(
        txt(HOST, "v=spf1 a:old1.example.com a:old2.example.com mx:old3.example.com -all"),
        *(dns_answer(f"old{n}.example.com", t, rcode="NXDOMAIN") for n in (1, 2) for t in ("A", "AAAA")),
        dns_answer("old3.example.com", "MX", rcode="NXDOMAIN"),
    )
    found = [f.outcome for f in result.findings]
    assert "dns.spf_void_lookups" in found and "dns.spf_strict" not in found
    (note,) = notes(result, "dns.spf_void_lookups")
    assert "3" in note and "old1.example.com" in note and "old3.example.com" in note
    assert result.details["spf"]["void_lookups"] == 3
    assert graded(result).score == 96


def test_spf_terms_after_all_do_not_count_towards_the_limits() -> None:
    # RFC 7208 5.1: mechanisms after "all" are never tested and MUST be ignored
    gone = [dns_answer(f"gone{n}.example.com", t, rcode="NXDOMAIN") for n in range(3) for t in ("A", "AAAA")]
    result = check(
        txt(HOST, "v=spf1 ip4:192.0.2.1 -all a:gone0.example.com a:gone1.example.com a:gone2.example.com"), *gone
    )
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.spf")] == ["dns.spf_strict"]


def test_spf_mx_with_eleven_mx_records_is_over_the_limits() -> None:
    result = check(
        txt(HOST, "v=spf1 mx -all"),
        dns_answer(HOST, "MX", *(f"{n} mx{n}.example.com." for n in range(11))),
    )
    found = [f.outcome for f in result.findings]
    assert "dns.spf_too_many_lookups" in found and "dns.spf_strict" not in found
    (note,) = notes(result, "dns.spf_too_many_lookups")
    assert "11 MX records" in note


# -- DMARC -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ("v=DMARC1; p=reject; rua=mailto:d@example.com", {"dns.dmarc_enforced"}),
        ("v=DMARC1; p=quarantine", {"dns.dmarc_enforced"}),
        ("v=DMARC1; p=none; rua=mailto:d@example.com", {"dns.dmarc_none"}),
        ("v=DMARC1; p=reject; pct=50", {"dns.dmarc_enforced", "dns.dmarc_partial"}),
        ("v=DMARC1; p=reject; sp=none", {"dns.dmarc_enforced", "dns.dmarc_subdomains_open"}),
        ("v=DMARC1; p=reject; rua=dmarc@example.com", {"dns.dmarc_enforced", "dns.dmarc_report_uri"}),
        ("v=DMARC1; p=block", {"dns.dmarc_invalid"}),
        ("v=DMARC1; p=bogus; rua=mailto:d@example.com", {"dns.dmarc_invalid", "dns.dmarc_none"}),
        ("v=DMARC1; p=reject; pct=150", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),
        ("v=DMARC1; p=reject; pct=²", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),  # isdigit(), not int()
        ("v=DMARC1; p=reject; pct=-5", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),  # int() reads it; 6.4 does not
        ("v=DMARC1; p=reject; pct=+50", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),
        # RFC 7489 6.4's fo, rf and ri: OpenDMARC discards a record with a bad one
        ("v=DMARC1; p=reject; fo=2", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),
        ("v=DMARC1; p=reject; rf=iodef", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),
        ("v=DMARC1; p=reject; ri=1h", {"dns.dmarc_invalid", "dns.dmarc_enforced"}),
        # 6.4: the size limit is 1*DIGIT (ASCII) fitting in 64 bits
        ("v=DMARC1; p=reject; rua=mailto:d@example.com!١٠m", {"dns.dmarc_enforced", "dns.dmarc_report_uri"}),
        (
            "v=DMARC1; p=reject; rua=mailto:d@example.com!99999999999999999999",
            {"dns.dmarc_enforced", "dns.dmarc_report_uri"},
        ),
        ("v=DMARC1; p=reject; rua=mailto:dmarc%40example.com", {"dns.dmarc_enforced"}),  # RFC 6068: percent-encoded
    ],
)
def test_dmarc_policies(record, expected) -> None:
    found = {o for o in outcomes(txt(f"_dmarc.{HOST}", record)) if o.startswith("dns.dmarc")}
    assert found == expected


def test_dmarc_missing_comes_with_a_record_to_paste() -> None:
    section = graded(check(txt(f"_dmarc.{HOST}", "unrelated"))).sections["dns"]
    finding = next(f for f in section["findings"] if f["check"] == "dns.dmarc_missing")
    assert finding["fix"].startswith(f'_dmarc.{HOST} TXT "v=DMARC1; p=reject; rua=mailto:dmarc-reports@{HOST}"')


def test_two_dmarc_records_mean_no_policy() -> None:
    found = outcomes(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject", "v=DMARC1; p=none"))
    assert "dns.dmarc_invalid" in found and "dns.dmarc_enforced" not in found


@pytest.mark.parametrize(
    "record",
    [
        "v=DMARC1; p=reject",
        "V=DMARC1; p=reject",  # the tag name is the ABNF literal "v": case-insensitive (RFC 5234 2.3)
        "v = DMARC1 ; p=reject",  # dmarc-version allows *WSP around "=", dmarc-sep around ";"
        "v=DMARC1;p=reject;",
    ],
)
def test_a_record_beginning_with_the_version_tag_is_a_dmarc_record(record) -> None:
    found = {o for o in outcomes(txt(f"_dmarc.{HOST}", record)) if o.startswith("dns.dmarc")}
    assert found == {"dns.dmarc_enforced"}


@pytest.mark.parametrize(
    "record",
    [
        "v=dmarc1; p=reject",  # RFC 7489 6.3: the value "MUST match precisely" (%x44 %x4d ... in 6.4)
        " v=DMARC1; p=reject",  # leading whitespace: the record does not begin with v=DMARC1
        "p=reject; v=DMARC1",  # v must be the first tag
        "v=DMARC1 p=reject",  # the value of v is then "DMARC1 p=reject"
        "v=DMARC2; p=reject",
    ],
)
def test_a_record_not_beginning_with_v_dmarc1_is_discarded_not_invalid(record) -> None:
    # RFC 7489 6.6.3 step 4: such records are discarded; none remains, so there is no DMARC record
    result = check(txt(f"_dmarc.{HOST}", record))
    found = {f.outcome for f in result.findings if f.outcome.startswith("dns.dmarc")}
    assert found == {"dns.dmarc_missing"}
    (note,) = notes(result, "dns.dmarc_missing")
    assert "ignored" in note and record.strip() in note


def test_a_discarded_record_next_to_a_valid_one_leaves_one_policy() -> None:
    found = outcomes(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject", "v=dmarc1; p=none", "unrelated"))
    assert [o for o in found if o.startswith("dns.dmarc")] == ["dns.dmarc_enforced"]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # RFC 7489 6.6.3 step 5: an invalid sp with a valid rua is treated as p=none ...
        ("v=DMARC1; p=reject; sp=bogus; rua=mailto:d@example.com", {"dns.dmarc_invalid", "dns.dmarc_none"}),
        # ... and without one, no DMARC processing at all
        ("v=DMARC1; p=reject; sp=bogus", {"dns.dmarc_invalid"}),
    ],
)
def test_an_invalid_sp_falls_back_like_an_invalid_p(record, expected) -> None:
    found = {o for o in outcomes(txt(f"_dmarc.{HOST}", record)) if o.startswith("dns.dmarc")}
    assert found == expected


def test_the_dmarcbis_tags_are_understood() -> None:
    # draft-ietf-dmarc-dmarcbis: np (non-existent subdomains), psd (public suffix domain), t (testing)
    result = check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; np=reject; psd=n; t=n"))
    assert {f.outcome for f in result.findings if f.outcome.startswith("dns.dmarc")} == {"dns.dmarc_enforced"}
    dmarc = result.details["dmarc"]
    assert (dmarc["np"], dmarc["psd"], dmarc["t"], dmarc["errors"]) == ("reject", "n", "n", [])
    assert dmarc["ignored_tags"] == []


@pytest.mark.parametrize(
    ("tag", "problem"),
    [("psd=maybe", "psd=maybe"), ("t=x", "t=x")],
)
def test_invalid_dmarcbis_tag_values_are_reported(tag, problem) -> None:
    result = check(txt(f"_dmarc.{HOST}", f"v=DMARC1; p=reject; {tag}"))
    (note,) = notes(result, "dns.dmarc_invalid")
    assert problem in note
    assert "dns.dmarc_enforced" in [f.outcome for f in result.findings]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # DMARCbis's policy discovery: an invalid np is an invalid sp, so p=reject is not applied: p=none with a
        # valid rua, no DMARC processing at all without one (it was dns.dmarc_enforced, the np error aside)
        ("v=DMARC1; p=reject; np=bogus", {"dns.dmarc_invalid"}),
        ("v=DMARC1; p=reject; np=bogus; rua=mailto:d@example.com", {"dns.dmarc_invalid", "dns.dmarc_none"}),
    ],
)
def test_an_invalid_np_falls_back_like_an_invalid_sp(record, expected) -> None:
    result = check(txt(f"_dmarc.{HOST}", record))
    assert {f.outcome for f in result.findings if f.outcome.startswith("dns.dmarc")} == expected
    assert "np=bogus" in notes(result, "dns.dmarc_invalid")[0]


def test_unknown_tags_are_ignored_and_listed() -> None:
    result = check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; foo=bar"))
    assert "dns.dmarc_invalid" not in [f.outcome for f in result.findings]
    assert result.details["dmarc"]["ignored_tags"] == ["foo"]


def test_testing_mode_t_y_is_a_policy_not_fully_applied() -> None:
    result = check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; t=y"))
    (note,) = notes(result, "dns.dmarc_partial")
    assert "t=y" in note


def test_np_none_leaves_non_existent_subdomains_open() -> None:
    result = check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; np=none"))
    (note,) = notes(result, "dns.dmarc_subdomains_open")
    assert "np=none" in note


def test_reports_to_another_domain_need_its_consent_record() -> None:
    record = "v=DMARC1; p=reject; rua=mailto:a@reports.example.net,mailto:b@ok.example.org"
    result = check(
        txt(f"_dmarc.{HOST}", record),
        txt(f"{HOST}._report._dmarc.reports.example.net", rcode="NXDOMAIN"),
        txt(f"{HOST}._report._dmarc.ok.example.org", "v=DMARC1"),
    )
    (note,) = notes(result, "dns.dmarc_report_uri")
    assert "reports.example.net has not agreed" in note and "ok.example.org" not in note


def test_reports_to_an_https_uri_of_another_domain_need_its_consent_record_too() -> None:
    # RFC 7489 7.1 builds the consent name from "the host portion of the authority component" of any URI
    record = "v=DMARC1; p=reject; rua=https://dmarc.reports.example.net/in,https://dmarc.example.com/in"
    result = check(txt(f"_dmarc.{HOST}", record), txt(f"{HOST}._report._dmarc.dmarc.reports.example.net"))
    (note,) = notes(result, "dns.dmarc_report_uri")
    assert note == (
        f"dmarc.reports.example.net has not agreed to receive reports for {HOST} "
        f"(no {HOST}._report._dmarc.dmarc.reports.example.net record, RFC 7489 7.1)"
    )
    consented = txt(f"{HOST}._report._dmarc.dmarc.reports.example.net", "v=DMARC1")
    assert not notes(check(txt(f"_dmarc.{HOST}", record), consented), "dns.dmarc_report_uri")


def test_a_dmarc_report_address_may_carry_header_fields_and_a_size_limit() -> None:
    # RFC 7489 6.2: a mailto: URI (RFC 6068, so ?subject=...), then an optional !size; the consent record is
    # looked up at the address's domain, not at one that ends in the header fields
    record = "v=DMARC1; p=reject; rua=mailto:a@reports.example.net?subject=dmarc!10m,mailto:b@example.com!5m"
    result = check(txt(f"_dmarc.{HOST}", record), txt(f"{HOST}._report._dmarc.reports.example.net", rcode="NXDOMAIN"))
    (note,) = notes(result, "dns.dmarc_report_uri")
    assert "reports.example.net has not agreed" in note and "not a valid" not in note
    assert not notes(
        check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; rua=mailto:a@example.com?x=1")), "dns.dmarc_report_uri"
    )
    bad = notes(
        check(txt(f"_dmarc.{HOST}", "v=DMARC1; p=reject; rua=mailto:?to=a@example.com!x")), "dns.dmarc_report_uri"
    )
    assert bad and "bad size limit" in bad[0]


# -- DKIM ------------------------------------------------------------------------------------------


def test_dkim_from_the_domainkey_name_alone() -> None:
    assert "dns.dkim_present" in outcomes(txt(f"_domainkey.{HOST}"))  # NOERROR, no TXT: an empty non-terminal
    assert "dns.dkim_missing" in outcomes(txt(f"_domainkey.{HOST}", rcode="NXDOMAIN"))


def test_missing_dkim_is_no_finding_for_a_domain_that_handles_no_mail() -> None:
    nx = txt(f"_domainkey.{HOST}", rcode="NXDOMAIN")
    assert "dns.dkim_not_needed" in outcomes(nx, dns_answer(HOST, "MX", "0 ."))
    assert "dns.dkim_not_needed" in outcomes(nx, dns_answer(HOST, "MX"), txt(HOST, "v=spf1 -all"))
    # RFC 7208 4.6.1: mechanism names are case-insensitive
    assert "dns.dkim_not_needed" in outcomes(nx, dns_answer(HOST, "MX"), txt(HOST, "v=spf1 -ALL"))


# -- DNSSEC ----------------------------------------------------------------------------------------


def _signed(domain: str, *, ds: str = "valid", signature_age: timedelta = timedelta(0)) -> list[DnsAnswer]:
    """DS, DNSKEY and SOA answers of a zone signed as a real signer would (ECDSA P-256)."""
    name = dns.name.from_text(domain)
    key = ec.generate_private_key(ec.SECP256R1())
    dnskey = dns.dnssec.make_dnskey(key.public_key(), dns.dnssec.Algorithm.ECDSAP256SHA256, flags=257)
    keys = dns.rrset.from_rdata(name, 300, dnskey)
    soa = dns.rrset.from_text(name, 300, "IN", "SOA", f"ns1.{domain}. hostmaster.{domain}. 1 3600 600 86400 300")
    inception = FIXED_NOW - timedelta(hours=1) - signature_age
    expiration = FIXED_NOW + timedelta(days=7) - signature_age

    def sign(rrset: dns.rrset.RRset) -> tuple[str, ...]:
        rrsig = dns.dnssec.sign(rrset, key, name, dnskey, inception=inception, expiration=expiration)
        return (rrsig.to_text(),)

    other = dns.dnssec.make_dnskey(
        ec.generate_private_key(ec.SECP256R1()).public_key(), dns.dnssec.Algorithm.ECDSAP256SHA256, flags=257
    )
    ds_records = {"valid": (dns.dnssec.make_ds(name, dnskey, "SHA256").to_text(),), "wrong": (), "none": ()}[ds]
    if ds == "wrong":
        ds_records = (dns.dnssec.make_ds(name, other, "SHA256").to_text(),)
    return [
        dns_answer(domain, "DS", *ds_records),
        dns_answer(domain, "DNSKEY", *(r.to_text() for r in keys), signatures=sign(keys)),
        dns_answer(domain, "SOA", *(r.to_text() for r in soa), signatures=sign(soa)),
    ]


def test_a_signed_zone_with_a_matching_ds_validates() -> None:
    result = check(*_signed(HOST))
    assert "dns.dnssec_valid" in [f.outcome for f in result.findings]
    assert result.details["dnssec"]["status"] == "secure"


def test_a_ds_that_matches_no_key_is_broken() -> None:
    result = check(*_signed(HOST, ds="wrong"))
    assert notes(result, "dns.dnssec_broken") == [
        "no DNSKEY of the zone matches the DS record in the parent (a key rollover gone wrong?)"
    ]


def test_expired_signatures_are_broken() -> None:
    (note,) = notes(check(*_signed(HOST, signature_age=timedelta(days=30))), "dns.dnssec_broken")
    assert "does not verify" in note and "expired" in note


def test_keys_without_a_ds_are_an_island_and_neither_is_unsigned() -> None:
    assert "dns.dnssec_no_ds" in outcomes(*_signed(HOST, ds="none"))
    assert "dns.dnssec_unsigned" in outcomes(dns_answer(HOST, "DS"), dns_answer(HOST, "DNSKEY"))


def test_a_ds_without_keys_is_broken() -> None:
    ds = _signed(HOST)[0]
    assert "dns.dnssec_broken" in outcomes(ds, dns_answer(HOST, "DNSKEY"))


def test_dnskeys_without_any_signature_mean_the_resolver_drops_them_not_a_broken_zone() -> None:
    ds, dnskey, _ = _signed(HOST)
    stripped = dns_answer(HOST, "DNSKEY", *dnskey.records)
    result = check(ds, stripped)
    assert [f.outcome for f in result.findings if f.outcome.startswith(("dns.dnssec", "check"))] == ["check.error"]
    assert result.details["dnssec"]["status"] == "unknown"


def test_a_failed_dnskey_query_is_could_not_check() -> None:
    result = check(_signed(HOST)[0], dns_answer(HOST, "DNSKEY", rcode="SERVFAIL"))
    assert [f.subject for f in result.findings if f.outcome == "check.error"] == ["DNSSEC"]


def _no_zone_of_its_own(host: str) -> list[DnsAnswer]:
    """A name inside another's zone: its SOA, DS and DNSKEY queries answer NOERROR with no record."""
    return [dns_answer(host, rdtype) for rdtype in ("SOA", "DS", "DNSKEY")]


def test_a_name_inside_a_platforms_signed_zone_is_judged_by_that_zone() -> None:
    # Given alice.github.io, a name in GitHub's signed github.io zone (its registrable domain by the private PSL)
    result = check(*_no_zone_of_its_own("alice.github.io"), *_signed("github.io"), host="alice.github.io")
    # Then github.io's chain is validated and the note says whose it is
    (note,) = notes(result, "dns.dnssec_valid")
    assert note.startswith("alice.github.io is a name in the github.io zone, not a zone of its own: the DS")
    assert result.details["dnssec"]["zone"] == "github.io"


def test_a_name_inside_a_platforms_unsigned_zone_gets_no_advice_to_publish_a_ds() -> None:
    platform = [dns_answer("github.io", "SOA", "ns1.github.io. h.github.io. 1 3600 600 86400 300")]
    platform += [dns_answer("github.io", "DS"), dns_answer("github.io", "DNSKEY")]
    result = check(*_no_zone_of_its_own("alice.github.io"), *platform, host="alice.github.io")
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.dnssec")] == []
    assert result.details["dnssec"]["status"] == "unsigned"


def test_a_name_inside_a_platforms_broken_zone_is_broken_and_the_fix_names_that_zone() -> None:
    result = check(*_no_zone_of_its_own("alice.github.io"), *_signed("github.io", ds="wrong"), host="alice.github.io")
    section = grade([result], default_rulebook(), {"host": "alice.github.io", "domain": "alice.github.io"})
    (broken,) = [f for f in section.sections["dns"]["findings"] if f["check"] == "dns.dnssec_broken"]
    assert "github.io's current key signing key" in broken["fix"] and "alice.github.io's" not in broken["fix"]


def test_a_name_with_no_zone_of_its_own_whose_zone_was_not_asked_gets_no_dnssec_verdict() -> None:
    result = check(*_no_zone_of_its_own("alice.github.io"), host="alice.github.io")
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.dnssec")] == []


# -- CAA -------------------------------------------------------------------------------------------


def test_caa_is_found_by_climbing_from_the_host_to_the_domain() -> None:
    result = check(
        dns_answer(f"www.{HOST}", "CAA"),
        dns_answer(HOST, "CAA", '0 issue "letsencrypt.org"', '0 issue "pki.goog; cansignhttpexchanges=yes"'),
        host=f"www.{HOST}",
    )
    assert notes(result, "dns.caa_present") == [f"at {HOST}: issuers letsencrypt.org, pki.goog"]
    assert result.details["caa"]["name"] == HOST


@pytest.mark.parametrize(
    ("record", "outcome", "score"),
    [
        ('0 iodef "mailto:security@example.com"', "dns.caa_missing", 98),
        ('0 issuewild "letsencrypt.org"', "dns.caa_missing", 98),  # covers wildcard names only
        ('0 issue ";"', "dns.caa_present", 100),  # no CA at all: the strictest restriction
    ],
)
def test_caa_without_an_issue_tag_restricts_nothing(record, outcome, score) -> None:
    # RFC 8659 4.2, 4.3: only issue restricts issuance for a name that is not a wildcard
    result = check(dns_answer(HOST, "CAA", record))
    assert [f.outcome for f in result.findings if f.outcome.startswith("dns.caa")] == [outcome]
    assert graded(result).score == score


def caa_fixes(result: CheckResult, host: str) -> dict[str, str]:
    report = grade([result], default_rulebook(), {"host": host, "domain": HOST})
    return {f["check"]: f["fix"] for f in report.sections["dns"]["findings"] if f["check"].startswith("dns.caa")}


@pytest.mark.parametrize(
    ("records", "outcome", "fix"),
    [
        (
            ['0 iodef "mailto:security@example.com"'],
            "dns.caa_missing",
            f'www.{HOST} CAA 0 issue "letsencrypt.org"   and   www.{HOST} CAA 0 iodef "mailto:security@{HOST}"',
        ),
        (
            ['128 futuretag "x"', '0 issue "letsencrypt.org"'],
            "dns.caa_invalid",
            f"Correct www.{HOST}'s CAA records",
        ),
    ],
)
def test_the_caa_fix_names_the_host_when_the_relevant_records_are_there(records, outcome, fix) -> None:
    # RFC 8659 3: an RRset at the host ends the climb, so records added at the domain would change nothing
    host = f"www.{HOST}"
    result = check(dns_answer(host, "CAA", *records), dns_answer(HOST, "CAA"), host=host)
    assert caa_fixes(result, host)[outcome].startswith(fix)


def test_the_caa_fix_names_the_domain_when_no_name_has_records_or_the_ones_found_are_above_it() -> None:
    host = f"www.{HOST}"
    nothing = check(*(dns_answer(name, "CAA") for name in (host, HOST, "com")), host=host)
    assert caa_fixes(nothing, host)["dns.caa_missing"].startswith(f'{HOST} CAA 0 issue "letsencrypt.org"')
    # github.io's records are not alice.github.io's to edit; records at alice.github.io come first in the climb
    platform = check(
        dns_answer("alice.github.io", "CAA"),
        dns_answer("github.io", "CAA", '0 iodef "mailto:caa@github.com"'),
        host="alice.github.io",
    )
    report = grade([platform], default_rulebook(), {"host": "alice.github.io", "domain": "alice.github.io"})
    (fix,) = [f["fix"] for f in report.sections["dns"]["findings"] if f["check"] == "dns.caa_missing"]
    assert fix.startswith('alice.github.io CAA 0 issue "letsencrypt.org"')


GITHUB_IO_RECORDS = (
    "these are github.io's records, above alice.github.io and set by whoever runs github.io: "
    "CAA records published at alice.github.io would be read instead (RFC 8659 3)"
)


def alice_github_io_caa(*records: str) -> dict[str, dict]:
    """The CAA findings of alice.github.io, graded, when github.io (a public suffix) has `records`."""
    result = check(
        dns_answer("alice.github.io", "CAA"), dns_answer("github.io", "CAA", *records), host="alice.github.io"
    )
    report = grade([result], default_rulebook(), {"host": "alice.github.io", "domain": "alice.github.io"})
    return {f["check"]: f for f in report.sections["dns"]["findings"] if f["check"].startswith("dns.caa")}


def test_an_invalid_caa_rrset_above_the_domain_asks_the_owner_to_publish_their_own() -> None:
    # RFC 8659 3: github.io's broken RRset is the relevant one only while alice.github.io has none; the owner
    # cannot edit github.io's records (the fix named alice.github.io's, which do not exist), but records
    # published at alice.github.io end the climb before them
    (finding,) = alice_github_io_caa('128 futuretag "x"', '0 issue "digicert.com"').values()
    assert (finding["check"], finding["deduction"]) == ("dns.caa_invalid_inherited", 2)
    assert finding["fix"].startswith(
        "Publish your own CAA records at alice.github.io, which certificate authorities read before github.io's "
        '(RFC 8659 3): alice.github.io CAA 0 issue "letsencrypt.org"'
    )
    assert finding["fix"].endswith("ask whoever runs github.io to correct its CAA records.")
    assert "alice.github.io's CAA records" not in finding["fix"]
    assert finding["note"] == (
        "at github.io: unknown critical tag 'futuretag': CAs must refuse to issue (RFC 8659 4.1); " + GITHUB_IO_RECORDS
    )


def test_caa_without_an_issue_tag_above_the_domain_says_whose_records_they_are() -> None:
    (finding,) = alice_github_io_caa('0 iodef "mailto:caa@github.com"').values()
    assert finding["check"] == "dns.caa_missing"
    assert finding["note"] == (
        "at github.io: CAA records (iodef) but no issue tag, so they do not restrict which CAs may issue; "
        + GITHUB_IO_RECORDS
    )
    assert finding["fix"].startswith('alice.github.io CAA 0 issue "letsencrypt.org"')


def test_caa_is_searched_past_the_registrable_domain_up_to_the_top_level_domain() -> None:
    # RFC 8659 3: up to but not including the root; github.io is a (private) public suffix
    result = check(
        dns_answer("alice.github.io", "CAA"),
        dns_answer("github.io", "CAA", '0 issue "digicert.com"'),
        host="alice.github.io",
    )
    # The issuers are github.io's choice, not alice.github.io's, which may publish its own
    assert notes(result, "dns.caa_present") == [f"at github.io: issuers digicert.com; {GITHUB_IO_RECORDS}"]
    nothing = check(
        *(dns_answer(name, "CAA") for name in ("alice.github.io", "github.io", "io")), host="alice.github.io"
    )
    assert notes(nothing, "dns.caa_missing") == ["no CAA record from alice.github.io up to the top-level domain io"]


DEEP = "a.b.c.d.e.f.g.h.i.j.k.example.com"  # 13 names from the host to "com", past MAX_CAA_NAMES


def deep_caa(found: str | None) -> CheckResult:
    """Every name of the host's climb, with a CAA record at `found` and empty RRsets elsewhere."""
    record = ['0 issue "letsencrypt.org"']
    labels = DEEP.split(".")
    names = [".".join(labels[start:]) for start in range(len(labels))]
    return check(*(dns_answer(name, "CAA", *(record if name == found else [])) for name in names), host=DEEP)


def test_a_host_of_many_labels_still_finds_caa_at_its_registrable_domain() -> None:
    # The cap drops the names just below example.com, never example.com itself (it used to: caa_missing)
    assert notes(deep_caa(HOST), "dns.caa_present") == [
        "at example.com: issuers letsencrypt.org (3 names between the host and example.com were not asked: "
        f"at most {MAX_CAA_NAMES} a scan)"
    ]
    assert notes(deep_caa(DEEP[2:]), "dns.caa_present") == [f"at {DEEP[2:]}: issuers letsencrypt.org"]
    # Nothing found, but some names were not asked: the record may be at one of them, so nothing is said
    assert [f.outcome for f in deep_caa(None).findings if f.outcome.startswith("dns.caa")] == []


def test_caa_missing_and_an_unknown_critical_tag() -> None:
    assert "dns.caa_missing" in outcomes(dns_answer(HOST, "CAA"), dns_answer("com", "CAA"))
    invalid = check(dns_answer(HOST, "CAA", '128 futuretag "x"', '0 issue "letsencrypt.org"'))
    assert notes(invalid, "dns.caa_invalid") == [
        f"at {HOST}: unknown critical tag 'futuretag': CAs must refuse to issue (RFC 8659 4.1)"
    ]


# -- MTA-STS and TLS-RPT ---------------------------------------------------------------------------

MX = dns_answer(HOST, "MX", "10 mx1.example.com.", "20 mx2.example.com.")
STS = txt(f"_mta-sts.{HOST}", "v=STSv1; id=20260101T000000")
POLICY_URL = f"https://mta-sts.{HOST}/.well-known/mta-sts.txt"
GOOD_POLICY = "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.example.com\r\nmax_age: 604800\r\n"


def policy(body: str = GOOD_POLICY, status: int = 200, content_type: str = "text/plain", **extra) -> FetchChain:
    response = make_response(POLICY_URL, status, extra, body, content_type=content_type)
    return FetchChain(POLICY_URL, (response,))


def sts_outcomes(chain: FetchChain | None, *answers: DnsAnswer, tls=None) -> list[str]:
    tls = tls or make_handshake(f"mta-sts.{HOST}")
    return outcomes(MX, *answers, mta_sts_policy=chain, mta_sts_tls=tls)


def test_mta_sts_in_enforce_mode_with_every_mx_listed() -> None:
    assert "dns.mta_sts_enforce" in sts_outcomes(policy(), STS)


def test_mta_sts_testing_mode_and_missing() -> None:
    assert "dns.mta_sts_testing" in sts_outcomes(policy(GOOD_POLICY.replace("enforce", "testing")), STS)
    assert "dns.mta_sts_missing" in sts_outcomes(None, txt(f"_mta-sts.{HOST}", rcode="NXDOMAIN"))


@pytest.mark.parametrize(
    ("chain", "reason"),
    [
        (FetchChain(POLICY_URL, (make_response(POLICY_URL, 301, {"Location": "https://x/"}),)), "redirects"),
        (policy(status=404), "HTTP 404"),
        (policy(content_type="text/html"), "not text/plain"),
        (policy(GOOD_POLICY.replace("max_age: 604800", "max_age: 99999999999")), "max_age"),
        (policy(GOOD_POLICY.replace("max_age: 604800", "max_age: ²")), "max_age"),  # isdigit() but not int()
        (policy(GOOD_POLICY.replace("max_age: 604800", "max_age: " + "9" * 5000)), "max_age"),  # past int()'s limit
        (policy(GOOD_POLICY.replace("mx: *.example.com\r\n", "")), "does not list mx2.example.com"),
        (FetchChain(POLICY_URL, failure=Failure("unreachable", "connection refused")), "connection refused"),
    ],
)
def test_a_broken_mta_sts_policy_is_invalid_with_the_reason(chain, reason) -> None:
    result = check(MX, STS, mta_sts_policy=chain, mta_sts_tls=make_handshake(f"mta-sts.{HOST}"))
    (note,) = notes(result, "dns.mta_sts_invalid")
    assert reason in note


def test_a_policy_missing_thousands_of_mx_hosts_names_ten_of_them() -> None:
    # An MX RRset can hold thousands of records (over TCP), a 64 KiB policy thousands of patterns
    exchanges = dns_answer(HOST, "MX", *(f"{n} m{n}.mail.example.net." for n in range(2900)))
    body = GOOD_POLICY + "".join(f"mx: p{n}.example.org\r\n" for n in range(5000))
    result = check(exchanges, STS, mta_sts_policy=policy(body), mta_sts_tls=make_handshake(f"mta-sts.{HOST}"))
    (note,) = notes(result, "dns.mta_sts_invalid")
    listed = ", ".join(f"m{n}.mail.example.net" for n in range(10))
    assert note == f"the policy does not list {listed} and 2890 more: mail to it would fail under enforce"


def test_an_mta_sts_host_with_an_untrusted_certificate_makes_the_policy_invalid() -> None:
    tls = make_handshake(f"mta-sts.{HOST}", trusted=False, verify_error="self-signed certificate")
    result = check(MX, STS, mta_sts_policy=policy(), mta_sts_tls=tls)
    (note,) = notes(result, "dns.mta_sts_invalid")
    assert "self-signed certificate" in note


def test_an_mta_sts_policy_that_was_not_fetched_is_could_not_check_not_invalid() -> None:
    # the scan's time ran out before the policy fetch finished (fetch/__init__.py: (None, None))
    result = check(MX, STS, mta_sts_policy=None, mta_sts_tls=None)
    found = [f.outcome for f in result.findings if f.outcome.startswith(("dns.mta_sts", "check"))]
    assert found == ["check.error"]
    assert graded(result).score == 100


def test_an_mta_sts_record_without_id_is_invalid() -> None:
    assert "dns.mta_sts_invalid" in sts_outcomes(policy(), txt(f"_mta-sts.{HOST}", "v=STSv1;"))


def test_mail_transport_policies_do_not_apply_to_a_domain_that_receives_no_mail() -> None:
    found = outcomes(
        dns_answer(HOST, "MX", "0 ."),
        txt(f"_mta-sts.{HOST}", rcode="NXDOMAIN"),
        txt(f"_smtp._tls.{HOST}", rcode="NXDOMAIN"),
    )
    assert not [o for o in found if o.startswith(("dns.mta_sts", "dns.tlsrpt"))]


@pytest.mark.parametrize(
    ("records", "outcome"),
    [
        (("v=TLSRPTv1; rua=mailto:tls@example.com",), "dns.tlsrpt_present"),
        (("v=TLSRPTv1; rua=https://reports.example.com/tlsrpt",), "dns.tlsrpt_present"),
        (("v=TLSRPTv1;",), "dns.tlsrpt_invalid"),
        (("v=TLSRPTv1; rua=ftp://x.example.com",), "dns.tlsrpt_invalid"),
        (("v=TLSRPTv1; rua=https://",), "dns.tlsrpt_invalid"),  # RFC 8460 3: a URI that names where reports go
        (("v=TLSRPTv1; rua=mailto:tls@",), "dns.tlsrpt_invalid"),
        (("v=TLSRPTv1; rua=mailto:@example.com",), "dns.tlsrpt_invalid"),
        (("v=TLSRPTv1; rua=mailto:a@b.c?subject=x",), "dns.tlsrpt_present"),  # RFC 6068 header fields
        (("v=TLSRPTv1; rua=mailto:?subject=x",), "dns.tlsrpt_invalid"),
        (("v=TLSRPTv1; rua=mailto:a@example.com", "v=TLSRPTv1; rua=mailto:b@example.com"), "dns.tlsrpt_invalid"),
        ((), "dns.tlsrpt_missing"),
    ],
)
def test_tls_rpt(records, outcome) -> None:
    assert outcome in outcomes(MX, txt(f"_smtp._tls.{HOST}", *records))


# -- the whole section -----------------------------------------------------------------------------


def test_a_domain_with_only_missing_mail_records_loses_few_points_and_keeps_the_grade() -> None:
    result = check(
        dns_answer(HOST, "AAAA", "2001:db8::1"),
        dns_answer(HOST, "MX", "10 mx1.example.com."),
        txt(HOST),
        txt(f"_dmarc.{HOST}", rcode="NXDOMAIN"),
        txt(f"_domainkey.{HOST}", rcode="NXDOMAIN"),
        dns_answer(HOST, "DS"),
        dns_answer(HOST, "DNSKEY"),
        dns_answer(HOST, "CAA"),
        dns_answer("com", "CAA"),
        txt(f"_mta-sts.{HOST}", rcode="NXDOMAIN"),
        txt(f"_smtp._tls.{HOST}", rcode="NXDOMAIN"),
        mta_sts_policy=None,
    )
    report = graded(result)
    # SPF 3 + DMARC 4 + DKIM 2 + DNSSEC 3 + CAA 2 + MTA-STS 1 + TLS-RPT 1
    assert report.score == 100 - 16 and report.caps == ()
    assert {f["severity"] for f in report.sections["dns"]["findings"]} == {"minor"}


def test_pure_dns_rdata_helpers_read_multi_string_txt() -> None:
    rdata = dns.rdata.from_text(dns.rdataclass.IN, "TXT", '"a" "b"')
    assert rdata.to_text() == '"a" "b"'


@pytest.mark.parametrize("charset", ["idna", "punycode", "undefined", "utf-8\x00"])
def test_a_policy_in_a_charset_python_cannot_decode_with_replacement_is_read_as_utf8(charset) -> None:
    # These codecs raise UnicodeError where others replace (punycode on a byte past ASCII), and a name holding NUL
    # raises ValueError: the whole dns section was check.crashed, and the SPF +all beside it went unreported
    body = GOOD_POLICY + "x-note: \u00e9t\u00e9\r\n"  # an unknown key, ignored (RFC 8461 3.2)
    chain = policy(body, content_type=f"text/plain; charset={charset}")

    found = sts_outcomes(chain, STS, txt(HOST, "v=spf1 +all"))

    assert "dns.mta_sts_enforce" in found and "dns.spf_pass_all" in found
    assert chain.responses[0].text() == body


# -- error lists: a TXT record of 64 KB holds thousands of errors ----------------------------------


def long_txt(name: str, value: str) -> DnsAnswer:
    """A TXT record of any length, in character-strings of at most 255 octets."""
    return dns_answer(name, "TXT", " ".join(f'"{value[i : i + 250]}"' for i in range(0, len(value), 250)))


def test_spf_errors_are_listed_once_each_the_first_ten_with_a_count_of_the_rest() -> None:
    # Ten included records of 30,000 "x" each, and the domain's own of 9,000 different unknown terms: 12 MB before
    includes = " ".join(f"include:i{n}.example.net" for n in range(9))
    own = "v=spf1 " + " ".join(f"x{n}" for n in range(9000)) + f" {includes} -all"
    answers = [long_txt(f"i{n}.example.net", "v=spf1 " + "x " * 30000 + "-all") for n in range(9)]

    result = check(long_txt(HOST, own), *answers)
    included = check(long_txt(HOST, f"v=spf1 {includes} -all"), *answers)

    # the own record's errors end the evaluation before any include is read (RFC 7208 4.6)
    errors = [f"unknown mechanism 'x{n}'" for n in range(9000)]
    assert result.details["spf"]["errors"] == [*errors[:10], "and 8,990 more, not listed"]
    assert notes(result, "dns.spf_invalid") == ["; ".join([*errors[:5], "and 8,995 more, not listed"])]
    # the first included record's 30,000 are one error, listed once; receivers never read the next (5.2)
    assert included.details["spf"]["errors"] == ["i0.example.net: unknown mechanism 'x'"]


def test_an_error_quoting_a_long_term_is_cut_and_says_so() -> None:
    spec = "a." + "b" * 6000 + ".example"

    errors = check(long_txt(HOST, f"v=spf1 include:{spec} -all")).details["spf"]["errors"]

    error = f"{spec!r} is not a domain name"
    assert errors == [f"{error[:500]} … ({len(error) - 500:,} more characters not shown)"]


def test_repeated_mx_limit_errors_and_void_names_are_listed_once() -> None:
    mx = dns_answer(HOST, "MX", *(f"{n} m{n}.example.com." for n in range(11)))
    gone = [dns_answer("gone.example.com", t, rcode="NXDOMAIN") for t in ("A", "AAAA")]

    result = check(long_txt(HOST, "v=spf1 " + "mx " * 5000 + "a:gone.example.com " * 3000 + "-all"), mx, *gone)
    voids = check(long_txt(HOST, "v=spf1 " + "a:gone.example.com " * 3000 + "-all"), *gone)

    # the evaluation stops at the first error, as receivers do (RFC 7208 4.6.4): the first mx's 11 MX records
    (note,) = notes(result, "dns.spf_too_many_lookups")
    assert note.count("the mx mechanism for example.com finds 11 MX records") == 1
    assert (result.details["spf"]["void"], result.details["spf"]["lookups"]) == ([], 1)
    # the third void lookup
    assert (voids.details["spf"]["void"], voids.details["spf"]["void_lookups"]) == (["gone.example.com"], 3)


def test_dmarc_errors_and_report_problems_are_listed_once_each_the_first_ten() -> None:
    tags = "".join(f"t=x{n};" for n in range(12))  # t is y or n (DMARCbis), and appears once
    record = "v=DMARC1; p=reject; " + "a=b;" * 15000 + tags + "rua=" + ",".join(f"x{n}" for n in range(5000))

    result = check(long_txt(f"_dmarc.{HOST}", record))

    errors = ["the tag a appears twice", "the tag t appears twice"]
    assert result.details["dmarc"]["errors"] == [*errors, "t=x11 is not y or n (DMARCbis)"]
    (invalid,) = notes(result, "dns.dmarc_invalid")
    assert invalid == "; ".join(result.details["dmarc"]["errors"])
    problems = [f"'x{n}' is not a URI (mailto:... expected)" for n in range(10)]
    assert notes(result, "dns.dmarc_report_uri") == ["; ".join([*problems, "and 4,990 more, not listed"])]
    # each error a note of its own, shown one a line
    by_outcome = {f.outcome: f.notes for f in result.findings}
    assert by_outcome["dns.dmarc_invalid"] == tuple(result.details["dmarc"]["errors"])
    assert by_outcome["dns.dmarc_report_uri"] == (*problems, "and 4,990 more, not listed")


def test_mta_sts_policy_errors_are_listed_once_each_the_first_ten() -> None:
    repeated = "x\n" * 30000 + "".join(f"y{n}\n" for n in range(20))

    (note,) = notes(
        check(MX, STS, mta_sts_policy=policy(GOOD_POLICY + repeated), mta_sts_tls=make_handshake(f"mta-sts.{HOST}")),
        "dns.mta_sts_invalid",
    )

    lines = ["'x' is not 'key: value'", *(f"'y{n}' is not 'key: value'" for n in range(9))]
    assert note == "; ".join([*lines, "and 11 more, not listed"])


def test_caa_problems_are_listed_once_each_the_first_ten() -> None:
    records = [f'128 t{n} "x"' for n in range(4000)]

    (note,) = notes(check(dns_answer(HOST, "CAA", *records)), "dns.caa_invalid")

    problems = [f"unknown critical tag 't{n}': CAs must refuse to issue (RFC 8659 4.1)" for n in range(10)]
    assert note == f"at {HOST}: " + "; ".join([*problems, "and 3,990 more, not listed"])
