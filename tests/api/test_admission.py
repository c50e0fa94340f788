"""Backpressure in the API: past the process's scan slots and wait queue, 503 with Retry-After.

The slots and the queue themselves are tested in tests/services/test_admission.py; sharing them with
the web UI in tests/usecases/test_scans.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import pytest
from fastapi import FastAPI

from api_routes.errors import OVERLOADED_MESSAGE
from tests.api.conftest import client_for, new_key
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.settings import Settings, SettingsError
from websec_app.store import Database, free_scans_used, monthly_scans_used


async def test_past_the_limit_scans_answer_503_and_consume_no_quota(
    make_api: Callable[..., FastAPI],
    settings: Settings,
    database: Database,
    scanner: FakeScanner,
    clock: FrozenClock,
) -> None:
    # Given a process with 2 scan slots and 3 places in the queue, and slow scans
    api = make_api(settings=settings.with_overrides(max_concurrent_scans=2, scan_queue=3, free_scans_per_day=100))
    key = new_key(database, clock)
    scanner.delay = 0.2

    # When 10 free and 10 Pro scans arrive at once
    async with client_for(api) as client:
        free = [client.post("/api/scan", json={"url": "a.com"}) for _ in range(10)]
        pro = [client.post("/api/scan/pro", json={"url": "a.com"}, headers={"X-API-Key": key.key}) for _ in range(10)]
        responses = await asyncio.gather(*free, *pro)

    # Then 5 are served (2 at once, 3 queued) and the rest are told to come back, with nothing counted for them
    statuses = Counter(r.status_code for r in responses)
    assert statuses == Counter({200: 5, 503: 15})
    refused = [r for r in responses if r.status_code == 503]
    assert all(r.json() == {"error": OVERLOADED_MESSAGE} and r.headers["Retry-After"] == "5" for r in refused)
    served_free = sum(1 for r in responses[:10] if r.status_code == 200)
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == served_free
        assert monthly_scans_used(session, key.subscription_id, clock()) == 5 - served_free
    assert len(scanner.calls) == 5


async def test_the_queue_absorbs_a_burst_it_has_room_for(
    make_api: Callable[..., FastAPI], settings: Settings, scanner: FakeScanner
) -> None:
    api = make_api(settings=settings.with_overrides(max_concurrent_scans=2, scan_queue=20, free_scans_per_day=100))
    scanner.delay = 0.02
    async with client_for(api) as client:
        responses = await asyncio.gather(*(client.post("/api/scan", json={"url": "a.com"}) for _ in range(20)))
    assert Counter(r.status_code for r in responses) == Counter({200: 20})


def test_the_limits_come_from_the_environment() -> None:
    settings = Settings.from_env({"WEBSEC_MAX_CONCURRENT_SCANS": "3", "WEBSEC_SCAN_QUEUE": "0"})
    assert (settings.max_concurrent_scans, settings.scan_queue) == (3, 0)
    with pytest.raises(SettingsError, match="WEBSEC_MAX_CONCURRENT_SCANS must be at least 1"):
        Settings.from_env({"WEBSEC_MAX_CONCURRENT_SCANS": "0"})
    assert Settings.from_env({"REDIS_URL": "redis://127.0.0.1:6379/0"}).redis_url == "redis://127.0.0.1:6379/0"
    with pytest.raises(SettingsError, match="REDIS_URL must start with"):
        Settings.from_env({"REDIS_URL": "http://127.0.0.1:6379"})


async def test_a_refused_pro_request_gives_its_place_back(
    make_api: Callable[..., FastAPI], settings: Settings, database: Database, clock: FrozenClock
) -> None:
    # Given a single slot and no queue
    api = make_api(settings=settings.with_overrides(max_concurrent_scans=1, scan_queue=0))
    key = new_key(database, clock)
    headers = {"X-API-Key": key.key}
    async with client_for(api) as client:
        # When Pro requests fail after taking their place: a bad body, an unknown key, an invalid URL
        failures = [
            await client.post("/api/scan/pro", content=b"{", headers={**headers, "Content-Type": "application/json"}),
            await client.post("/api/scan/pro", json={"url": "a.com"}, headers={"X-API-Key": "wsk_unknown"}),
            await client.post("/api/report/pdf", json={"url": "http://[oops"}, headers=headers),
        ]
        # Then the slot is free again for the next one
        served = await client.post("/api/scan/pro", json={"url": "a.com"}, headers=headers)

    assert [r.status_code for r in failures] == [400, 403, 400]
    assert served.status_code == 200
