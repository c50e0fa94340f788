"""The Runtime a use case is given: the process's settings, database, clock, scanner, PDF renderer,
payments, scan admission and task engine, as one frozen value.

Every use case takes it first. It is built once per process by `websec_app/runtime.py`, the module that
wires the parts together (and the engine's tasks to the use cases): the use cases import only this type,
never the wiring, so the arrows run one way (STYLE.md). Nothing else holds a process-wide database,
payment service, clock or scan admission, so two runtimes in one process (a test and the app it starts,
two apps in one test) never share state by accident, and the API and the UI of one app share exactly one
set: one scan line, one database pool, one clock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

from ..clock import Clock
from ..settings import Settings

if TYPE_CHECKING:
    from ..jobs.engine import JobEngine
    from ..scanner import ScanReport
    from ..services.admission import ScanAdmission
    from ..services.payments import PaymentService
    from ..store import Database, HotRows
    from ..store.clients import Network

T = TypeVar("T")

#: `await scanner(url, settings)` -> ScanReport; raises the scanner's ScanError subclasses.
Scanner = Callable[[str, Settings], Awaitable["ScanReport"]]
#: `render(report_body, client_name) -> pdf bytes`; raises on failure.
PdfRenderer = Callable[[Mapping[str, Any], str | None], bytes]


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    database: Database
    clock: Clock
    scanner: Scanner
    render_pdf: PdfRenderer
    #: The task engine every scan runs on (websec_app/jobs, issue 16): embedded in this process on SQLite, a
    #: queue shared by every process on PostgreSQL.
    jobs: JobEngine
    #: Checkouts, provider confirmations and webhooks, and the outbox that delivers what was bought.
    payments: PaymentService | None = None
    #: This process's scan slots and wait queue, shared by every interface (503 / "busy" past both);
    #: None: unbounded (tests that are not about admission).
    admission: ScanAdmission | None = None
    #: Reverse proxies whose X-Forwarded-For is believed (WEBSEC_TRUSTED_PROXIES), parsed once.
    trusted_proxies: tuple[Network, ...] = field(default=())

    def now(self) -> datetime:
        now = self.clock()
        if now.tzinfo is None:
            raise ValueError("the runtime's clock must return aware datetimes")
        return now.astimezone(UTC)

    async def db(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`work(session, *args, **kwargs)` with a fresh session in a worker thread: the event loop serves
        other requests meanwhile."""

        def run() -> T:
            with self.database.session() as session:
                return work(session, *args, **kwargs)

        return await anyio.to_thread.run_sync(run)

    async def db_engine(self, work: Callable[..., T], *args: Any) -> T:
        """`work(engine, *args)` in a worker thread, for the prebuilt statements of `store.hot_rows` that
        run on the engine's connections without an ORM session."""
        database = self.database

        def run() -> T:
            database.ensure_schema()
            return work(database.engine, *args)

        return await anyio.to_thread.run_sync(run)

    def db_sync(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.database.session() as session:
            return work(session, *args, **kwargs)

    def hot_rows(self) -> HotRows:
        """The database's reader for the hot prebuilt reads (key lookups), awaited on the event loop."""
        return self.database.hot_rows()

    def scan_slot(self, on_wait: Callable[[], None] | None = None) -> AbstractAsyncContextManager[None]:
        """Hold one of this process's scan slots for the block (FIFO wait, `on_wait()` first when there is a
        wait); `ScannerBusy` when the queue is full too. Taken before any quota unit or token is reserved,
        so a refused request costs nothing."""
        if self.admission is None:
            return nullcontext()
        return self.admission.slot(on_wait=on_wait)


__all__ = ["PdfRenderer", "Runtime", "Scanner"]
