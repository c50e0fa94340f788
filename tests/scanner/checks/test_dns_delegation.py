"""checks/dns_delegation.py on replies as name servers send them: what is a lame delegation and what is no verdict."""

from __future__ import annotations

from typing import Any

from tests.factories import make_snapshot
from websec_app.scanner.checks.dns_delegation import delegation_findings
from websec_app.scanner.records.delegation import delegated_hosts, parent_zone, serves_zone
from websec_app.scanner.snapshot import DnsAnswer, DnsSnapshot, NameserverReply

DOMAIN = "example.com"
SOA = ("ns1.example.net. hostmaster.example.com. 7 3600 600 86400 300",)


def _soa(server: str, address: str, rcode: str = "NOERROR", *, aa: bool = True, **more: Any) -> NameserverReply:
    records = more.pop("records", SOA if rcode == "NOERROR" and aa else ())
    return NameserverReply(server, address, DOMAIN, "SOA", rcode, aa, records=records, **more)


def _findings(*replies: NameserverReply, ns: tuple[str, ...] = ("ns1.example.net.", "ns2.example.net.")):
    dns = DnsSnapshot(DOMAIN, answers=(DnsAnswer(DOMAIN, "NS", records=ns),), nameserver_replies=replies)
    details: dict[str, Any] = {}
    return delegation_findings(make_snapshot(f"https://{DOMAIN}/", dns=dns), DOMAIN, details), details


def test_each_answer_without_authority_is_lame() -> None:
    cases = {
        "answers SERVFAIL": _soa("ns2.example.net", "192.0.2.2", "SERVFAIL", aa=False),
        "answers NXDOMAIN": _soa("ns2.example.net", "192.0.2.2", "NXDOMAIN"),
        "answers without authority (the AA bit clear)": _soa(
            "ns2.example.net", "192.0.2.2", aa=False, records=SOA
        ),  # a resolver's cached copy: the server is an open resolver, not the zone's
        "answers with authority but no SOA record for example.com": _soa("ns2.example.net", "192.0.2.2", records=()),
        "answers with a referral to a.gtld-servers.net, b.gtld-servers.net, c.gtld-servers.net, d.gtld-servers.net "
        "and 2 more": _soa(
            "ns2.example.net",
            "192.0.2.2",
            aa=False,
            referral=tuple(f"{c}.gtld-servers.net." for c in "abcdef"),
        ),
    }
    for said, reply in cases.items():
        findings, _ = _findings(_soa("ns1.example.net", "192.0.2.1"), reply)
        [lame] = findings
        assert lame.outcome == "dns.lame_delegation", said
        assert lame.note == (
            f"ns2.example.net does not serve the zone of example.com, though the zone's NS records name it: "
            f"192.0.2.2 {said}"
        )


def test_one_address_of_a_server_that_does_not_serve_the_zone_is_named() -> None:
    # its IPv4 address serves the zone, its IPv6 address (another machine of the provider's) refuses it
    findings, details = _findings(
        _soa("ns1.example.net", "192.0.2.1"),
        _soa("ns1.example.net", "2001:db8::1", "REFUSED", aa=False),
    )
    [lame] = findings
    assert lame.subject == "ns1.example.net"
    assert lame.note.endswith(": 2001:db8::1 answers REFUSED")
    assert details["delegation"]["servers"][1] == {
        "server": "ns1.example.net",
        "address": "2001:db8::1",
        "verdict": "lame",
        "answer": "answers REFUSED",
    }


def test_a_server_that_answers_nothing_is_silent_where_others_answer_on_its_address_family() -> None:
    silent = _soa("ns2.example.net", "192.0.2.2", "TIMEOUT", error="no reply to 2 queries within 0.8 s each")
    findings, details = _findings(_soa("ns1.example.net", "192.0.2.1"), silent)
    [finding] = findings
    assert (finding.outcome, finding.subject) == ("dns.nameserver_silent", "ns2.example.net")
    assert finding.note == "ns2.example.net did not answer at 192.0.2.2 (no reply to 2 queries within 0.8 s each)"
    assert details["delegation"]["servers"][1]["verdict"] == "silent"

    # silent on IPv6 where no server answered on IPv6 (the scanner's own IPv6 may go nowhere): no verdict
    v6 = _soa("ns2.example.net", "2001:db8::2", "TIMEOUT", error="no reply to 2 queries within 0.8 s each")
    findings, details = _findings(_soa("ns1.example.net", "192.0.2.1"), v6)
    assert [f.outcome for f in findings] == ["dns.nameservers_authoritative"]
    assert findings[0].note == "ns1.example.net answers for the zone of example.com with authority"
    assert details["delegation"]["servers"][1]["verdict"] == "no answer"
    # silent at one address and heard at the other: not silent (the IPv6 one is not judged)
    findings, _ = _findings(_soa("ns1.example.net", "192.0.2.1"), _soa("ns1.example.net", "2001:db8::1", "TIMEOUT"))
    assert [f.outcome for f in findings] == ["dns.nameservers_authoritative"]

    # none answered (a network that blocks port 53): the check could not be made
    findings, _ = _findings(silent)
    [error] = findings
    assert error.outcome == "check.error"
    assert error.note == "no name server of example.com answered (no reply to 2 queries within 0.8 s each)"


def test_nothing_is_said_when_no_server_was_asked() -> None:
    assert _findings() == ([], {})


def test_the_parent_zone_delegation_is_read_from_a_referral_or_an_authoritative_answer() -> None:
    referral = NameserverReply("a.gtld-servers.net", "192.0.2.30", DOMAIN, "NS", referral=("NS2.Example.NET.",))
    assert delegated_hosts(DOMAIN, [referral]) == ["ns2.example.net"]
    answer = NameserverReply("ns.parent", "192.0.2.31", DOMAIN, "NS", authoritative=True, records=("ns3.x.",))
    assert delegated_hosts(DOMAIN, [answer]) == ["ns3.x"]
    # a cached, non-authoritative answer is no delegation; nor a failure; nor another name's
    cached = NameserverReply("ns.parent", "192.0.2.31", DOMAIN, "NS", records=("ns3.x.",))
    failed = NameserverReply("ns.parent", "192.0.2.31", DOMAIN, "NS", "SERVFAIL", referral=("ns3.x.",))
    other = NameserverReply("ns.parent", "192.0.2.31", "other.com", "NS", referral=("ns3.x.",))
    assert delegated_hosts(DOMAIN, [cached, failed, other]) is None

    findings, details = _findings(_soa("ns1.example.net", "192.0.2.1"), referral, ns=("ns1.example.net.",))
    assert details["delegation"]["parent"] == ["ns2.example.net"]
    assert [f.outcome for f in findings] == ["dns.nameservers_authoritative"]


def test_lame_by_the_parent_zone_delegation_alone() -> None:
    referral = NameserverReply(
        "a.gtld-servers.net", "192.0.2.30", DOMAIN, "NS", referral=("ns1.example.net.", "ns.old-dns.example.")
    )
    findings, _ = _findings(
        _soa("ns1.example.net", "192.0.2.1"),
        referral,
        _soa("ns.old-dns.example", "198.51.100.7", "REFUSED", aa=False),
        ns=("ns1.example.net.",),
    )
    [lame] = findings
    assert lame.note == (
        "ns.old-dns.example does not serve the zone of example.com, though the parent zone's delegation names it: "
        "198.51.100.7 answers REFUSED"
    )
    assert lame.fix_vars == {"nameserver": "ns.old-dns.example"}


def test_parent_zone_and_serving() -> None:
    assert parent_zone("example.com") == "com"
    assert parent_zone("Example.CO.UK.") == "co.uk"
    assert parent_zone("localhost") is None
    assert serves_zone(_soa("ns1", "192.0.2.1"))
    assert not serves_zone(_soa("ns1", "192.0.2.1", aa=False, records=SOA))


def test_the_fix_names_every_server_of_its_outcome() -> None:
    # the report keeps one finding per outcome and takes its fix from the first: each names them all
    findings, _ = _findings(
        _soa("ns1.example.net", "192.0.2.1", "REFUSED", aa=False),
        _soa("ns2.example.net", "192.0.2.2", "SERVFAIL", aa=False),
        _soa("ns3.example.net", "", "NOADDRESS", aa=False, error="no A or AAAA record"),
        ns=("ns1.example.net.", "ns2.example.net.", "ns3.example.net."),
    )
    assert [(f.outcome, f.subject, f.fix_vars) for f in findings] == [
        ("dns.nameserver_unresolvable", "ns3.example.net", {"nameserver": "ns3.example.net"}),
        ("dns.lame_delegation", "ns1.example.net", {"nameserver": "ns1.example.net and ns2.example.net"}),
        ("dns.lame_delegation", "ns2.example.net", {"nameserver": "ns1.example.net and ns2.example.net"}),
    ]
