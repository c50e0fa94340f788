"""httpcore's locks, events and semaphores on asyncio's own, without anyio (issue 14).

httpcore 1.0 makes its pool's synchronisation primitives through anyio when it runs on asyncio
(`httpcore/_synchronization.py`): the first one loads anyio's asyncio backend, ~12 ms of imports in a
fresh process (a command-line scan is ~0.25 s), and every anyio lock acquisition adds a checkpoint, one
more turn of the event loop per request. Our network streams are asyncio's already
(`_asyncio_stream.py`), so nothing else of anyio is used by a scan.

`install()` gives that module asyncio's Lock, Event and BoundedSemaphore in anyio's place, `fail_after`
as a synchronous deadline (httpcore enters it with `with`), and a `CancelScope` whose shield does
nothing: httpcore shields only the closing of connections, and our streams close with
`transport.abort()`, which never suspends, so no cancellation can land inside it. The replacement is
process-wide: another async httpx client in the process (the callbacks' delivery, on httpcore's own anyio
streams) gets it too; there a close can suspend, and a cancellation landing in it ends in anyio's forceful
close of that socket instead of the shielded graceful one. anyio itself stays
imported (httpcore imports it, ~2 ms; its backend is the cost) and untouched for everything else in the
process. The replacement is made only for the httpcore versions it was written against
(tests/scanner/test_httpcore_asyncio.py fails when the installed one is not).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace, TracebackType

#: httpcore versions whose `_synchronization` module this was checked against.
SUPPORTED = ("1.0.",)


@contextmanager
def _fail_after(delay: float | None) -> Iterator[None]:
    """anyio.fail_after for a `with` block: TimeoutError when the block is still waiting after `delay`."""
    if delay is None:
        yield
        return
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - httpcore's async pool always runs in a task
        raise RuntimeError("fail_after needs a running task")
    fired = False

    def expire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    handle = task.get_loop().call_later(max(delay, 0.0), expire)
    try:
        yield
    except asyncio.CancelledError:
        if fired and task.uncancel() == 0:
            raise TimeoutError from None
        raise
    finally:
        handle.cancel()


class _CancelScope:
    """anyio.CancelScope(shield=True) as httpcore uses it: around closes that never suspend (see above)."""

    def __init__(self, *, shield: bool = False) -> None:
        self.shield = shield

    def __enter__(self) -> _CancelScope:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


def _semaphore(initial_value: int, *, max_value: int | None = None) -> asyncio.BoundedSemaphore:
    return asyncio.BoundedSemaphore(initial_value if max_value is None else min(initial_value, max_value))


ASYNCIO_PRIMITIVES = SimpleNamespace(
    Lock=asyncio.Lock,
    Event=asyncio.Event,
    Semaphore=_semaphore,
    CancelScope=_CancelScope,
    fail_after=_fail_after,
)


def install() -> bool:
    """Give httpcore's synchronisation module asyncio's primitives; False, with httpcore left as it is,
    for a version this was not written against."""
    import httpcore
    from httpcore import _synchronization

    if not httpcore.__version__.startswith(SUPPORTED) or getattr(_synchronization, "anyio", None) is None:
        return False
    setattr(_synchronization, "anyio", ASYNCIO_PRIMITIVES)  # noqa: B010 - a private module global, untyped
    return True


INSTALLED = install()
