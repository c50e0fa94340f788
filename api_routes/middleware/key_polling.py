"""GET /api/verify-key and GET /api/usage answered in raw ASGI, in front of FastAPI's stack.

Clients poll these two (CI pipelines check their key and quota before every run), so they must
stay fast under many concurrent clients (target: p99 under 20 ms with 50 clients on two cores,
`python -m bench.api_bench`). Through FastAPI each request paid for Starlette's middleware stack,
routing, a Request object, dependency solving and the exception-handler plumbing, about as much
CPU again as the key lookup itself. Here a request for exactly one of these two paths is answered
with the same functions the FastAPI routes use (`keys.verify_key_answer`, `keys.usage_answer`),
the same error sentences and statuses, and the same security headers (`security_headers.api_headers`);
every other request passes through untouched. The access log is written by the server, so the
`?key=` redaction (`log_redaction`) applies as before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from ..context import Runtime
from ..errors import INTERNAL_ERROR, ApiError, error_response
from ..routes.keys import USAGE_PATH, VERIFY_KEY_PATH, usage_answer, verify_key_answer
from .security_headers import api_headers

log = logging.getLogger(__name__)

Answer = Callable[[Runtime, str | None], Awaitable[dict[str, object]]]


def _verify_key_input(scope: Scope) -> str | None:
    return Headers(scope=scope).get("x-api-key")


def _usage_input(scope: Scope) -> str | None:
    return QueryParams(scope["query_string"]).get("key")


#: path -> (what the answer reads from the request, the answer); read as the FastAPI routes read them.
_ROUTES: dict[str, tuple[Callable[[Scope], str | None], Answer]] = {
    VERIFY_KEY_PATH: (_verify_key_input, verify_key_answer),
    USAGE_PATH: (_usage_input, usage_answer),
}


class KeyPolling:
    """ASGI wrapper: answers `GET /api/verify-key` and `GET /api/usage` itself, passes the rest to `app`."""

    def __init__(self, app: ASGIApp, context: Runtime) -> None:
        self.app = app
        self.context = context
        self.production = context.settings.is_production

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _ROUTES.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        read_input, answer = route
        try:
            response = JSONResponse(await answer(self.context, read_input(scope)))
        except ApiError as exc:
            response = error_response(exc.status_code, str(exc.detail), exc.headers)
        except Exception:
            # As errors._unexpected: the traceback for operators, one sentence for the client.
            log.exception("unhandled error on GET %s", scope["path"])
            response = error_response(500, INTERNAL_ERROR)
        # What SecurityHeaders adds to every other JSON response (this one does not pass through it).
        response.raw_headers.extend(api_headers(scope, self.production))
        await response(scope, receive, send)


__all__ = ["KeyPolling"]
