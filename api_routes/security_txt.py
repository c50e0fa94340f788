"""GET /.well-known/security.txt: how to report a vulnerability in this service (RFC 9116).

Our scanner deducts for a missing security.txt, so the service publishes its own. The file is built
per request from the settings: `Contact` from WEBSEC_SECURITY_CONTACT (default
mailto:security@<host of WEBSEC_BASE_URL>), `Canonical` from WEBSEC_BASE_URL, and `Expires` 180 days
ahead of today (RFC 9116 §2.5.5 recommends less than a year), so it never goes stale and needs no
renewal job. /security.txt, the legacy location (§3), redirects here.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, RedirectResponse

from websec_app.settings import Settings

from .context import Runtime

router = APIRouter(tags=["service"])

PATH = "/.well-known/security.txt"
EXPIRES_AFTER = timedelta(days=180)


def contact_of(settings: Settings) -> str:
    if settings.security_contact:
        return settings.security_contact
    host = urlsplit(settings.base_url).hostname or "localhost"
    return f"mailto:security@{host}"


def security_txt(settings: Settings, now: datetime) -> str:
    """The file's text (fields of RFC 9116 §2.5, one `Field: value` per line, CRLF-free)."""
    expires = datetime.combine((now + EXPIRES_AFTER).date(), time(0, 0), tzinfo=now.tzinfo)
    return (
        f"Contact: {contact_of(settings)}\n"
        f"Expires: {expires.isoformat().replace('+00:00', 'Z')}\n"
        "Preferred-Languages: en\n"
        f"Canonical: {settings.base_url}{PATH}\n"
    )


@router.get(PATH, summary="security.txt (RFC 9116)", response_class=PlainTextResponse)
async def well_known_security_txt(request: Request) -> PlainTextResponse:
    """Where to report a vulnerability in this service."""
    ctx: Runtime = request.app.state.runtime
    return PlainTextResponse(security_txt(ctx.settings, ctx.now()), media_type="text/plain; charset=utf-8")


@router.get("/security.txt", include_in_schema=False)
async def legacy_security_txt() -> RedirectResponse:
    return RedirectResponse(PATH, status_code=301)
