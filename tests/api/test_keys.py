"""GET /api/verify-key and GET /api/usage: key checks that consume nothing."""

from __future__ import annotations

import httpx

from tests.api.fakes import FrozenClock
from websec_app.store import Database, IssuedKey, monthly_scans_used, revoke_api_key


async def test_verify_key_says_valid_and_the_plan(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    response = await client.get("/api/verify-key", headers={"X-API-Key": pro_key.key})

    assert response.status_code == 200
    assert response.json() == {"valid": True, "plan": "pro"}


async def test_verify_key_without_a_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/verify-key")

    assert response.status_code == 401
    assert response.json() == {"error": "An API key is required: send it in the X-API-Key header."}
    assert response.headers["WWW-Authenticate"] == 'ApiKey realm="websec"'


async def test_verify_key_with_a_bad_key_is_403(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/verify-key", headers={"X-API-Key": "wsk_nope"})

    assert response.status_code == 403
    assert response.json() == {"error": "The API key is not valid. Check that it was copied completely."}


async def test_verify_key_rejects_a_revoked_key(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    with database.session() as session:
        revoke_api_key(session, pro_key.key, clock())

    assert (await client.get("/api/verify-key", headers={"X-API-Key": pro_key.key})).status_code == 403


async def test_the_key_in_the_query_is_not_accepted_by_verify_key(
    client: httpx.AsyncClient, pro_key: IssuedKey
) -> None:
    assert (await client.get("/api/verify-key", params={"key": pro_key.key})).status_code == 401


async def test_usage_reports_this_months_scans(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    for _ in range(2):
        await client.post("/api/scan/pro", json={"url": "example.com"}, headers={"X-API-Key": pro_key.key})

    response = await client.get("/api/usage", params={"key": pro_key.key})

    assert response.status_code == 200
    assert response.json() == {
        "valid": True,
        "email": "pro@example.com",
        "plan": "pro",
        "scans_used": 2,
        "scans_limit": 50,
    }


async def test_usage_starts_from_zero_next_month(
    client: httpx.AsyncClient, pro_key: IssuedKey, clock: FrozenClock
) -> None:
    await client.post("/api/scan/pro", json={"url": "example.com"}, headers={"X-API-Key": pro_key.key})
    clock.advance(days=9)  # 2026-12-01 12:00 UTC

    response = await client.get("/api/usage", params={"key": pro_key.key})

    assert response.json()["scans_used"] == 0


async def test_usage_without_a_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/usage")

    assert response.status_code == 401
    assert response.json() == {"error": "An API key is required: pass it as the 'key' query parameter."}


async def test_usage_with_a_bad_key_is_403(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/usage", params={"key": "wsk_nope"})).status_code == 403


async def test_key_checks_consume_nothing(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    for _ in range(5):
        await client.get("/api/verify-key", headers={"X-API-Key": pro_key.key})
        await client.get("/api/usage", params={"key": pro_key.key})

    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0
