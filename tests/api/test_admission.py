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


async def test_a_full_line_refuses_a_pro_request_only_after_its_key_and_url_are_checked(
    make_api: Callable[..., FastAPI],
    settings: Settings,
    database: Database,
    scanner: FakeScanner,
    clock: FrozenClock,
) -> None:
    # Given a single slot, no queue, and a Pro scan holding the slot
    api = make_api(settings=settings.with_overrides(max_concurrent_scans=1, scan_queue=0))
    key = new_key(database, clock)
    headers = {"X-API-Key": key.key}
    scanner.gate = asyncio.Event()
    async with client_for(api) as client:
        held = asyncio.create_task(client.post("/api/scan/pro", json={"url": "a.com"}, headers=headers))
        async with asyncio.timeout(10):
            while not scanner.calls:
                await asyncio.sleep(0.01)

        # When more Pro requests arrive: an unknown key, an unscannable URL, and two that are fine
        unknown_key = await client.post("/api/scan/pro", json={"url": "a.com"}, headers={"X-API-Key": "wsk_unknown"})
        bad_url = await client.post("/api/scan/pro", json={"url": "ftp://a.com"}, headers=headers)
        busy_scan = await client.post("/api/scan/pro", json={"url": "a.com"}, headers=headers)
        busy_pdf = await client.post("/api/report/pdf", json={"url": "a.com"}, headers=headers)
        scanner.gate.set()
        served = await held

    # Then what is wrong with a request is its answer (spec 7: 403, 400); only a sound one hears the line is
    # full, with its scans left like every Pro failure (spec 8; the held scan's unit is counted while it runs)
    assert unknown_key.status_code == 403 and "X-Scans-Remaining" not in unknown_key.headers
    assert (bad_url.status_code, bad_url.headers["X-Scans-Remaining"]) == (400, "49")
    assert bad_url.json() == {"error": "Unsupported URL scheme 'ftp': only http and https can be scanned"}
    for busy in (busy_scan, busy_pdf):
        assert busy.status_code == 503 and busy.json() == {"error": OVERLOADED_MESSAGE}
        assert (busy.headers["Retry-After"], busy.headers["X-Scans-Remaining"]) == ("5", "49")
    assert (served.status_code, served.headers["X-Scans-Remaining"]) == (200, "49")
    assert scanner.calls == ["https://a.com/"]
    assert api.state.runtime.admission.refused == 2
