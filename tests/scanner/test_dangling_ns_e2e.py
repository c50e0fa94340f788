"""A name server of the domain on a domain that does not exist (checks/dns.py `_dangling_nameservers`): whoever
registers that domain answers for the whole zone. Against the fixture DNS server, whose `test.` zone answers NXDOMAIN
for a domain it does not delegate."""

from __future__ import annotations

from tests.fixtures import catalog
from tests.fixtures.sites import SiteFactory
from websec_app.scanner import scan
from websec_app.scanner.diff import diff_reports
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons


async def _scan_with_nameservers(site_factory: SiteFactory, scan_settings: Settings, prefix: str, *nameservers: str):
    """The best-practice site at a host of its own, whose zone lists `nameservers` beside the fixture's own."""
    host = site_factory.unique_host(prefix)
    running = site_factory(catalog.with_nameservers(catalog.best_practices(host), *nameservers))
    return host, (await scan(running.url, scan_settings)).to_dict()


def _dangling(body: dict) -> list[dict]:
    return [f for f in body["dns"]["findings"] if f["check"] == "dns.dangling_ns"]


async def test_a_name_server_on_a_domain_that_does_not_exist_hands_the_zone_over(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    gone = site_factory.unique_host("gone-dns")  # never served: the fixture answers NXDOMAIN for it
    host, body = await _scan_with_nameservers(site_factory, scan_settings, "ns-gone", f"ns1.{gone}", f"ns2.{gone}")
    [dangling] = _dangling(body)
    assert (dangling["status"], dangling["severity"], dangling["deduction"]) == ("bad", "critical", 25)
    assert dangling["note"] == f"ns1.{gone} and ns2.{gone} are under {gone}, which does not exist"
    assert dangling["families"] == ["ns"]
    assert f"Remove ns1.{gone}, ns2.{gone} from the domain's name servers" in dangling["fix"]
    assert sorted(body["dns"]["nameservers"]) == sorted([f"ns1.{host}", f"ns1.{gone}", f"ns2.{gone}"])

    # a monitor alerts the day it appears (the scan before: the same site as it was, without those name servers)
    _, before = await _scan_with_nameservers(site_factory, scan_settings, "ns-before")
    reasons, _ = alert_reasons(before, body, diff_reports(before, body), None)
    assert reasons == [
        "The grade dropped from A+ to B.",
        f"New critical or important finding: Name server on a domain anyone can register: {gone}.",
    ]


async def test_name_servers_on_domains_that_exist_are_not_dangling(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    provider = site_factory.unique_host("dns-provider")
    site_factory.dns.add(f"ns1.{provider}", "A", "127.0.0.1")  # the provider's zone exists
    _, body = await _scan_with_nameservers(site_factory, scan_settings, "ns-ok", f"ns1.{provider}")
    assert _dangling(body) == []
    assert f"ns1.{provider}" in body["dns"]["nameservers"]
    assert not [f for f in body["dns"]["findings"] if f["check"] == "check.error"]
