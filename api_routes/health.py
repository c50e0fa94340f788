"""GET /api/health: liveness for load balancers and the smoke test (not part of the spec)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["service"])


@router.get("/api/health", summary="Liveness check")
async def health() -> dict[str, str]:
    """`{"status": "ok"}` while the process serves requests. Touches neither the database nor the scanner."""
    return {"status": "ok"}
