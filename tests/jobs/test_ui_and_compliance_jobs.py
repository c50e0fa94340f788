"""The web UI's scans and the compliance report as jobs (issue 16): a web process that only queues
(WEBSEC_SCAN_WORKERS=0) and a real `python -m websec_app worker` process on one PostgreSQL database.

The web process here is this test's own runtime, built as the app builds it (`build_runtime`), calling the
use cases the UI's state calls (`usecases.jobs.free_scan(..., keep=True)` and its kin,
`usecases.purchases.compliance_report`). Every scan below must have been run by the worker process: its log
names each job it ends, and the web runtime has no worker of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlmodel import col, func, select

from tests.clock import TEST_NOW
from tests.fixtures.ports import free_port
from tests.fixtures.sites import RunningSite
from tests.jobs.cluster import Cluster
from websec_app.runtime import build_runtime
from websec_app.scanner import TargetUnreachable
from websec_app.settings import Settings
from websec_app.store import (
    Database,
    create_subscription,
    find_compliance_token,
    issue_api_key,
    issue_compliance_token,
    issue_scan_token,
    mark_compliance_token_paid,
    monthly_scans_used,
)
from websec_app.store.models import (
    JOB_DONE,
    JOB_FAILED,
    OutboxEmail,
    ScanJob,
    ScanRecord,
    ScanToken,
    StoredReport,
)
from websec_app.store.quotas import free_scans_used
from websec_app.store.scan_jobs import KEPT_REPORT
from websec_app.ui import messages
from websec_app.usecases import authenticate, jobs, purchases, scans
from websec_app.usecases.runtime import Runtime

pytestmark = pytest.mark.postgres

CLIENT = "198.51.100.7"


@pytest.fixture
def web(scan_settings: Settings, shared_database: Database, tmp_path: Path) -> Iterator[Runtime]:
    """The web process's runtime: the app's, with no scan worker of its own."""
    settings = scan_settings.with_overrides(data_dir=tmp_path / "web", scan_workers=0)
    runtime = build_runtime(settings, database=shared_database, clock=lambda: TEST_NOW)
    assert runtime.jobs is not None and runtime.jobs.in_process_workers == 0
    yield runtime


@pytest.fixture
def worker(cluster: Cluster) -> Cluster:
    cluster.start_worker(concurrency=2)
    return cluster


def _job(database: Database, kind: str) -> ScanJob:
    with database.session() as session:
        rows = list(session.exec(select(ScanJob).where(col(ScanJob.kind) == kind)).all())
    assert len(rows) == 1, rows
    return rows[0]


def _count(database: Database, model: type[ScanRecord] | type[StoredReport] | type[OutboxEmail]) -> int:
    with database.session() as session:
        return int(session.exec(select(func.count()).select_from(model)).one())


async def _logged_by_the_worker(cluster: Cluster, line: str) -> None:
    """The worker logs a job's end just after committing it: give the line a moment to arrive."""
    for _ in range(100):
        if line in cluster.log("worker-0"):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{line!r} not in the worker's log:\n{cluster.tail('worker-0')}")


async def _scanned_by_the_worker(cluster: Cluster, job: ScanJob) -> None:
    assert job.status == JOB_DONE and job.attempts == 1
    await _logged_by_the_worker(cluster, f"scan job {job.id} done")


async def test_a_free_scan_from_the_ui_is_run_by_the_worker_and_keeps_its_report_link(
    web: Runtime, worker: Cluster, shared_database: Database, best_site: RunningSite
) -> None:
    # When the scan form's use case runs a free scan on a web process that only queues
    steps: list[str] = []
    scanned = await jobs.free_scan(web, best_site.url, CLIENT, keep=True, progress=steps.append)

    # Then the worker scanned it, and the page is shown the free body ...
    job = _job(shared_database, "free")
    await _scanned_by_the_worker(worker, job)
    assert scanned.body["grade"] == "A+" and scanned.body["url"] == job.url
    # ... its shareable /report/<id> link shows that same body, kept once with the job's end
    assert scanned.report_id and job.options[KEPT_REPORT] == scanned.report_id
    assert await scans.load_report(web, scanned.report_id) == scanned.body
    assert _count(shared_database, StoredReport) == 1 and _count(shared_database, ScanRecord) == 1
    # ... one unit of the day was used
    with shared_database.session() as session:
        assert free_scans_used(session, CLIENT, TEST_NOW) == 1
    # ... and the step indicator went through the steps in order, ending with the report kept
    told = [step for step in steps if step != scans.WAITING]
    assert told[0] == "quota" and told[-1] == "save" and "fetch" in told
    assert told == sorted(told, key=scans.STEPS.index)


async def test_a_pro_scan_from_the_dashboard_is_run_by_the_worker_and_counted_once(
    web: Runtime, worker: Cluster, shared_database: Database, best_site: RunningSite
) -> None:
    with shared_database.session() as session:
        subscription = create_subscription(session, email="pro@example.com", now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW)
    account = await authenticate(web, key.key)

    scanned = await jobs.pro_scan(web, account, best_site.url, keep=True, progress=lambda step: None)

    await _scanned_by_the_worker(worker, _job(shared_database, "pro"))
    assert scanned.remaining == 49 and "fix" in str(scanned.body)
    assert await scans.load_report(web, scanned.report_id) == scanned.body
    with shared_database.session() as session:
        assert monthly_scans_used(session, key.subscription_id, TEST_NOW) == 1
    # The subscriber's history and the page's link are the same kept report: not two
    assert _count(shared_database, StoredReport) == 1 and _count(shared_database, ScanRecord) == 1


async def test_a_token_scan_of_an_unreachable_site_fails_as_itself_and_gives_the_token_back(
    web: Runtime, worker: Cluster, shared_database: Database
) -> None:
    with shared_database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=TEST_NOW)
    nobody = f"https://127.0.0.1:{free_port()}/"

    # When the worker cannot reach the site
    with pytest.raises(TargetUnreachable) as failed:
        await jobs.token_scan(web, nobody, token.token, keep=True, progress=lambda step: None)

    # Then the page words it as the scanner's own error (not a generic failure), and the token is unused
    assert messages.describe(failed.value, TEST_NOW).kind == "unreachable"
    job = _job(shared_database, "one_time")
    assert job.status == JOB_FAILED and job.error_status == 502
    await _logged_by_the_worker(worker, f"scan job {job.id} failed")
    with shared_database.session() as session:
        row = session.get(ScanToken, token.token_id)
        assert row is not None and row.used_at is None
    assert _count(shared_database, StoredReport) == 0


async def test_a_compliance_report_is_scanned_by_the_worker_and_uses_its_token_once(
    web: Runtime, worker: Cluster, shared_database: Database, best_site: RunningSite
) -> None:
    with shared_database.session() as session:
        paid = issue_compliance_token(
            session, provider="stripe", email="buyer@example.com", url=best_site.url, now=TEST_NOW
        )
        mark_compliance_token_paid(session, paid.token_id, TEST_NOW)
        unreachable = issue_compliance_token(
            session, provider="stripe", email="buyer@example.com", url=best_site.url, now=TEST_NOW
        )
        mark_compliance_token_paid(session, unreachable.token_id, TEST_NOW)

    # A scan that fails in the worker gives the compliance token back at once, usable again
    with pytest.raises(TargetUnreachable):
        await purchases.compliance_report(web, unreachable.token, f"https://127.0.0.1:{free_port()}/", "b@example.com")
    with shared_database.session() as session:
        row = find_compliance_token(session, unreachable.token)
        assert row is not None and row.used_at is None and row.reserved_by is None

    # A scan that succeeds: rendered here, the token used, the email queued, the answer given at once
    steps: list[str] = []
    generated = await purchases.compliance_report(web, paid.token, best_site.url, "b@example.com", steps.append)
    assert "b@example.com" in generated.message and generated.body["grade"] == "A+"
    with shared_database.session() as session:
        failed, done = session.exec(select(ScanJob).order_by(col(ScanJob.created_at))).all()
        row = find_compliance_token(session, paid.token)
        assert row is not None and row.used_at is not None
    assert failed.kind == done.kind == "compliance" and failed.status == JOB_FAILED
    await _scanned_by_the_worker(worker, done)
    assert _count(shared_database, OutboxEmail) == 1
    # The scan is in the history once (recorded by the worker with the job's end), and nothing is kept
    assert _count(shared_database, ScanRecord) == 1 and _count(shared_database, StoredReport) == 0
    assert steps[0] == "quota" and steps[-1] == "save"


async def test_the_compliance_endpoint_of_a_queue_only_api_process_answers_from_the_worker(
    cluster: Cluster, shared_database: Database, best_site: RunningSite
) -> None:
    # Given a real serve-api process that only queues, and one worker
    base = cluster.start_api(scan_workers=0)
    cluster.start_worker(concurrency=2)
    with shared_database.session() as session:
        paid = issue_compliance_token(
            session, provider="stripe", email="buyer@example.com", url=best_site.url, now=TEST_NOW
        )
        mark_compliance_token_paid(session, paid.token_id, TEST_NOW)

    # When the report is asked for, and asked for again with the same token
    body = {"token": paid.token, "url": best_site.url, "email": "buyer@example.com"}
    async with httpx.AsyncClient(timeout=120) as client:
        first = await client.post(f"{base}/api/compliance-report/generate", json=body)
        again = await client.post(f"{base}/api/compliance-report/generate", json=body)

    # Then the first is answered synchronously as always, from a scan the worker ran; the second is refused
    assert first.status_code == 200 and first.json()["ok"] is True, first.text
    assert again.status_code == 403 and set(again.json()) == {"error"}
    await _scanned_by_the_worker(cluster, _job(shared_database, "compliance"))
    assert "scan job" not in cluster.log("api-0")
    assert _count(shared_database, OutboxEmail) == 1
