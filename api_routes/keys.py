"""GET /api/verify-key and GET /api/usage (spec 4.4, 4.5): they consume no quota.

These two are what clients poll, so they are kept lean (bench/api_bench.py): the key is read
from the request directly instead of through a chain of FastAPI dependencies, the answer is
built as JSON directly, and on SQLite the lookup runs on the event loop (`ApiContext.db_read`).
The OpenAPI description still names the security scheme, and the response models document
the bodies.
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from websec_app.settings import Settings
from websec_app.store import Reader, monthly_scans_used

from .auth import HEADER_SCHEME, MISSING_HEADER, MISSING_QUERY, QUERY_SCHEME, authenticate, missing_key, presented
from .context import ApiContext
from .docs import errors
from .schemas import KeyCheckResult, UsageResult

router = APIRouter(tags=["keys"])


@router.get(
    "/api/verify-key",
    summary="Check an API key (X-API-Key)",
    response_model=KeyCheckResult,
    responses=errors(401, 403, 500),
    openapi_extra={"security": [{HEADER_SCHEME: []}]},
)
async def verify_key(request: Request) -> JSONResponse:
    """Answers 200 with `valid: true` and the plan for an active key. Consumes no quota."""
    ctx: ApiContext = request.app.state.websec
    key = presented(request.headers.get("x-api-key"))
    if key is None:
        raise missing_key(MISSING_HEADER)
    principal = await ctx.db_read(authenticate, key, ctx.settings)
    return JSONResponse({"valid": True, "plan": principal.plan})


def _usage(session: Reader, key: str, settings: Settings, now: datetime) -> dict[str, object]:
    principal = authenticate(session, key, settings)
    used = monthly_scans_used(session, principal.subscription_id, now)
    # The UsageResult shape (spec 2.6), built directly: this is the most polled endpoint.
    return {
        "valid": True,
        "email": principal.email,
        "plan": principal.plan,
        "scans_used": used,
        "scans_limit": principal.monthly_limit,
    }


@router.get(
    "/api/usage",
    summary="Usage of this month (key in the query)",
    response_model=UsageResult,
    responses=errors(401, 403, 500, e401="The `key` query parameter is missing."),
    openapi_extra={"security": [{QUERY_SCHEME: []}]},
)
async def usage(request: Request) -> JSONResponse:
    """Scans used this calendar month (UTC) and the plan's limit. Consumes no quota."""
    ctx: ApiContext = request.app.state.websec
    key = presented(request.query_params.get("key"))
    if key is None:
        raise missing_key(MISSING_QUERY)
    return JSONResponse(await ctx.db_read(_usage, key, ctx.settings, ctx.now()))
