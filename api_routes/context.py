"""What the routes share: settings, the database, and the injectable scanner, clock, PDF renderer and payments."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import Depends, Request

from websec_app.scanner import ScanReport
from websec_app.services.checkout import PaymentService
from websec_app.settings import Settings
from websec_app.store import Database, HotRows

from .admission import ScanAdmission
from .client_ip import Network

T = TypeVar("T")

#: `await scanner(url, settings)` -> ScanReport; raises the scanner's ScanError subclasses.
Scanner = Callable[[str, Settings], Awaitable[ScanReport]]
#: Returns the current time as an aware UTC datetime.
Clock = Callable[[], datetime]
#: `render(report_dict, name) -> pdf bytes`; raises on failure.
PdfRenderer = Callable[[Mapping[str, Any], str | None], bytes]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ApiContext:
    settings: Settings
    database: Database
    scanner: Scanner
    clock: Clock
    render_pdf: PdfRenderer
    #: Checkouts, provider confirmations and webhooks, and the outbox that delivers what was bought.
    payments: PaymentService | None = None
    trusted_proxies: tuple[Network, ...] = field(default=())
    #: Scan slots and wait queue of this process (503 past both); None: unbounded.
    admission: ScanAdmission | None = None

    def now(self) -> datetime:
        now = self.clock()
        if now.tzinfo is None:
            raise ValueError("the API clock must return aware datetimes")
        return now.astimezone(UTC)

    async def db(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `work(session, *args, **kwargs)` in a worker thread with a fresh session."""

        def run() -> T:
            with self.database.session() as session:
                return work(session, *args, **kwargs)

        return await anyio.to_thread.run_sync(run)

    def hot_rows(self) -> HotRows:
        """The database's reader for the hot prebuilt reads (key lookups), used from the event loop."""
        return self.database.hot_rows()

    def scan_slot(self) -> AbstractAsyncContextManager[None]:
        """Hold one of this process's scan slots, shared with the web UI (FIFO wait; `ScannerBusy`, answered
        with 503 + Retry-After, when the queue is full too).

        Taken before any quota unit or token is reserved, so a refused request costs the client nothing.
        """
        return self.admission.slot() if self.admission is not None else nullcontext()

    def db_sync(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.database.session() as session:
            return work(session, *args, **kwargs)


async def get_context(request: Request) -> ApiContext:
    """The app's context (async, so FastAPI does not send this trivial lookup to a worker thread)."""
    context: ApiContext = request.app.state.websec
    return context


#: Route parameter type: `ctx: Context`.
Context = Annotated[ApiContext, Depends(get_context)]
