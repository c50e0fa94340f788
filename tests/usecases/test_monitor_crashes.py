"""A monitor run whose worker dies after keeping its report still alerts, once in the history (issue 17:
alerts are "never lost when a process restarts").

The worker's death is simulated by raising at the exact point (after the report is kept, before the alert;
after the alert, before the run's end); the run is then handed out again by a later tick, as after a real
crash (RUN_CLAIM_SECONDS). On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from tests import db_fixtures
from tests.api.fakes import NOON, FakeScanner, FrozenClock, make_report
from tests.usecases.test_monitors import _tick_and_run
from websec_app.jobs import callbacks
from websec_app.runtime import build_runtime
from websec_app.scanner import ScanReport
from websec_app.settings import Settings
from websec_app.store import Database, create_subscription, issue_api_key, monthly_scans_used
from websec_app.store.models import OutboxEmail, ScanRecord
from websec_app.store.monitors import RUN_CLAIM_SECONDS, RUN_DONE, MonitorRun
from websec_app.usecases import Subscriber, authenticate
from websec_app.usecases import monitors as monitor_cases
from websec_app.usecases.runtime import Runtime

any_database = db_fixtures.any_database
HOOK = "https://hooks.example/monitor"


class WorkerKilled(BaseException):
    """Stands in for SIGKILL: nothing after the point it is raised at runs."""


class GradedScanner(FakeScanner):
    grade: tuple[str, int] = ("C", 64)

    async def __call__(self, url: str, settings: Settings) -> ScanReport:
        self.calls.append(url)
        return make_report(url, grade=self.grade[0], score=self.grade[1])


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(NOON)


@pytest.fixture
def scanner() -> GradedScanner:
    return GradedScanner()


@pytest.fixture
def posted(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The monitor's webhook receiver: takes every POST (204) and keeps its JSON."""
    received: list[dict[str, Any]] = []

    async def receiver(url: str, body: bytes, signature: str, settings: Settings) -> int:
        received.append(json.loads(body))
        return 204

    async def public(url: str, settings: Settings) -> tuple[str, str]:
        return "hooks.example", "203.0.113.80"

    monkeypatch.setattr(callbacks, "deliver", receiver)
    monkeypatch.setattr(callbacks, "checked_address", public)
    return received


@pytest.fixture
def runtime(any_database: Database, tmp_path: Path, clock: FrozenClock, scanner: GradedScanner) -> Iterator[Runtime]:
    settings = Settings(data_dir=tmp_path, callback_secret="server-secret", pro_scans_per_month=50, scan_workers=0)
    yield build_runtime(settings, database=any_database, scanner=scanner, clock=clock, bounded=False)


async def _monitored_site_that_regresses(runtime: Runtime, clock: FrozenClock, scanner: GradedScanner) -> Subscriber:
    """A monitor with a webhook, its baseline run done (grade C), and the next day's run due with the site
    down to F: that run must alert."""
    with runtime.database.session() as session:
        subscription = create_subscription(session, email="owner@example.com", now=NOON)
        assert subscription.id is not None
        issued = issue_api_key(session, subscription.id, NOON)
    owner = await authenticate(runtime, issued.key)
    await monitor_cases.add(runtime, owner, "https://site.example", "daily", callback_url=HOOK)
    assert await _tick_and_run(runtime) == [RUN_DONE]
    scanner.grade = ("F", 30)
    clock.set(NOON + timedelta(days=1, minutes=1))
    return owner


async def _killed(*args: Any, **kwargs: Any) -> None:
    raise WorkerKilled("the worker died after keeping the report, before its alert")


async def _kept_then_killed(runtime: Runtime, clock: FrozenClock, scanner: GradedScanner, patch: Any) -> Subscriber:
    """The owner of a C -> F run whose report was kept, its worker dead before the alert (`patch` keeps
    `_send_alert` raising until the caller's monkeypatch context ends)."""
    owner = await _monitored_site_that_regresses(runtime, clock, scanner)
    patch.setattr(monitor_cases, "_send_alert", _killed)
    with pytest.raises(WorkerKilled):
        await _tick_and_run(runtime)
    return owner


def _state(database: Database, owner: Subscriber) -> tuple[list[MonitorRun], int, list[str]]:
    with database.session() as session:
        runs = list(session.exec(select(MonitorRun).order_by(MonitorRun.due_at)))  # type: ignore[arg-type]
        emails = len(list(session.exec(select(OutboxEmail))))
        history = [
            r.grade for r in session.exec(select(ScanRecord).where(ScanRecord.subscription_id == owner.subscription_id))
        ]
    return runs, emails, history


async def test_a_run_killed_after_keeping_its_report_alerts_when_retried_without_a_second_scan(
    runtime: Runtime,
    any_database: Database,
    clock: FrozenClock,
    scanner: GradedScanner,
    posted: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a run that regressed to F, whose worker dies right after keeping the report, before the alert
    with monkeypatch.context() as patch:
        owner = await _kept_then_killed(runtime, clock, scanner, patch)

    # When a later tick hands the abandoned run out again
    clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then the alert went out (email and webhook) with the grade drop, from the one scan kept once
    runs, emails, history = _state(any_database, owner)
    assert emails == 1
    assert sorted(history) == ["C", "F"]
    assert len(scanner.calls) == 2
    assert runs[-1].status == RUN_DONE
    assert runs[-1].alerts == ["The grade dropped from C to F."]
    assert runs[-1].report_id is not None and runs[-1].previous_report_id == runs[0].report_id
    [alert] = posted
    assert alert["run_id"] == runs[-1].id
    assert alert["reasons"] == ["The grade dropped from C to F."]
    with any_database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, clock()) == 2


async def test_a_run_killed_after_its_alert_sends_it_again_with_the_same_run_id(
    runtime: Runtime,
    any_database: Database,
    clock: FrozenClock,
    scanner: GradedScanner,
    posted: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a run whose worker dies after its alert went out, before the run was ended
    owner = await _monitored_site_that_regresses(runtime, clock, scanner)
    send = monitor_cases._send_alert

    async def sent_then_killed(*args: Any, **kwargs: Any) -> None:
        await send(*args, **kwargs)
        raise WorkerKilled("the worker died after the alert")

    with monkeypatch.context() as patch:
        patch.setattr(monitor_cases, "_send_alert", sent_then_killed)
        with pytest.raises(WorkerKilled):
            await _tick_and_run(runtime)

    # When the run is retried
    clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then the email is not queued twice (its dedupe key is the run), and the webhook, sent again (at least
    # once), carries the same run_id for its receiver to deduplicate; the history has the run once
    runs, emails, history = _state(any_database, owner)
    assert emails == 1
    assert sorted(history) == ["C", "F"]
    assert [p["run_id"] for p in posted] == [runs[-1].id, runs[-1].id]
    assert posted[0] == posted[1]


async def test_a_run_killed_between_taking_its_unit_and_recording_it_uses_one_unit_when_retried(
    runtime: Runtime,
    any_database: Database,
    clock: FrozenClock,
    scanner: GradedScanner,
    posted: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a run whose worker dies once it has taken the month's unit, before the run records it
    owner = await _monitored_site_that_regresses(runtime, clock, scanner)

    def unit_taken_then_killed(*args: Any, **kwargs: Any) -> None:
        raise WorkerKilled("the worker died between taking the unit and recording it on the run")

    with monkeypatch.context() as patch:
        patch.setattr(monitor_cases, "keep_reservation", unit_taken_then_killed)
        with pytest.raises(WorkerKilled):
            await _tick_and_run(runtime)

    # When a later tick hands the abandoned run out again
    clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then the run scanned once and used one unit: the dead attempt's unit was never committed without the run
    # that holds it (store/quotas.py)
    runs, _, history = _state(any_database, owner)
    assert sorted(history) == ["C", "F"] and len(scanner.calls) == 2
    assert runs[-1].reservation is not None and runs[-1].reservation["used"] == 2
    with any_database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, clock()) == 2
