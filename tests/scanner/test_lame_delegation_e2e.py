"""A name server the domain is delegated to that does not serve its zone (checks/dns_delegation.py): each is asked
directly, without recursion (fetch/nameservers.py), on the fixture servers' port (`Settings.nameserver_port`).

The other DNS providers are real fixture servers on further loopback addresses at the session server's port: one that
holds no zone for the domain (and so answers REFUSED, as a provider's server does for a zone nobody created there), and
a registry whose `io.` zone delegates a domain to a server the zone's own NS records no longer name."""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Iterator

import dns.name
import dns.rdata
import dns.rdataclass
import pytest

from tests.factories import make_snapshot
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import SiteFactory
from tests.pdf_text import pdf_pages
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import diff_reports
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.fetch.nameservers import NameserverAsker
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.services.pdf.scan_report import render_scan_pdf
from websec_app.settings import DnsServer, Settings
from websec_app.usecases.monitors import alert_reasons

#: The old DNS provider's server: holds no zone, so it answers REFUSED for every domain (as a provider does for a zone
#: no account created).
OLD_PROVIDER_IP = "127.0.53.2"


@pytest.fixture
def old_provider(dns_server: AuthDnsServer) -> Iterator[AuthDnsServer]:
    with AuthDnsServer(OLD_PROVIDER_IP, dns_server.port, tld=None) as server:
        yield server


async def _scan_with_nameservers(site_factory: SiteFactory, scan_settings: Settings, prefix: str, *extra: str):
    """The best-practice site at a host of its own, whose zone lists the `extra` name servers beside its own."""
    host = site_factory.unique_host(prefix)
    running = site_factory(catalog.with_nameservers(catalog.best_practices(host), *extra))
    return host, (await scan(running.url, scan_settings)).to_dict()


def _of(body: dict, outcome: str) -> list[dict]:
    return [f for f in body["dns"]["findings"] if f["check"] == outcome]


async def test_a_name_server_that_refuses_the_zone_is_a_lame_delegation(
    site_factory: SiteFactory, scan_settings: Settings, dns_server: AuthDnsServer, old_provider: AuthDnsServer
) -> None:
    # Given a domain that moved DNS providers and still lists the old provider's server, which no longer holds the zone
    provider = site_factory.unique_host("old-dns")
    dns_server.add(f"ns.{provider}", "A", OLD_PROVIDER_IP)
    host, body = await _scan_with_nameservers(site_factory, scan_settings, "lame", f"ns.{provider}")

    # Then that server is named, with what it answered, and which list names it
    [lame] = _of(body, "dns.lame_delegation")
    assert (lame["status"], lame["severity"], lame["deduction"]) == ("bad", "important", 10)
    assert lame["subjects"] == [f"ns.{provider}"]
    assert lame["note"] == (
        f"ns.{provider} does not serve the zone of {host}, though the parent zone's delegation and the zone's NS "
        f"records name it: {OLD_PROVIDER_IP} answers REFUSED"
    )
    assert lame["families"] == ["delegation"]
    assert lame["fix"].startswith(f"Take ns.{provider} out of the domain's name servers, at your registrar")
    assert f"create the zone {host} at the provider that runs ns.{provider}" in lame["fix"]
    assert _of(body, "dns.nameservers_authoritative") == []
    # the server was asked itself, without recursion, for the domain's SOA
    assert [q.rdtype for q in old_provider.queries] == ["SOA"]
    servers = {s["server"]: s["answer"] for s in body["dns"]["delegation"]["servers"]}
    assert servers == {f"ns1.{host}": "answers with authority", f"ns.{provider}": "answers REFUSED"}
    assert sorted(body["dns"]["delegation"]["parent"]) == sorted([f"ns1.{host}", f"ns.{provider}"])

    # and the PDF lists what each name server answered
    text = re.sub(r"\s+", " ", " ".join(pdf_pages(render_scan_pdf(body))))
    assert f"ns.{provider} ({OLD_PROVIDER_IP}): answers REFUSED ns1.{host} (127.0.53.1): answers with authority" in text

    # and a monitor alerts the day it appears (the scan before: the same site without that server)
    _, before = await _scan_with_nameservers(site_factory, scan_settings, "lame-before")
    reasons, _ = alert_reasons(before, body, diff_reports(before, body), None)
    assert reasons == [
        f"New critical or important finding: Name server that does not serve the domain (lame delegation): "
        f"ns.{provider}.",
    ]


async def test_name_servers_that_serve_the_zone_are_said_so(site_factory: SiteFactory, scan_settings: Settings) -> None:
    host, body = await _scan_with_nameservers(site_factory, scan_settings, "served")
    assert _of(body, "dns.lame_delegation") == []
    [served] = _of(body, "dns.nameservers_authoritative")
    assert served["note"] == f"ns1.{host} answers for the zone of {host} with authority"
    assert body["dns"]["delegation"]["parent"] == [f"ns1.{host}"]


async def test_two_name_servers_at_one_address_are_each_named(
    site_factory: SiteFactory, scan_settings: Settings, dns_server: AuthDnsServer
) -> None:
    # Given ns1 and ns2 of a zone that has one machine (both at the fixture server's address)
    host = site_factory.unique_host("one-machine")
    dns_server.add(f"ns2.{host}", "A", dns_server.ip)
    running = site_factory(catalog.with_nameservers(catalog.best_practices(host), f"ns2.{host}"))
    body = (await scan(running.url, scan_settings)).to_dict()
    [served] = _of(body, "dns.nameservers_authoritative")
    assert served["note"] == f"ns1.{host} and ns2.{host} answer for the zone of {host} with authority"
    servers = [(s["server"], s["address"]) for s in body["dns"]["delegation"]["servers"]]
    assert servers == [(f"ns1.{host}", dns_server.ip), (f"ns2.{host}", dns_server.ip)]


async def test_a_name_server_whose_port_is_closed_is_no_verdict(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a second name server whose address takes no DNS queries (nothing listens on that port there: the host says
    # so, which is no reply from a name server, and no verdict on one)
    provider = site_factory.unique_host("silent-dns")
    site_factory.dns.add(f"ns.{provider}", "A", "127.0.53.3")
    host, body = await _scan_with_nameservers(site_factory, scan_settings, "silent", f"ns.{provider}")
    assert _of(body, "dns.lame_delegation") == []
    assert _of(body, "check.error") == []
    servers = {s["server"]: s["answer"] for s in body["dns"]["delegation"]["servers"]}
    assert servers[f"ns.{provider}"].startswith("did not answer (no reply")


async def test_name_servers_on_private_addresses_are_not_asked_in_production(
    site_factory: SiteFactory, scan_settings: Settings, dns_server: AuthDnsServer
) -> None:
    # Given the guard on (private targets refused): the fixture's name servers are loopback addresses
    host = site_factory.unique_host("guarded")
    site_factory(catalog.best_practices(host))
    guarded = dataclasses.replace(scan_settings, allow_private_targets=False)
    snapshot = await fetch_dns(host, Resolver(guarded), nameservers=NameserverAsker(guarded))

    # Then no name server is asked directly (refused before a datagram is sent), and the check says it could not be
    # made, without the address's kind
    assert {r.error for r in snapshot.nameserver_replies} == {"not asked: its address is not a public one"}
    result = check_dns(make_snapshot(f"https://{host}/", dns=snapshot))
    [error] = [f for f in result.findings if f.outcome == "check.error" and "delegation" in f.families]
    assert error.note == f"no name server of {host} answered (not asked: its address is not a public one)"


# -- the parent zone's delegation: a registry whose referral names a server the zone's NS records do not -------------


@pytest.fixture
def registry_world() -> Iterator[tuple[AuthDnsServer, AuthDnsServer, AuthDnsServer]]:
    """(resolver, registry, old provider) on one port: the resolver holds `io.` and shop.io's zone, and sends the
    parent zone's questions to the registry (`io.` NS a.nic.io), whose `io.` zone delegates shop.io to its own server
    and to the old provider's, which holds nothing."""
    with AuthDnsServer("127.0.53.4", tld="io") as world:
        with (
            AuthDnsServer("127.0.53.5", world.port, tld="io") as registry,
            AuthDnsServer("127.0.53.6", world.port, tld=None) as old,
        ):
            world.add_zone("shop.io")
            world.add("shop.io", "A", "127.0.0.9")
            world.set("io", "NS", "a.nic.io.")
            world.add("a.nic.io", "A", registry.ip)
            world.add("ns.olddns.io", "A", old.ip)
            with registry.zone("io").writer() as txn:
                for target in ("ns1.shop.io.", "ns.olddns.io."):
                    txn.add(dns.name.from_text("shop.io."), 300, dns.rdata.from_text(dns.rdataclass.IN, "NS", target))
                txn.add(dns.name.from_text("ns1.shop.io."), 300, dns.rdata.from_text(dns.rdataclass.IN, "A", world.ip))
            yield world, registry, old


async def test_a_server_only_the_registry_still_delegates_to_is_found(registry_world, scan_settings: Settings) -> None:
    world, registry, old = registry_world
    settings = dataclasses.replace(
        scan_settings, dns_servers=(DnsServer(world.ip, world.port),), nameserver_port=world.port
    )
    snapshot = await fetch_dns("shop.io", Resolver(settings), nameservers=NameserverAsker(settings))

    # The registry answered with a referral (no authority), which named the old provider's server
    [referral] = [r for r in snapshot.nameserver_replies if r.rdtype == "NS"]
    assert (referral.server, referral.authoritative) == ("a.nic.io", False)
    assert referral.referral == ("ns.olddns.io.", "ns1.shop.io.")
    assert [q.rdtype for q in old.queries] == ["SOA"]

    result = check_dns(make_snapshot("https://shop.io/", dns=snapshot))
    report = grade([result], default_rulebook(), {"host": "shop.io", "domain": "shop.io"})
    [lame] = [f for f in report.sections["dns"]["findings"] if f["check"] == "dns.lame_delegation"]
    assert lame["note"] == (
        f"ns.olddns.io does not serve the zone of shop.io, though the parent zone's delegation names it: "
        f"{old.ip} answers REFUSED"
    )
    assert "Take ns.olddns.io out of the domain's name servers, at your registrar" in lame["fix"]


async def test_a_name_server_without_an_address_is_said(
    site_factory: SiteFactory, scan_settings: Settings, dns_server: AuthDnsServer
) -> None:
    # Given a domain whose zone lists ns2 of its own zone, which has no address record, and a server of a provider
    # whose name does not exist (the provider's domain does)
    host = site_factory.unique_host("no-address")
    provider = site_factory.unique_host("renamed-dns")
    dns_server.add(f"ns1.{provider}", "A", dns_server.ip)
    running = site_factory(catalog.with_nameservers(catalog.best_practices(host), f"ns2.{host}", f"ns9.{provider}"))
    body = (await scan(running.url, scan_settings)).to_dict()

    # Then each is said, with why, and the zone is not said to be served by every name server
    [unresolvable] = _of(body, "dns.nameserver_unresolvable")
    assert (unresolvable["status"], unresolvable["severity"], unresolvable["deduction"]) == ("weak", "minor", 2)
    assert unresolvable["subjects"] == [f"ns2.{host}", f"ns9.{provider}"]
    assert unresolvable["notes"] == [
        f"ns2.{host} is a name server of {host} and has no address (the name does not exist)",
        f"ns9.{provider} is a name server of {host} and has no address (the name does not exist)",
    ]
    answers = {s["server"]: s["answer"] for s in body["dns"]["delegation"]["servers"]}
    assert answers[f"ns2.{host}"] == "not asked: it has no address (the name does not exist)"
    assert unresolvable["fix"].startswith(f"Publish address records (A and AAAA) for ns2.{host} and ns9.{provider}, or")
    assert _of(body, "dns.nameservers_authoritative") == [] and _of(body, "dns.lame_delegation") == []
    verdicts = {s["server"]: s["verdict"] for s in body["dns"]["delegation"]["servers"]}
    assert verdicts == {f"ns1.{host}": "serves", f"ns2.{host}": "no address", f"ns9.{provider}": "no address"}


async def test_a_name_server_on_a_domain_gone_is_dangling_not_also_unresolvable(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    gone = site_factory.unique_host("gone-dns")
    host, body = await _scan_with_nameservers(site_factory, scan_settings, "gone-ns", f"ns1.{gone}")
    assert [f["subjects"] for f in _of(body, "dns.dangling_ns")] == [[gone]]
    assert _of(body, "dns.nameserver_unresolvable") == [] and _of(body, "dns.nameservers_authoritative") == []


async def test_a_name_server_that_answers_nothing_is_silent(
    site_factory: SiteFactory, scan_settings: Settings, dns_server: AuthDnsServer
) -> None:
    # Given a second name server whose address takes the queries and answers none (a server taken down behind a
    # firewall that drops them)
    provider = site_factory.unique_host("down-dns")
    site_factory.dns.add(f"ns.{provider}", "A", "127.0.53.3")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as dropping:
        dropping.bind(("127.0.53.3", dns_server.port))
        host, body = await _scan_with_nameservers(site_factory, scan_settings, "down", f"ns.{provider}")
    [silent] = _of(body, "dns.nameserver_silent")
    assert (silent["status"], silent["severity"], silent["deduction"]) == ("weak", "minor", 2)
    assert silent["note"] == f"ns.{provider} did not answer at 127.0.53.3 (no reply to 2 queries within 0.8 s each)"
    assert silent["fix"].startswith(f"Bring ns.{provider} back, or take it out of the domain's name servers")
    assert _of(body, "dns.lame_delegation") == [] and _of(body, "dns.nameservers_authoritative") == []
    verdicts = {s["server"]: s["verdict"] for s in body["dns"]["delegation"]["servers"]}
    assert verdicts == {f"ns1.{host}": "serves", f"ns.{provider}": "silent"}
