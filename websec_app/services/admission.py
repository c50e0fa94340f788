"""Backpressure for scans: a bounded number of scans in flight per process, a bounded FIFO queue.

A scan holds sockets, a DNS resolver and a few MB of parsed page for up to `WEBSEC_SCAN_TIMEOUT` seconds.
Without a bound, a burst of requests starts them all at once: memory grows with the burst, every scan
slows down together, and the slowest hit their timeouts or the process runs out of file descriptors.
So each process runs at most `WEBSEC_MAX_CONCURRENT_SCANS` scans; the next `WEBSEC_SCAN_QUEUE` callers
wait in arrival order (first come, first served: a slot freed by a finished scan is handed to the oldest
waiter, never to a newcomer); anything beyond that is refused at once with `ScannerBusy`, before any
quota unit or token is touched. The API answers it with 503 and `Retry-After` (RFC 9110 section 15.6.4,
section 10.2.3; api_routes/errors.py), the web UI with "the scanner is busy" (ui/messages.py).

The bound is per process on purpose: it protects the process's own memory and event loop. So the API and
the UI of one process draw from ONE `ScanAdmission`: the process's Runtime holds it (websec_app/usecases/runtime.py)
and both interfaces are handed that runtime. Several processes behind a load balancer each admit their own
share; quotas stay exact because they live in the database (see `websec_app/store/quotas.py`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import NoReturn

#: Seconds a refused caller is told to wait: long enough for a few scans to finish, short enough to retry soon.
RETRY_AFTER_SECONDS = 5


class ScannerBusy(Exception):
    """Every scan slot and every place in the wait queue of this process is taken; nothing was reserved."""

    http_status = 503

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"every scan slot and the wait queue are taken; retry in {retry_after} s")
        self.retry_after = retry_after


class ScanAdmission:
    """At most `limit` holders at once, at most `queue` waiting in FIFO order; past that, `ScannerBusy`.

    Built outside any event loop (the instance lives as long as the process) and bound to none: each
    waiter is a future of the loop running `acquire()` at that moment. It serves one loop at a time, as
    a serving process has; a waiter left behind by a loop that has since closed (one test's loop, say)
    is dropped instead of blocking the queue. asyncio.Semaphore is not used because it binds itself to
    the first loop that waits on it, does not bound its waiters and, before Python 3.11.x fixes, could
    let a newcomer overtake a woken waiter.
    """

    def __init__(self, limit: int, queue: int, retry_after: int = RETRY_AFTER_SECONDS) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if queue < 0:
            raise ValueError("queue must not be negative")
        self.limit = limit
        self.queue = queue
        self.retry_after = retry_after
        self._active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        #: Callers refused since start (the load bench and operators read it).
        self.refused = 0

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return sum(1 for waiter in self._waiters if _live(waiter))

    def place(self) -> Place:
        """Take a place in line now, without waiting: a slot if one is free, else the end of the queue;
        `ScannerBusy` when the queue is full too. `await place.turn()` waits for the slot; `place.leave()`
        gives back whichever it holds.

        For callers that must await something else (an API key lookup on PostgreSQL) between arriving and
        scanning: taking the place first keeps them in arrival order with callers that await nothing, who
        would otherwise overtake them all during a burst.
        """
        place = self.arrive()
        if place.refused:
            place._refuse()
        return place

    def arrive(self) -> Place:
        """As `place()`, but a full line is not refused yet: the place returned raises `ScannerBusy` when its
        turn is awaited, and holds nothing meanwhile. For callers that take their place on arrival but must
        answer what else is wrong with the request first (an unknown API key: 403; an invalid URL: 400).
        """
        self._drop_dead_waiters()
        if self._active < self.limit and not self._waiters:
            self._active += 1
            return Place(self, None)
        if len(self._waiters) >= self.queue:
            return Place(self, None, refused=True)
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return Place(self, waiter)

    async def acquire(self) -> None:
        """Take a slot now, or wait for one in arrival order; `ScannerBusy` when the queue is full too."""
        await self.place().turn()

    def release(self) -> None:
        """Hand the slot to the oldest live waiter (the active count stays), or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if _live(waiter):
                waiter.set_result(None)
                return
        self._active -= 1

    @asynccontextmanager
    async def slot(self, on_wait: Callable[[], None] | None = None) -> AsyncIterator[None]:
        """Hold a slot for the block; it is released however the block ends (error, cancellation).
        `on_wait` is called first when the caller has to queue for it (the UI shows "waiting")."""
        place = self.place()
        try:
            if on_wait is not None and not place.holds_slot:
                on_wait()
            await place.turn()
            yield
        finally:
            place.leave()

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        if waiter in self._waiters:
            self._waiters.remove(waiter)

    def _drop_dead_waiters(self) -> None:
        if any(not _live(waiter) for waiter in self._waiters):
            self._waiters = deque(waiter for waiter in self._waiters if _live(waiter))


class Place:
    """A caller's place in line (`ScanAdmission.place()`): a slot already, or a waiter in the queue; from
    `ScanAdmission.arrive()` also a refusal, told when its turn is awaited."""

    def __init__(self, admission: ScanAdmission, waiter: asyncio.Future[None] | None, *, refused: bool = False) -> None:
        self._admission = admission
        self._waiter = waiter
        self._holds_slot = waiter is None and not refused
        self._left = refused  # a refused place holds nothing to give back
        self.refused = refused

    def _refuse(self) -> NoReturn:
        """Raise the ScannerBusy of a place the full line refused (counted in `ScanAdmission.refused`)."""
        self._admission.refused += 1
        raise ScannerBusy(self._admission.retry_after)

    @property
    def holds_slot(self) -> bool:
        """Whether the slot is already this place's (no wait), or was handed over while it waited."""
        waiter = self._waiter
        return self._holds_slot or (waiter is not None and waiter.done() and not waiter.cancelled())

    async def turn(self) -> None:
        """Wait until this place holds a slot (at once if it already does); ScannerBusy for a refused place."""
        if self.refused:
            self._refuse()
        waiter = self._waiter
        if self._holds_slot or waiter is None:
            return
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # The slot was handed over just as the caller went away: pass it on.
                self._admission.release()
            else:
                self._admission._forget(waiter)
            self._left = True
            raise
        self._holds_slot = True

    def leave(self) -> None:
        """Give back the slot, or the place in the queue; a slot handed over meanwhile is passed on. Idempotent."""
        if self._left:
            return
        self._left = True
        waiter = self._waiter
        if self._holds_slot or (waiter is not None and waiter.done() and not waiter.cancelled()):
            self._admission.release()
        elif waiter is not None:
            waiter.cancel()
            self._admission._forget(waiter)


def _live(waiter: asyncio.Future[None]) -> bool:
    return not waiter.done() and not waiter.get_loop().is_closed()


__all__ = ["RETRY_AFTER_SECONDS", "Place", "ScanAdmission", "ScannerBusy"]
