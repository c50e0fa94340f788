"""How a route reaches the process's Runtime (websec_app/usecases/runtime.py): `ctx: Context`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from websec_app.clock import Clock
from websec_app.usecases.runtime import PdfRenderer, Runtime, Scanner


async def get_context(request: Request) -> Runtime:
    """The app's runtime (async, so FastAPI does not send this trivial lookup to a worker thread)."""
    runtime: Runtime = request.app.state.runtime
    return runtime


#: Route parameter type: `ctx: Context`.
Context = Annotated[Runtime, Depends(get_context)]

__all__ = ["Clock", "Context", "PdfRenderer", "Runtime", "Scanner", "get_context"]
