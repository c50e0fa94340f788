"""GET /docs (Swagger UI) and /redoc (ReDoc), with their scripts and styles served from this origin.

FastAPI's built-in pages load Swagger UI and ReDoc from cdn.jsdelivr.net at a floating major version
(`swagger-ui-dist@5`, `redoc@2`), which can carry no Subresource Integrity and made the docs' CSP trust a
public CDN. These pages are the same HTML, built by FastAPI's `get_swagger_ui_html` / `get_redoc_html`
("Self-hosting JavaScript and CSS for docs", https://fastapi.tiangolo.com/how-to/custom-docs-ui-assets/),
pointing at copies under /api/docs-assets/. The copies come from the PyPI package `fastapi-offline`,
pinned in requirements.txt: its files are byte-identical to npm's `swagger-ui-dist` 5.32.6 and `redoc`
2.5.3, the official builds (compared by SHA-256 when it was pinned; `swagger_ui_bundle` on PyPI still
ships Swagger UI 4, which cannot render OpenAPI 3.1). Only the static files are used, not its app factory.
Under /api the assets work the same served alone (`serve-api`) and mounted into Reflex (`make run`).
One reference to another host remains in ReDoc 2.5: its sidebar draws Redocly's logo from cdn.redoc.ly
(hard-coded). The docs policy (security_headers.py) blocks it, and ReDoc drops the image when it fails.
"""

from __future__ import annotations

from importlib import metadata, resources
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from ..errors import ApiError

router = APIRouter(include_in_schema=False)

ASSETS_PATH = "/api/docs-assets"
#: In the asset URLs, so a new pinned version is fetched again despite the cache lifetime below.
_VERSION = metadata.version("fastapi-offline")
_STATIC = Path(str(resources.files("fastapi_offline") / "static"))
_CACHE_CONTROL = "public, max-age=604800"

#: Every file served under ASSETS_PATH, with its media type (the package's directory is not exposed as a whole).
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}


def _asset_url(request: Request, name: str) -> str:
    return f"{request.scope.get('root_path', '')}{ASSETS_PATH}/{name}?v={_VERSION}"


def _openapi_url(request: Request) -> str:
    return f"{request.scope.get('root_path', '')}{request.app.openapi_url}"


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=_asset_url(request, "swagger-ui-bundle.js"),
        swagger_css_url=_asset_url(request, "swagger-ui.css"),
        swagger_favicon_url=_asset_url(request, "favicon.png"),
        # No badge image from validator.swagger.io (it would send it our schema's URL; BaseLayout hides it anyway).
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    # No Google Fonts: ReDoc falls back to the system fonts, and the page loads nothing from another origin.
    return get_redoc_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=_asset_url(request, "redoc.standalone.js"),
        redoc_favicon_url=_asset_url(request, "favicon.png"),
        with_google_fonts=False,
    )


@router.get(ASSETS_PATH + "/{name}")
async def docs_asset(name: str) -> FileResponse:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise ApiError(404, f"There is no file {name} among the docs assets.")
    return FileResponse(_STATIC / name, media_type=media_type, headers={"Cache-Control": _CACHE_CONTROL})
