"""DNS records for the `dns` section, queried concurrently with the HTTP and TLS work.

Which names and types are asked is data (`dns_queries`): the web host (addresses, CNAME, its HTTPS port's TLSA,
CAA, at the host and each parent up to the top-level domain, `caa_names`) and its registrable domain (mail
authentication, DNSSEC, NS, MX, MTA-STS, TLS-RPT, the `www` name; the parent zone's NS). A second round follows what
the first found: CNAME and MX targets (and the MX hosts' TLSA records; for TLSA records found, the DNSSEC records of a
provider's zone that holds them), whether the domains of the name servers exist (their SOA), whether each name server
serves the zone, asked directly (fetch/nameservers.py `ask_nameservers`: the NS records' servers, and those only the
parent zone's delegation names, which a server of the parent zone says), a signed zone's
NSEC3PARAM, the zone holding a registrable domain
that has none of its own (DNSSEC of alice.github.io is github.io's), the lookups the SPF evaluation reads (the
records include/redirect point to, the names a/mx/exists terms ask, the addresses of an mx term's hosts), asked in
the order receivers evaluate them and no further than they go (records/spf_evaluation.py, `_spf_tree`), and the
consent records of external DMARC report addresses.
Each answer, including a failure, lands in the snapshot, so one failed lookup is a finding
or "could not check", never a failed scan; the second round has its own deadline and keeps
whatever arrived in time, and a lookup it asked and did not get is recorded as failed (TIMEOUT), so
a check never takes a lookup cut short for one that was not asked (a finding the diff would call fixed).
The whole fetch keeps to what is left of the scan's time budget the same way: cut by it, both rounds keep
their answers and every lookup asked and not answered is recorded as failed. A fetch that stopped asking says
why in the snapshot (`DnsSnapshot.cut`): a check that needs a lookup nobody asked (the SPF evaluation's terms,
checks/spf.py) takes it for a failed one, and says why.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable

from ..records.caa import caa_names
from ..records.dane import dane_name, dane_zone
from ..records.delegation import parent_zone
from ..records.dmarc import consent_name, external_report_domains, is_dmarc, parse_dmarc
from ..records.dns_text import enclosing_zone_names, nameserver_domains, txt_of
from ..records.spf import parse_spf
from ..records.spf_evaluation import FAMILIES, LOOKUP_LIMIT, SpfRecords, spf_lookups_to_ask
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, DnsSnapshot, NameserverReply
from ..target import ip_literal
from .nameservers import NameserverAsker, ask_nameservers
from .resolve import Resolver

log = logging.getLogger(__name__)

#: At most this many lookups asked ahead of the SPF evaluation, over a whole fetch: those it reads after a term whose
#: answers are not in yet, if that term changes nothing (`spf_lookups_to_ask`), asked in the same round to save
#: round trips. Those it needs for sure are asked whatever this says: RFC 7208 4.6.4 bounds them (10 DNS-querying
#: terms, an `a` asking two types, 10 MX hosts an mx term, two types each).
MAX_SPF_LOOKUPS_AHEAD = 32
#: Rounds of SPF lookups: each asks at least what one term needs for sure (an mx term takes two: its MX records, then
#: its hosts' addresses), and the senders of each address family reach at most 10 such terms, redirect= included
#: (RFC 7208 4.6.4 counts a sender's own): those of one family can leave an include early ("-ip6:::/0") and walk 10
#: terms the others never reach.
MAX_SPF_ROUNDS = 2 * len(FAMILIES) * LOOKUP_LIMIT + 2
MAX_MX_HOSTS = 5
#: Up to this many characters of SPF records, a round of the SPF walk runs on the event loop (at most 5 ms, and
#: a thread costs 0.05 ms a round); past it, in a worker thread.
MAX_SPF_CHARS_ON_LOOP = 4096
MAX_REPORT_DOMAINS = 4
#: A lookup the scan's time budget cut (fetch_dns's `budget_seconds`), in the report's check.error.
OUT_OF_BUDGET = "no answer before the scan's time budget ran out"


def dns_queries(host: str, https_port: int = 443) -> list[tuple[str, str]]:
    """The (name, type) pairs one scan asks about the web host (at `https_port`, its TLSA records: DANE for the web
    server, RFC 6698) and its registrable domain."""
    queries = [(host, "A"), (host, "AAAA"), (host, "CNAME"), (dane_name(host, https_port), "TLSA")]
    domain = registrable_domain(host)
    if domain != host:
        queries += [(domain, "A")]
    if f"www.{domain}" != host:  # a dangling www is a takeover risk whichever name is scanned
        queries.append((f"www.{domain}", "CNAME"))
    queries += [(name, "CAA") for name in caa_names(host, domain)]
    parent = parent_zone(domain)
    if parent is not None:
        queries.append((parent, "NS"))  # the servers asked for the domain's delegation (fetch/nameservers.py)
    queries += [
        (domain, "TXT"),  # SPF
        (domain, "MX"),
        (domain, "SOA"),
        (domain, "NS"),  # its name servers: one on a domain anyone may register hands the zone over
        (domain, "DNSKEY"),
        (domain, "DS"),
        (f"_dmarc.{domain}", "TXT"),
        (f"_domainkey.{domain}", "TXT"),  # DKIM: only NXDOMAIN vs NOERROR matters (RFC 8020)
        (f"_mta-sts.{domain}", "TXT"),
        (f"_smtp._tls.{domain}", "TXT"),
    ]
    return list(dict.fromkeys(queries))


class _Answers:
    def __init__(
        self,
        resolver: Resolver,
        watched: dict[tuple[str, str], asyncio.Future[DnsAnswer | None]],
        nameservers: NameserverAsker | None = None,
    ) -> None:
        self.resolver = resolver
        self.nameservers = nameservers  # None: no name server is asked directly
        #: the replies of name servers asked directly, by (server, address, name, type), those asked, and the
        #: questions on their way, by (address, name, type)
        self.replies: dict[tuple[str, str, str, str], NameserverReply] = {}
        self.servers_asked: set[tuple[str, str, str, str]] = set()
        self.replies_in_flight: dict[tuple[str, str, str], asyncio.Future[NameserverReply]] = {}
        #: the servers not asked, by name: they have no address, or its lookups failed (a second pass after a cut keeps
        #: the first's)
        self.unaddressed: dict[str, NameserverReply] = {}
        #: answers another part of the scan waits for (the MX hosts' STARTTLS waits for the MX answer): given as soon
        #: as they are in, and None when the fetch ends without them
        self.watched = watched
        self.found: dict[tuple[str, str], DnsAnswer] = {}
        self.asked: set[tuple[str, str]] = set()
        #: the queries on their way, so a lookup two parts ask at once (an MX host of the domain's and of an SPF
        #: mx term) is one query
        self.in_flight: dict[tuple[str, str], asyncio.Future[DnsAnswer]] = {}
        self.gave_up: str | None = None  # why lookups are no longer asked (give_up)

    @staticmethod
    def key(name: str, rdtype: str) -> tuple[str, str]:
        return (name.rstrip(".").lower(), rdtype)

    async def ask(self, name: str, rdtype: str) -> DnsAnswer:
        key = self.key(name, rdtype)
        if key not in self.found and self.gave_up is not None:
            self.found[key] = DnsAnswer(*key, "TIMEOUT", error=self.gave_up)
        elif key not in self.found:
            self.asked.add(key)
            if key not in self.in_flight:
                self.in_flight[key] = asyncio.ensure_future(self.resolver.query(*key))
            answer = await self.in_flight[key]
            self.found.setdefault(key, answer)
        waiter = self.watched.get(key)
        if waiter is not None and not waiter.done():
            waiter.set_result(self.found[key])
        return self.found[key]

    async def ask_server(self, server: str, address: str, name: str, rdtype: str) -> NameserverReply:
        """`server`, at `address`, asked directly (fetch/nameservers.py); once lookups were given up, recorded as
        not answered without a query, as `ask` records a lookup. Two servers at one address (ns1 and ns2 of a zone
        that has one machine) share one question, and each has the reply under its own name."""
        assert self.nameservers is not None
        question = (address, name.rstrip(".").lower(), rdtype)
        key = (server, *question)
        if key not in self.replies and self.gave_up is not None:
            self.replies[key] = NameserverReply(*key, "TIMEOUT", error=self.gave_up)
        elif key not in self.replies:
            self.servers_asked.add(key)
            if question not in self.replies_in_flight:
                self.replies_in_flight[question] = asyncio.ensure_future(self.nameservers.ask(server, *question))
            reply = await self.replies_in_flight[question]
            self.replies.setdefault(key, dataclasses.replace(reply, server=server))
        return self.replies[key]

    def give_up(self, why: str) -> None:
        """Record each lookup asked and not answered as failed, with `why`, and so every lookup asked from now
        on, at once and without a query (`_unasked_follow_ups`)."""
        self.gave_up = self.gave_up or why
        for name, rdtype in self.asked - self.found.keys():
            self.found[(name, rdtype)] = DnsAnswer(name, rdtype, "TIMEOUT", error=why)
        for key in self.servers_asked - self.replies.keys():
            self.replies[key] = NameserverReply(*key, "TIMEOUT", error=why)

    def get(self, name: str, rdtype: str) -> DnsAnswer | None:
        return self.found.get(self.key(name, rdtype))


async def _spf_tree(domain: str, answers: _Answers) -> None:
    """Ask the lookups the SPF evaluation of `domain` reads (records/spf_evaluation.py): the records include and
    redirect point to, the names a, mx and exists terms ask, the addresses of an mx term's hosts, each failed one a
    temperror to receivers (RFC 7208 5) that the check can tell only from the answer. In rounds, in the order
    receivers evaluate the terms: each round asks what the walk needs for sure and, while MAX_SPF_LOOKUPS_AHEAD lasts,
    what it reads after if the missing answers change nothing; none past the evaluation's end (its first error, the
    11th DNS-querying term, every sender matched). So the lookups asked are those a receiver makes (4.6.4 bounds
    them), and none the evaluation reaches is left unasked, where a tree fetched breadth first under caps of its own
    spent them on terms past the limit and left unasked some the evaluation reached first.

    The walk reads the records the tree fetched, a TXT record holding up to 64 KB (0.27 s to parse): each record is
    read once (`SpfRecords`), and a round whose records hold more than MAX_SPF_CHARS_ON_LOOP characters runs in a
    worker thread, off the event loop (12 such records read on it froze the loop for 2.5 s)."""
    read = SpfRecords(parse_spf)
    records = {domain}  # the names whose TXT answers the walk reads
    ahead_left = MAX_SPF_LOOKUPS_AHEAD
    for _ in range(MAX_SPF_ROUNDS):
        found = dict(answers.found)  # the walk's view, unchanged by answers arriving while a thread reads it

        def known(name: str, rdtype: str, found: dict[tuple[str, str], DnsAnswer] = found) -> DnsAnswer | None:
            return found.get(_Answers.key(name, rdtype))

        size = sum(len(text) for name in records if (name, "TXT") in found for text in found[(name, "TXT")].records)
        needed, ahead = (
            spf_lookups_to_ask(domain, known, read)
            if size <= MAX_SPF_CHARS_ON_LOOP
            else await asyncio.to_thread(spf_lookups_to_ask, domain, known, read)
        )
        if not needed:
            return
        ahead = [query for query in ahead if query not in answers.asked][:ahead_left]
        ahead_left -= len(ahead)
        records.update(name for name, rdtype in (*needed, *ahead) if rdtype == "TXT")
        await asyncio.gather(*(answers.ask(name, rdtype) for name, rdtype in (*needed, *ahead)))


def _targets(answer: DnsAnswer | None, rdtype: str) -> list[str]:
    if answer is None or not answer.exists:
        return []
    if rdtype == "CNAME":
        return [r.rstrip(".").lower() for r in answer.records]
    hosts = []
    for record in answer.records:  # "10 mail.example.com."
        _, _, exchange = record.partition(" ")
        exchange = exchange.strip().rstrip(".").lower()
        if exchange:  # "0 ." is the null MX (RFC 7505): no host to look up
            hosts.append(exchange)
    return hosts[:MAX_MX_HOSTS]


def mx_hosts(answer: DnsAnswer | None) -> list[str]:
    """The MX hosts an MX answer names, those this fetch asks about (at most MAX_MX_HOSTS, in the records' stable
    order); none for a null MX, a failed lookup or a domain without MX records."""
    return _targets(answer, "MX")


async def _enclosing_zone(domain: str, answers: _Answers) -> None:
    """For DNSSEC, when `domain` is no zone apex (its SOA query answers with no record: alice.github.io is a
    name in the github.io zone): the SOA of the names above it, then the DNSKEY and DS of the nearest that
    has one. Two more round trips, only for such a name; a registrable domain is a zone apex, and costs none."""
    soa = answers.get(domain, "SOA")
    if soa is None or soa.rcode != "NOERROR" or soa.records:
        return
    names = enclosing_zone_names(domain)
    found = await asyncio.gather(*(answers.ask(name, "SOA") for name in names))
    for name, answer in zip(names, found, strict=True):
        if answer.rcode != "NOERROR":
            return  # failed or NXDOMAIN: the check says what it can from the SOA answers
        if answer.records:
            await asyncio.gather(answers.ask(name, "DNSKEY"), answers.ask(name, "DS"))
            return


async def _dane(host: str, domain: str, answers: _Answers, port: int = 25) -> None:
    """A host's TLSA records at `port` (an MX host's: DANE for SMTP, RFC 7672; the web host's are asked in the first
    round); for a host that has some, whether their name is an alias, and the DNSSEC records of the zone holding them
    when it is not the domain's (asked already). A domain without DANE pays one query per MX host, in the round that
    asks their addresses, and no round trip more."""
    tlsa = await answers.ask(dane_name(host, port), "TLSA")
    if not tlsa.records:
        return
    zone = dane_zone(host, domain, tlsa, port)
    # whether the name is an alias (its TLSA records are then another zone's, which this scan does not validate)
    more = [answers.ask(dane_name(host, port), "CNAME")]
    if zone != domain:
        more += [answers.ask(zone, rdtype) for rdtype in ("SOA", "DNSKEY", "DS")]
    await asyncio.gather(*more)


async def _follow_ups(host: str, domain: str, answers: _Answers, *, spf: bool = True, https_port: int = 443) -> None:
    # Parsed before any query is made: should the record trip the parser, no coroutine is left unawaited.
    dmarc = [t for t in txt_of(answers.get(f"_dmarc.{domain}", "TXT")) if is_dmarc(t)]
    report_domains = (
        external_report_domains(domain, parse_dmarc(dmarc[0]))[:MAX_REPORT_DOMAINS] if len(dmarc) == 1 else []
    )
    work: list[Awaitable[object]] = [_enclosing_zone(domain, answers), *([_spf_tree(domain, answers)] if spf else [])]
    work.append(_dane(host, domain, answers, https_port))
    for name in (host, f"www.{domain}"):
        for target in _targets(answers.get(name, "CNAME"), "CNAME"):
            work += [answers.ask(target, "A"), answers.ask(target, "AAAA")]
    work += [answers.ask(name, "SOA") for name in nameserver_domains(domain, answers.get(domain, "NS"))]
    work.append(ask_nameservers(domain, answers))
    for exchange in _targets(answers.get(domain, "MX"), "MX"):
        work += [answers.ask(exchange, "A"), answers.ask(exchange, "AAAA"), _dane(exchange, domain, answers)]
    work += [answers.ask(consent_name(domain, report_domain), "TXT") for report_domain in report_domains]
    dnskey = answers.get(domain, "DNSKEY")
    if dnskey is not None and dnskey.records:
        # A signed zone's NSEC3 settings (RFC 9276): one query in the round that runs anyway (an MX or SPF
        # include has follow-ups); only a signed domain with none of those waits one more round trip for it.
        work.append(answers.ask(domain, "NSEC3PARAM"))
    await asyncio.gather(*work)


async def _unasked_follow_ups(host: str, domain: str, answers: _Answers, https_port: int) -> None:
    """Once lookups were given up: the follow-ups the answers in hand call for and nobody asked (the first round
    or the one before it was cut), each recorded as failed without a query, so the check says "could not
    check" where a lookup never asked reads as nothing to say (a CNAME target, an MX host, a report address's
    consent, the DNSKEY of the zone holding the domain). Not the SPF tree: the snapshot says it was cut
    (`DnsSnapshot.cut`), and the SPF evaluation takes each lookup it needs and lacks for a failed one. The
    evaluation itself knows every lookup it reads, of every term type; a replay of the tree would be a second
    list of them, kept to its own bounds, and would cost CPU past the deadline."""
    try:
        await _follow_ups(host, domain, answers, spf=False, https_port=https_port)
    except Exception:  # noqa: BLE001 - as the follow-ups themselves: what a zone sends must never sink the scan
        log.exception("DNS follow-up queries for %s failed", host)


async def _both_rounds(host: str, answers: _Answers, follow_up_seconds: float, https_port: int) -> None:
    queries = dns_queries(host, https_port)
    # asked from now on: should the budget run out before a query's task starts, it is still recorded as failed
    answers.asked.update(answers.key(name, rdtype) for name, rdtype in queries)
    await asyncio.gather(*(answers.ask(name, rdtype) for name, rdtype in queries))
    try:
        follow_ups = _follow_ups(host, registrable_domain(host), answers, https_port=https_port)
        await asyncio.wait_for(follow_ups, follow_up_seconds)
    except TimeoutError:  # keep what arrived; what did not is "not checked"
        answers.give_up(f"no answer within the {follow_up_seconds:g} s the scan gives follow-up lookups")
    except Exception:  # noqa: BLE001 - what a zone sends must never sink the scan: the follow-ups are extras
        log.exception("DNS follow-up queries for %s failed", host)
        answers.give_up("not answered: the scan's follow-up lookups stopped on an error")


async def fetch_dns(
    host: str,
    resolver: Resolver,
    follow_up_seconds: float = 4.0,
    *,
    budget_seconds: float | None = None,
    mx_answer: asyncio.Future[DnsAnswer | None] | None = None,
    https_port: int = 443,
    nameservers: NameserverAsker | None = None,
) -> DnsSnapshot:
    """The snapshot, within `budget_seconds` (what is left of the scan's time budget; None: no bound but the
    lookups' own). When the budget runs out first, the answers that arrived are kept and every lookup asked
    and not answered is recorded as failed (TIMEOUT), and the snapshot says why it was cut, so the checks say
    "could not check" for it and for a lookup nobody asked, never "not found": a section cut by the scan's
    deadline must not read as a site without those records."""
    watched: dict[tuple[str, str], asyncio.Future[DnsAnswer | None]] = {}
    if mx_answer is not None and ip_literal(host) is None:
        watched[_Answers.key(registrable_domain(host), "MX")] = mx_answer
    try:
        if ip_literal(host) is not None:
            return DnsSnapshot(host=host)
        answers = _Answers(resolver, watched, nameservers)
        try:
            async with asyncio.timeout(budget_seconds):
                await _both_rounds(host, answers, follow_up_seconds, https_port)
        except TimeoutError:
            answers.give_up(OUT_OF_BUDGET)
        if answers.gave_up is not None:
            await _unasked_follow_ups(host, registrable_domain(host), answers, https_port)
        return DnsSnapshot(
            host=host,
            answers=tuple(answers.found.values()),
            nameserver_replies=(*answers.replies.values(), *answers.unaddressed.values()),
            cut=answers.gave_up,
        )
    finally:
        for waiter in watched.values():
            if not waiter.done():
                waiter.set_result(None)
