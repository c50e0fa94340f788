"""OpenAPI descriptions of the error responses, shared by the routes."""

from __future__ import annotations

from typing import Any

from .schemas import ErrorBody

_GENERIC = {
    400: "Missing or malformed body, wrong field types, invalid URL or scheme, or a private/loopback target.",
    401: "The API key is missing.",
    403: "The API key is invalid, unknown, revoked, or its subscription is not active.",
    429: "The monthly quota of the plan is used up; it resets on the 1st of the month (UTC).",
    500: "Unexpected server error.",
    502: "The target site could not be reached: connection refused, DNS failure, TLS error or timeout.",
}


def errors(*codes: int, **overrides: str) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status with the error body model and a description.

    Override a description with `e403="..."`.
    """
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        description = overrides.get(f"e{code}", _GENERIC.get(code, "Error."))
        out[code] = {"model": ErrorBody, "description": description}
    return out


SCANS_REMAINING = {
    "X-Scans-Remaining": {
        "description": "Scans left in the current calendar month (UTC) after this call.",
        "schema": {"type": "integer"},
    }
}
RETRY_AFTER = {"Retry-After": {"description": "Seconds until the quota resets.", "schema": {"type": "integer"}}}
