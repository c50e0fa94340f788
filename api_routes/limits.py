"""The request bounds (issue 12): body limits per path, header bounds, and their error sentences.

Enforced by `middleware/request_limits.py` (which says why each value was chosen) and described by
`openapi.add_body_limits` and docs/api.md, all from these constants.
"""

from __future__ import annotations

KIB = 1024
API_BODY_LIMIT = 16 * KIB
WEBHOOK_BODY_LIMIT = 512 * KIB
OTHER_BODY_LIMIT = 1024 * KIB
WEBHOOK_PREFIX = "/api/webhooks/"

MAX_HEADER_FIELD = 8 * KIB
MAX_HEADERS_TOTAL = 32 * KIB
#: hyper's own bound on the number of fields (granian answers 431 beyond it); checked here too for servers
#: that allow more.
MAX_HEADER_COUNT = 100

#: How long a request body may take to arrive (a slow body holds a connection and up to its limit).
BODY_SECONDS = 30.0


def body_limit(path: str) -> int:
    """The largest request body accepted on `path`, in bytes (see the module docstring for why)."""
    if path.startswith(WEBHOOK_PREFIX):
        return WEBHOOK_BODY_LIMIT
    if path == "/api" or path.startswith("/api/"):
        return API_BODY_LIMIT
    return OTHER_BODY_LIMIT


def size_text(size: int) -> str:
    """16384 -> "16 KiB", 1048576 -> "1 MiB"."""
    if size % (KIB * KIB) == 0:
        return f"{size // (KIB * KIB)} MiB"
    if size % KIB == 0:
        return f"{size // KIB} KiB"
    return f"{size} bytes"


def too_large_message(limit: int) -> str:
    return f"The request body is too large: this endpoint accepts at most {size_text(limit)} ({limit} bytes)."


HEADERS_TOO_LARGE = (
    f"The request headers are too large: at most {MAX_HEADER_COUNT} fields, {size_text(MAX_HEADER_FIELD)} "
    f"per field and {size_text(MAX_HEADERS_TOTAL)} in all are accepted."
)
BAD_LENGTH = "The Content-Length header is not a valid length."
BODY_TOO_SLOW = f"The request body did not arrive within {BODY_SECONDS:.0f} seconds."


__all__ = [
    "API_BODY_LIMIT",
    "BODY_SECONDS",
    "MAX_HEADERS_TOTAL",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_FIELD",
    "OTHER_BODY_LIMIT",
    "WEBHOOK_BODY_LIMIT",
    "body_limit",
    "size_text",
    "too_large_message",
]
