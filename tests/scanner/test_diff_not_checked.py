"""A check that could not run is not a change (websec_app/scanner/diff.py): a scan blocked by a bot challenge,
or a DNS lookup that failed, says nothing of the findings it did not see, so the diff neither calls them fixed
in that scan nor new in the next one, and the monitor sends no alert for a finding that was there all along."""

from __future__ import annotations

from typing import Any

from tests.factories import dns_answer, make_dns, make_snapshot
from tests.fixtures import catalog
from tests.fixtures.sites import Response, SiteFactory, html
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons

CHALLENGE = "<html><head><title>Just a moment...</title></head><body>checking your browser</body></html>"


def names(changes: tuple[Any, ...]) -> list[tuple[str, str]]:
    return [(c.section, c.name) for c in changes]


async def test_a_scan_blocked_once_neither_fixes_nor_brings_back_the_sites_findings(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site without CSP whose session cookie lacks Secure, once answered by a Cloudflare challenge
    site = catalog.best_practices(
        site_factory.unique_host("blocked-once"),
        remove_headers=["Content-Security-Policy"],
        cookie="sessionid=abc; Path=/; HttpOnly; SameSite=Lax",
    )
    home = site.routes["/"]
    assert isinstance(home, Response)
    state = {"blocked": False}
    challenge = html(CHALLENGE, status=403, headers=[("cf-mitigated", "challenge")])
    site.routes["/"] = lambda request: challenge if state["blocked"] else home
    running = site_factory(site)
    normal = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    state["blocked"] = True
    blocked = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    state["blocked"] = False
    again = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    assert {("headers", "Content-Security-Policy"), ("cookies", "cookie.session_no_secure")} <= set(
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
