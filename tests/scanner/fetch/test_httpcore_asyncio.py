"""httpcore's pool synchronises on asyncio's own primitives (scanner/fetch/_httpcore_asyncio.py), with the
behaviour it had through anyio: pool timeouts, cancellation and semaphore bounds."""

from __future__ import annotations

import asyncio

import httpcore
import pytest
from httpcore import _synchronization

from websec_app.scanner.fetch import _httpcore_asyncio


def test_the_installed_httpcore_gets_asyncio_primitives() -> None:
    # A new httpcore fails here until someone has checked _synchronization.py against the replacement.
    assert httpcore.__version__.startswith(_httpcore_asyncio.SUPPORTED)
    assert _httpcore_asyncio.INSTALLED
    assert getattr(_synchronization, "anyio") is _httpcore_asyncio.ASYNCIO_PRIMITIVES  # noqa: B009 - untyped global


async def test_waiting_for_a_connection_past_the_pool_timeout_raises_pool_timeout() -> None:
    # Given an event nobody sets (a pool with no free connection)
    event = _synchronization.AsyncEvent()

    # Then waiting for it with a timeout ends in httpcore's PoolTimeout, as through anyio
    with pytest.raises(httpcore.PoolTimeout):
        await event.wait(timeout=0.01)


async def test_a_set_event_ends_the_wait_and_leaves_no_deadline_behind() -> None:
    event = _synchronization.AsyncEvent()
    asyncio.get_running_loop().call_soon(event.set)

    await event.wait(timeout=0.05)
    await asyncio.sleep(0.1)  # the cancelled deadline does not fire into the task afterwards

    assert asyncio.current_task() is not None and asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    # Given a wait with a long timeout
    event = _synchronization.AsyncEvent()
    waiting = asyncio.ensure_future(event.wait(timeout=30))
    await asyncio.sleep(0)

    # When the task is cancelled before the deadline
    waiting.cancel()

    # Then it is cancelled, not timed out
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_the_semaphore_keeps_its_bound() -> None:
    semaphore = _synchronization.AsyncSemaphore(bound=1)
    await semaphore.acquire()
    second = asyncio.ensure_future(semaphore.acquire())
    await asyncio.sleep(0)
    assert not second.done()  # the one place is taken

    await semaphore.release()
    await asyncio.wait_for(second, 1)
    await semaphore.release()
    with pytest.raises(ValueError):
        await semaphore.release()  # released more often than acquired


async def test_the_lock_excludes() -> None:
    lock = _synchronization.AsyncLock()
    order: list[str] = []

    async def hold(name: str) -> None:
        async with lock:
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(hold("a"), hold("b"))

    assert order == ["a in", "a out", "b in", "b out"]
