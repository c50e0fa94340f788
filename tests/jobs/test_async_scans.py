"""Async and batch scans (issue 16): POST /api/scans, GET /api/scans/{id}, signed callbacks.

The app runs as `make run` does (SQLite, the engine embedded: its workers in this process), with the real
scanner against fixture sites; the callback receiver is a real HTTPS site on loopback.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlmodel import select

from api_routes import create_api
from tests import db_fixtures
from tests.clock import TEST_NOW
from tests.fixtures.sites import RunningSite, Site, SiteFactory, TlsConfig, text
from websec_app.runtime import build_runtime
from websec_app.settings import Settings
from websec_app.store import Database, IssuedKey, create_subscription, issue_api_key, monthly_scans_used
from websec_app.store.models import ScanJob
from websec_app.store.quotas import reserve_monthly_scan
from websec_app.usecases.job_worker import delete_expired_jobs

database = db_fixtures.database

CALLBACK_SECRET = "test-callback-server-secret"


@pytest.fixture
def settings(scan_settings: Settings, tmp_path: Path) -> Settings:
    return scan_settings.with_overrides(data_dir=tmp_path, callback_secret=CALLBACK_SECRET)


@pytest.fixture
def api(settings: Settings, database: Database) -> FastAPI:
    return create_api(runtime=build_runtime(settings, database=database, clock=lambda: TEST_NOW))


@pytest.fixture
async def client(api: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=api, client=("203.0.113.9", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture(scope="session")
def receiver(site_factory: SiteFactory) -> RunningSite:
    """https://hooks.test/hook: takes every callback with 204 and keeps it (`requests`). Its certificate is the
    "service" kind: the callback's client checks it at the real time, as any HTTPS client must."""
    return site_factory(
        Site(names=("hooks.test",), routes={"/hook": text("", status=204)}, tls=TlsConfig(cert="service"))
    )


def _key(database: Database, email: str = "agency@example.com", used: int = 0) -> IssuedKey:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW)
        for _ in range(used):
            reserve_monthly_scan(session, subscription.id, TEST_NOW, 50)
        return key


def _used(database: Database, key: IssuedKey) -> int:
    with database.session() as session:
        return monthly_scans_used(session, key.subscription_id, TEST_NOW)


async def _finished(client: httpx.AsyncClient, key: str, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        response = await client.get(f"/api/scans/{job_id}", headers={"X-API-Key": key})
        assert response.status_code == 200, response.text
        if response.json()["status"] in ("done", "failed"):
            return dict(response.json())
        assert time.monotonic() < deadline, response.json()
        await asyncio.sleep(0.1)


async def test_a_batch_of_50_with_30_scans_left_is_refused_whole(
    client: httpx.AsyncClient, database: Database, best_site: RunningSite
) -> None:
    key = _key(database, used=20)

    response = await client.post("/api/scans", json={"urls": [best_site.url] * 50}, headers={"X-API-Key": key.key})

    assert response.status_code == 429
    assert "30 are left" in response.json()["error"] and response.headers["X-Scans-Remaining"] == "30"
    assert int(response.headers["Retry-After"]) > 0
    with database.session() as session:
        assert session.exec(select(ScanJob)).all() == []
    assert _used(database, key) == 20


async def test_queued_scans_are_answered_and_an_unreachable_one_is_refunded(
    client: httpx.AsyncClient, database: Database, best_site: RunningSite
) -> None:
    key = _key(database)
    unreachable = "https://nowhere.test/"

    response = await client.post(
        "/api/scans", json={"urls": [best_site.url, unreachable]}, headers={"X-API-Key": key.key}
    )

    assert response.status_code == 202, response.text
    jobs = response.json()["jobs"]
    assert [job["url"] for job in jobs] == [best_site.url, unreachable]
    assert response.headers["X-Scans-Remaining"] == "48"
    done = await _finished(client, key.key, jobs[0]["id"])
    failed = await _finished(client, key.key, jobs[1]["id"])
    assert done["status"] == "done" and done["report"]["grade"] == "A+" and done["report"]["pro_locked"] is False
    assert failed["status"] == "failed" and "nowhere.test" in failed["error"] and "report" not in failed
    assert _used(database, key) == 1


async def test_another_key_cannot_read_a_job(
    client: httpx.AsyncClient, database: Database, best_site: RunningSite
) -> None:
    owner, other = _key(database, "owner@example.com"), _key(database, "other@example.com")
    response = await client.post("/api/scans", json={"url": best_site.url}, headers={"X-API-Key": owner.key})
    [job] = response.json()["jobs"]

    assert (await _finished(client, owner.key, job["id"]))["status"] == "done"
    stranger = await client.get(f"/api/scans/{job['id']}", headers={"X-API-Key": other.key})
    assert stranger.status_code == 404 and set(stranger.json()) == {"error"}
    assert (await client.get(f"/api/scans/{job['id']}")).status_code == 401


async def test_the_callback_is_signed_with_the_secret_shown_once(
    client: httpx.AsyncClient, database: Database, best_site: RunningSite, receiver: RunningSite
) -> None:
    key = _key(database)
    hook = "https://hooks.test/hook"
    receiver.requests.clear()

    first = await client.post(
        "/api/scans", json={"url": best_site.url, "callback_url": hook}, headers={"X-API-Key": key.key}
    )
    again = await client.post(
        "/api/scans", json={"url": best_site.url, "callback_url": hook}, headers={"X-API-Key": key.key}
    )

    assert first.status_code == again.status_code == 202
    secret = first.json()["callback_secret"]
    assert "callback_secret" not in again.json()
    deadline = time.monotonic() + 60
    while len(receiver.requests) < 2:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    for delivered in receiver.requests:
        signature = dict((k.lower(), v) for k, v in delivered.headers)["x-websec-signature"]
        expected = "sha256=" + hmac.new(secret.encode(), delivered.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected)
        payload = json.loads(delivered.body)
        assert payload["status"] == "done" and payload["report"]["grade"] == "A+"
        assert payload == (await client.get(f"/api/scans/{payload['id']}", headers={"X-API-Key": key.key})).json()
    assert {json.loads(r.body)["id"] for r in receiver.requests} == {
        first.json()["jobs"][0]["id"],
        again.json()["jobs"][0]["id"],
    }


async def test_a_private_callback_url_is_refused_by_the_scan_guard(settings: Settings, database: Database) -> None:
    guarded = create_api(
        runtime=build_runtime(
            settings.with_overrides(allow_private_targets=False), database=database, clock=lambda: TEST_NOW
        )
    )
    key = _key(database)
    transport = httpx.ASGITransport(app=guarded, client=("203.0.113.9", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.post(
            "/api/scans",
            json={"url": "example.com", "callback_url": "https://127.0.0.1/hook"},
            headers={"X-API-Key": key.key},
        )
    assert response.status_code == 400 and "public" in response.json()["error"]
    assert _used(database, key) == 0


async def test_a_job_is_readable_for_the_retention_and_then_gone(
    settings: Settings, database: Database, best_site: RunningSite
) -> None:
    # Given a job done, on a runtime whose clock the test moves
    now = [TEST_NOW]
    runtime = build_runtime(settings.with_overrides(job_retention_days=7), database=database, clock=lambda: now[0])
    key = _key(database)
    transport = httpx.ASGITransport(app=create_api(runtime=runtime), client=("203.0.113.9", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.post("/api/scans", json={"url": best_site.url}, headers={"X-API-Key": key.key})
        assert response.status_code == 202, response.text
        job_id = response.json()["jobs"][0]["id"]
        assert (await _finished(client, key.key, job_id))["status"] == "done"

        # When the tick deletes expired jobs six days later, and again eight days later
        now[0] = TEST_NOW + timedelta(days=6)
        assert await delete_expired_jobs(runtime) == 0
        still = await client.get(f"/api/scans/{job_id}", headers={"X-API-Key": key.key})
        now[0] = TEST_NOW + timedelta(days=8)
        assert await delete_expired_jobs(runtime) == 1
        gone = await client.get(f"/api/scans/{job_id}", headers={"X-API-Key": key.key})

    # Then the job reads as done within the week, and as an unknown job after it
    assert still.status_code == 200 and still.json()["report"]["grade"] == "A+"
    assert gone.status_code == 404
    assert gone.json() == {
        "error": "No scan job with this id was queued with this API key in the last 7 days "
        "(ended jobs are deleted after that)."
    }
