"""Every conformance suite fetches its cases through `fetched`: a few at a time, not all at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

#: Fetches a suite runs at once: enough to wait for the dropped lookups together, few enough for every answer
#: within _dns_world.DNS_SECONDS on a loaded machine (`make test` runs two test processes on two cores: a suite
#: fetching its hundred cases at once, each from a DNS server of its own, saw lookups time out).
FETCHES_AT_ONCE = 16

T = TypeVar("T")


async def fetched(fetches: Iterable[Callable[[], Awaitable[T]]], at_once: int = FETCHES_AT_ONCE) -> list[T]:
    """Each fetch's result, in order, at most `at_once` of them running at a time."""
    slots = asyncio.Semaphore(at_once)

    async def one(fetch: Callable[[], Awaitable[T]]) -> T:
        async with slots:
            return await fetch()

    return await asyncio.gather(*(one(fetch) for fetch in fetches))
