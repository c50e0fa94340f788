"""Every error is `{"error": "<one clear sentence>"}` (spec 2.9, 7), whatever raised it.

Routes raise `ApiError` (or let a scanner / token / payment exception through); the
handlers here turn those, unknown routes (404), wrong methods (405) and unexpected exceptions
(500, no stack trace) into that shape. FastAPI's validation errors (422 becomes 400) are
answered in auth.py (`bad_body_error`): a malformed body's answer depends on the request's key.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from websec_app.scanner import ScanError
from websec_app.services.admission import ScannerBusy
from websec_app.services.payments import PaymentError
from websec_app.store import TokenProblem, TokenRejected
from websec_app.usecases import MonthlyQuotaUsed, QuotaUsed, Subscriber, usage
from websec_app.usecases.runtime import Runtime
from websec_app.wording import counted

log = logging.getLogger(__name__)


class ApiError(StarletteHTTPException):
    """An error response: status, message, optional headers."""

    def __init__(self, status_code: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status_code=status_code, detail=message, headers=dict(headers) if headers else None)


def error_response(status_code: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status_code, headers=dict(headers) if headers else None)


@asynccontextmanager
async def remaining_told_on_error(request: Request, runtime: Runtime, subscriber: Subscriber) -> AsyncIterator[None]:
    """Spec 8: X-Scans-Remaining "after each Pro scan or PDF call", also one that fails (400, 500, 502, 503,
    none of which consumes a scan): the month's count is read for the error's answer (`_told`)."""
    try:
        yield
    except QuotaUsed:
        raise  # its answer carries the header already (quota_error)
    except Exception:
        request.state.scans_remaining = (await usage(runtime, subscriber)).remaining
        raise


def _told(request: Request, headers: Mapping[str, str] | None) -> dict[str, str] | None:
    """`headers` with X-Scans-Remaining when the route read it for this error (remaining_told_on_error)."""
    remaining = getattr(request.state, "scans_remaining", None)
    if remaining is None:
        return dict(headers) if headers else None
    return {**(headers or {}), "X-Scans-Remaining": str(remaining)}


# --- messages for tokens (the spec leaves these open; documented in docs/api.md) --------------

SCAN_TOKEN_MESSAGES = {
    TokenProblem.UNKNOWN: "This one-time scan token does not exist. Check that it was copied completely.",
    TokenProblem.EXPIRED: "This one-time scan token expired at {at}: tokens are valid for 24 hours after purchase.",
    TokenProblem.USED: "This one-time scan token was already used at {at}: each token is good for one scan.",
}
COMPLIANCE_TOKEN_MESSAGES = {
    TokenProblem.UNKNOWN: "This compliance report token does not exist. Check that it was copied completely.",
    TokenProblem.USED: "This compliance report token was already used at {at}: each token is good for one report.",
    TokenProblem.UNPAID: "The payment for this compliance report token has not been confirmed yet. "
    "Complete the payment, or try again in a minute if you just paid.",
}


def iso(moment: Any) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z") if moment is not None else "an unknown time"


def sentence(message: str) -> str:
    """A message as an error sentence: its first letter upper-case, the rest as written (str.capitalize
    would lower-case the rest, a setting's name included), ending with a full stop."""
    message = message.strip()
    if not message:
        return message
    return message[0].upper() + message[1:] + ("" if message.endswith((".", "!", "?")) else ".")


def token_error(exc: TokenRejected, messages: Mapping[TokenProblem, str]) -> ApiError:
    return ApiError(403, messages[exc.problem].format(at=iso(exc.at)))


# --- quotas (spec 7: 429) ------------------------------------------------------------------------


def quota_error(exc: QuotaUsed, now: datetime) -> ApiError:
    """The 429 of a used-up quota, with when it comes back (Retry-After, RFC 9110 section 10.2.3)."""
    wait = {"Retry-After": str(max(1, int((exc.resets_at - now).total_seconds())))}
    if isinstance(exc, MonthlyQuotaUsed):
        return ApiError(
            429,
            f"The monthly quota of {counted(exc.limit, 'scan')} is used up. "
            f"It resets on {exc.resets_at:%Y-%m-%d} at 00:00 UTC ({iso(exc.resets_at)}).",
            {"X-Scans-Remaining": "0", **wait},
        )
    return ApiError(
        429,
        f"The free scan limit of {counted(exc.limit, 'scan')} per day for your IP address is reached. "
        f"It resets at midnight UTC ({iso(exc.resets_at)}); a Pro key or a one-time scan token scans without "
        "this limit.",
        wait,
    )


# --- validation errors -------------------------------------------------------------------------

_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "a boolean",
    "bool_parsing": "1 or 0",
    "dict_type": "a JSON object",
    "model_attributes_type": "a JSON object",
}


def _field_name(loc: Sequence[Any]) -> tuple[str, str]:
    """(where, name) of an error location: ("body", "url"), ("query parameter", "full")."""
    where = str(loc[0]) if loc else "body"
    rest = [str(part) for part in loc[1:]]
    if where == "body":
        return "field", ".".join(rest)
    return f"{where} parameter", ".".join(rest)


#: A body sent under another media type than JSON (a form's, text/plain): 400 as every malformed body (spec 7).
NOT_JSON = "The request body must be JSON, sent with Content-Type: application/json."


def validation_message(errors: Sequence[Mapping[str, Any]]) -> str:
    """One sentence per problem (at most three), e.g. "The field 'url' is required."."""
    sentences: list[str] = []
    for error in errors:
        kind = str(error.get("type", ""))
        loc = tuple(error.get("loc", ()))
        where, name = _field_name(loc)
        if kind == "json_invalid":
            said = "The request body is not valid JSON."
        elif where == "field" and not name:
            if kind == "missing":
                said = "A JSON request body is required."
            elif isinstance(error.get("input"), bytes):
                # FastAPI decodes a body as JSON only under a JSON media type; under any other it is raw bytes.
                said = NOT_JSON
            elif kind == "value_error":
                # A model validator's objection to a well-formed object (POST /api/scans: url or urls, not both).
                said = sentence(str(error.get("msg", "")).removeprefix("Value error, "))
            else:
                said = "The request body must be a JSON object."
        elif kind == "missing":
            said = f"The {where} '{name}' is required."
        elif kind == "extra_forbidden":
            said = f"The {where} '{name}' is not allowed."
        elif kind in _TYPE_NAMES:
            said = f"The {where} '{name}' must be {_TYPE_NAMES[kind]}."
        elif kind == "literal_error":
            # pydantic's "'1' or '0'", written as the other choices are: "must be 1 or 0".
            expected = str((error.get("ctx") or {}).get("expected", "")).replace("'", "")
            said = f"The {where} '{name}' must be {expected}."
        elif kind == "string_too_long":
            limit = (error.get("ctx") or {}).get("max_length")
            said = f"The {where} '{name}' must be at most {limit} characters."
        elif kind == "string_too_short":
            said = f"The {where} '{name}' must not be empty."
        else:
            message = str(error.get("msg", "is invalid")).rstrip(".")
            message = message.removeprefix("Value error, ")
            said = f"The {where} '{name}' is invalid: {message}."
        if said not in sentences:
            sentences.append(said)
    if not sentences:
        return "The request is malformed."
    return " ".join(sentences[:3])


# --- handlers ----------------------------------------------------------------------------------

INTERNAL_ERROR = "An internal error occurred. Please try again later."
_STATUS_MESSAGES = {
    400: "The request is malformed.",
    401: "Authentication is required.",
    403: "Access is not allowed.",
    413: "The request body is too large.",
    415: NOT_JSON,
}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)  # registered for this type only
    headers = dict(exc.headers or {})
    if isinstance(exc, ApiError):
        message = str(exc.detail)
    elif exc.status_code == 404:
        message = f"There is no endpoint at {request.url.path}. The API is described at /docs."
    elif exc.status_code == 405:
        allowed = headers.get("Allow") or headers.get("allow")
        message = f"{request.method} is not allowed on {request.url.path}"
        message += f"; use {allowed}." if allowed else "."
    elif isinstance(exc.detail, str) and exc.detail and exc.detail != _default_phrase(exc.status_code):
        message = exc.detail
    else:
        message = _STATUS_MESSAGES.get(exc.status_code, f"The request failed (HTTP {exc.status_code}).")
    return error_response(exc.status_code, message, _told(request, headers))


def _default_phrase(status_code: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status_code).phrase
    except ValueError:
        return ""


async def _scan_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ScanError)
    return error_response(exc.http_status, str(exc) or "The scan failed.", _told(request, None))


async def _quota_used(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, QuotaUsed)
    error = quota_error(exc, request.app.state.runtime.now())
    return error_response(error.status_code, str(error.detail), error.headers)


#: The scan endpoints' 503 (ScannerBusy from the process's scan admission, services/admission.py): every slot
#: and place in the wait queue is taken; the request was refused before any quota unit or token was reserved
#: (RFC 9110 section 15.6.4 for 503, section 10.2.3 for Retry-After).
OVERLOADED_MESSAGE = (
    "The scanner is at capacity right now and your request was not queued; nothing was counted against "
    "your quota. Please retry in a few seconds (see Retry-After)."
)


async def _overloaded(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ScannerBusy)  # registered for this type only
    return error_response(exc.http_status, OVERLOADED_MESSAGE, _told(request, {"Retry-After": str(exc.retry_after)}))


async def _payment_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PaymentError)
    return error_response(exc.http_status, str(exc) or "The payment provider could not be reached.")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # Logged with the traceback for operators; the client gets one sentence and no internals.
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, INTERNAL_ERROR, _told(request, None))


def install_error_handlers(api: FastAPI, *, bad_body: Callable[[Request, Exception], Awaitable[JSONResponse]]) -> None:
    """Every handler here, and `bad_body` for a malformed request (auth.bad_body_error, which builds on ApiError)."""
    api.add_exception_handler(StarletteHTTPException, _http_error)
    api.add_exception_handler(RequestValidationError, bad_body)
    api.add_exception_handler(ScanError, _scan_error)
    api.add_exception_handler(PaymentError, _payment_error)
    api.add_exception_handler(QuotaUsed, _quota_used)
    api.add_exception_handler(ScannerBusy, _overloaded)
    api.add_exception_handler(Exception, _unexpected)
