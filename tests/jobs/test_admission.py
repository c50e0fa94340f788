"""Admission by expected wait (issue 16): a scan is accepted while the jobs ahead of it, times the scan
time, divided by the workers' capacity, fit WEBSEC_MAX_SCAN_WAIT; past it, 503 with Retry-After set to the
expected wait, and nothing is counted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from api_routes import create_api
from api_routes.errors import OVERLOADED_MESSAGE
from tests import db_fixtures
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.runtime import build_runtime
from websec_app.settings import Settings
from websec_app.store import Database, free_scans_used
from websec_app.store.scan_jobs import DEFAULT_SCAN_SECONDS

database = db_fixtures.database
CLIENT = "203.0.113.21"


async def test_past_the_expected_wait_a_scan_is_refused_with_that_wait(tmp_path: Path, database: Database) -> None:
    # Given one in-process worker, scans that take DEFAULT_SCAN_SECONDS (no scan has finished yet to measure),
    # and a budget of 10 s: three scans fit (3, 6 and 9 s), a fourth would wait 12 s
    settings = Settings(data_dir=tmp_path, scan_workers=1, max_scan_wait=10.0, free_scans_per_day=100)
    scanner, clock = FakeScanner(), FrozenClock()
    scanner.gate = asyncio.Event()
    api = create_api(runtime=build_runtime(settings, database=database, scanner=scanner, clock=clock))
    transport = httpx.ASGITransport(app=api, client=(CLIENT, 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        accepted = []
        for n in range(3):
            accepted.append(asyncio.create_task(client.post("/api/scan", json={"url": f"site{n}.example"})))
            await asyncio.sleep(0.3)  # each is queued before the next arrives

        # When a fourth arrives while they wait
        refused = await client.post("/api/scan", json={"url": "late.example"})

        # Then it is refused with the expected wait, and counts nothing
        assert refused.status_code == 503
        assert refused.json() == {"error": OVERLOADED_MESSAGE}
        assert refused.headers["Retry-After"] == str(int(4 * DEFAULT_SCAN_SECONDS))
        scanner.gate.set()
        assert [r.status_code for r in await asyncio.gather(*accepted)] == [200, 200, 200]
    with database.session() as session:
        assert free_scans_used(session, CLIENT, clock()) == 3
