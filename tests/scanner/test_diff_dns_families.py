"""A DNS finding names every lookup that decides it (DKIM by MX and SPF, MTA-STS and TLS-RPT by MX), and a
follow-up lookup that fails (a CNAME target's addresses, an MX host's, a DMARC report address's consent) is a
check.error naming its family, never silence that reads as "nothing found" (checks/dns.py). So a lookup failing
in one scan of three is no change in the diff: no false fixed, then new, then a monitor alert for a finding that
was there all along (scanner/diff.py). RFC 1035 4.1.1: SERVFAIL is not NXDOMAIN."""

from __future__ import annotations

import asyncio
from typing import Any

import dns.message
import dns.rcode
import pytest

from tests.factories import dns_answer, make_dns, make_response, make_snapshot
from tests.fixtures.dns_server import AuthDnsServer
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import DnsAnswer, DnsSnapshot, FetchChain
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons

HOST = "example.com"


def body_of(dns: DnsSnapshot, **snapshot: Any) -> dict[str, Any]:
    """The report (grade, score and dns section) of one scan's DNS answers."""
    result = check_dns(make_snapshot(f"https://{dns.host}/", dns=dns, **snapshot))
    graded = grade([result], default_rulebook(), {"host": dns.host, "domain": dns.host})
    return {"grade": graded.grade, "score": graded.score, **graded.sections}


def dns_body(*answers: DnsAnswer, **snapshot: Any) -> dict[str, Any]:
    return body_of(make_dns(HOST, *answers), **snapshot)


def families(body: dict[str, Any]) -> dict[str, list[str] | None]:
    return {f["check"]: f["families"] for f in body["dns"]["findings"]}


def error_subjects(body: dict[str, Any]) -> list[str]:
    return [s for f in body["dns"]["findings"] if f["check"] == "check.error" for s in f["subjects"]]


def changes(diff: ReportDiff) -> list[tuple[str, str, str | None]]:
    return [
        (kind, c.name, c.subject)
        for kind, found in (("new", diff.new), ("fixed", diff.fixed), ("changed", diff.changed))
        for c in found
    ]


def assert_no_change_over(good: dict[str, Any], failed: dict[str, Any]) -> None:
    """Scans good -> failed -> good: neither diff has a change, and the third scan alerts nothing: no finding, and
    no grade drop (the failed scan's grade was higher only for what it could not check)."""
    into, out = diff_reports(good, failed), diff_reports(failed, good)
    assert changes(into) == [] and changes(out) == []
    assert alert_reasons(failed, good, out, None)[0] == []


def test_a_failed_mx_lookup_is_not_dkim_missing_on_a_domain_whose_null_mx_says_it_needs_none() -> None:
    # Given a domain with a null MX (RFC 7505: no mail, so no DKIM), SPF ~all and no _domainkey, whose MX lookup
    # once fails
    common = [
        dns_answer(HOST, "TXT", '"v=spf1 mx ~all"'),
        dns_answer(f"_domainkey.{HOST}", "TXT", rcode="NXDOMAIN"),
        dns_answer(f"_dmarc.{HOST}", "TXT", '"v=DMARC1; p=reject"'),
    ]
    good = dns_body(dns_answer(HOST, "MX", "0 ."), *common)
    failed = dns_body(dns_answer(HOST, "MX", rcode="SERVFAIL"), *common)
    # Then DKIM missing is neither new nor then fixed
    assert_no_change_over(good, failed)
    # for the failed scan gives no DKIM verdict: whether the domain needs DKIM is what the failed lookup would
    # have said (its check.error names mx, and so does DKIM not needed); SPF's mx term needs that lookup too, so
    # SPF stops there with temperror (RFC 7208 5) and the failure names spf as well
    assert "dns.dkim_missing" not in families(failed) and families(failed)["check.error"] == ["mx", "spf"]
    assert families(good)["dns.dkim_not_needed"] == ["dkim", "mx"]
    # the failure costs nothing, as every failed lookup; SPF's ~all (1 point) is not graded while its mx term cannot
    # be evaluated
    assert failed["score"] == good["score"] + 1


def test_dkim_missing_names_the_mx_and_spf_lookups_that_decide_it() -> None:
    # Given a domain that receives mail, with SPF ~all and no _domainkey
    answers = [dns_answer(HOST, "TXT", '"v=spf1 mx ~all"'), dns_answer(f"_domainkey.{HOST}", "TXT", rcode="NXDOMAIN")]
    missing = dns_body(dns_answer(HOST, "MX", "10 mail.example.com."), *answers)
    # When its SPF lookup fails (the record might be "v=spf1 -all": no mail sent, no DKIM needed)
    spf_failed = dns_body(
        dns_answer(HOST, "MX", "10 mail.example.com."),
        dns_answer(HOST, "TXT", rcode="SERVFAIL"),
        answers[1],
    )
    # Then DKIM missing is neither fixed nor new: it names both lookups that decide it, and no verdict is given
    assert_no_change_over(missing, spf_failed)
    assert families(missing)["dns.dkim_missing"] == ["dkim", "mx", "spf"]
    assert "dns.dkim_missing" not in families(spf_failed) and families(spf_failed)["check.error"] == ["spf"]


def test_a_failed_mx_lookup_does_not_turn_an_mta_sts_policy_leaving_an_mx_host_out_into_enforce() -> None:
    # Given an MTA-STS policy in enforce mode listing mx1 of the MX hosts mx1 and mx2 (RFC 8461 4.1: mail to mx2
    # fails under enforce), whose MX lookup once fails
    text = "version: STSv1\nmode: enforce\nmx: mx1.example.com\nmax_age: 86400\n"
    policy = make_response(f"https://mta-sts.{HOST}/.well-known/mta-sts.txt", 200, [], text, "text/plain")
    chain = FetchChain(start_url=policy.url, responses=(policy,))
    common = [
        dns_answer(f"_mta-sts.{HOST}", "TXT", '"v=STSv1; id=1"'),
        dns_answer(f"_smtp._tls.{HOST}", "TXT", '"v=TLSRPTv1; rua=mailto:tls@example.com"'),
    ]
    mx = dns_answer(HOST, "MX", "10 mx1.example.com.", "20 mx2.example.com.")
    good = dns_body(mx, *common, mta_sts_policy=chain)
    failed = dns_body(dns_answer(HOST, "MX", rcode="SERVFAIL"), *common, mta_sts_policy=chain)
    # Then the invalid policy is neither fixed nor new
    assert_no_change_over(good, failed)
    # for the failed scan says nothing of the policy's coverage (no mta_sts_enforce: which hosts it must list is
    # unknown), and the MTA-STS and TLS-RPT findings name the MX lookup
    assert not {"dns.mta_sts_invalid", "dns.mta_sts_enforce"} & set(families(failed))
    assert families(failed)["check.error"] == ["mx"]
    assert families(good)["dns.mta_sts_invalid"] == ["mta_sts", "mx"]
    assert families(good)["dns.tlsrpt_present"] == ["tls_rpt", "mx"]


def test_a_cname_target_whose_lookup_failed_is_not_a_fixed_then_new_dangling_cname() -> None:
    # Given www a CNAME to a deleted service (critical, -25), whose target's A and AAAA lookups once SERVFAIL
    common = [
        dns_answer(HOST, "A", "192.0.2.1"),
        dns_answer(HOST, "CNAME"),
        dns_answer(f"www.{HOST}", "CNAME", "gone.herokuapp.com."),
    ]

    def with_target(rcode: str) -> dict[str, Any]:
        target = [dns_answer("gone.herokuapp.com", rdtype, rcode=rcode) for rdtype in ("A", "AAAA")]
        return dns_body(*common, *target)

    good, failed = with_target("NXDOMAIN"), with_target("SERVFAIL")
    # Then the dangling CNAME is neither fixed nor new: no "New critical finding" alert for it
    assert_no_change_over(good, failed)
    # for the failed scan says the target could not be checked, for the CNAME family (the grade moves as when
    # the CNAME lookup itself fails: a check.error deducts nothing)
    assert error_subjects(failed) == ["gone.herokuapp.com A"] and families(failed)["check.error"] == ["cnames"]
    assert "dns.dangling_cname" not in families(failed) and families(good)["dns.dangling_cname"] == ["cnames"]


def test_an_mx_host_whose_lookups_failed_is_not_a_fixed_then_new_unresolvable_host() -> None:
    mx = dns_answer(HOST, "MX", "10 mail.gone.example.")

    def with_host(rcode: str) -> dict[str, Any]:
        return dns_body(mx, *(dns_answer("mail.gone.example", t, rcode=rcode) for t in ("A", "AAAA")))

    good, failed = with_host("NXDOMAIN"), with_host("SERVFAIL")
    assert_no_change_over(good, failed)
    assert error_subjects(failed) == ["mail.gone.example A", "mail.gone.example AAAA"]
    assert families(failed)["check.error"] == ["mx_hosts"] and "dns.mx_unresolvable" not in families(failed)
    assert families(good)["dns.mx_unresolvable"] == ["mx", "mx_hosts"]


def test_a_report_address_whose_consent_lookup_failed_hides_that_finding_and_no_other_dmarc_finding() -> None:
    # Given a DMARC record sending reports to another domain that has not agreed (RFC 7489 7.1), whose consent
    # lookup once fails
    consent = f"{HOST}._report._dmarc.reports.example"

    def with_consent(record: str, rcode: str) -> dict[str, Any]:
        return dns_body(dns_answer(f"_dmarc.{HOST}", "TXT", record), dns_answer(consent, "TXT", rcode=rcode))

    reject = '"v=DMARC1; p=reject; rua=mailto:d@reports.example"'
    good, failed = with_consent(reject, "NXDOMAIN"), with_consent(reject, "SERVFAIL")
    assert_no_change_over(good, failed)
    assert error_subjects(failed) == [f"{consent} TXT"] and families(failed)["check.error"] == ["dmarc_reports"]
    assert families(good)["dns.dmarc_report_uri"] == ["dmarc", "dmarc_reports"]
    # and the policy weakened to p=none in the scan whose consent lookup failed is still new: the failure names
    # the consent's family, not DMARC's
    weakened = with_consent(reject.replace("p=reject", "p=none"), "SERVFAIL")
    assert changes(diff_reports(good, weakened)) == [("new", "dns.dmarc_none", None)]


@pytest.fixture
def refusing(dns_server: AuthDnsServer, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Names the fixture DNS server answers REFUSED for (a lame server: the resolver reports SERVFAIL)."""
    names: set[str] = set()
    answer = dns_server.answer

    def refuse(query: dns.message.Message) -> dns.message.Message:
        if query.question and query.question[0].name.to_text(omit_final_dot=True).lower() in names:
            response = dns.message.make_response(query)
            response.set_rcode(dns.rcode.REFUSED)
            return response
        return answer(query)

    monkeypatch.setattr(dns_server, "answer", refuse)
    return names


async def test_a_dangling_cname_whose_target_a_lame_server_refuses_once_is_no_change(
    dns_server: AuthDnsServer, scan_settings: Settings, refusing: set[str]
) -> None:
    # Given a zone whose www is a CNAME to a name that does not exist, served by the fixture DNS server
    domain = "lame-target.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(f"www.{domain}", "CNAME", "gone-lame-target.test")

    async def scanned() -> dict[str, Any]:
        return body_of(await fetch_dns(domain, Resolver(scan_settings)))

    good = await scanned()
    # When the target's lookups are refused in the second scan of three
    refusing.add("gone-lame-target.test")
    failed = await scanned()
    refusing.clear()
    again = await scanned()

    # Then the dangling CNAME is neither fixed nor new
    assert [f["subjects"] for f in good["dns"]["findings"] if f["check"] == "dns.dangling_cname"] == [[f"www.{domain}"]]
    assert changes(diff_reports(good, failed)) == [] and changes(diff_reports(failed, again)) == []
    # for the second scan could not check the target (check.error for the CNAME family), not "no takeover risk"
    assert error_subjects(failed) == ["gone-lame-target.test A"] and families(failed)["check.error"] == ["cnames"]


def test_a_dangling_cname_is_new_after_a_scan_whose_failed_lookup_was_another_familys() -> None:
    # Given a scan whose DMARC lookup failed and whose www is no CNAME (the cnames family has no finding at all)
    common = [dns_answer(HOST, "A", "192.0.2.1"), dns_answer(HOST, "CNAME")]
    before = dns_body(
        *common, dns_answer(f"www.{HOST}", "CNAME"), dns_answer(f"_dmarc.{HOST}", "TXT", rcode="SERVFAIL")
    )
    # When the next scan reads DMARC and finds www turned into a CNAME to a deleted service (critical, 100 -> 75)
    after = dns_body(
        *common,
        dns_answer(f"www.{HOST}", "CNAME", "gone.herokuapp.com."),
        dns_answer("gone.herokuapp.com", "A", rcode="NXDOMAIN"),
        dns_answer("gone.herokuapp.com", "AAAA", rcode="NXDOMAIN"),
        dns_answer(f"_dmarc.{HOST}", "TXT", '"v=DMARC1; p=reject"'),
    )
    diff = diff_reports(before, after)
    # Then the dangling CNAME is new, and alerted on: the failure named DMARC's family, and hid DMARC alone
    assert families(before)["check.error"] == ["dmarc"]
    assert changes(diff) == [("new", "dns.dangling_cname", f"www.{HOST}")]
    assert (diff.score_before, diff.score_after) == (100, 75)
    assert any("DNS alias pointing to a deleted service" in r for r in alert_reasons(before, after, diff, None)[0])


class _Holding:
    """The scan's resolver, but the lookups in `held` never answer (a server that drops them)."""

    def __init__(self, resolver: Resolver, held: set[tuple[str, str]]) -> None:
        self.resolver, self.held = resolver, held

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        if (name, rdtype) in self.held:
            await asyncio.Event().wait()
        return await self.resolver.query(name, rdtype)


async def test_a_follow_up_lookup_cut_by_the_deadline_is_a_failure_not_silence(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a zone whose www is a CNAME to a name that does not exist
    domain = "slow-target.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(f"www.{domain}", "CNAME", "gone-slow-target.test")

    async def scanned(*held: tuple[str, str], deadline: float = 4.0) -> dict[str, Any]:
        resolver: Any = _Holding(Resolver(scan_settings), set(held))
        return body_of(await fetch_dns(domain, resolver, follow_up_seconds=deadline))

    good = await scanned()
    # When the target's A lookup gets no answer before the follow-ups' deadline
    cut = await scanned(("gone-slow-target.test", "A"), deadline=0.5)

    # Then the scan records it failed and could not check the target, as when a server answers SERVFAIL
    [error] = [f for f in cut["dns"]["findings"] if f["check"] == "check.error"]
    assert error["subjects"] == ["gone-slow-target.test A"] and error["families"] == ["cnames"]
    assert error["note"] == "no answer within the 0.5 s the scan gives follow-up lookups"
    # and the dangling CNAME is neither fixed nor new across the scan cut short
    assert "dns.dangling_cname" in families(good)
    assert changes(diff_reports(good, cut)) == [] and changes(diff_reports(cut, good)) == []
