"""POST /api/scan with a one_time_token: a full Pro scan, once, without touching the IP quota."""

from __future__ import annotations

import httpx

from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetUnreachable
from websec_app.store import Database, IssuedToken, free_scans_used, issue_scan_token, recent_scans


def buy_token(database: Database, clock: FrozenClock) -> IssuedToken:
    with database.session() as session:
        return issue_scan_token(session, email="buyer@example.com", now=clock())


async def test_a_valid_token_gives_the_pro_shape(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)

    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert response.status_code == 200
    body = response.json()
    assert body["pro_locked"] is False
    assert "cookies" in body and "cross_origin" in body
    assert body["headers"]["Content-Security-Policy"]["fix"] == "default-src 'self'"
    assert body["dns"]["findings"][0]["fix"] is not None
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 0
        assert recent_scans(session, client="203.0.113.7") == []


async def test_a_token_works_once(client: httpx.AsyncClient, database: Database, clock: FrozenClock) -> None:
    token = buy_token(database, clock)
    first = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})
    clock.advance(minutes=5)

    second = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert first.status_code == 200
    assert second.status_code == 403
    assert second.json() == {
        "error": "This one-time scan token was already used at 2026-11-22T12:00:00Z: each token is good for one scan."
    }


async def test_an_expired_token_is_403_saying_so(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)
    clock.advance(hours=24)

    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert response.status_code == 403
    assert response.json()["error"] == (
        "This one-time scan token expired at 2026-11-23T12:00:00Z: tokens are valid for 24 hours after purchase."
    )


async def test_a_token_is_valid_until_just_before_24_hours(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)
    clock.advance(hours=24, seconds=-1)

    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert response.status_code == 200


async def test_an_unknown_token_is_403_saying_so(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": "wst_not-a-real-one"})

    assert response.status_code == 403
    assert response.json()["error"] == ("This one-time scan token does not exist. Check that it was copied completely.")


async def test_a_token_works_when_the_ip_quota_is_used_up(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    for _ in range(10):
        await client.post("/api/scan", json={"url": "example.com"})
    assert (await client.post("/api/scan", json={"url": "example.com"})).status_code == 429
    token = buy_token(database, clock)

    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert response.status_code == 200


async def test_a_failed_scan_leaves_the_token_usable(
    client: httpx.AsyncClient, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)
    scanner.errors["down.example"] = TargetUnreachable("DNS lookup of down.example failed")

    failed = await client.post("/api/scan", json={"url": "down.example", "one_time_token": token.token})
    retried = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert failed.status_code == 502
    assert retried.status_code == 200


async def test_an_invalid_url_does_not_use_the_token(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)

    bad = await client.post("/api/scan", json={"url": "javascript:alert(1)", "one_time_token": token.token})
    good = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert bad.status_code == 400
    assert good.status_code == 200


async def test_a_blank_token_is_a_free_scan(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": "  "})

    assert response.status_code == 200
    assert response.json()["pro_locked"] is True


async def test_a_token_bought_yesterday_still_works_after_midnight(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    token = buy_token(database, clock)
    clock.advance(hours=13)

    response = await client.post("/api/scan", json={"url": "example.com", "one_time_token": token.token})

    assert response.status_code == 200
