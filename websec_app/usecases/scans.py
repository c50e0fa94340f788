"""What the metered scans give back and tell (spec 4.1, 4.2, 4.3), and the reports kept for links.

The scans themselves (free, one-time token, Pro, the Pro PDF) are jobs of the task engine, for every
interface alike: usecases/jobs.py. Each one checks the URL (a malformed one costs nothing), takes its place
(the cluster's expected wait; embedded, also a scan slot of the process), reserves a unit (the client's
free day, the subscription's month, or the token) with its job row, and waits for a worker to end the job:
done with the body and the history entry, or failed with the unit given back. Quotas are exact under
concurrency because the units live in the database (store/quotas.py).

`progress(step)` is told each step as it starts (the UI's step indicator): WAITING while the scan waits its
turn, then "quota", "fetch", "save".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websec_app.store import find_report
from websec_app.store.clients import free_scan_client

from .runtime import Runtime

Progress = Callable[[str], None]
STEPS = ("quota", "fetch", "save")
WAITING = "wait"


def no_progress(step: str) -> None:
    """The default Progress: nobody is watching."""


@dataclass(frozen=True)
class Scanned:
    """A delivered scan: the body as shown, the kept report's id ("" when not kept) and, for a metered Pro
    scan, the scans left this month."""

    body: dict[str, Any]
    report_id: str = ""
    remaining: int | None = None


@dataclass(frozen=True)
class PdfFile:
    filename: str
    data: bytes
    report_id: str
    remaining: int


def client_key(peer: str | None, forwarded_for: list[str], runtime: Runtime) -> str:
    """Whose free quota a request's scans count against (socket peer, X-Forwarded-For only from trusted
    proxies, IPv6 per /64: store/clients.py)."""
    return free_scan_client(peer, forwarded_for, runtime.trusted_proxies)


async def load_report(runtime: Runtime, report_id: str) -> dict[str, Any] | None:
    """A kept report's body, as it was shown (the UI's shareable /report/<id> link)."""
    row = await runtime.db(find_report, report_id)
    return None if row is None else dict(row.body)


__all__ = [
    "STEPS",
    "WAITING",
    "PdfFile",
    "Progress",
    "Scanned",
    "client_key",
    "load_report",
    "no_progress",
]
