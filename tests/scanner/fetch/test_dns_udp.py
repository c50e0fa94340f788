"""The scanner's own UDP path for DNS (fetch/_dns_udp.py) against the fixture DNS server: the same
answers as dnspython's resolver, and dnspython's resolver wherever the reply is not the common case."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import replace

import dns.asyncresolver
import dns.flags
import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.resolver

from websec_app.scanner.fetch import _dns_udp
from websec_app.scanner.fetch.resolve import Resolver, first_nameserver
from websec_app.settings import DnsServer


async def test_answers_match_dnspythons_records_and_signatures(dns_server, scan_settings, monkeypatch) -> None:
    domain = "udp-same.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "TXT", '"v=spf1 -all"', '"a \\"quoted\\" text"')
    dns_server.set(domain, "MX", "10 mx.udp-same.test.", "20 mx2.udp-same.test.")
    dns_server.set(domain, "CAA", '0 issue "letsencrypt.org"')
    dns_server.set(f"alias.{domain}", "CNAME", f"{domain}.")
    dns_server.sign_zone(domain)
    reference = dns_server.resolver()
    reference.use_edns(0, dns.flags.DO, 1232)
    reference.flags = dns.flags.RD | dns.flags.CD

    resolver = Resolver(scan_settings)

    async def not_needed(*args: object, **kwargs: object) -> None:
        raise AssertionError("the common case must not go through dnspython's resolver")

    monkeypatch.setattr(dns.asyncresolver.Resolver, "resolve", not_needed)
    for name, rdtype in [(domain, "A"), (domain, "TXT"), (domain, "MX"), (domain, "CAA"), (f"alias.{domain}", "A")]:
        ours = await resolver.query(name, rdtype)
        theirs = reference.resolve(name, rdtype, raise_on_no_answer=False, search=False)
        assert theirs.rrset is not None
        assert ours.rcode == "NOERROR"
        assert sorted(ours.records) == sorted(r.to_text() for r in theirs.rrset), (name, rdtype)
        signatures = theirs.response.get_rrset(
            theirs.response.answer, theirs.rrset.name, dns.rdataclass.IN, dns.rdatatype.RRSIG, theirs.rrset.rdtype
        )
        assert signatures is not None
        assert sorted(ours.signatures) == sorted(r.to_text() for r in signatures), (name, rdtype)
    assert (await resolver.query(f"alias.{domain}", "A")).records == ("127.0.0.9",)  # the CNAME chain followed


async def test_nxdomain_and_no_data_answers(dns_server, scan_settings) -> None:
    dns_server.set("udp-nodata.test", "A", "127.0.0.9")
    resolver = Resolver(scan_settings)
    assert (await resolver.query("udp-missing.test", "A")).rcode == "NXDOMAIN"
    nodata = await resolver.query("udp-nodata.test", "MX")
    assert (nodata.rcode, nodata.records) == ("NOERROR", ())


async def test_a_truncated_reply_is_asked_again_over_tcp(dns_server, scan_settings) -> None:
    big = [f'"{"x" * 200}-{n}"' for n in range(12)]  # ~2.5 KB: more than the 1232 bytes asked over UDP
    dns_server.set("udp-big.test", "TXT", *big)
    dns_server.queries.clear()

    answer = await Resolver(scan_settings).query("udp-big.test", "TXT")

    transports = [q.transport for q in dns_server.queries_for("udp-big.test")]
    assert transports[0] == "udp" and "tcp" in transports
    # and the whole answer comes back over TCP
    assert answer.rcode == "NOERROR"
    assert sorted(answer.records) == sorted(big)  # as the zone holds them (TXT strings quoted)


async def test_a_refused_or_silent_server_is_reported_as_before(dns_server, scan_settings) -> None:
    # Not the common case: dnspython's resolver judges it, within the same lifetime.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        settings = replace(
            scan_settings,
            dns_servers=(DnsServer("127.0.0.1", silent.getsockname()[1]),),
            limits=replace(scan_settings.limits, dns_seconds=0.5),
        )
        assert (await Resolver(settings).query("udp-silent.test", "A")).rcode == "TIMEOUT"
    # Nothing listens: our connected socket hears the ICMP refusal, dnspython's does not and times out.
    settings = replace(settings, dns_servers=(DnsServer("127.0.0.1", 9),))
    assert (await Resolver(settings).query("udp-refused.test", "A")).rcode == "TIMEOUT"


async def test_a_forged_or_late_datagram_is_ignored(dns_server) -> None:
    # A reply whose ID or question differs is dropped; the real reply is still awaited and used.
    dns_server.set("udp-forged.test", "A", "127.0.0.9")
    question = _dns_udp.question_wire("udp-forged.test", dns.rdatatype.A)
    assert question is not None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as relay:
        relay.bind(("127.0.0.1", 0))
        relay.setblocking(False)
        loop = asyncio.get_running_loop()

        async def forward_with_a_forgery_first() -> None:
            query, client = await loop.sock_recvfrom(relay, 4096)
            forged = bytes([query[0] ^ 0xFF, query[1]]) + b"\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00" + question
            forged += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x00\x00\x01"  # A 10.0.0.1
            await loop.sock_sendto(relay, forged, client)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as upstream:
                upstream.settimeout(2)
                upstream.sendto(query, (dns_server.ip, dns_server.port))
                reply = upstream.recv(4096)
            await loop.sock_sendto(relay, reply, client)

        relaying = asyncio.ensure_future(forward_with_a_forgery_first())
        answer = await _dns_udp.ask("127.0.0.1", relay.getsockname()[1], "udp-forged.test", "A", 2.0)
        await relaying
    assert isinstance(answer, _dns_udp.UdpAnswer) and answer.rrset is not None
    assert [r.to_text() for r in answer.rrset] == ["127.0.0.9"]


def test_names_needing_dnspythons_encoding_are_left_to_it() -> None:
    assert _dns_udp.question_wire("a\\.b.test", 1) is None
    assert _dns_udp.question_wire("bücher.test", 1) is None
    assert _dns_udp.question_wire("x" * 64 + ".test", 1) is None
    assert (
        _dns_udp.question_wire("example.test.", 1) == dns.name.from_text("example.test").to_wire() + b"\x00\x01\x00\x01"
    )


def test_the_system_s_first_nameserver_is_read_as_resolv_conf_lists_it() -> None:
    text = """# generated
search example.test
nameserver not-an-address
nameserver 192.0.2.53  # the first usable one
nameserver 2001:db8::53
options rotate
"""
    assert first_nameserver(text) == "192.0.2.53"
    assert first_nameserver("; nameserver 192.0.2.1\nnameserver 2001:db8::1\n") == "2001:db8::1"
    assert first_nameserver("search example.test\n") is None  # none: dnspython's configuration decides


async def test_a_scan_s_common_queries_do_not_load_dnspython_s_resolver(dns_server, scan_settings) -> None:
    # dnspython's resolver is made only for an uncommon reply (fetch/resolve.py); a fresh process shows
    # whether it was imported (tests/cli/test_import_budget.py), here the resolver object is not made.
    dns_server.set("udp-lazy.test", "A", "127.0.0.9")
    resolver = Resolver(scan_settings)

    assert (await resolver.query("udp-lazy.test", "A")).records == ("127.0.0.9",)
    assert resolver._resolver is None
