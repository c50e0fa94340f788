"""The raw ASGI answer to GET /api/verify-key and /api/usage (api_routes/key_polling.py).

It stands in front of FastAPI for speed, so it must answer exactly as the FastAPI routes behind it
would: same statuses, bodies and headers, for every kind of request. Each case is sent to both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from api_routes.middleware.head_requests import HeadAsGet
from api_routes.middleware.key_polling import KeyPolling
from api_routes.middleware.request_limits import RequestLimits
from tests.api.conftest import new_key
from tests.api.fakes import FrozenClock
from websec_app.store import Database, IssuedKey, revoke_api_key, set_subscription_status

Request = tuple[str, dict[str, str], dict[str, str]]  # path, query parameters, headers


def _stacks(api: FastAPI) -> tuple[ASGIApp, ASGIApp]:
    """The app as served (KeyPolling in front, behind the request bounds), and the same app without KeyPolling."""
    limits = api.build_middleware_stack()
    assert isinstance(limits, RequestLimits), "create_api() must put RequestLimits in front of everything"
    head = limits.app
    assert isinstance(head, HeadAsGet), "create_api() must serve HEAD as GET right behind the request bounds"
    outer = head.app
    assert isinstance(outer, KeyPolling), "create_api() must put KeyPolling in front of FastAPI's stack"
    return _as_served(api, outer), _as_served(api, outer.app)


def _as_served(api: FastAPI, stack: ASGIApp) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = api  # what FastAPI.__call__ does before its middleware stack
        await stack(scope, receive, send)

    return app


async def _send(app: ASGIApp, request: Request, scheme: str = "http") -> httpx.Response:
    path, params, headers = request
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 50000), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=f"{scheme}://testserver") as http:
        return await http.get(path, params=params or None, headers=headers)


def _comparable(response: httpx.Response) -> tuple[int, bytes, list[tuple[str, str]]]:
    return response.status_code, response.content, sorted(response.headers.multi_items())


def _requests(valid: IssuedKey, revoked: IssuedKey, cancelled: IssuedKey) -> list[Request]:
    return [
        ("/api/verify-key", {}, {"X-API-Key": valid.key}),
        ("/api/verify-key", {}, {"X-API-Key": f"  {valid.key}  "}),  # pasted with spaces
        ("/api/verify-key", {}, {}),
        ("/api/verify-key", {}, {"X-API-Key": "   "}),
        ("/api/verify-key", {}, {"X-API-Key": "wsk_nope"}),
        ("/api/verify-key", {}, {"X-API-Key": "x" * 500}),
        ("/api/verify-key", {}, {"X-API-Key": revoked.key}),
        ("/api/verify-key", {}, {"X-API-Key": cancelled.key}),
        ("/api/verify-key", {"key": valid.key}, {}),  # the query is not the header
        ("/api/usage", {"key": valid.key}, {}),
        ("/api/usage", {}, {}),
        ("/api/usage", {"key": ""}, {}),
        ("/api/usage", {"key": "wsk_nope"}, {}),
        ("/api/usage", {"key": revoked.key}, {}),
        ("/api/usage", {"key": cancelled.key}, {}),
        ("/api/usage", {}, {"X-API-Key": valid.key}),  # the header is not the query
        (f"/api/usage?key=wsk_first&key={valid.key}", {}, {}),  # the last value counts, as in Starlette
        (f"/api/usage?key={valid.key}%20&other=1", {}, {}),
    ]


@pytest.fixture
def keys(database: Database, clock: FrozenClock) -> tuple[IssuedKey, IssuedKey, IssuedKey]:
    valid = new_key(database, clock, "valid@example.com")
    revoked = new_key(database, clock, "revoked@example.com")
    cancelled = new_key(database, clock, "cancelled@example.com")
    with database.session() as session:
        revoke_api_key(session, revoked.key, clock())
        set_subscription_status(session, cancelled.subscription_id, "cancelled", clock())
    return valid, revoked, cancelled


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_it_answers_exactly_as_the_fastapi_routes_would(
    api: FastAPI, keys: tuple[IssuedKey, IssuedKey, IssuedKey], scheme: str
) -> None:
    outer, inner = _stacks(api)
    statuses = set()
    for request in _requests(*keys):
        fast, routed = await _send(outer, request, scheme), await _send(inner, request, scheme)

        assert _comparable(fast) == _comparable(routed), request
        assert "error" in fast.json() or fast.json()["valid"] is True
        statuses.add(fast.status_code)
    assert statuses == {200, 401, 403}
    assert ("strict-transport-security" in fast.headers) == (scheme == "https")


async def test_it_leaves_every_other_request_to_the_app(api: FastAPI, keys: tuple[IssuedKey, ...]) -> None:
    outer, _ = _stacks(api)
    transport = httpx.ASGITransport(app=outer, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        wrong_method = await http.post("/api/verify-key", headers={"X-API-Key": keys[0].key})
        trailing_slash = await http.get("/api/usage/", params={"key": keys[0].key}, follow_redirects=False)
        health = await http.get("/api/health")

    assert wrong_method.status_code == 405 and wrong_method.json()["error"].startswith("POST is not allowed")
    assert trailing_slash.status_code in (307, 404)
    assert health.status_code == 200


async def test_a_database_failure_is_a_json_500_without_details(
    api: FastAPI, database: Database, keys: tuple[IssuedKey, ...], caplog: pytest.LogCaptureFixture
) -> None:
    # Given the keys table gone from under the running app
    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys RENAME TO api_keys_moved")
    outer, _ = _stacks(api)

    with caplog.at_level(logging.ERROR, logger="api_routes.middleware.key_polling"):
        response = await _send(outer, ("/api/verify-key", {}, {"X-API-Key": keys[0].key}))

    # Then the client gets one sentence and the usual headers, the operator the traceback
    assert response.status_code == 500
    assert response.json() == {"error": "An internal error occurred. Please try again later."}
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    assert "api_keys" not in response.text
    assert any(record.exc_info for record in caplog.records)

    # And once the table is back, the next request is answered again
    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys_moved RENAME TO api_keys")
    assert (await _send(outer, ("/api/verify-key", {}, {"X-API-Key": keys[0].key}))).status_code == 200


async def test_a_key_revoked_elsewhere_stops_on_its_next_use(
    make_api: Callable[..., FastAPI], database: Database, clock: FrozenClock
) -> None:
    # Given a key that was just used (the reader keeps its connection between requests)
    key = new_key(database, clock)
    outer, _ = _stacks(make_api())
    request = ("/api/verify-key", {}, {"X-API-Key": key.key})
    assert (await _send(outer, request)).status_code == 200

    # When another connection revokes it
    with database.session() as session:
        revoke_api_key(session, key.key, clock())

    # Then the very next request is refused
    assert (await _send(outer, request)).status_code == 403
