"""The scan: retrieve once, then run each check, then grade (httpobs' scanner.py shape).

Grading (parsing the page, every check, the score) is CPU work: `scan()` runs it in a small
dedicated thread pool, never on the event loop, so the server keeps answering (`/api/health`)
while a large page is analysed (issue 12). The work budgets of records/html.py bound how long one
grading takes; the pool bounds how many run at once (one per CPU: more threads would only queue
on the GIL). A process pool would add true parallelism and a hard kill, but every snapshot (bodies
up to 2 MB, certificates) and report would be pickled across, each worker would hold its own copy
of the app, and granian already runs one process per worker: the budgets make threads enough.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..settings import Settings, get_settings
from . import warmup
from .fetch import fetch_snapshot
from .findings import CheckResult, Finding
from .registrable import registrable_domain
from .report import ScanReport
from .request_headers import OriginHeaders
from .snapshot import SiteSnapshot
from .target import parse_target

if TYPE_CHECKING:  # imported when grading runs, or by the warm-up during a fetch (warmup.py, issue 14)
    from .rules import RuleBook

log = logging.getLogger(__name__)


def run_checks(snapshot: SiteSnapshot) -> list[CheckResult]:
    """Every registered check; one that raises is reported as `check.crashed` (which caps the grade: see
    rules/general.toml), the rest go on."""
    from .checks import CHECKS

    results = []
    for section, check in CHECKS:
        try:
            result = check(snapshot)
        except Exception as exc:  # noqa: BLE001 - a buggy check must not sink the scan
            log.exception("check for %s failed on %s", section, snapshot.target.url)
            result = CheckResult(section, (Finding("check.crashed", note=f"{type(exc).__name__}: {exc}"[:300]),))
        results.append(result)
    return results


def grade_snapshot(snapshot: SiteSnapshot, *, book: RuleBook | None = None, duration_ms: int = 0) -> ScanReport:
    """Pure: a snapshot in, a graded report out."""
    from .grading import grade
    from .rules import default_rulebook

    book = book or default_rulebook()
    host = snapshot.final_target_host
    context = {
        "host": host,
        "domain": registrable_domain(host),
        "origin": snapshot.target.origin,
        "final_url": snapshot.main.final_url,  # a plain-HTTP final page gets no cookie snippet adding Secure
    }
    graded = grade(run_checks(snapshot), book, context)
    final = snapshot.main.final
    fetched_at = snapshot.fetched_at
    return ScanReport(
        url=snapshot.target.url,
        final_url=snapshot.main.final_url,
        status_code=final.status_code if final else 0,
        score=graded.score,
        grade=graded.grade,
        algorithm_version=book.version,
        scanned_at=fetched_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        duration_ms=duration_ms,
        issue_counts=graded.issue_counts,
        sections=graded.sections,
        caps=graded.caps,
        uncapped_score=graded.uncapped_score,
        timings=tuple(
            {"part": t.part, "start_ms": round(t.start * 1000, 1), "end_ms": round(t.end * 1000, 1)}
            for t in snapshot.timings
        ),
    )


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _grading_pool() -> ThreadPoolExecutor:
    """The process's grading threads, made on first use (after granian has forked its workers)."""
    global _pool  # noqa: PLW0603 - one pool per process, like asyncio's default executor
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="websec-grade")
        return _pool


def _grade_after_warmup(snapshot: SiteSnapshot, duration_ms: int) -> ScanReport:
    warmup.wait()  # a process's first scan: until the grading modules are imported (warmup.py)
    return grade_snapshot(snapshot, duration_ms=duration_ms)


async def scan(
    url: str, settings: Settings | None = None, *, request_headers: tuple[tuple[str, str], ...] = ()
) -> ScanReport:
    """Scan one site. Raises InvalidTarget, TargetRefused or TargetUnreachable (see errors.py).

    `request_headers`: extra headers for the target's own origin only (request_headers.py: a staging
    site's basic auth or preview cookie); never in the report."""
    settings = settings or get_settings()
    target = parse_target(url)
    origin_headers = OriginHeaders.for_target(target, request_headers) if request_headers else None
    warmup.start()
    started = time.perf_counter()
    snapshot = await fetch_snapshot(target, settings, origin_headers=origin_headers)
    duration_ms = int((time.perf_counter() - started) * 1000)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_grading_pool(), _grade_after_warmup, snapshot, duration_ms)


def scan_sync(url: str, settings: Settings | None = None) -> ScanReport:
    """`scan` for callers without an event loop (CLI, worker threads)."""
    return asyncio.run(scan(url, settings))
