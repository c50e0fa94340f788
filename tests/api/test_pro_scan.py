"""POST /api/scan/pro: key required, spec 2.2 shape, 50 scans per calendar month, X-Scans-Remaining."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import new_key
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetRefused, TargetUnreachable
from websec_app.store import (
    SUBSCRIPTION_CANCELLED,
    Database,
    IssuedKey,
    monthly_scans_used,
    recent_scans,
    reserve_monthly_scan,
    revoke_api_key,
    rotate_api_key,
    set_subscription_status,
)
from websec_app.store.models import SUBSCRIPTION_DISPUTED, SUBSCRIPTION_PAST_DUE
from websec_app.ui.messages import describe
from websec_app.usecases import KeyRefused, authenticate


def use_scans(database: Database, key: IssuedKey, clock: FrozenClock, count: int) -> None:
    with database.session() as session:
        for _ in range(count):
            assert reserve_monthly_scan(session, key.subscription_id, clock(), 50) is not None


async def pro_scan(client: httpx.AsyncClient, key: str, url: str = "example.com") -> httpx.Response:
    return await client.post("/api/scan/pro", json={"url": url}, headers={"X-API-Key": key})


async def test_a_pro_scan_has_the_full_shape(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    response = await pro_scan(client, pro_key.key)

    assert response.status_code == 200
    body = response.json()
    assert body["pro_locked"] is False
    assert body["url"] == "https://example.com/"
    for section in (
        "headers",
        "tls",
        "dns",
        "cookies",
        "cross_origin",
        "security_txt",
        "cors",
        "server_fingerprint",
        "page_analysis",
    ):
        assert isinstance(body[section], dict), section
    assert body["headers"]["Content-Security-Policy"]["fix"] == "default-src 'self'"
    assert body["cookies"]["findings"][0]["fix"] is not None
    assert response.headers["X-Scans-Remaining"] == "49"


async def test_each_scan_lowers_x_scans_remaining(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    remaining = [(await pro_scan(client, pro_key.key)).headers["X-Scans-Remaining"] for _ in range(3)]

    assert remaining == ["49", "48", "47"]


async def test_the_51st_scan_is_429(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock, scanner: FakeScanner
) -> None:
    use_scans(database, pro_key, clock, 49)
    last = await pro_scan(client, pro_key.key)

    response = await pro_scan(client, pro_key.key)

    assert last.status_code == 200 and last.headers["X-Scans-Remaining"] == "0"
    assert response.status_code == 429
    assert response.json() == {
        "error": "The monthly quota of 50 scans is used up. "
        "It resets on 2026-12-01 at 00:00 UTC (2026-12-01T00:00:00Z)."
    }
    assert response.headers["X-Scans-Remaining"] == "0"
    assert int(response.headers["Retry-After"]) == (datetime(2026, 12, 1, tzinfo=UTC) - clock()).total_seconds()
    assert len(scanner.calls) == 1  # the refused request did not scan


async def test_the_quota_resets_on_the_first_of_the_month(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    clock.set(datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC))
    use_scans(database, pro_key, clock, 50)
    assert (await pro_scan(client, pro_key.key)).status_code == 429

    clock.set(datetime(2027, 1, 1, 0, 0, 0, tzinfo=UTC))
    response = await pro_scan(client, pro_key.key)

    assert response.status_code == 200
    assert response.headers["X-Scans-Remaining"] == "49"


async def test_a_missing_key_is_401(client: httpx.AsyncClient, scanner: FakeScanner) -> None:
    response = await client.post("/api/scan/pro", json={"url": "example.com"})

    assert response.status_code == 401
    assert response.json() == {"error": "An API key is required: send it in the X-API-Key header."}
    assert scanner.calls == []


async def test_a_blank_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan/pro", json={"url": "example.com"}, headers={"X-API-Key": " "})

    assert response.status_code == 401


async def test_the_key_is_checked_before_the_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan/pro", content=b"{not json")

    assert response.status_code == 401


KEYED_POSTS = ["/api/scan/pro", "/api/report/pdf", "/api/scans", "/api/monitors"]


@pytest.mark.parametrize("path", KEYED_POSTS)
@pytest.mark.parametrize("body", [b"{not json", b'{"url": 5, "interval": [], "urls": 3}'])
async def test_a_bad_body_does_not_hide_a_missing_or_refused_key(
    client: httpx.AsyncClient, pro_key: IssuedKey, path: str, body: bytes
) -> None:
    """Spec 5 and 7: no key is a 401 and a refused key a 403, whatever the body; only a valid key's bad body
    is a 400. FastAPI decodes JSON before it solves dependencies, so this held only without a Content-Type."""
    json_body = {"Content-Type": "application/json"}

    missing = await client.post(path, content=body, headers=json_body)
    refused = await client.post(path, content=body, headers={**json_body, "X-API-Key": "wsk_" + "x" * 43})
    valid = await client.post(path, content=body, headers={**json_body, "X-API-Key": pro_key.key})

    assert (missing.status_code, refused.status_code, valid.status_code) == (401, 403, 400)
    assert missing.json() == {"error": "An API key is required: send it in the X-API-Key header."}
    assert missing.headers["WWW-Authenticate"] == 'ApiKey realm="websec"'
    assert refused.json() == {"error": "The API key is not valid. Check that it was copied completely."}


async def test_an_unknown_key_is_403(client: httpx.AsyncClient, scanner: FakeScanner) -> None:
    response = await pro_scan(client, "wsk_" + "x" * 43)

    assert response.status_code == 403
    assert response.json() == {"error": "The API key is not valid. Check that it was copied completely."}
    assert scanner.calls == []


async def test_an_absurdly_long_key_is_403(client: httpx.AsyncClient) -> None:
    assert (await pro_scan(client, "k" * 5000)).status_code == 403


async def test_a_revoked_key_stops_at_once(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    assert (await pro_scan(client, pro_key.key)).status_code == 200
    with database.session() as session:
        assert revoke_api_key(session, pro_key.key, clock())

    response = await pro_scan(client, pro_key.key)

    assert response.status_code == 403
    assert "revoked" in response.json()["error"]


async def test_a_rotated_key_keeps_the_months_usage(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    await pro_scan(client, pro_key.key)
    with database.session() as session:
        new = rotate_api_key(session, pro_key.subscription_id, clock())

    old_response = await pro_scan(client, pro_key.key)
    new_response = await pro_scan(client, new.key)

    assert old_response.status_code == 403
    assert new_response.status_code == 200
    assert new_response.headers["X-Scans-Remaining"] == "48"


#: What the owner of a key is told, by its subscription's status (docs/payments.md: a failed renewal comes back
#: with its payment, a cancellation is final and Pro bought again has a new key, an operator settles a dispute).
INACTIVE_SUBSCRIPTION_SAYS = {
    SUBSCRIPTION_PAST_DUE: "The Pro subscription for this API key is on hold: its renewal has not been paid. The "
    "same key works again as soon as the payment provider collects the renewal, so check the card or account the "
    "subscription is paid with.",
    SUBSCRIPTION_CANCELLED: "The Pro subscription for this API key was cancelled, and a cancelled subscription "
    "cannot be renewed. To scan with Pro again, subscribe again: the new subscription comes with a new key.",
    SUBSCRIPTION_DISPUTED: "A payment of the Pro subscription for this API key is disputed, so the key is "
    "suspended until the dispute is settled; paying again does not lift it. Contact support to settle it.",
}


@pytest.mark.parametrize("status", list(INACTIVE_SUBSCRIPTION_SAYS))
async def test_an_inactive_subscription_is_403_saying_what_its_owner_can_do(
    api: FastAPI, client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock, status: str
) -> None:
    # Given a key whose subscription is past due, cancelled or disputed
    with database.session() as session:
        set_subscription_status(session, pro_key.subscription_id, status, clock())

    # When it scans, is checked (the key-polling fast path) and its usage asked for
    answers = [
        await pro_scan(client, pro_key.key),
        await client.get("/api/verify-key", headers={"X-API-Key": pro_key.key}),
        await client.get("/api/usage", params={"key": pro_key.key}),
    ]
    # ...and the web UI's Pro page looks it up
    with pytest.raises(KeyRefused) as refused:
        await authenticate(api.state.runtime, pro_key.key)

    # Then each answer is the spec's 403, telling what its owner can do; the UI says the same
    assert [(a.status_code, a.json()) for a in answers] == [(403, {"error": INACTIVE_SUBSCRIPTION_SAYS[status]})] * 3
    assert describe(refused.value, clock()).text == INACTIVE_SUBSCRIPTION_SAYS[status]


async def test_failed_scans_consume_nothing(
    client: httpx.AsyncClient, pro_key: IssuedKey, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    scanner.errors["down.example"] = TargetUnreachable("TLS handshake with down.example failed")
    scanner.errors["local.example"] = TargetRefused("local.example resolves to 127.0.0.1, a loopback address")

    unreachable = await pro_scan(client, pro_key.key, "down.example")
    refused = await pro_scan(client, pro_key.key, "local.example")
    bad_scheme = await pro_scan(client, pro_key.key, "file:///etc/passwd")

    assert [unreachable.status_code, refused.status_code, bad_scheme.status_code] == [502, 400, 400]
    # Spec 8: the header "after each Pro scan or PDF call", a failed one too: it shows nothing was consumed
    assert [r.headers["X-Scans-Remaining"] for r in (unreachable, refused, bad_scheme)] == ["50", "50", "50"]
    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0
        assert recent_scans(session, subscription_id=pro_key.subscription_id) == []


async def test_the_last_scan_is_not_lost_to_a_failure(
    client: httpx.AsyncClient, pro_key: IssuedKey, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    use_scans(database, pro_key, clock, 49)
    scanner.errors["down.example"] = TargetUnreachable("down")

    failed = await pro_scan(client, pro_key.key, "down.example")
    assert (failed.status_code, failed.headers["X-Scans-Remaining"]) == (502, "1")
    response = await pro_scan(client, pro_key.key)

    assert response.status_code == 200
    assert response.headers["X-Scans-Remaining"] == "0"


async def test_a_crashing_scanner_is_500_json_and_consumes_nothing(
    client: httpx.AsyncClient, pro_key: IssuedKey, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    scanner.crash = RuntimeError("secret internal detail")

    response = await pro_scan(client, pro_key.key)

    assert response.status_code == 500
    assert response.json() == {"error": "An internal error occurred. Please try again later."}
    assert "secret" not in response.text
    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0


async def test_pro_scans_are_recorded_for_history(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database
) -> None:
    await pro_scan(client, pro_key.key, "https://a.example/")
    await pro_scan(client, pro_key.key, "https://b.example/")

    with database.session() as session:
        records = recent_scans(session, subscription_id=pro_key.subscription_id)
    assert [(r.kind, r.url, r.api_key_id) for r in records] == [
        ("pro", "https://b.example/", pro_key.key_id),
        ("pro", "https://a.example/", pro_key.key_id),
    ]


async def test_two_subscribers_have_separate_quotas(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    other = new_key(database, clock, "other@example.com")
    use_scans(database, pro_key, clock, 50)

    assert (await pro_scan(client, pro_key.key)).status_code == 429
    assert (await pro_scan(client, other.key)).status_code == 200
