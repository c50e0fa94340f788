"""The engine embedded in `make run` (issue 16): one command, one process, SQLite, no server beside it.

`make run` is started as users start it, with private targets allowed for the fixture sites. A free scan,
a Pro scan and an async scan are answered by the scan workers running inside that process: nothing else is
running, the database is the SQLite file in WEBSEC_DATA_DIR, and its `scan_jobs` rows record each job done.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlmodel import select

from tests.clock import TEST_NOW
from tests.fixtures.ports import free_port
from tests.fixtures.processes import make_run
from tests.fixtures.sites import RunningSite
from websec_app.store import Database, create_subscription, issue_api_key
from websec_app.store.models import JOB_DONE, ScanJob
from websec_app.store.monitors import MonitorRun, add_monitor


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, scan_env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("embedded")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "REDIS_"))}
    env.update(scan_env)
    env["WEBSEC_MONITOR_TICK_SECONDS"] = "2"  # the periodic monitor tick, every 2 s instead of every minute
    with make_run(env, work, free_port()) as (base_url, _):
        yield base_url, work / "var" / "websec.db"


def test_make_run_runs_monitors_from_start_up_with_no_api_scan_before(
    made: tuple[str, Path], best_site: RunningSite
) -> None:
    # Given a monitor made before anything else reached the process (the web UI or the API would add it so)
    _, sqlite_file = made
    database = Database(f"sqlite:///{sqlite_file}")
    with database.session() as session:
        subscription = create_subscription(session, email="monitored@example.com", now=TEST_NOW)
        assert subscription.id is not None
        issued = issue_api_key(session, subscription.id, TEST_NOW)
        add_monitor(
            session,
            subscription_id=subscription.id,
            api_key_id=issued.key_id,
            url=best_site.url,
            interval="daily",
            callback_url=None,
            now=TEST_NOW,
        )
    # Then the process's periodic tick runs it (its workers started with the app, not at a first API scan)
    deadline = time.monotonic() + 90
    runs: list[MonitorRun] = []
    while time.monotonic() < deadline:
        with database.session() as session:
            runs = list(session.exec(select(MonitorRun)))
        if runs and runs[0].status != "queued" and runs[0].status != "running":
            break
        time.sleep(0.5)
    assert [run.status for run in runs] == ["done"], runs
    database.dispose()


def test_make_run_scans_as_jobs_in_its_one_process(made: tuple[str, Path], best_site: RunningSite) -> None:
    base, sqlite_file = made
    database = Database(f"sqlite:///{sqlite_file}")
    with database.session() as session:
        subscription = create_subscription(session, email="embedded@example.com", now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW).key

    free = httpx.post(f"{base}/api/scan", json={"url": best_site.url}, timeout=120)
    pro = httpx.post(f"{base}/api/scan/pro", json={"url": best_site.url}, headers={"X-API-Key": key}, timeout=120)
    queued = httpx.post(f"{base}/api/scans", json={"url": best_site.url}, headers={"X-API-Key": key}, timeout=60)

    assert free.status_code == 200 and free.json()["grade"] == "A+" and free.json()["pro_locked"] is True
    assert pro.status_code == 200 and pro.headers["X-Scans-Remaining"] == "49"
    assert queued.status_code == 202
    [job] = queued.json()["jobs"]
    deadline = time.monotonic() + 120
    while (status := httpx.get(f"{base}/api/scans/{job['id']}", headers={"X-API-Key": key}, timeout=30).json())[
        "status"
    ] not in ("done", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status["status"] == "done" and status["report"]["grade"] == "A+"
    with database.session() as session:
        jobs = session.exec(select(ScanJob)).all()
    assert sorted(job.kind for job in jobs) == ["free", "pro", "pro"]
    assert all(job.status == JOB_DONE and job.attempts == 1 for job in jobs)
    database.dispose()
