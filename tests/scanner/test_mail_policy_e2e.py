"""End-to-end scans of mail policies where the RFCs decide what a receiver or a sender reads: DMARC report
destinations at another domain (RFC 7489 7.1), the MTA-STS record and the policy file a fixture HTTPS site
serves at mta-sts.<domain> (RFC 8461 3.1-3.3), and the TLS-RPT record (RFC 8460 3), with the fixture DNS
server."""

from __future__ import annotations

import dataclasses

import pytest

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Response, RunningSite, SiteFactory
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


# -- MTA-STS: the record and the policy a sender reads -----------------------------------------------------------

POLICY = "version: STSv1\r\nmode: enforce\r\nmx: mx.{host}\r\nmax_age: 604800\r\n"


def mail_domain(site_factory: SiteFactory, prefix: str, *sts_records: str, tlsrpt: tuple[str, ...] = ()) -> str:
    """The best-practice site for a domain that receives mail (MX, SPF mx, DKIM, TLS-RPT), with `sts_records` at
    _mta-sts.<domain> and `tlsrpt` (when given) at _smtp._tls.<domain>."""
    host = site_factory.unique_host(prefix)
    site = catalog.best_practices(host)
    kept = tuple(r for r in site.dns if r[1] not in ("MX", "TXT") or r[0].startswith("_dmarc."))
    records = [
        (host, "MX", f"10 mx.{host}"),
        (f"mx.{host}", "A", "127.0.0.9"),
        (host, "TXT", '"v=spf1 mx -all"'),
        (f"s1._domainkey.{host}", "TXT", '"v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="'),
        *((f"_smtp._tls.{host}", "TXT", f'"{record}"') for record in tlsrpt or (f"v=TLSRPTv1; rua=mailto:tls@{host}",)),
        *((f"_mta-sts.{host}", "TXT", f'"{record}"') for record in sts_records),
    ]
    site_factory(dataclasses.replace(site, dns=(*kept, *records)))
    return host


def policy_site(site_factory: SiteFactory, host: str, body: str) -> RunningSite:
    policy = Response(200, [("Content-Type", "text/plain")], body)
    return site_factory(catalog.simple_site(f"mta-sts.{host}", routes={"/.well-known/mta-sts.txt": policy}))


@pytest.mark.parametrize(
    ("body", "found"),
    [
        # 3.2: a repeated field counts at its first occurrence ("all entries except for the first SHALL be
        # ignored"): it was dns.mta_sts_invalid, "mode appears twice"
        (POLICY + "mode: testing\r\nmax_age: 1\r\n", {"dns.mta_sts_enforce": "mode: enforce, max_age 604800"}),
        # 3.2's grammar: field-delim is ":" *WSP, right after the name; senders that parse it (mox) refuse the
        # policy: it was dns.mta_sts_enforce
        (
            POLICY.replace("mode: enforce", "mode : enforce"),
            {
                "dns.mta_sts_invalid": "'mode : enforce' is not 'key: value'; mode must be enforce, testing or none, "
                "not None"
            },
        ),
    ],
)
async def test_an_mta_sts_policy_is_read_by_its_grammar(
    site_factory: SiteFactory, scan_settings: Settings, body: str, found: dict[str, str]
) -> None:
    host = mail_domain(site_factory, "sts-grammar", "v=STSv1; id=20261122")
    served = policy_site(site_factory, host, body.format(host=host))

    report = (await scan(f"https://{host}/", scan_settings)).to_dict()

    assert len(served.requests_to("/.well-known/mta-sts.txt")) == 1
    assert findings_of(report, "dns.mta_sts") == found


async def test_an_mta_sts_policy_larger_than_64_kib_is_invalid(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a policy whose lines senders need come first, then a comment line past 64 KiB
    host = mail_domain(site_factory, "sts-huge", "v=STSv1; id=20261122")
    body = POLICY.format(host=host) + "note: " + "x" * 70_000 + "\r\n"
    policy_site(site_factory, host, body)

    report = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the scan read 64 KiB, as mox does, which refuses a longer policy (RFC 8461 3.3 lets senders cap it):
    # the policy is invalid, where the part read was dns.mta_sts_enforce
    assert findings_of(report, "dns.mta_sts") == {
        "dns.mta_sts_invalid": "the policy is larger than 64 KiB, which senders may refuse (RFC 8461 3.3)"
    }


async def test_a_discarded_mta_sts_record_beside_a_valid_one_leaves_the_policy_in_force(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given "v=STSv1" (no separator, no id) beside a valid record: senders discard the first (RFC 8461 3.1)
    host = mail_domain(site_factory, "sts-two", "v=STSv1", "v=STSv1; id=20261122")
    served = policy_site(site_factory, host, POLICY.format(host=host))

    report = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then one record remains, the policy is fetched and in force: it was "2 MTA-STS records", invalid
    assert findings_of(report, "dns.mta_sts") == {"dns.mta_sts_enforce": "mode: enforce, max_age 604800"}
    assert len(served.requests_to("/.well-known/mta-sts.txt")) == 1


async def test_a_policy_host_address_that_takes_no_connection_is_passed_over_and_named(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a policy host with two A records, the lower an address that refuses connections
    host = mail_domain(site_factory, "sts-down", "v=STSv1; id=20261122")
    down = site_factory.down()
    served = policy_site(site_factory, host, POLICY.format(host=host))
    assert site_factory.dns is not None
    site_factory.dns.add(f"mta-sts.{host}", "A", down.ip)

    report = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the policy is fetched at the next address, as a sending server fetches it, and in force; the address
    # passed over is named, as one of the site's own would be (it was moved past without a word)
    assert len(served.requests_to("/.well-known/mta-sts.txt")) == 1
    assert findings_of(report, "dns.mta_sts") == {"dns.mta_sts_enforce": "mode: enforce, max_age 604800"}
    assert findings_of(report, "dns.address_down") == {
        "dns.address_down": f"{down.ip} (mta-sts.{host}) refused connections to port 443, and "
        f"the scan went on at {served.ip}"
    }


# -- TLS-RPT ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "found"),
    [
        # "v=TLSRPTv1" alone is discarded before the records are counted (RFC 8460 3): it was two records, invalid
        (("v=TLSRPTv1", "v=TLSRPTv1; rua=mailto:tls@example.com"), "dns.tlsrpt_present"),
        # %s"rua=": nothing around the "=": it was dns.tlsrpt_present
        (("v=TLSRPTv1; rua = mailto:tls@example.com",), "dns.tlsrpt_invalid"),
    ],
)
async def test_a_tls_rpt_record_is_read_by_its_grammar(
    site_factory: SiteFactory, scan_settings: Settings, records: tuple[str, ...], found: str
) -> None:
    host = mail_domain(site_factory, "tlsrpt", tlsrpt=records)
    report = (await scan(f"https://{host}/", scan_settings)).to_dict()
    assert list(findings_of(report, "dns.tlsrpt")) == [found]
