"""A monitor run whose report was kept (`_keep`: the scan happened, it is in the history, its unit used) is
never ended as if it had not run (issue 17: alerts are "never lost when a process restarts").

Its worker dies after keeping the report, and then: the owner deletes the monitor, or the subscription is
cancelled, before the run is handed out again; or every retry dies too, until the run's attempts are spent.
The run ends done with its report_id, its unit stays used; its owed alert email is queued once when the
monitor is still there (no webhook from the tick), and not at all for a deleted monitor or an ended
subscription. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from tests.api.fakes import FrozenClock
from tests.usecases import test_monitor_crashes as crashes
from tests.usecases.test_monitor_crashes import GradedScanner, WorkerKilled, _kept_then_killed, _state
from tests.usecases.test_monitors import _tick_and_run
from websec_app.store import SUBSCRIPTION_CANCELLED, Database, monthly_scans_used, set_subscription_status
from websec_app.store.models import OutboxEmail
from websec_app.store.monitors import MAX_RUN_ATTEMPTS, RUN_CLAIM_SECONDS, RUN_DONE, Monitor, MonitorRun
from websec_app.usecases import Subscriber
from websec_app.usecases import monitors as monitor_cases
from websec_app.usecases.runtime import Runtime

DROP = "The grade dropped from C to F."
# the fixtures of the crash tests: a regressing site, its webhook receiver, on SQLite and PostgreSQL
any_database, clock, posted, runtime, scanner = (
    crashes.any_database,
    crashes.clock,
    crashes.posted,
    crashes.runtime,
    crashes.scanner,
)


def _kept_id(database: Database) -> str | None:
    with database.session() as session:
        return session.exec(select(MonitorRun).order_by(MonitorRun.due_at)).all()[-1].report_id  # type: ignore[arg-type]


def _used(database: Database, owner: Subscriber, clock: FrozenClock) -> int:
    with database.session() as session:
        return monthly_scans_used(session, owner.subscription_id, clock())


@pytest.mark.parametrize("ended", ["monitor deleted", "subscription cancelled"])
async def test_a_kept_run_claimed_after_its_monitor_or_subscription_ended_stays_done_with_its_report(
    ended: str,
    runtime: Runtime,
    any_database: Database,
    clock: FrozenClock,
    scanner: GradedScanner,
    posted: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a run that regressed to F and kept its report, its worker dead before the alert
    with monkeypatch.context() as patch:
        owner = await _kept_then_killed(runtime, clock, scanner, patch)
    kept = _kept_id(any_database)
    assert kept is not None and _used(any_database, owner, clock) == 2
    # and the owner deletes the monitor (or the subscription ends) before the run is handed out again
    if ended == "monitor deleted":
        with any_database.session() as session:
            monitor_id = session.exec(select(Monitor)).one().id
        assert monitor_id is not None and await monitor_cases.remove(runtime, owner, monitor_id)
    else:
        with any_database.session() as session:
            set_subscription_status(session, owner.subscription_id, SUBSCRIPTION_CANCELLED, clock())

    # When a later tick claims it
    clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    await _tick_and_run(runtime)

    # Then it is done with its kept report, the scan's unit still used, and no alert went to the owner who
    # stopped monitoring (nor to a subscription that ended): the run says so
    runs, emails, history = _state(any_database, owner)
    assert runs[-1].status == RUN_DONE and runs[-1].report_id == kept
    assert runs[-1].alerts == [DROP]
    assert "its alert was not sent" in (runs[-1].error or "")
    assert sorted(history) == ["C", "F"]
    assert _used(any_database, owner, clock) == 2
    assert emails == 0 and posted == []


async def test_a_kept_run_whose_retries_all_die_ends_done_and_its_alert_email_goes_once(
    runtime: Runtime,
    any_database: Database,
    clock: FrozenClock,
    scanner: GradedScanner,
    posted: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a run that kept its report, whose every retry dies before its alert, until its attempts are spent
    with monkeypatch.context() as patch:
        owner = await _kept_then_killed(runtime, clock, scanner, patch)
        for _ in range(MAX_RUN_ATTEMPTS - 1):
            clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
            with pytest.raises(WorkerKilled):
                await _tick_and_run(runtime)
    kept = _kept_id(any_database)
    assert kept is not None and len(scanner.calls) == 2

    # When the next ticks come (the run is not handed out again)
    for _ in range(2):
        clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
        assert await _tick_and_run(runtime) == []

    # Then it ended done with its report, its unit still used, and its alert email queued once (the tick
    # sends no webhook: the run says so)
    runs, _, history = _state(any_database, owner)
    assert runs[-1].status == RUN_DONE and runs[-1].report_id == kept
    assert runs[-1].attempts == MAX_RUN_ATTEMPTS and runs[-1].alerts == [DROP]
    assert "its alert email was queued (not its webhook)" in (runs[-1].error or "")
    assert sorted(history) == ["C", "F"]
    assert _used(any_database, owner, clock) == 2
    with any_database.session() as session:
        [email] = session.exec(select(OutboxEmail)).all()
    assert email.dedupe_key == f"monitor-run:{runs[-1].id}" and "C to F" in email.subject
    assert posted == [] and len(scanner.calls) == 2
