"""API keys (spec 5): absent -> 401, invalid / unknown / inactive -> 403."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Security
from fastapi.security import APIKeyHeader, APIKeyQuery

from websec_app.services.admission import Place
from websec_app.settings import Settings
from websec_app.store import KeyCheck, KeyStatus, look_up_api_key, monthly_scan_limit

from .context import ApiContext, Context
from .errors import ApiError

HEADER_SCHEME = "X-API-Key header"
QUERY_SCHEME = "key query parameter"

api_key_header = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    scheme_name=HEADER_SCHEME,
    description="Your Pro API key (`wsk_...`). Treat it like a password.",
)
api_key_query = APIKeyQuery(
    name="key",
    auto_error=False,
    scheme_name=QUERY_SCHEME,
    description="Your Pro API key, for `GET /api/usage` only.",
)

_CHALLENGE = {"WWW-Authenticate": 'ApiKey realm="websec"'}
MISSING_HEADER = "An API key is required: send it in the X-API-Key header."
MISSING_QUERY = "An API key is required: pass it as the 'key' query parameter."
_REJECTED = {
    KeyStatus.UNKNOWN: "The API key is not valid. Check that it was copied completely.",
    KeyStatus.REVOKED: "This API key has been revoked. Use your current key, or ask support for a new one.",
    KeyStatus.SUBSCRIPTION_INACTIVE: "The Pro subscription for this API key is not active. "
    "Renew the subscription to use the key again.",
}
_NO_API_ACCESS = "This API key's plan does not include Pro scans."


@dataclass(frozen=True)
class Principal:
    """An authenticated Pro subscriber."""

    key_id: int
    subscription_id: int
    email: str
    plan: str
    monthly_limit: int


def missing_key(message: str) -> ApiError:
    return ApiError(401, message, _CHALLENGE)


async def authenticate(ctx: ApiContext, key: str) -> Principal:
    """The subscriber a key belongs to; raises ApiError(403) for anything but a valid Pro key."""
    check, _ = await look_up_api_key(ctx.hot_rows(), key)
    return principal_of(check, ctx.settings)


def principal_of(check: KeyCheck, settings: Settings) -> Principal:
    """The subscriber of a looked-up key; raises ApiError(403) for anything but a valid Pro key."""
    if not check.valid:
        raise ApiError(403, _REJECTED[check.status])
    if check.key_id is None or check.subscription_id is None or check.email is None or check.plan is None:
        raise ApiError(403, _REJECTED[KeyStatus.UNKNOWN])  # pragma: no cover - a valid check has them all
    limit = monthly_scan_limit(check.plan, settings)
    if limit <= 0:
        raise ApiError(403, _NO_API_ACCESS)
    return Principal(check.key_id, check.subscription_id, check.email, check.plan, limit)


def presented(key: str | None) -> str | None:
    """The key as sent, or None when absent or blank."""
    if key is None:
        return None
    key = key.strip()
    return key or None


@dataclass(frozen=True)
class InLine:
    """An authenticated Pro subscriber holding a place in this process's scan line."""

    principal: Principal
    place: Place | None  # None: the app runs without admission


async def require_api_key_in_line(
    key: Annotated[str | None, Security(api_key_header)], ctx: Context
) -> AsyncIterator[InLine]:
    """Dependency of the Pro scan endpoints: 401 without a key, then a place in the scan line (503 when
    the line is full), then the key lookup (403); the place is given back when the route returns.

    The place is taken on arrival, before the lookup awaits the database, so Pro scans keep their arrival
    order among free scans, which await nothing before the line: looked up first on PostgreSQL, a burst's
    Pro requests all found the line already filled by the free ones (bench/load_bench.py).
    """
    value = presented(key)
    if value is None:
        raise missing_key(MISSING_HEADER)
    place = ctx.admission.place() if ctx.admission is not None else None
    try:
        yield InLine(await authenticate(ctx, value), place)
    finally:
        if place is not None:
            place.leave()


#: Route parameter type for the X-API-Key scan endpoints: `pro: ProKeyInLine`.
ProKeyInLine = Annotated[InLine, Depends(require_api_key_in_line, scope="function")]
