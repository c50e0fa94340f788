"""The one clock of the test suite.

Every date a test makes or checks comes from here: the test PKI's certificates, signed DNS zones,
security.txt expiry, tokens, subscriptions, months and the scanner's "now". In-process code gets it
through `scan_settings` (its `clock_start`) or an explicit `clock=`/`now=`; server processes a test
starts get `WEBSEC_CLOCK_START` (the `scan_env` fixture). Nothing reads the real date, so the suite
gives the same answers on any day, and under `faketime` a year either way (`make test-clock`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

#: "Now" for the whole suite: a Sunday at noon, away from any month or year boundary.
TEST_NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_clock() -> datetime:
    """A clock that always reads TEST_NOW (for code that takes `clock=`)."""
    return TEST_NOW


test_clock.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


def real_clock_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a third-party server a test starts (Redis), without libfaketime.

    `make test-clock` runs the suite under `faketime`, whose preload every child inherits; the shifted
    clock is there to prove that *our* code reads no real date, and Redis's event loop stalls under it."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if k != "LD_PRELOAD" and not k.startswith("FAKETIME")}


class MachineClockAt:
    """A machine's clock for the code that takes one (websec_app.clock.MachineClock), read by every process a
    test runs on that machine: `now` starts at `start`; `advance` is time going by (both clocks), `step` a
    step of the system clock (a laptop resumed, NTP setting the time), which moves `now` only."""

    def __init__(self, start: datetime) -> None:
        self._now = start
        self._monotonic = 1000.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, *, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds

    def step(self, *, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
