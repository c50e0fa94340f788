"""The JSON API (spec section 4). Placeholder until issue 4 lands: `create_api()` is the factory."""

from __future__ import annotations

from fastapi import FastAPI


def create_api() -> FastAPI:
    """A fresh FastAPI app with every route of the spec (mounted into Reflex or served alone)."""
    api = FastAPI(title="websec API")

    @api.get("/api/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return api
