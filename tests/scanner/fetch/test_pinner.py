"""resolve.Pinner: which of a host's addresses a connection goes to, and when it moves on to the next."""

from __future__ import annotations

import pytest

from websec_app.scanner.fetch.resolve import MAX_ADDRESSES_TRIED, Pinner, Resolver
from websec_app.settings import DnsServer, Settings

#: Nothing is asked of the DNS server: the resolver below answers itself.
SETTINGS = Settings(allow_private_targets=True, dns_servers=(DnsServer("127.0.0.1", 53),))


class _Answers(Resolver):
    """A resolver that answers every name with the given addresses, in the given order."""

    def __init__(self, *addresses: str) -> None:
        super().__init__(SETTINGS)
        self.answer = list(addresses)

    async def addresses(self, host: str) -> list[str]:
        return self.answer


async def pinned(*addresses: str) -> Pinner:
    pinner = Pinner(_Answers(*addresses), SETTINGS)
    await pinner.pin("site.test")
    return pinner


async def test_connections_go_to_the_first_ipv4_address_until_it_fails() -> None:
    pinner = await pinned("2001:db8::1", "192.0.2.7", "192.0.2.9")

    assert await pinner.pin("site.test") == "192.0.2.7"
    assert await pinner.pin("SITE.test", 443) == "192.0.2.7"
    assert pinner.address_for("site.test", 80) == "192.0.2.7"
    assert pinner.address_for("other.test") is None


@pytest.mark.parametrize("timed_out", [False, True], ids=["refused", "timed-out"])
async def test_a_port_whose_address_does_not_connect_moves_to_the_next_one(timed_out: bool) -> None:
    pinner = await pinned("192.0.2.7", "192.0.2.9", "2001:db8::1")

    assert pinner.failed("site.test", 443, "192.0.2.7", timed_out=timed_out) == "192.0.2.9"
    assert pinner.failed("site.test", 443, "192.0.2.9", timed_out=timed_out) == "2001:db8::1"  # then IPv6
    assert pinner.failed("site.test", 443, "2001:db8::1", timed_out=timed_out) is None  # none left
    # The other ports keep their own address
    assert await pinner.pin("site.test", 443) == "2001:db8::1"
    assert await pinner.pin("site.test", 80) == "192.0.2.7"


async def test_connections_that_failed_at_once_move_on_once() -> None:
    # Given three connections to the first address, all refused (the page, the TLS handshake, a probe)
    pinner = await pinned("192.0.2.7", "192.0.2.9", "192.0.2.11")

    # When each says so, the port moves to the second address once, and each is sent there
    answers = [pinner.failed("site.test", 443, "192.0.2.7", timed_out=False) for _ in range(3)]

    assert answers == ["192.0.2.9"] * 3
    assert pinner.address_for("site.test", 443) == "192.0.2.9"


async def test_once_an_address_has_connected_the_port_stays_on_it() -> None:
    pinner = await pinned("192.0.2.7", "192.0.2.9")
    pinner.connected("site.test", 443, "192.0.2.7")

    assert pinner.failed("site.test", 443, "192.0.2.7", timed_out=False) is None
    assert pinner.failed("site.test", 443, "192.0.2.7", timed_out=True) is None
    assert pinner.address_for("site.test", 443) == "192.0.2.7"


async def test_a_timeout_at_an_address_up_on_another_port_stays_failed_a_refusal_moves_on() -> None:
    # Given the first address took a connection on 443
    pinner = await pinned("192.0.2.7", "192.0.2.9")
    pinner.connected("site.test", 443, "192.0.2.7")

    # Port 80 timing out there is a filtered port: the next address would most likely time out too
    assert pinner.failed("site.test", 80, "192.0.2.7", timed_out=True) is None
    # Port 8080 refused there moves on, as a browser does
    assert pinner.failed("site.test", 8080, "192.0.2.7", timed_out=False) == "192.0.2.9"


async def test_a_connection_that_failed_after_another_moved_on_is_sent_where_that_one_settled() -> None:
    pinner = await pinned("192.0.2.7", "192.0.2.9")
    assert pinner.failed("site.test", 443, "192.0.2.7", timed_out=True) == "192.0.2.9"
    pinner.connected("site.test", 443, "192.0.2.9")

    assert pinner.failed("site.test", 443, "192.0.2.7", timed_out=True) == "192.0.2.9"


async def test_at_most_max_addresses_are_tried_for_one_port() -> None:
    addresses = [f"192.0.2.{n}" for n in range(1, 11)]
    pinner = await pinned(*addresses)

    tried = [addresses[0]]
    while (following := pinner.failed("site.test", 443, tried[-1], timed_out=False)) is not None:
        tried.append(following)

    assert tried == addresses[:MAX_ADDRESSES_TRIED]


async def test_an_ip_literal_has_one_address_and_nowhere_to_move() -> None:
    pinner = Pinner(_Answers(), SETTINGS)

    assert await pinner.pin("127.0.0.9", 443) == "127.0.0.9"
    assert pinner.failed("127.0.0.9", 443, "127.0.0.9", timed_out=False) is None
