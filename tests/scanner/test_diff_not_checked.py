"""A check that could not run is not a change (websec_app/scanner/diff.py): a scan blocked by a bot challenge,
or a DNS lookup that failed, says nothing of the findings it did not see, so the diff neither calls them fixed
in that scan nor new in the next one, and the monitor sends no alert for a finding that was there all along."""

from __future__ import annotations

from typing import Any

from tests.factories import dns_answer, make_dns, make_snapshot
from tests.fixtures import catalog
from tests.fixtures.sites import SiteFactory
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons

#: The addresses of mail.example.com, the MX host "v=spf1 mx -all" compares senders with (RFC 7208 5.4): the SPF
#: evaluation reads them, and takes one a snapshot lacks for a lookup that failed.
MX_HOST = (dns_answer("mail.example.com", "A", "192.0.2.25"), dns_answer("mail.example.com", "AAAA"))


def names(changes: tuple[Any, ...]) -> list[tuple[str, str]]:
    return [(c.section, c.name) for c in changes]


async def test_a_scan_blocked_once_neither_fixes_nor_brings_back_the_sites_findings(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site without CSP whose session cookie lacks Secure (its HSTS policy keeps the cookie off plain HTTP),
    # once answered by a Cloudflare challenge
    site = catalog.best_practices(
        site_factory.unique_host("blocked-once"),
        remove_headers=["Content-Security-Policy"],
        cookie="sessionid=abc; Path=/; HttpOnly; SameSite=Lax",
    )
    site, switch = catalog.behind_a_challenge(site)
    running = site_factory(site)
    normal = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    switch.blocked = True
    blocked = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    switch.blocked = False
    again = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    assert {("headers", "Content-Security-Policy"), ("cookies", "cookie.session_no_secure_hsts")} <= set(
        names(diff_reports({}, normal).new)
    )

    # When the blocked scan is compared with the one before it
    into_block = diff_reports(normal, blocked)
    # Then the block is the one new issue, and the headers and cookies it hid are not fixed
    assert names(into_block.new) == [("page_analysis", "scan.blocked")]
    assert into_block.fixed == () and into_block.changed == ()

    # When the next, normal, scan is compared with the blocked one
    out_of_block = diff_reports(blocked, again)
    # Then the block is fixed, and the missing CSP and the cookie without Secure are not new
    assert names(out_of_block.fixed) == [("page_analysis", "scan.blocked")]
    assert out_of_block.new == () and out_of_block.changed == ()
    # and the monitor's run after the block sends no alert
    assert alert_reasons(blocked, again, out_of_block, None)[0] == []


def dns_body(*answers: Any) -> dict[str, Any]:
    """A report of the dns section alone, from hand-made DNS answers."""
    host = "example.com"
    snapshot = make_snapshot(f"https://{host}/", dns=make_dns(host, *answers))
    graded = grade([check_dns(snapshot)], default_rulebook(), {"host": host, "domain": host})
    return {"grade": graded.grade, "score": graded.score, **graded.sections}


def test_a_dmarc_lookup_that_failed_once_is_not_a_fixed_then_new_dmarc() -> None:
    # Given a domain without DMARC, whose DMARC lookup once fails (SERVFAIL) while its MX is read
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    missing = dns_body(mx, dns_answer("_dmarc.example.com", "TXT", rcode="NXDOMAIN"))
    failed = dns_body(mx, dns_answer("_dmarc.example.com", "TXT", rcode="SERVFAIL"))
    assert ("dns", "dns.dmarc_missing") in names(diff_reports({}, missing).new)
    assert "check.error" in [f["check"] for f in failed["dns"]["findings"]]

    # When the scans go missing -> failed -> missing
    into_failure: ReportDiff = diff_reports(missing, failed)
    out_of_failure: ReportDiff = diff_reports(failed, missing)

    # Then DMARC is neither fixed nor new, and the MX finding both saw is unchanged
    assert ("dns", "dns.dmarc_missing") not in names(into_failure.fixed)
    assert ("dns", "dns.dmarc_missing") not in names(out_of_failure.new)
    assert into_failure.changed == () and out_of_failure.changed == ()


def test_a_dmarc_lookup_that_failed_does_not_hide_the_next_scans_new_spf_finding() -> None:
    # Given a scan whose SPF ends in -all while its DMARC lookup failed (SERVFAIL), then two scans with SPF +all
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    dmarc = dns_answer("_dmarc.example.com", "TXT", '"v=DMARC1; p=reject; rua=mailto:d@example.com"')
    strict = dns_body(
        mx,
        dns_answer("example.com", "TXT", '"v=spf1 mx -all"'),
        *MX_HOST,
        dns_answer("_dmarc.example.com", "TXT", rcode="SERVFAIL"),
    )
    pass_all = dns_body(mx, dns_answer("example.com", "TXT", '"v=spf1 +all"'), dmarc)
    assert "check.error" in [f["check"] for f in strict["dns"]["findings"]]

    # When the scans go strict (DMARC failed) -> +all -> +all
    into_pass_all = diff_reports(strict, pass_all)
    unchanged = diff_reports(pass_all, pass_all)

    # Then SPF +all is new in the first +all scan, which the monitor alerts on, and not again in the next
    assert names(into_pass_all.new) == [("dns", "dns.spf_pass_all")]
    assert into_pass_all.fixed == () and into_pass_all.changed == ()
    assert alert_reasons(strict, pass_all, into_pass_all, None)[0] != []
    assert unchanged.new == ()


def test_spf_includes_not_read_leave_spf_unchecked_though_the_record_gave_findings() -> None:
    # Given a record passing everyone through its include, whose include once fails while the record is read
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    record = dns_answer("example.com", "TXT", '"v=spf1 ptr include:_spf.other.net -all"')
    passing = dns_body(mx, record, dns_answer("_spf.other.net", "TXT", '"v=spf1 +all"'))
    failed = dns_body(mx, record, dns_answer("_spf.other.net", "TXT", rcode="SERVFAIL"))
    assert ("dns", "dns.spf_pass_all") in names(diff_reports({}, passing).new)
    assert {"check.error", "dns.spf_ptr"} <= {f["check"] for f in failed["dns"]["findings"]}

    # When the scans go passing -> failed -> passing
    # Then SPF passing everyone is neither fixed nor new, while the ptr finding both saw is compared
    assert ("dns", "dns.spf_pass_all") not in names(diff_reports(passing, failed).fixed)
    assert ("dns", "dns.spf_pass_all") not in names(diff_reports(failed, passing).new)


def test_a_cname_lookup_that_failed_is_not_a_fixed_then_new_dangling_cname() -> None:
    # Given www's CNAME to a name that does not exist, whose CNAME lookup once fails while the host's resolves
    host_cname = [
        dns_answer("example.com", "CNAME", "web.host.example."),
        dns_answer("web.host.example", "A", "192.0.2.1"),
    ]
    dangling = dns_body(
        *host_cname,
        dns_answer("www.example.com", "CNAME", "gone.host.example."),
        dns_answer("gone.host.example", "A", rcode="NXDOMAIN"),
    )
    failed = dns_body(*host_cname, dns_answer("www.example.com", "CNAME", rcode="SERVFAIL"))
    assert ("dns", "dns.dangling_cname") in names(diff_reports({}, dangling).new)
    assert {"check.error", "dns.cnames_resolve"} <= {f["check"] for f in failed["dns"]["findings"]}

    # When the scans go dangling -> failed -> dangling
    # Then the dangling CNAME is neither fixed nor new
    assert ("dns", "dns.dangling_cname") not in names(diff_reports(dangling, failed).fixed)
    assert ("dns", "dns.dangling_cname") not in names(diff_reports(failed, dangling).new)


def test_what_the_previous_scan_could_not_check_is_compared_with_the_last_earlier_scan_that_did() -> None:
    # Given scans strict SPF -> SPF lookup failed -> SPF +all (the monitor passes the earlier scans)
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    strict = dns_body(mx, dns_answer("example.com", "TXT", '"v=spf1 mx -all"'), *MX_HOST)
    failed = dns_body(mx, dns_answer("example.com", "TXT", rcode="SERVFAIL"))
    pass_all = dns_body(mx, dns_answer("example.com", "TXT", '"v=spf1 +all"'))
    assert names(diff_reports(failed, pass_all).new) == []  # two scans alone: SPF unchecked before

    # When the +all scan is compared with the failed one, the earlier ones given newest first
    through_two = diff_reports(failed, pass_all, [failed, strict])

    # Then SPF +all is new against the strict scan, the last one that read SPF, with its points
    assert [(c.name, c.before, c.after) for c in through_two.new] == [
        ("dns.spf_pass_all", None, {"status": "bad", "deduction": 5})
    ]
    # and +all there all along is nothing new
    assert diff_reports(failed, pass_all, [pass_all, strict]).new == ()

    # and the earlier scans are not read when the previous one checked what the new one holds
    def untouched() -> Any:
        raise AssertionError("read an earlier report")
        yield  # a generator that fails when read

    assert names(diff_reports(strict, pass_all, untouched()).new) == [("dns", "dns.spf_pass_all")]


def _without_families(body: dict[str, Any]) -> dict[str, Any]:
    """The body as stored before reports named the families of DNS findings."""
    dns = {
        **body["dns"],
        "findings": [{k: v for k, v in f.items() if k != "families"} for f in body["dns"]["findings"]],
    }
    return {**body, "dns": dns}


def test_the_diff_reads_the_failed_family_from_the_report_not_from_the_failures_wording() -> None:
    # Given a record passing everyone through its include, whose include once fails while the record is read,
    # the failure worded any way (its subject is prose for the reader)
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    record = dns_answer("example.com", "TXT", '"v=spf1 ptr include:_spf.other.net -all"')
    passing = dns_body(mx, record, dns_answer("_spf.other.net", "TXT", '"v=spf1 +all"'))
    failed = dns_body(mx, record, dns_answer("_spf.other.net", "TXT", rcode="SERVFAIL"))
    [error] = [f for f in failed["dns"]["findings"] if f["check"] == "check.error"]
    assert error["families"] == ["spf"]
    error["subjects"] = ["the include _spf.other.net"]

    # Then SPF passing everyone is neither fixed nor new: the failure names the spf family
    assert ("dns", "dns.spf_pass_all") not in names(diff_reports(passing, failed).fixed)
    assert ("dns", "dns.spf_pass_all") not in names(diff_reports(failed, passing).new)


def test_a_dns_failure_stored_before_families_hides_the_whole_dns_section() -> None:
    # Given reports stored before `families`: SPF -all with the DMARC lookup failed, then SPF +all
    mx = dns_answer("example.com", "MX", "10 mail.example.com.")
    dmarc = dns_answer("_dmarc.example.com", "TXT", '"v=DMARC1; p=reject; rua=mailto:d@example.com"')
    strict_read = _without_families(dns_body(mx, dns_answer("example.com", "TXT", '"v=spf1 mx -all"'), *MX_HOST, dmarc))
    strict = _without_families(
        dns_body(
            mx,
            dns_answer("example.com", "TXT", '"v=spf1 mx -all"'),
            *MX_HOST,
            dns_answer("_dmarc.example.com", "TXT", rcode="SERVFAIL"),
        )
    )
    pass_all = _without_families(dns_body(mx, dns_answer("example.com", "TXT", '"v=spf1 +all"'), dmarc))

    # Then the failure, which does not say which family it hid, may have hidden any DNS finding: SPF +all is
    # not new against that report alone (no false new or fixed)
    assert names(diff_reports(strict, pass_all).new) == []
    assert names(diff_reports(pass_all, strict).fixed) == []
    # and it is new against the last earlier report that read the whole section
    assert names(diff_reports(strict, pass_all, [strict_read]).new) == [("dns", "dns.spf_pass_all")]
