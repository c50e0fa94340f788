"""Unknown paths under /api answer JSON 404 / 405, also when the API is mounted into the Reflex app.

Mounted (`rx.App(api_transformer=create_api())`), every path our routes do not match falls through to
the Reflex app, whose answer for an unknown page is HTML. This catch-all, registered last, keeps the
API's promise that every error is `{"error": ...}`; a known path with the wrong method is still 405.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fastapi import APIRouter, Request
from fastapi.routing import APIRoute

from .errors import ApiError

router = APIRouter(include_in_schema=False)

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def known_routes(routers: Iterable[APIRouter]) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """(path pattern, methods) of every API route, for the 405 answer (set on `app.state` by create_api)."""
    return [
        (route.path_regex, frozenset(route.methods or ()))
        for api_router in routers
        if api_router is not router
        for route in api_router.routes
        if isinstance(route, APIRoute)
    ]


@router.api_route("/api/{rest:path}", methods=_METHODS)
async def unknown_api_path(request: Request) -> None:
    routes: list[tuple[re.Pattern[str], frozenset[str]]] = request.app.state.known_routes
    allowed = {method for pattern, methods in routes if pattern.match(request.url.path) for method in methods}
    if allowed:
        allow = ", ".join(sorted(allowed))
        raise ApiError(405, f"{request.method} is not allowed on {request.url.path}; use {allow}.", {"Allow": allow})
    raise ApiError(404, f"There is no endpoint at {request.url.path}. The API is described at /docs.")
