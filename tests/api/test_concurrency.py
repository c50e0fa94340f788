"""Racing requests for the last unit of a quota, or for one token, give exactly one success.

Run on SQLite and on a real PostgreSQL. The scanner is slowed down so the scans overlap;
the store calls run in worker threads, each with its own connection, as in production.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import httpx
from fastapi import FastAPI

from tests.api.conftest import client_for, new_key
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetUnreachable
from websec_app.settings import Settings
from websec_app.store import (
    Database,
    free_scans_used,
    issue_scan_token,
    monthly_scans_used,
    reserve_free_scan,
    reserve_monthly_scan,
)

RACERS = 20


async def race(client: httpx.AsyncClient, send: Callable[[], object]) -> Counter[int]:
    responses = await asyncio.gather(*(send() for _ in range(RACERS)))  # type: ignore[call-overload]
    return Counter(r.status_code for r in responses)


async def test_20_pro_scans_race_for_the_last_unit(
    make_api: Callable[..., FastAPI], any_database: Database, scanner: FakeScanner, clock: FrozenClock
) -> None:
    key = new_key(any_database, clock)
    with any_database.session() as session:
        for _ in range(49):
            reserve_monthly_scan(session, key.subscription_id, clock(), 50)
    scanner.delay = 0.05

    async with client_for(make_api(database=any_database)) as client:
        statuses = await race(
            client, lambda: client.post("/api/scan/pro", json={"url": "a.com"}, headers={"X-API-Key": key.key})
        )

    assert statuses == Counter({200: 1, 429: RACERS - 1})
    with any_database.session() as session:
        assert monthly_scans_used(session, key.subscription_id, clock()) == 50


async def test_20_pdfs_race_for_the_last_unit(
    make_api: Callable[..., FastAPI], any_database: Database, scanner: FakeScanner, clock: FrozenClock
) -> None:
    key = new_key(any_database, clock)
    with any_database.session() as session:
        for _ in range(49):
            reserve_monthly_scan(session, key.subscription_id, clock(), 50)

    async with client_for(make_api(database=any_database)) as client:
        statuses = await race(
            client, lambda: client.post("/api/report/pdf", json={"url": "a.com"}, headers={"X-API-Key": key.key})
        )

    assert statuses == Counter({200: 1, 429: RACERS - 1})


async def test_20_free_scans_race_for_the_last_unit(
    make_api: Callable[..., FastAPI], any_database: Database, scanner: FakeScanner, clock: FrozenClock
) -> None:
    with any_database.session() as session:
        for _ in range(9):
            reserve_free_scan(session, "203.0.113.7", clock(), 10)
    scanner.delay = 0.05

    async with client_for(make_api(database=any_database)) as client:
        statuses = await race(client, lambda: client.post("/api/scan", json={"url": "a.com"}))

    assert statuses == Counter({200: 1, 429: RACERS - 1})
    with any_database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 10


async def test_20_requests_race_for_one_token(
    make_api: Callable[..., FastAPI], any_database: Database, scanner: FakeScanner, clock: FrozenClock
) -> None:
    with any_database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=clock()).token
    scanner.delay = 0.05

    async with client_for(make_api(database=any_database)) as client:
        statuses = await race(client, lambda: client.post("/api/scan", json={"url": "a.com", "one_time_token": token}))

    assert statuses == Counter({200: 1, 403: RACERS - 1})


async def test_racing_failures_refund_every_unit(
    make_api: Callable[..., FastAPI],
    any_database: Database,
    scanner: FakeScanner,
    clock: FrozenClock,
    settings: Settings,
) -> None:
    key = new_key(any_database, clock)
    scanner.errors["down.example"] = TargetUnreachable("down")
    scanner.delay = 0.02

    async with client_for(make_api(database=any_database)) as client:
        statuses = await race(
            client,
            lambda: client.post("/api/scan/pro", json={"url": "down.example"}, headers={"X-API-Key": key.key}),
        )

    assert statuses == Counter({502: RACERS})
    with any_database.session() as session:
        assert monthly_scans_used(session, key.subscription_id, clock()) == 0
