"""End-to-end scans of mail policies where the RFCs decide what a receiver or a sender reads: DMARC report
destinations at another domain (RFC 7489 7.1), served with the fixture DNS server."""

from __future__ import annotations

import dataclasses

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings


def findings_of(body: dict, prefix: str) -> dict[str, str]:
    """The dns section's findings whose outcome starts with `prefix`: outcome -> note."""
    return {f["check"]: f["note"] for f in body["dns"]["findings"] if f["check"].startswith(prefix)}


async def test_dmarc_reports_to_an_https_uri_of_another_domain_are_sent_only_with_its_consent(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a domain whose aggregate reports go to an https: URI at another organisation's host
    host = site_factory.unique_host("dmarc-https")
    receiver = f"dmarc.reports-{host}"  # reports-dmarc-https-N.test: another registrable domain
    site = catalog.best_practices(host)
    record = f'"v=DMARC1; p=reject; rua=https://{receiver}/in,mailto:dmarc@{host}"'
    dns = tuple(r for r in site.dns if r[0] != f"_dmarc.{host}")
    site_factory(dataclasses.replace(site, dns=(*dns, (f"_dmarc.{host}", "TXT", record))))
    dns_server.set(receiver, "A", "127.0.0.1")  # its zone exists; the consent record does not yet

    # When it is scanned, then the scan asks the consent record at that host (RFC 7489 7.1: "the host portion
    # of the authority component" of any URI), finds none, and says the reports are not sent
    consent = f"{host}._report._dmarc.{receiver}"
    before = (await scan(f"https://{host}/", scan_settings)).to_dict()
    assert dns_server.queries_for(consent)
    assert findings_of(before, "dns.dmarc") == {
        "dns.dmarc_enforced": "p=reject: spoofed mail is refused",
        "dns.dmarc_report_uri": f"{receiver} has not agreed to receive reports for {host} "
        f"(no {consent} record, RFC 7489 7.1)",
    }

    # And once the receiver publishes its consent, the finding is gone
    dns_server.set(consent, "TXT", '"v=DMARC1"')
    after = (await scan(f"https://{host}/", scan_settings)).to_dict()
    assert findings_of(after, "dns.dmarc") == {"dns.dmarc_enforced": "p=reject: spoofed mail is refused"}
