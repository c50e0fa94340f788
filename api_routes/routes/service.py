"""The service's own routes: GET /api/health, the service's security.txt, and the /api catch-all.

/api/health: liveness for load balancers and the smoke test (not part of the spec); touches neither the
database nor the scanner.

GET /.well-known/security.txt: how to report a vulnerability in this service (RFC 9116).

Our scanner deducts for a missing security.txt, so the service publishes its own. The file is built
per request from the settings: `Contact` from WEBSEC_SECURITY_CONTACT (default
mailto:security@<host of WEBSEC_BASE_URL>), `Canonical` from WEBSEC_BASE_URL, and `Expires` 180 days
ahead of today (RFC 9116 §2.5.5 recommends less than a year), so it never goes stale and needs no
renewal job. /security.txt, the legacy location (§3), redirects here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, time, timedelta
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, RedirectResponse
from fastapi.routing import APIRoute

from websec_app.settings import Settings

from ..context import Runtime
from ..errors import ApiError

router = APIRouter(tags=["service"])


@router.get("/api/health", summary="Liveness check")
async def health() -> dict[str, str]:
    """`{"status": "ok"}` while the process serves requests. Touches neither the database nor the scanner."""
    return {"status": "ok"}


PATH = "/.well-known/security.txt"
EXPIRES_AFTER = timedelta(days=180)


def contact_of(settings: Settings) -> str:
    if settings.security_contact:
        return settings.security_contact
    host = urlsplit(settings.base_url).hostname or "localhost"
    return f"mailto:security@{host}"


def security_txt(settings: Settings, now: datetime) -> str:
    """The file's text (fields of RFC 9116 §2.5, one `Field: value` per line, CRLF-free). Canonical only when the
    base URL is https: a web URI there MUST be https (§2.5.2), so a plain-HTTP development address would make the
    file invalid; the field is optional."""
    expires = datetime.combine((now + EXPIRES_AFTER).date(), time(0, 0), tzinfo=now.tzinfo)
    canonical = f"Canonical: {settings.base_url}{PATH}\n" if settings.base_url.startswith("https://") else ""
    return (
        f"Contact: {contact_of(settings)}\n"
        f"Expires: {expires.isoformat().replace('+00:00', 'Z')}\n"
        "Preferred-Languages: en\n"
        f"{canonical}"
    )


@router.get(PATH, summary="security.txt (RFC 9116)", response_class=PlainTextResponse)
async def well_known_security_txt(request: Request) -> PlainTextResponse:
    """Where to report a vulnerability in this service."""
    ctx: Runtime = request.app.state.runtime
    return PlainTextResponse(security_txt(ctx.settings, ctx.now()), media_type="text/plain; charset=utf-8")


@router.get("/security.txt", include_in_schema=False)
async def legacy_security_txt() -> RedirectResponse:
    return RedirectResponse(PATH, status_code=301)


# -- the /api catch-all ----------------------------------------------------------------------------------
#
# Unknown paths under /api answer JSON 404 / 405, also when the API is mounted into the Reflex app.
#
# Mounted (`rx.App(api_transformer=create_api())`), every path our routes do not match falls through to
# the Reflex app, whose answer for an unknown page is HTML. This catch-all, registered last, keeps the
# API's promise that every error is `{"error": ...}`; a known path with the wrong method is still 405.

fallback = APIRouter(include_in_schema=False)

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def known_routes(routers: Iterable[APIRouter]) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """(path pattern, methods) of every API route, for the 405 answer (set on `app.state` by create_api);
    a GET route answers HEAD too (middleware/head_requests.py)."""
    return [
        (route.path_regex, frozenset(route.methods or ()) | ({"HEAD"} if "GET" in (route.methods or ()) else set()))
        for api_router in routers
        if api_router is not fallback
        for route in api_router.routes
        if isinstance(route, APIRoute)
    ]


@fallback.api_route("/api/{rest:path}", methods=_METHODS)
async def unknown_api_path(request: Request) -> None:
    routes: list[tuple[re.Pattern[str], frozenset[str]]] = request.app.state.known_routes
    allowed = {method for pattern, methods in routes if pattern.match(request.url.path) for method in methods}
    if allowed:
        allow = ", ".join(sorted(allowed))
        raise ApiError(405, f"{request.method} is not allowed on {request.url.path}; use {allow}.", {"Allow": allow})
    raise ApiError(404, f"There is no endpoint at {request.url.path}. The API is described at /docs.")
