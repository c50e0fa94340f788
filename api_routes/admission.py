"""Backpressure for the scan endpoints: a bounded number of scans in flight per process, a bounded FIFO queue.

A scan holds sockets, a DNS resolver and a few MB of parsed page for up to `WEBSEC_SCAN_TIMEOUT` seconds.
Without a bound, a burst of requests starts them all at once: memory grows with the burst, every scan
slows down together, and the slowest hit their timeouts (502) or the process runs out of file descriptors.
So each process runs at most `WEBSEC_MAX_CONCURRENT_SCANS` scans; the next `WEBSEC_SCAN_QUEUE` requests
wait in arrival order (first come, first served: a slot freed by a finished scan is handed to the oldest
waiter, never to a newcomer); anything beyond that is refused at once with 503 and `Retry-After`
(RFC 9110 section 15.6.4, section 10.2.3), before any quota unit or token is touched.

The bound is per process on purpose: it protects the process's own memory and event loop. Several
processes behind a load balancer each admit their own share; quotas stay exact because they live in the
database (see `websec_app/store/quotas.py`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .errors import ApiError

#: Seconds a refused client is told to wait: long enough for a few scans to finish, short enough to retry soon.
RETRY_AFTER_SECONDS = 5

OVERLOADED_MESSAGE = (
    "The scanner is at capacity right now and your request was not queued; nothing was counted against "
    "your quota. Please retry in a few seconds (see Retry-After)."
)


class Overloaded(ApiError):
    """503: both the scan slots and the wait queue of this process are full."""

    def __init__(self) -> None:
        super().__init__(503, OVERLOADED_MESSAGE, {"Retry-After": str(RETRY_AFTER_SECONDS)})


class ScanAdmission:
    """At most `limit` holders at once, at most `queue` waiting in FIFO order; past that, `Overloaded`.

    Used from one event loop (one per serving process). asyncio.Semaphore is not used because it does
    not bound its waiters and, before Python 3.11.x fixes, could let a newcomer overtake a woken waiter.
    """

    def __init__(self, limit: int, queue: int) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if queue < 0:
            raise ValueError("queue must not be negative")
        self.limit = limit
        self.queue = queue
        self._active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        #: Requests refused with 503 since start (the load bench and operators read it).
        self.refused = 0

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return sum(1 for waiter in self._waiters if not waiter.done())

    async def acquire(self) -> None:
        if self._active < self.limit and not self._waiters:
            self._active += 1
            return
        if len(self._waiters) >= self.queue:
            self.refused += 1
            raise Overloaded()
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # The slot was handed over just as the client went away: pass it on.
                self.release()
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Hand the slot to the oldest live waiter (the active count stays), or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._active -= 1

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()


__all__ = ["OVERLOADED_MESSAGE", "RETRY_AFTER_SECONDS", "Overloaded", "ScanAdmission"]
