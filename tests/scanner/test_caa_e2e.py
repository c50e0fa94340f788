"""CAA through the fixture DNS server and the scanner's resolver (RFC 8659): the records are fetched, checked and
graded as a scan does. A CAA query follows the name's CNAME (RFC 8659 3, RFC 1034 4.3.2), so the RRset found
at an alias is its target's; an issue value that does not follow RFC 8659 4.2's grammar names no CA."""

from __future__ import annotations

from typing import Any

from tests.factories import make_snapshot
from tests.fixtures.dns_server import AuthDnsServer
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.settings import Settings


async def caa_of(host: str, settings: Settings) -> dict[str, dict[str, Any]]:
    """The graded CAA findings of `host`, its DNS fetched from the fixture server."""
    snapshot = await fetch_dns(host, Resolver(settings))
    result = check_dns(make_snapshot(f"https://{host}/", dns=snapshot))
    domain = result.details["domain"]
    report = grade([result], default_rulebook(), {"host": host, "domain": domain})
    return {f["check"]: f for f in report.sections["dns"]["findings"] if f["check"].startswith("dns.caa")}


async def test_the_fix_for_records_read_through_a_www_alias_names_the_domain(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given www.<domain>, a CNAME to <domain>, whose CAA RRset has an iodef record and no issue record
    domain = "caa-alias-e2e.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(f"www.{domain}", "CNAME", domain)
    dns_server.add(domain, "CAA", f'0 iodef "mailto:security@{domain}"')
    # When www.<domain> is checked: the resolver follows the alias, so its CAA lookup answers <domain>'s records
    findings = await caa_of(f"www.{domain}", scan_settings)
    # Then the records to add go to <domain>: none can sit beside www's CNAME (the fix named www.<domain>)
    finding = findings["dns.caa_missing"]
    assert finding["fix"].startswith(f'{domain} CAA 0 issue "letsencrypt.org"')
    assert finding["note"].startswith(f"at www.{domain} (an alias of {domain}: its records)")


async def test_a_list_of_cas_in_one_issue_record_is_invalid(dns_server: AuthDnsServer, scan_settings: Settings) -> None:
    # Given a domain whose CAA record lists two CAs in one value (a common slip), and an iodef without mailto:
    domain = "caa-list-e2e.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(domain, "CAA", '0 issue "letsencrypt.org, digicert.com"', '0 iodef "security@caa-list-e2e.test"')
    findings = await caa_of(domain, scan_settings)
    # Then CAs read it as naming none of them (RFC 8659 4.2): no CA may issue, renewals fail (it was caa_present)
    assert list(findings) == ["dns.caa_invalid"]
    assert findings["dns.caa_invalid"]["deduction"] == 2
    assert findings["dns.caa_invalid"]["note"] == (
        f"at {domain}: issue 'letsencrypt.org, digicert.com' names no CA: 'letsencrypt.org, digicert.com' is a "
        "list of names in one record (one CA's domain name per record) (RFC 8659 4.2); CAs the issue records let "
        f"issue: none; iodef 'security@{domain}' is not a mailto:, http: or https: URL, so no CA can report to it "
        "(RFC 8659 4.4)"
    )


async def test_a_cas_name_written_with_capitals_is_flagged_as_one_ca_compares_it_exactly(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a domain whose CAA record names Let's Encrypt as "LetsEncrypt.org", beside a CA in lower case.
    # Let's Encrypt's CA software (Boulder, va/caa.go caaDomainMatches) compares the name with `==`, so this
    # record names some other CA for it: its renewals are refused.
    domain = "caa-case-e2e.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(domain, "CAA", '0 issue "LetsEncrypt.org"', '0 issuewild "digicert.com"')
    findings = await caa_of(domain, scan_settings)
    # Then it is graded as a record that may stop renewals, with the name to write (it was caa_present)
    assert list(findings) == ["dns.caa_invalid"]
    assert findings["dns.caa_invalid"]["note"] == (
        f"at {domain}: issue 'LetsEncrypt.org' is written with capitals: some CAs compare the name exactly as "
        "written (Let's Encrypt does), so they refuse; write 'letsencrypt.org'"
    )


async def test_a_cas_name_in_lower_case_is_present(dns_server: AuthDnsServer, scan_settings: Settings) -> None:
    domain = "caa-lower-e2e.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(domain, "CAA", '0 issue "letsencrypt.org"')
    assert list(await caa_of(domain, scan_settings)) == ["dns.caa_present"]


async def test_a_cas_name_with_capitals_beside_the_same_name_in_lower_case_changes_nothing(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given "LetsEncrypt.org" beside "letsencrypt.org": Let's Encrypt matches the second, and issues
    domain = "caa-both-cases-e2e.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(domain, "CAA", '0 issue "LetsEncrypt.org"', '0 issue "letsencrypt.org"')
    assert list(await caa_of(domain, scan_settings)) == ["dns.caa_present"]
