"""Bounded requests (issue 12): header bounds (431) and a body limit per path (413), in front of everything.

Measured before this wrapper: a 300 MB JSON body to `/api/scan` from a client already over quota was read
and parsed in full (VmHWM 1.28-1.35 GB, ~400 MB-1 GB still resident afterwards) before the 429. Now the
request is refused as soon as its `Content-Length` says it is too large, or as soon as a body without one
(chunked) has streamed past the limit; at most `limit` bytes are ever held (`tests/api/test_hostile_clients.py`).

It is the outermost wrapper (`create_api` `_wrap_outermost`), so it covers the raw-ASGI key endpoints
(`key_polling`), every FastAPI route and, mounted in Reflex (`make run`), the UI's own HTTP endpoints.
FastAPI's own `max_body_size` sits inside its middleware stack and covers only its routes, and bounds no
headers, hence this wrapper. Websocket scopes (Reflex's `/_event`) pass through untouched: Reflex's
socket.io server bounds its messages itself (python-engineio `max_http_buffer_size`, 1,000,000 bytes).

Body limits, by path (`api_routes/limits.py` `body_limit`, shared with the OpenAPI document):
- `/api/webhooks/*`: 512 KiB. Neither Stripe nor Razorpay documents a maximum event size; their events
  embed one object (a Checkout Session, an invoice with its first lines, a payment), a few KB to a few tens
  of KB even with metadata (Stripe: at most 50 keys of 500 characters per object). Refusing a real event
  would make the provider retry it for days and then disable the endpoint, so the limit is generous; it
  still bounds what an unauthenticated sender makes us hold before the signature is checked.
- every other `/api/*` path: 16 KiB. The largest real body is a scan or compliance request: a URL of at
  most 2048 characters, an email of at most 254, a name of at most 80, a token of at most 128 (schemas.py),
  about 2.6 KB; the sandbox checkout form sends one word.
- anything else: 1 MiB. Mounted in Reflex these are the prerendered pages, `/assets`, `/_health`, `/ping`:
  none reads a body. Reflex registers `/_upload` only when a page uses `rx.upload` (reflex/app.py
  `_add_optional_endpoints`), and ours do not; if one ever does, give that path its own limit here. 1 MiB
  also covers Engine.IO's HTTP long-polling fallback of `/_event` (POSTs of at most its 1,000,000 bytes).

The whole (bounded) body is read before the app runs and handed to it in one message: the app would read
it all anyway (FastAPI parses the whole body before the route), and refusing early means no route has
started, so a 413 is always a clean answer. A body that does not arrive within `BODY_SECONDS` is a 408.

Headers: granian (hyper) already refuses more than 100 fields with 431 (an empty body: that answer comes
from the server, before any ASGI app, so it cannot be in the API's error shape) and caps the request head at its
read buffer (`HTTP1Settings.max_buffer_size`, 417,792 bytes), and gives up on a head not complete within
30 s (`header_read_timeout`). Within those, this wrapper enforces the usual server bounds: one field line
of at most 8 KiB (nginx `large_client_header_buffers`, Apache `LimitRequestFieldSize`) and 32 KiB in all
(nginx's 4 x 8k), answered 431 (RFC 6585 section 5) in the API's error shape.
"""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import error_response
from ..limits import (
    BAD_LENGTH,
    BODY_SECONDS,
    BODY_TOO_SLOW,
    HEADERS_TOO_LARGE,
    MAX_HEADER_COUNT,
    MAX_HEADER_FIELD,
    MAX_HEADERS_TOTAL,
    body_limit,
    too_large_message,
)
from .security_headers import api_headers


class _TooLarge(Exception):
    pass


class RequestLimits:
    """ASGI wrapper: refuses oversized headers (431) and bodies (413) before `app` sees the request."""

    def __init__(self, app: ASGIApp, *, production: bool) -> None:
        self.app = app
        self.production = production

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        if not _headers_within_bounds(headers):
            await self._refuse(431, HEADERS_TOO_LARGE, scope, receive, send)
            return
        limit = body_limit(scope["path"])
        declared: int | None = None
        chunked = False
        for name, value in headers:
            if name == b"content-length":
                if not value.strip().isdigit():
                    await self._refuse(400, BAD_LENGTH, scope, receive, send)
                    return
                declared = int(value)
            elif name == b"transfer-encoding":
                chunked = True
        if declared is not None and declared > limit:
            await self._refuse(413, too_large_message(limit), scope, receive, send)
            return
        if not declared and not chunked:
            await self.app(scope, receive, send)  # no body
            return
        try:
            with anyio.fail_after(BODY_SECONDS):
                body = await _read_body(receive, limit)
        except _TooLarge:
            await self._refuse(413, too_large_message(limit), scope, receive, send)
            return
        except TimeoutError:
            await self._refuse(408, BODY_TOO_SLOW, scope, receive, send)
            return
        if body is None:
            return  # the client went away mid-body: nobody to answer
        await self.app(scope, _replay(body, receive), send)

    async def _refuse(self, status: int, message: str, scope: Scope, receive: Receive, send: Send) -> None:
        # The rest of the body is never read, so the connection cannot be reused: say so (RFC 9112 section 9.6).
        response = error_response(status, message, {"Connection": "close"})
        response.raw_headers.extend(api_headers(scope, self.production))
        await response(scope, receive, send)


def _headers_within_bounds(headers: list[tuple[bytes, bytes]]) -> bool:
    if len(headers) > MAX_HEADER_COUNT:
        return False
    total = 0
    for name, value in headers:
        size = len(name) + len(value) + 4  # "name: value\r\n" as sent
        if size > MAX_HEADER_FIELD:
            return False
        total += size
    return total <= MAX_HEADERS_TOTAL


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or _TooLarge as soon as more than `limit` bytes arrived; None on a disconnect."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise _TooLarge
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body read already, then whatever the server sends next (a disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


__all__ = ["RequestLimits"]
