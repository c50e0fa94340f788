"""Bounded requests (issue 12), in-process: body limits per path (413), header bounds (431), field lengths (400).

The same limits against a real `serve-api` under hostile clients: test_hostile_clients.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from api_routes.limits import API_BODY_LIMIT, OTHER_BODY_LIMIT, WEBHOOK_BODY_LIMIT, body_limit
from api_routes.middleware import request_limits
from api_routes.middleware.request_limits import RequestLimits
from tests.api.fakes import FakeScanner


async def _stream(total: int, piece: int = 4096) -> AsyncIterator[bytes]:
    """`total` bytes in pieces, with no Content-Length: httpx sends it chunked."""
    sent = 0
    while sent < total:
        yield b" " * min(piece, total - sent)
        sent += piece


def test_each_path_has_its_limit() -> None:
    assert body_limit("/api/scan") == API_BODY_LIMIT == 16 * 1024
    assert body_limit("/api/webhooks/stripe") == body_limit("/api/webhooks/razorpay") == WEBHOOK_BODY_LIMIT
    assert body_limit("/") == body_limit("/_upload") == OTHER_BODY_LIMIT


async def test_a_declared_oversized_body_is_refused_with_413(client: httpx.AsyncClient, scanner: FakeScanner) -> None:
    # When a body one byte over the limit is announced by Content-Length
    response = await client.post(
        "/api/scan", content=b" " * (API_BODY_LIMIT + 1), headers={"Content-Type": "application/json"}
    )

    # Then it is a 413 in the API's error shape, with the security headers, and nothing was scanned
    assert response.status_code == 413
    assert response.json() == {
        "error": "The request body is too large: this endpoint accepts at most 16 KiB (16384 bytes)."
    }
    assert response.headers["connection"] == "close"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert scanner.calls == []


async def test_a_streamed_body_is_counted_as_it_arrives(client: httpx.AsyncClient) -> None:
    # When a chunked body without Content-Length passes the limit, then when one stays within it
    over = await client.post("/api/scan/pro", content=_stream(API_BODY_LIMIT + 1))
    within = await client.post(
        "/api/scan", content=_stream(100), headers={"Content-Type": "application/json", "X-Forwarded-For": "x"}
    )

    # Then the first is a 413, the second reaches the route (an empty JSON body: 400)
    assert over.status_code == 413 and "too large" in over.json()["error"]
    assert within.status_code == 400 and within.json() == {"error": "The request body is not valid JSON."}


async def test_a_body_at_the_limit_is_accepted(client: httpx.AsyncClient, scanner: FakeScanner) -> None:
    body = json.dumps({"url": "example.com", "pad": ""}).encode()
    body = body[:-2] + b" " * (API_BODY_LIMIT - len(body)) + body[-2:]
    assert len(body) == API_BODY_LIMIT

    response = await client.post("/api/scan", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 200, response.text
    assert len(scanner.calls) == 1


async def test_webhooks_take_provider_sized_bodies(client: httpx.AsyncClient) -> None:
    # A 100 KB event reaches the webhook route (here: no provider configured, or a bad signature)
    event = await client.post("/api/webhooks/stripe", content=b"{" + b" " * 100_000 + b"}")
    huge = await client.post("/api/webhooks/razorpay", content=b" " * (WEBHOOK_BODY_LIMIT + 1))

    assert event.status_code in (400, 503), event.text
    assert huge.status_code == 413 and "512 KiB" in huge.json()["error"]


async def test_paths_outside_the_api_have_their_own_limit(client: httpx.AsyncClient) -> None:
    within = await client.post("/somewhere", content=b" " * (API_BODY_LIMIT * 2))
    over = await client.post("/somewhere", content=b" " * (OTHER_BODY_LIMIT + 1))

    assert within.status_code != 413
    assert over.status_code == 413 and "1 MiB" in over.json()["error"]


async def test_oversized_headers_are_refused_with_431(client: httpx.AsyncClient) -> None:
    # One field over 8 KiB, or 40 KiB in fields of 1 KiB, also on the raw-ASGI key endpoints
    one_big = await client.get("/api/health", headers={"X-Junk": "a" * 9000})
    many = await client.get("/api/verify-key", headers={f"X-Junk-{n}": "a" * 1000 for n in range(40)})
    fine = await client.get("/api/health", headers={"X-Junk": "a" * 4000})

    for response in (one_big, many):
        assert response.status_code == 431
        assert response.json()["error"].startswith("The request headers are too large")
    assert fine.status_code == 200


async def _call(app: RequestLimits, scope: Scope, messages: list[Message]) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        if messages:
            return messages.pop(0)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _scope(path: str = "/api/scan", headers: list[tuple[bytes, bytes]] | None = None) -> Scope:
    return {"type": "http", "method": "POST", "path": path, "headers": headers or [], "query_string": b""}


async def _inner(scope: Scope, receive: Receive, send: Send) -> None:
    raise AssertionError("the app must not be called")


async def test_a_malformed_content_length_is_a_400() -> None:
    sent = await _call(RequestLimits(_inner, production=False), _scope(headers=[(b"content-length", b"-5")]), [])
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"]) == {"error": "The Content-Length header is not a valid length."}


async def test_a_body_that_never_arrives_is_a_408(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_limits, "BODY_SECONDS", 0.1)
    headers = [(b"transfer-encoding", b"chunked")]
    first = {"type": "http.request", "body": b"{", "more_body": True}
    sent = await _call(RequestLimits(_inner, production=False), _scope(headers=headers), [first])
    assert sent[0]["status"] == 408


async def test_websockets_pass_through_untouched() -> None:
    seen: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)

    scope = {"type": "websocket", "path": "/_event", "headers": [(b"x-junk", b"a" * 50_000)]}
    await RequestLimits(app, production=False)(scope, _inner_receive, _inner_send)
    assert seen == [scope]


async def _inner_receive() -> Message:
    raise AssertionError("not read")


async def _inner_send(message: Message) -> None:
    raise AssertionError("not sent")


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/api/scan", {"url": "a" * 2049}, "The field 'url' must be at most 2048 characters."),
        (
            "/api/scan",
            {"url": "example.com", "one_time_token": "t" * 129},
            "The field 'one_time_token' must be at most 128 characters.",
        ),
        (
            "/api/compliance-report/generate",
            {"token": "t" * 129, "url": "example.com", "email": "a@example.com"},
            "The field 'token' must be at most 128 characters.",
        ),
        (
            "/api/compliance-report/pay",
            {"provider": "stripe", "url": "example.com", "email": "a" * 250 + "@example.com"},
            "The field 'email' must be at most 254 characters.",
        ),
        (
            "/api/verify-one-time",
            {"payment_id": "p" * 129, "email": "a@example.com"},
            "The field 'payment_id' must be at most 128 characters.",
        ),
    ],
)
async def test_fields_are_bounded(client: httpx.AsyncClient, path: str, body: dict[str, str], message: str) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 400
    assert response.json() == {"error": message}


async def test_deeply_nested_json_is_a_400_not_a_crash(client: httpx.AsyncClient) -> None:
    # Within the 16 KiB limit, 8,000 levels of nesting: deeper than Python's recursion limit
    body = b'{"url": "example.com", "x": ' + b"[" * 8000 + b"]" * 8000 + b"}"
    assert len(body) < API_BODY_LIMIT

    response = await client.post("/api/scan", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert set(response.json()) == {"error"}
