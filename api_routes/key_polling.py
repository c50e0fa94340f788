"""GET /api/verify-key and GET /api/usage answered in raw ASGI, in front of FastAPI's stack.

Clients poll these two (CI pipelines check their key and quota before every run), so they must
stay fast under many concurrent clients (target: p99 under 20 ms with 50 clients on two cores,
`python -m bench.api_bench`). Through FastAPI each request paid for Starlette's middleware stack,
routing, a Request and a JSONResponse object and the exception-handler plumbing, about as much
CPU again as the key lookup itself. Here a request for exactly one of these two paths is answered
with the same functions the FastAPI routes use (`keys.verify_key_answer`, `keys.usage_answer`),
the same error sentences and statuses, and the same security headers (`security_headers.api_headers`);
every other request passes through untouched. The access log is written by the server, so the
`?key=` redaction (`log_redaction`) applies as before.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from .context import ApiContext
from .errors import INTERNAL_ERROR, ApiError
from .keys import USAGE_PATH, VERIFY_KEY_PATH, usage_answer, verify_key_answer
from .security_headers import api_headers

log = logging.getLogger(__name__)

Answer = Callable[[ApiContext, str | None], Awaitable[dict[str, object]]]
_JSON = (b"content-type", b"application/json")


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header, as Starlette's `Headers.get` reads it."""
    for key, value in scope["headers"]:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _query_parameter(scope: Scope, name: str) -> str | None:
    """The last value of a query parameter, as Starlette's `QueryParams.get` reads it."""
    found = None
    for key, value in parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True):
        if key == name:
            found = value
    return found


def _verify_key_input(scope: Scope) -> str | None:
    return _header(scope, b"x-api-key")


def _usage_input(scope: Scope) -> str | None:
    return _query_parameter(scope, "key")


#: path -> (what the answer reads from the request, the answer)
_ROUTES: dict[str, tuple[Callable[[Scope], str | None], Answer]] = {
    VERIFY_KEY_PATH: (_verify_key_input, verify_key_answer),
    USAGE_PATH: (_usage_input, usage_answer),
}


def _encode(body: object) -> bytes:
    # Byte for byte what FastAPI's JSONResponse writes.
    return json.dumps(body, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode()


class KeyPolling:
    """ASGI wrapper: answers `GET /api/verify-key` and `GET /api/usage` itself, passes the rest to `app`."""

    def __init__(self, app: ASGIApp, context: ApiContext) -> None:
        self.app = app
        self.context = context
        self.production = context.settings.is_production

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _ROUTES.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        read_input, answer = route
        extra: list[tuple[bytes, bytes]] = []
        try:
            status, body = 200, await answer(self.context, read_input(scope))
        except ApiError as exc:
            status, body = exc.status_code, {"error": str(exc.detail)}
            extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (exc.headers or {}).items()]
        except Exception:
            # As errors._unexpected: the traceback for operators, one sentence for the client.
            log.exception("unhandled error on GET %s", scope["path"])
            status, body = 500, {"error": INTERNAL_ERROR}
        payload = _encode(body)
        https = self.production or scope.get("scheme") == "https"
        headers = [_JSON, (b"content-length", str(len(payload)).encode()), *extra, *api_headers(https)]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


__all__ = ["KeyPolling"]
