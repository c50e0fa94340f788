"""Scan workers on PostgreSQL (issue 16): real `serve-api` and `worker` processes, real scans of fixture sites.

A web process with WEBSEC_SCAN_WORKERS=0 scans nothing itself: every answer below was scanned by a worker
process. What must hold: the synchronous endpoints keep their contract, the queue is shared by every worker,
and a worker killed in the middle of a scan loses nothing (its jobs are retried elsewhere and answered) and
counts nothing twice.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
import pytest
from sqlmodel import col, select

from tests.clock import TEST_NOW
from tests.fixtures.sites import RunningSite
from tests.job_rows import registered_workers
from tests.jobs.cluster import Cluster
from websec_app.store import Database, IssuedKey, create_subscription, issue_api_key, monthly_scans_used
from websec_app.store.models import JOB_DONE, JOB_RUNNING, ScanJob

pytestmark = pytest.mark.postgres


def _pro_key(database: Database, email: str = "agency@example.com") -> IssuedKey:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=TEST_NOW)
        assert subscription.id is not None
        return issue_api_key(session, subscription.id, TEST_NOW)


async def _pro_scans(base: str, key: str, url: str, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=180) as client:
        return await asyncio.gather(
            *(client.post(f"{base}/api/scan/pro", json={"url": url}, headers={"X-API-Key": key}) for _ in range(count))
        )


def _jobs(database: Database) -> list[ScanJob]:
    with database.session() as session:
        return list(session.exec(select(ScanJob).order_by(col(ScanJob.created_at))).all())


async def _registered(cluster: Cluster, database: Database, count: int) -> None:
    """Wait until `count` workers have registered as capacity, which each does as it starts taking jobs: a worker
    still starting when a burst arrives may find it all taken by the other (a loaded CI machine saw [8, 0])."""
    deadline = time.monotonic() + 60
    while registered_workers(database) < count:
        assert time.monotonic() < deadline, [cluster.tail(f"worker-{n}") for n in range(count)]
        await asyncio.sleep(0.1)


def _used(database: Database, key: IssuedKey) -> int:
    with database.session() as session:
        return monthly_scans_used(session, key.subscription_id, TEST_NOW)


async def test_two_workers_share_the_queue_and_the_endpoint_keeps_its_contract(
    cluster: Cluster, shared_database: Database, best_site: RunningSite
) -> None:
    # Given a web process that only queues, and two workers
    base = cluster.start_api(scan_workers=0)
    cluster.start_worker(concurrency=2)
    cluster.start_worker(concurrency=2)
    key = _pro_key(shared_database)
    await _registered(cluster, shared_database, 2)

    # When 8 Pro scans arrive at once
    responses = await _pro_scans(base, key.key, best_site.url, 8)

    # Then each is answered as POST /api/scan/pro always was: the spec 2.2 body and the scans left
    assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
    assert all(r.json()["grade"] == "A+" and "fix" in str(r.json()) for r in responses)
    assert sorted(int(r.headers["X-Scans-Remaining"]) for r in responses) == list(range(42, 50))
    assert _used(shared_database, key) == 8
    # ... scanned by both workers (each logs the jobs it ends), none by the web process
    done = [cluster.log(f"worker-{n}").count("scan job") for n in range(2)]
    assert all(count > 0 for count in done) and sum(done) == 8, done
    assert "scan job" not in cluster.log("api-0")


async def test_a_worker_killed_mid_scan_loses_nothing_and_counts_nothing_twice(
    cluster: Cluster, shared_database: Database, slow_site: RunningSite
) -> None:
    # Given two workers of 2 scans each, and 4 slow scans running on them
    base = cluster.start_api(scan_workers=0)
    cluster.start_worker(concurrency=2)
    cluster.start_worker(concurrency=2)
    key = _pro_key(shared_database)
    scans = asyncio.create_task(_pro_scans(base, key.key, slow_site.url, 4))
    deadline = time.monotonic() + 60
    while sum(job.status == JOB_RUNNING for job in _jobs(shared_database)) < 4:
        assert time.monotonic() < deadline and not scans.done(), [cluster.tail("worker-0"), cluster.tail("api-0")]
        await asyncio.sleep(0.1)

    # When one worker is killed outright in the middle of its two scans
    cluster.kill_worker(0)

    # Then every scan is still answered, the killed worker's two by the other worker, and each counted once
    responses = await scans
    assert Counter(r.status_code for r in responses) == Counter({200: 4}), [r.text for r in responses]
    jobs = _jobs(shared_database)
    assert [job.status for job in jobs] == [JOB_DONE] * 4
    assert sorted(job.attempts for job in jobs) == [1, 1, 2, 2]
    assert _used(shared_database, key) == 4
    assert sorted(int(r.headers["X-Scans-Remaining"]) for r in responses) == [46, 47, 48, 49]
