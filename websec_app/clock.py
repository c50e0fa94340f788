"""The service's clock: one function that says what time it is, handed to everything that asks.

Production reads the system clock. `WEBSEC_CLOCK_START` (development and tests only; refused in
production) starts the clock at a chosen instant when the process first reads it, and it runs on
at the real rate from there. A test that makes certificates, tokens or subscriptions at its own
fixed "now" can then start a real server process (CLI, serve-api, `make run`) that agrees with it
on any calendar date, so no test depends on the day it runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .settings import Settings

#: What time it is now, timezone-aware UTC.
Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


class StartedClock:
    """A clock that read `start` when it was made and has run at the real (monotonic) rate since."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("a clock starts at a timezone-aware instant")
        self.start = start.astimezone(UTC)
        self._origin = time.monotonic()

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=time.monotonic() - self._origin)

    def __repr__(self) -> str:
        return f"StartedClock(start={self.start.isoformat()})"


class MachineClock(Protocol):
    """This machine's own time, kept apart from the service's clock: what processes sharing a machine measure
    between them (an embedded queue's lease, websec_app/jobs/engine.py). `now` is the system clock, which
    every process on the machine reads alike (the service's clock does not: WEBSEC_CLOCK_START starts it
    when each process starts); `monotonic` is moved by no step of the system clock, so that a step (a
    suspended laptop or VM resumed, NTP setting the time) can be told from time going by."""

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class SystemMachineClock:
    """The machine's clock (MachineClock) in production: the system clock and the monotonic clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


@lru_cache(maxsize=4)
def _started_at(start: datetime) -> StartedClock:
    # One per process and start instant, so every part of a process reads the same running clock.
    return StartedClock(start)


def clock_for(settings: Settings) -> Clock:
    """The clock the settings ask for: the system clock unless WEBSEC_CLOCK_START is set."""
    return _started_at(settings.clock_start) if settings.clock_start is not None else system_clock
