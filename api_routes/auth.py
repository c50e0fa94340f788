"""API keys (spec 5): absent -> 401, invalid / unknown / inactive -> 403."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, APIKeyQuery

from websec_app.services.admission import Place
from websec_app.store import KeyStatus
from websec_app.usecases import KeyRefused, Subscriber, authenticate, inactive_subscription_sentence, presented, usage
from websec_app.usecases.runtime import Runtime

from .context import Context
from .errors import ApiError, error_response, validation_message

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
}
_NO_API_ACCESS = "This API key's plan does not include Pro scans."


def missing_key(message: str) -> ApiError:
    return ApiError(401, message, _CHALLENGE)


def key_refused(exc: KeyRefused) -> ApiError:
    """The 403 of a key the use cases refused (unknown, revoked, inactive subscription, no Pro scans)."""
    if exc.reason == "no_plan":
        return ApiError(403, _NO_API_ACCESS)
    if exc.reason == KeyStatus.SUBSCRIPTION_INACTIVE:  # spec 5: inactive is 403; the sentence says what to do
        return ApiError(403, inactive_subscription_sentence(exc.subscription_status))
    return ApiError(403, _REJECTED.get(KeyStatus(exc.reason), _REJECTED[KeyStatus.UNKNOWN]))


async def authenticated(ctx: Runtime, key: str) -> Subscriber:
    """The subscriber a key belongs to; raises ApiError(403) for anything but a valid Pro key."""
    try:
        return await authenticate(ctx, key)
    except KeyRefused as exc:
        raise key_refused(exc) from None


async def subscriber_for(ctx: Runtime, key: str | None) -> Subscriber:
    """The Pro subscriber of the X-API-Key header's value: 401 without one, 403 for a key that is refused."""
    value = presented(key)
    if value is None:
        raise missing_key(MISSING_HEADER)
    return await authenticated(ctx, value)


def _reads_key_header(dependant: Dependant) -> bool:
    return any(d.call is api_key_header or _reads_key_header(d) for d in dependant.dependencies)


def _in_scan_line(dependant: Dependant) -> bool:
    return any(d.call is require_api_key_in_line or _in_scan_line(d) for d in dependant.dependencies)


@dataclass(frozen=True)
class KeyOfBadBody:
    """What the key of a request with a malformed body says about the answer (`key_of_bad_body`)."""

    refusal: ApiError | None  # the 401 or 403 the key deserves, whatever the body
    counted: Subscriber | None  # a valid key on a Pro scan or PDF route: its answer tells X-Scans-Remaining


async def bad_body_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's validation error as a 400 (spec 7), unless the key deserves its 401 or 403 first
    (`key_of_bad_body`); registered with the other error handlers (errors.py)."""
    assert isinstance(exc, RequestValidationError)  # registered for this type only
    key = await key_of_bad_body(request)
    if key.refusal is not None:
        return error_response(key.refusal.status_code, str(key.refusal.detail), key.refusal.headers)
    headers = None
    if key.counted is not None:  # spec 8: X-Scans-Remaining after each Pro scan or PDF call, a 400 too
        headers = {"X-Scans-Remaining": str((await usage(request.app.state.runtime, key.counted)).remaining)}
    return error_response(400, validation_message(exc.errors()), headers)


async def key_of_bad_body(request: Request) -> KeyOfBadBody:
    """On a route that reads the X-API-Key header, the 401 or 403 its key deserves, for the answer to a
    malformed body. Spec 5 and 7: a request without a valid key is refused as such, whatever its body.
    FastAPI decodes the JSON body before it solves any dependency, and the routes that authenticate in their
    own code validate the body first, so without this a bad body hid a missing or refused key. A valid key
    on a Pro scan or PDF route is the subscriber whose scans left the 400 tells (spec 8: after each call)."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    if not isinstance(dependant, Dependant) or not _reads_key_header(dependant):
        return KeyOfBadBody(None, None)
    try:
        subscriber = await subscriber_for(request.app.state.runtime, request.headers.get("x-api-key"))
    except ApiError as exc:
        return KeyOfBadBody(exc, None)
    return KeyOfBadBody(None, subscriber if _in_scan_line(dependant) else None)


@dataclass(frozen=True)
class InLine:
    """An authenticated Pro subscriber holding a place in this process's scan line."""

    subscriber: Subscriber
    place: Place | None  # None: the app runs without admission


async def require_api_key_in_line(
    key: Annotated[str | None, Security(api_key_header)], ctx: Context
) -> AsyncIterator[InLine]:
    """Dependency of the Pro scan endpoints: 401 without a key, then a place in the scan line, then the key
    lookup (403); the place is given back when the route returns.

    The place is taken on arrival, before the lookup awaits the database, so Pro scans keep their arrival
    order among free scans, which await nothing before the line: looked up first, a burst's Pro requests
    once all found the line already filled by the free ones (bench/load_bench.py). A full line is told
    (503) only when the scan awaits its turn, after the key and the URL were checked: an unknown key is
    still a 403 and an invalid URL a 400 (spec 7), and a valid key's 503 tells its scans left (spec 8).
    On a shared queue (PostgreSQL) there is no per-process line: the cluster's expected wait admits every
    scan alike.
    """
    value = presented(key)
    if value is None:
        raise missing_key(MISSING_HEADER)
    # Scans run as jobs on a shared queue (issue 16) are admitted by the cluster's expected wait instead.
    place = ctx.admission.arrive() if ctx.admission is not None and not ctx.jobs.distributed else None
    try:
        yield InLine(await authenticated(ctx, value), place)
    finally:
        if place is not None:
            place.leave()


#: Route parameter type for the X-API-Key scan endpoints: `pro: ProKeyInLine`.
ProKeyInLine = Annotated[InLine, Depends(require_api_key_in_line, scope="function")]
