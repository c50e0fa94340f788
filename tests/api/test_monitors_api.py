"""The monitors API (issue 17): a subscriber adds, lists and removes their own monitors, at most ten."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

from tests.api.conftest import client_for, new_key
from tests.api.fakes import FrozenClock
from websec_app.store import Database


async def test_the_monitors_api_adds_lists_and_removes_only_the_subscribers_own(
    make_api, database: Database, clock: FrozenClock
) -> None:
    owner, stranger = new_key(database, clock), new_key(database, clock, email="other@example.com")
    api = make_api()
    async with client_for(api) as http:
        mine = {"X-API-Key": owner.key}
        created = await http.post("/api/monitors", json={"url": "example.com", "interval": "weekly"}, headers=mine)
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["url"] == "https://example.com/" and body["interval"] == "weekly"
        assert body["next_run_at"] == body["created_at"]  # the first run is due at once

        twice = await http.post("/api/monitors", json={"url": "https://example.com", "interval": "daily"}, headers=mine)
        assert twice.status_code == 409 and twice.json() == {"error": "You monitor https://example.com/ already."}

        listed = (await http.get("/api/monitors", headers=mine)).json()
        assert [m["id"] for m in listed["monitors"]] == [body["id"]] and listed["limit"] == 10
        assert (await http.get("/api/monitors", headers={"X-API-Key": stranger.key})).json()["monitors"] == []

        # another subscriber cannot remove it; its owner can, once
        refused = await http.delete(f"/api/monitors/{body['id']}", headers={"X-API-Key": stranger.key})
        assert refused.status_code == 404 and refused.json() == {"error": "No monitor of yours has this id."}
        assert (await http.delete(f"/api/monitors/{body['id']}", headers=mine)).status_code == 204
        assert (await http.delete(f"/api/monitors/{body['id']}", headers=mine)).status_code == 404

        # bad input is a JSON error
        bad = await http.post("/api/monitors", json={"url": "example.com", "interval": "hourly"}, headers=mine)
        assert bad.status_code == 400 and set(bad.json()) == {"error"}
        private = await http.post("/api/monitors", json={"url": "http://10.0.0.1/", "interval": "daily"}, headers=mine)
        assert private.status_code == 400
        # at most ten at once
        for number in range(10):
            added = await http.post(
                "/api/monitors", json={"url": f"s{number}.example", "interval": "daily"}, headers=mine
            )
            assert added.status_code == 201
        eleventh = await http.post("/api/monitors", json={"url": "s10.example", "interval": "daily"}, headers=mine)
        assert eleventh.status_code == 409 and "at most 10" in eleventh.json()["error"]

        assert (await http.get("/api/monitors")).status_code == 401


async def test_a_monitors_callback_url_to_a_private_address_is_refused(
    make_api, database: Database, clock: FrozenClock, settings
) -> None:
    owner = new_key(database, clock)
    api = make_api(settings=settings.with_overrides(callback_secret="server-secret"))
    async with client_for(api) as http:
        refused = await http.post(
            "/api/monitors",
            json={"url": "example.com", "interval": "daily", "callback_url": "https://10.1.2.3/hook"},
            headers={"X-API-Key": owner.key},
        )
        assert refused.status_code == 400 and "Only public addresses" in refused.json()["error"]
        assert (await http.get("/api/monitors", headers={"X-API-Key": owner.key})).json()["monitors"] == []


async def test_a_callback_url_without_callbacks_enabled_names_the_setting_as_written(
    make_api, database: Database, clock: FrozenClock
) -> None:
    # (the server runs without WEBSEC_CALLBACK_SECRET: callbacks cannot be signed)
    owner = new_key(database, clock)
    api = make_api()
    expected = {"error": "Callbacks are not enabled on this server (WEBSEC_CALLBACK_SECRET)."}
    async with client_for(api) as http:
        mine = {"X-API-Key": owner.key}
        monitor = await http.post(
            "/api/monitors",
            json={"url": "example.com", "interval": "daily", "callback_url": "https://hooks.example/h"},
            headers=mine,
        )
        assert monitor.status_code == 400 and monitor.json() == expected
        scans = await http.post(
            "/api/scans", json={"url": "example.com", "callback_url": "https://hooks.example/h"}, headers=mine
        )
        assert scans.status_code == 400 and scans.json() == expected


async def test_the_first_monitor_with_a_callback_url_shows_the_secret_that_verifies_its_webhooks(
    make_api, database: Database, clock: FrozenClock, settings, scanner, monkeypatch
) -> None:
    import hashlib
    import hmac

    from tests.usecases.test_monitors import _tick_and_run
    from websec_app.jobs import callbacks
    from websec_app.runtime import build_runtime
    from websec_app.scanner import TargetUnreachable
    from websec_app.usecases import job_worker
    from websec_app.usecases import jobs as job_cases

    posted: list[tuple[bytes, str]] = []

    async def receiver(url: str, body: bytes, signature: str, settings: object) -> int:
        posted.append((body, signature))
        return 204

    async def public(url: str, settings: object) -> tuple[str, str]:
        return "hooks.example", "203.0.113.80"

    monkeypatch.setattr(callbacks, "deliver", receiver)
    monkeypatch.setattr(job_worker, "deliver", receiver)  # the async scan's own callback, if its job runs
    monkeypatch.setattr(callbacks, "checked_address", public)
    monkeypatch.setattr(job_cases, "checked_address", public)
    settings = settings.with_overrides(callback_secret="server-secret")
    scanner.errors["example.com"] = TargetUnreachable("Could not connect to example.com: connection refused.")
    day_four = clock() + timedelta(days=3)
    owner = new_key(database, clock)
    mine = {"X-API-Key": owner.key}
    hook = "https://hooks.example/monitor"
    async with client_for(make_api(settings=settings)) as http:
        # Given a site monitored without a callback, and a second monitor of it refused (the secret not spent)
        plain = await http.post("/api/monitors", json={"url": "example.org", "interval": "daily"}, headers=mine)
        assert plain.status_code == 201 and "callback_secret" not in plain.json()
        twice = {"url": "example.org", "interval": "daily", "callback_url": hook}
        assert (await http.post("/api/monitors", json=twice, headers=mine)).status_code == 409

        # When the key's first monitor with a callback_url is made
        created = await http.post(
            "/api/monitors", json={"url": "example.com", "interval": "daily", "callback_url": hook}, headers=mine
        )

        # Then its 201 shows the key's callback secret, once: not in the list, nor to the next monitor or async
        # scan with a callback_url (one showing per key, as POST /api/scans)
        assert created.status_code == 201, created.text
        secret = created.json()["callback_secret"]
        assert secret and created.json()["callback_url"] == hook
        listed = (await http.get("/api/monitors", headers=mine)).json()["monitors"]
        assert all("callback_secret" not in monitor for monitor in listed)
        again = await http.post(
            "/api/monitors", json={"url": "example.net", "interval": "daily", "callback_url": hook}, headers=mine
        )
        assert again.status_code == 201 and "callback_secret" not in again.json()
        scans = await http.post("/api/scans", json={"url": "example.edu", "callback_url": hook}, headers=mine)
        assert scans.status_code == 202 and "callback_secret" not in scans.json()

    # and the monitor's webhook (example.com unreachable in two runs in a row) verifies with that secret. Its
    # first run may be taken by the app's own engine, whose ticker the async scan started: whoever runs it, the
    # site is unreachable, and the test ticks on (and then waits) until the alert is out.
    runtime = build_runtime(settings, database=database, scanner=scanner, clock=clock, bounded=False)
    alerts: list[tuple[bytes, str]] = []
    for _ in range(200):
        alerts = [(body, signature) for body, signature in posted if b'"monitor.alert"' in body]
        if alerts:
            break
        if clock() < day_four:
            await _tick_and_run(runtime)
            clock.advance(days=1, minutes=1)
        await asyncio.sleep(0.05)
    [(body, signature)] = alerts
    assert json.loads(body)["url"] == "https://example.com/"
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(signature, expected)
