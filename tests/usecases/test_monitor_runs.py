"""How a monitor run ends when things go wrong (issue 17): a scan that raises, a worker that dies mid-run,
a subscription that ends, a monitor deleted with a run queued. The clock is injected (FrozenClock); the
database is the real SQLite of tests/db_fixtures.py."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from tests import db_fixtures
from tests.api.fakes import NOON, FakeScanner, FrozenClock
from tests.usecases.test_monitors import _runs, _runtime, _sub, _tick_and_run
from websec_app.settings import Settings
from websec_app.store import Database, monthly_scans_used
from websec_app.store.monitors import MAX_RUN_ATTEMPTS, RUN_CLAIM_SECONDS
from websec_app.usecases import monitors as monitor_cases

database = db_fixtures.database


class Killed(BaseException):
    """The worker stopped in the middle of the scan (not an exception the run could handle)."""


class BuggyScanner(FakeScanner):
    """A scanner with a bug on this site: it raises something other than ScanError."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    async def __call__(self, url: str, settings: Any) -> Any:
        self.calls.append(url)
        raise self.error


def _used(database: Database, subscription_id: int, clock: FrozenClock) -> int:
    with database.session() as session:
        return monthly_scans_used(session, subscription_id, clock())


async def test_a_scan_raising_a_bug_ends_the_run_failed_with_its_unit_given_back(
    database: Database, tmp_path: Path
) -> None:
    clock, scanner = FrozenClock(NOON), BuggyScanner(RuntimeError("scanner bug"))
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://buggy.example", "daily")

    # When the run's scan raises a RuntimeError
    assert await _tick_and_run(runtime) == ["failed"]
    # Then the run ended failed, the month's unit is back, and the run is not handed out again
    [run] = _runs(database)
    assert run.status == "failed" and run.attempts == 1 and run.error == "the scan failed (RuntimeError)"
    assert _used(database, owner.subscription_id, clock) == 0
    for _ in range(3):
        clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
        assert await _tick_and_run(runtime) == []
    assert len(scanner.calls) == 1


async def test_a_run_whose_worker_keeps_dying_is_given_up_after_its_attempts(
    database: Database, tmp_path: Path
) -> None:
    clock, scanner = FrozenClock(NOON), BuggyScanner(Killed())
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://killer.example", "daily")

    # Given a run whose scan kills its worker each time
    for _ in range(MAX_RUN_ATTEMPTS):
        try:
            await _tick_and_run(runtime)
        except Killed:
            pass
        clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    assert len(scanner.calls) == MAX_RUN_ATTEMPTS

    # When the next ticks come, the run is not claimed again: it ends failed, its unit given back
    for _ in range(3):
        assert await _tick_and_run(runtime) == []
        clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    [run] = _runs(database)
    assert run.status == "failed" and run.attempts == MAX_RUN_ATTEMPTS
    assert len(scanner.calls) == MAX_RUN_ATTEMPTS
    assert _used(database, owner.subscription_id, clock) == 0
    # and the monitor's next day runs as usual
    clock.set(NOON + timedelta(days=1, minutes=1))
    scanner.error = RuntimeError("still a bug")
    assert await _tick_and_run(runtime) == ["failed"]


def _outbox(database: Database) -> list[Any]:
    from sqlmodel import select

    from websec_app.store.models import OutboxEmail

    with database.session() as session:
        return list(session.exec(select(OutboxEmail)))


async def test_monitors_stop_when_the_subscription_is_cancelled_and_a_scheduled_run_is_skipped(
    database: Database, tmp_path: Path
) -> None:
    from websec_app.store.keys import set_subscription_status

    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://site.example", "daily")
    assert await _tick_and_run(runtime) == ["done"]

    # Given a run scheduled (queued, not run yet) on day 2, and the subscription cancelled before it runs
    clock.set(NOON + timedelta(days=1, minutes=1))

    async def dropped(run_id: int) -> None:
        return None

    [queued] = await monitor_cases.tick(runtime, dropped)
    with database.session() as session:
        set_subscription_status(session, owner.subscription_id, "cancelled", clock())

    # When the queued run is handed out, and the following days pass
    assert await monitor_cases.execute_run(runtime, queued) is None
    for day in range(2, 6):
        clock.set(NOON + timedelta(days=day, minutes=1))
        assert await _tick_and_run(runtime) == []

    # Then nothing was scanned after the cancellation, no unit taken, no alert; the queued run ended skipped
    assert len(scanner.calls) == 1
    assert _used(database, owner.subscription_id, clock) == 1
    assert _outbox(database) == []
    runs = _runs(database)
    assert [r.status for r in runs] == ["done", "skipped"]
    assert runs[1].report_id is None and runs[1].alerts == []

    # and when the subscription is active again, the monitor runs again (one catch-up run)
    with database.session() as session:
        set_subscription_status(session, owner.subscription_id, "active", clock())
    assert await _tick_and_run(runtime) == ["done"]


async def test_monitors_stop_when_the_subscriptions_key_is_revoked_but_not_when_it_is_rotated(
    database: Database, tmp_path: Path
) -> None:
    from websec_app.store.keys import revoke_api_key, rotate_api_key

    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://site.example", "daily")
    assert await _tick_and_run(runtime) == ["done"]

    # A rotated key (support regenerated it) keeps the subscription's monitors running
    with database.session() as session:
        rotated = rotate_api_key(session, owner.subscription_id, clock())
    clock.set(NOON + timedelta(days=1, minutes=1))
    assert await _tick_and_run(runtime) == ["done"]

    # A subscription whose key is revoked (and none issued) has its monitors stopped
    with database.session() as session:
        assert revoke_api_key(session, rotated.key, clock())
    for day in range(2, 5):
        clock.set(NOON + timedelta(days=day, minutes=1))
        assert await _tick_and_run(runtime) == []
    assert len(scanner.calls) == 2
    assert _used(database, owner.subscription_id, clock) == 2


async def test_a_deleted_monitors_scheduled_run_does_not_run(database: Database, tmp_path: Path) -> None:
    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    view = await monitor_cases.add(runtime, owner, "https://site.example", "daily")

    # Given a run scheduled but not run yet (a queue backlog, a process restart)
    async def dropped(run_id: int) -> None:
        return None

    [queued] = await monitor_cases.tick(runtime, dropped)
    # When the owner deletes the monitor, and the run is handed out (by its task, and again by the next tick)
    assert await monitor_cases.remove(runtime, owner, view.id)
    assert await monitor_cases.execute_run(runtime, queued) is None
    clock.advance(minutes=1)
    assert await _tick_and_run(runtime) == []

    # Then nothing was scanned, no unit taken, and the run ended skipped
    assert scanner.calls == []
    assert _used(database, owner.subscription_id, clock) == 0
    [run] = _runs(database)
    assert run.status == "skipped" and run.error == "the monitor was deleted"


class ScriptedScanner(FakeScanner):
    """Each call takes the next outcome: None scans the site, an exception is raised (ScanError, a scanner bug,
    or the worker's death)."""

    def __init__(self, outcomes: list[BaseException | None]) -> None:
        super().__init__()
        self.outcomes = outcomes

    async def __call__(self, url: str, settings: Any) -> Any:
        outcome = self.outcomes.pop(0)
        if outcome is None:
            return await super().__call__(url, settings)
        self.calls.append(url)
        raise outcome


async def test_only_unreachable_runs_in_a_row_alert_a_failed_run_breaks_the_row(
    database: Database, tmp_path: Path
) -> None:
    from websec_app.scanner import TargetRefused, TargetUnreachable

    down = TargetUnreachable("Could not connect to site.example: connection refused.")
    refused = TargetRefused("site.example resolves to a private address (10.0.0.5); it is not scanned.")
    scanner = ScriptedScanner(
        [None, refused, down, RuntimeError("scanner bug"), down, *[Killed()] * MAX_RUN_ATTEMPTS, down, down]
    )
    clock = FrozenClock(NOON)
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://site.example", "daily")

    # Given runs that end done, failed (refused), unreachable, failed (a scanner bug), unreachable, failed
    # (its worker stopped each time), then unreachable twice
    statuses: list[str | None] = []
    for day in range(8):
        clock.set(NOON + timedelta(days=day, minutes=1))
        try:
            statuses += await _tick_and_run(runtime)
        except Killed:
            for _ in range(MAX_RUN_ATTEMPTS):  # handed out again until its attempts are spent, then ended
                clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
                try:
                    statuses += await _tick_and_run(runtime)
                except Killed:
                    pass
    assert statuses == ["done", "failed", "unreachable", "failed", "unreachable", "unreachable", "unreachable"]
    runs = _runs(database)
    assert [r.status for r in runs] == [*statuses[:5], "failed", *statuses[5:]]

    # Then only the last run alerts: it is the only second unreachable run in a row (docs/api.md), a failed run
    # between two unreachable ones is not one that could not reach the site
    assert [r.alerts for r in runs][:-1] == [[]] * 7
    assert runs[-1].alerts == [
        "The site could not be reached in 2 runs in a row: Could not connect to site.example: connection refused."
    ]
    assert len(_outbox(database)) == 1
