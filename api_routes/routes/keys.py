"""GET /api/verify-key and GET /api/usage (spec 4.4, 4.5): they consume no quota.

These two are what clients poll, so they are answered by `key_polling.KeyPolling`, a raw ASGI
handler in front of FastAPI's stack (bench/api_bench.py). The FastAPI routes below describe them
in the OpenAPI document and answer with the same functions when the app runs without that
handler in front; both read the key from the request directly and look it up from the event loop
(`store.look_up_api_key`: SQLite in-process, PostgreSQL awaited on psycopg's async connections).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from websec_app.store import look_up_api_key
from websec_app.usecases import KeyRefused, presented, subscriber_of

from ..auth import (
    HEADER_SCHEME,
    MISSING_HEADER,
    MISSING_QUERY,
    QUERY_SCHEME,
    authenticated,
    key_refused,
    missing_key,
)
from ..context import Runtime
from ..openapi import errors
from ..schemas import KeyCheckResult, UsageResult

router = APIRouter(tags=["keys"])

VERIFY_KEY_PATH = "/api/verify-key"
USAGE_PATH = "/api/usage"


async def verify_key_answer(ctx: Runtime, presented_key: str | None) -> dict[str, object]:
    """The KeyCheckResult body (spec 2.5) for the X-API-Key header's value; raises ApiError 401/403."""
    key = presented(presented_key)
    if key is None:
        raise missing_key(MISSING_HEADER)
    subscriber = await authenticated(ctx, key)
    return {"valid": True, "plan": subscriber.plan}


async def usage_answer(ctx: Runtime, presented_key: str | None) -> dict[str, object]:
    """The UsageResult body (spec 2.6) for the `key` query parameter's value; raises ApiError 401/403."""
    key = presented(presented_key)
    if key is None:
        raise missing_key(MISSING_QUERY)
    # The key and the month's usage in one round trip (store.look_up_api_key): this endpoint is polled.
    check, used = await look_up_api_key(ctx.hot_rows(), key, ctx.now())
    try:
        subscriber = subscriber_of(check, ctx)
    except KeyRefused as exc:
        raise key_refused(exc) from None
    return {
        "valid": True,
        "email": subscriber.email,
        "plan": subscriber.plan,
        "scans_used": used,
        "scans_limit": subscriber.monthly_limit,
    }


@router.get(
    VERIFY_KEY_PATH,
    summary="Check an API key (X-API-Key)",
    response_model=KeyCheckResult,
    responses=errors(401, 403, 500),
    openapi_extra={"security": [{HEADER_SCHEME: []}]},
)
async def verify_key(request: Request) -> JSONResponse:
    """Answers 200 with `valid: true` and the plan for an active key. Consumes no quota."""
    return JSONResponse(await verify_key_answer(request.app.state.runtime, request.headers.get("x-api-key")))


@router.get(
    USAGE_PATH,
    summary="Usage of this month (key in the query)",
    response_model=UsageResult,
    responses=errors(401, 403, 500, e401="The `key` query parameter is missing."),
    openapi_extra={"security": [{QUERY_SCHEME: []}]},
)
async def usage(request: Request) -> JSONResponse:
    """Scans used this calendar month (UTC) and the plan's limit. Consumes no quota."""
    return JSONResponse(await usage_answer(request.app.state.runtime, request.query_params.get("key")))
