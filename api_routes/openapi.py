"""OpenAPI descriptions of the error responses, shared by the routes."""

from __future__ import annotations

from typing import Any

from .limits import body_limit, size_text
from .schemas import ErrorBody

_GENERIC = {
    400: "Missing or malformed body, wrong field types, invalid URL or scheme, or a private/loopback target.",
    401: "The API key is missing.",
    403: "The API key is invalid, unknown, revoked, or its subscription is not active.",
    429: "The monthly quota of the plan is used up; it resets on the 1st of the month (UTC).",
    500: "Unexpected server error.",
    502: "The target site could not be reached: connection refused, DNS failure, TLS error or timeout.",
    503: "The scanner is at capacity (every scan slot and the wait queue of this server are taken); nothing was "
    "counted. Retry after `Retry-After` seconds.",
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


def add_body_limits(schema: dict[str, Any]) -> None:
    """A 413 on every operation that takes a body (every POST: the webhooks read theirs raw, so only the method
    says so), with its limit. middleware/request_limits.py answers it in front of the routes, so no route
    declares it."""
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            if method in ("post", "put", "patch") and isinstance(operation, dict):
                limit = body_limit(path)
                operation.setdefault("responses", {})["413"] = {
                    "description": f"The request body is larger than {size_text(limit)} ({limit} bytes); refused "
                    "as soon as Content-Length says so or the streamed body passes the limit.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
                }


SCANS_REMAINING = {
    "X-Scans-Remaining": {
        "description": "Scans left in the current calendar month (UTC) after this call.",
        "schema": {"type": "integer"},
    }
}
RETRY_AFTER = {"Retry-After": {"description": "Seconds until the quota resets.", "schema": {"type": "integer"}}}
#: The 503 of the scan endpoints (api_routes/admission.py).
OVERLOADED: dict[int | str, dict[str, Any]] = {
    503: {
        "model": ErrorBody,
        "description": _GENERIC[503],
        "headers": {"Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}},
    }
}
