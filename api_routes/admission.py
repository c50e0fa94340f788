"""The API's side of scan admission: `ScannerBusy` becomes 503 with `Retry-After` and `{"error": ...}`.

The slots and the FIFO queue are `websec_app.services.admission`, one instance per process shared with
the web UI (the process's Runtime holds it), so a burst of UI scans and a burst of API scans meet one limit.
Routes take a slot before any quota unit or token is reserved, so a refused request costs the client nothing
(RFC 9110 section 15.6.4 for 503, section 10.2.3 for Retry-After): free and paid scans with
`Runtime.scan_slot()`, Pro scans with a place in line taken on arrival (`auth.ProKeyInLine`).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from websec_app.services.admission import RETRY_AFTER_SECONDS, ScanAdmission, ScannerBusy

from .errors import error_response

OVERLOADED_MESSAGE = (
    "The scanner is at capacity right now and your request was not queued; nothing was counted against "
    "your quota. Please retry in a few seconds (see Retry-After)."
)


async def overloaded(request: Request, exc: Exception) -> JSONResponse:
    """Exception handler (create_api registers it): the 503 of the scan endpoints."""
    assert isinstance(exc, ScannerBusy)  # registered for this type only
    return error_response(exc.http_status, OVERLOADED_MESSAGE, {"Retry-After": str(exc.retry_after)})


__all__ = ["OVERLOADED_MESSAGE", "RETRY_AFTER_SECONDS", "ScanAdmission", "ScannerBusy", "overloaded"]
