"""How many round trips the DNS fetch takes over an SPF record's include tree, counted with a resolver that answers
a round of queries only once the fetch has asked all it will ask without them (no wall time): the fetch asks ahead
what the evaluation reads if the missing answers change nothing (records/spf_evaluation.spf_lookups_to_ask), an mx
term's hosts' addresses included, so a scan's wall time is its rounds, not the records' terms one by one."""

from __future__ import annotations

import asyncio

import pytest

from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.snapshot import DnsAnswer

GOOGLE = {
    "_spf.google.com": "v=spf1 include:_netblocks.google.com include:_netblocks2.google.com ~all",
    "_netblocks.google.com": "v=spf1 ip4:35.190.247.0/24 ~all",
    "_netblocks2.google.com": "v=spf1 ip6:2001:4860:4000::/36 ~all",
}


class RoundResolver:
    """Answers the queries asked so far all at once, a round at a time, when `answer_round` is called."""

    def __init__(self, spf: str) -> None:
        self.spf = spf
        self.waiting: list[tuple[asyncio.Future[None], str, str]] = []
        self.rounds: list[list[tuple[str, str]]] = []

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        released: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append((released, name, rdtype))
        await released
        return self._answer(name.rstrip(".").lower(), rdtype)

    def answer_round(self) -> None:
        self.rounds.append([(name, rdtype) for _, name, rdtype in self.waiting])
        for released, _, _ in self.waiting:
            released.set_result(None)
        self.waiting = []

    def _answer(self, name: str, rdtype: str) -> DnsAnswer:
        if rdtype == "TXT" and name == "example.com":
            return DnsAnswer(name, rdtype, records=(f'"{self.spf}"',))
        if rdtype == "TXT" and name in GOOGLE:
            return DnsAnswer(name, rdtype, records=(f'"{GOOGLE[name]}"',))
        if rdtype == "MX" and name == "mailhost.net":
            return DnsAnswer(name, rdtype, records=("10 mxa.mailhost.net.",))
        if rdtype == "A" and name == "mxa.mailhost.net":
            return DnsAnswer(name, rdtype, records=("192.0.2.10",))
        return DnsAnswer(name, rdtype, "NOERROR")


async def rounds_of(spf: str) -> RoundResolver:
    resolver = RoundResolver(spf)
    fetch = asyncio.ensure_future(fetch_dns("example.com", resolver, budget_seconds=30))
    while not fetch.done():
        for _ in range(200):  # let the fetch ask everything it asks without the answers pending
            await asyncio.sleep(0)
        if resolver.waiting:
            resolver.answer_round()
    await fetch
    return resolver


@pytest.mark.parametrize(
    "record",
    [
        pytest.param("v=spf1 include:_spf.google.com mx:mailhost.net ~all", id="mx-after-an-include"),
        pytest.param("v=spf1 mx:mailhost.net include:_spf.google.com ~all", id="mx-before-an-include"),
    ],
)
async def test_an_mx_terms_hosts_are_asked_ahead_of_an_include_not_answered_yet(record: str) -> None:
    # Given an mx term of another domain beside an include whose records are not in yet
    resolver = await rounds_of(record)
    # Then the fetch takes three rounds, wherever the mx term stands: the domain's own names; the include's record
    # and the MX; the included records and the MX host's addresses together (before, after an include they waited
    # for every earlier answer: a fourth round)
    asked = {query: n for n, queries in enumerate(resolver.rounds, start=1) for query in queries}
    assert len(resolver.rounds) == 3
    assert asked[("_spf.google.com", "TXT")] == asked[("mailhost.net", "MX")] == 2
    assert asked[("_netblocks.google.com", "TXT")] == asked[("mxa.mailhost.net", "A")] == 3
    assert asked[("mxa.mailhost.net", "AAAA")] == 3
