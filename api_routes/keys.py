"""GET /api/verify-key and GET /api/usage (spec 4.4, 4.5): they consume no quota."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from sqlmodel import Session

from websec_app.settings import Settings
from websec_app.store import monthly_scans_used

from .auth import MISSING_QUERY, ProKey, QueryKey, authenticate, missing_key, presented
from .context import Context
from .docs import errors
from .schemas import KeyCheckResult, UsageResult

router = APIRouter(tags=["keys"])


@router.get(
    "/api/verify-key",
    summary="Check an API key (X-API-Key)",
    response_model=KeyCheckResult,
    responses=errors(401, 403, 500),
)
async def verify_key(principal: ProKey) -> KeyCheckResult:
    """Answers 200 with `valid: true` and the plan for an active key. Consumes no quota."""
    return KeyCheckResult(valid=True, plan=principal.plan)


def _usage(session: Session, key: str, settings: Settings, now: datetime) -> UsageResult:
    principal = authenticate(session, key, settings)
    used = monthly_scans_used(session, principal.subscription_id, now)
    return UsageResult(
        valid=True, email=principal.email, plan=principal.plan, scans_used=used, scans_limit=principal.monthly_limit
    )


@router.get(
    "/api/usage",
    summary="Usage of this month (key in the query)",
    response_model=UsageResult,
    responses=errors(401, 403, 500, e401="The `key` query parameter is missing."),
)
async def usage(key: QueryKey, ctx: Context) -> UsageResult:
    """Scans used this calendar month (UTC) and the plan's limit. Consumes no quota."""
    value = presented(key)
    if value is None:
        raise missing_key(MISSING_QUERY)
    return await ctx.db(_usage, value, ctx.settings, ctx.now())
