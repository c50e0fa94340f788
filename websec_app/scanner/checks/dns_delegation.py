"""Whether each name server the domain is delegated to serves its zone (fetch/nameservers.py asked each directly).

A name server that answers the SOA question for the zone without authority (REFUSED, SERVFAIL, a referral, the AA
bit clear) is a lame delegation (RFC 9499): lookups sent there fail or wait until the resolver tries another, and at
a DNS provider that lets any account create any zone, whoever creates the domain's zone there answers for it. One
without an address, or that answered none of the datagrams sent to it while the others answered, fails resolvers
too. A closed port, a refused address, or silence where no server answered on that address family, is no verdict
(the scanner's own network may be what drops them); when none answered at all, the check could not be made.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..findings import Finding
from ..records.delegation import delegated_hosts, serves_zone
from ..records.dns_text import nameserver_hosts
from ..registrable import registrable_domain
from ..snapshot import NameserverReply, SiteSnapshot
from ._dns_shared import series

#: Of the name servers a referral names (a reply a server fills as it likes), this many are shown.
_REFERRAL_SHOWN = 4
_DELEGATION = "the parent zone's delegation"


def delegation_findings(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    replies = snapshot.dns.nameserver_replies
    # in a stable order: the fetch records replies as they arrive
    asked = sorted((r for r in replies if r.rdtype == "SOA" and r.name == domain), key=lambda r: (r.server, r.address))
    if not asked:
        return []  # not asked: no NS records, none with an address, or WEBSEC_NAMESERVER_PORT=0
    zone_servers = nameserver_hosts(snapshot.dns.get(domain, "NS"))
    delegated = delegated_hosts(domain, replies)
    details["delegation"] = {
        "parent": delegated,  # None: no server of the parent zone said
        "servers": [
            {"server": r.server, "address": r.address or None, "verdict": _verdict(r), "answer": _answer(r, domain)}
            for r in asked
        ],
    }
    findings = _addressless(snapshot, domain, asked)
    answered = [reply for reply in asked if reply.answered]
    unknown = [reply for reply in asked if reply.rcode in ("TIMEOUT", "ERROR")]
    if not answered:
        note = f"no name server of {domain} answered ({unknown[0].error})" if unknown else None
        error = [Finding("check.error", subject=f"{domain} name servers", note=note)] if note else []
        return _fix_naming_all(findings) + error
    by_server: dict[str, list[NameserverReply]] = {}
    for reply in answered:
        by_server.setdefault(reply.server, []).append(reply)
    for server, server_replies in by_server.items():
        lame = [reply for reply in server_replies if not serves_zone(reply)]
        if not lame:
            continue
        how = series([f"{reply.address} {_answer(reply, domain)}" for reply in lame])
        named = _named_by(server, zone_servers, delegated)
        note = f"{server} does not serve the zone of {domain}, though {series(named)} {_name(named)} it: {how}"
        findings.append(Finding("dns.lame_delegation", subject=server, note=note))
    silent = _silent(asked, by_server)
    for shown in details["delegation"]["servers"]:  # "no answer" said of a server is a verdict only here
        if shown["server"] in {finding.subject for finding in silent}:
            shown["verdict"] = "silent"
    findings += silent
    if findings or any(reply.rcode == "NOADDRESS" for reply in asked):  # not every name server serves the zone
        return _fix_naming_all(findings)
    serving = list(by_server)
    note = f"{series(serving)} {'answers' if len(serving) == 1 else 'answer'} for the zone of {domain} with authority"
    return [Finding("dns.nameservers_authoritative", note=note)]


def _addressless(snapshot: SiteSnapshot, domain: str, asked: list[NameserverReply]) -> list[Finding]:
    """dns.nameserver_unresolvable for each name server that has no address (resolvers that pick it get nothing),
    but one on a domain that does not exist, which is dns.dangling_ns (`dns._dangling_nameservers`)."""
    findings = []
    for reply in asked:
        owner = snapshot.dns.get(registrable_domain(reply.server), "SOA")
        if reply.rcode != "NOADDRESS" or (owner is not None and owner.rcode == "NXDOMAIN"):
            continue
        note = f"{reply.server} is a name server of {domain} and has no address ({reply.error})"
        findings.append(Finding("dns.nameserver_unresolvable", subject=reply.server, note=note))
    return findings


def _silent(asked: list[NameserverReply], by_server: dict[str, list[NameserverReply]]) -> list[Finding]:
    """dns.nameserver_silent for each name server that answered none of the datagrams sent to any of its addresses,
    when another server answered on each of its address families: a scanner whose IPv6 goes nowhere (a route that
    exists and is dropped upstream) hears no IPv6 server, and that says nothing of the servers."""
    heard = {_family(reply.address) for replies in by_server.values() for reply in replies}
    asked_by_server: dict[str, list[NameserverReply]] = {}
    for reply in asked:
        asked_by_server.setdefault(reply.server, []).append(reply)
    findings = []
    for server, replies in asked_by_server.items():
        if server in by_server or not all(r.rcode == "TIMEOUT" and _family(r.address) in heard for r in replies):
            continue
        note = f"{server} did not answer at {series([r.address for r in replies])} ({replies[0].error})"
        findings.append(Finding("dns.nameserver_silent", subject=server, note=note))
    return findings


def _family(address: str) -> str:
    return "IPv6" if ":" in address else "IPv4"


def _fix_naming_all(findings: list[Finding]) -> list[Finding]:
    """Each finding's fix naming every server of its outcome ({nameserver}): the report's one finding per outcome
    takes its fix from the first (grading.py), and the fix is the same change for each of them."""
    servers: dict[str, list[str]] = {}
    for finding in findings:
        servers.setdefault(finding.outcome, []).append(finding.subject or "")
    return [replace(f, fix_vars={"nameserver": series(servers[f.outcome])}) for f in findings]


def _named_by(server: str, zone_servers: list[str], delegated: list[str] | None) -> list[str]:
    """Who names `server` as one of the domain's name servers: the parent zone's delegation, the zone's NS records."""
    by = [_DELEGATION] if delegated is not None and server in delegated else []
    by += ["the zone's NS records"] if server in zone_servers else []
    return by or ["the zone's NS records"]


def _name(named: list[str]) -> str:
    """The verb for `named`: "the parent zone's delegation names it", "the zone's NS records name it"."""
    return "names" if named == [_DELEGATION] else "name"


def _verdict(reply: NameserverReply) -> str:
    """ "serves" (the zone, with authority), "lame" (answered, not as the zone's authority), "no address" or
    "no answer" (a server judged silent is "silent": `delegation_findings`)."""
    if reply.rcode == "NOADDRESS":
        return "no address"
    return "serves" if serves_zone(reply) else "lame" if reply.answered else "no answer"


def _answer(reply: NameserverReply, domain: str) -> str:
    """What the server's reply to the SOA question says, as a report shows it."""
    if reply.rcode == "NOADDRESS":
        return f"not asked: it has no address ({reply.error})"
    if not reply.answered:
        return f"did not answer ({reply.error})"
    if serves_zone(reply):
        return "answers with authority"
    if reply.rcode != "NOERROR":
        return f"answers {reply.rcode}"
    if reply.referral:
        shown = [record.rstrip(".") for record in reply.referral[:_REFERRAL_SHOWN]]
        more = len(reply.referral) - len(shown)
        return f"answers with a referral to {series([*shown, *([f'{more} more'] if more else [])])}"
    if not reply.authoritative:
        return "answers without authority (the AA bit clear)"
    return f"answers with authority but no SOA record for {domain}"
