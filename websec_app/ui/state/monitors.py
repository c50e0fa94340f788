"""The Pro area's monitors (issue 17): the subscriber's sites scanned daily or weekly, added and removed here.

The account is `ProState`'s; the list loads when the signed-in part of the Pro page mounts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import reflex as rx

from websec_app.scanner import InvalidTarget, ScanError
from websec_app.usecases import Subscriber, monitors
from websec_app.usecases.monitors import MAX_MONITORS, MonitorView, TooManyMonitors

from ..history_view import minute, site_path
from ..messages import describe, url_field_problem
from ..runtime import current_runtime
from .pro import ProState
from .report import report_path

INTERVAL_LABELS = {"daily": "Daily", "weekly": "Weekly"}
#: A run's status (store/monitors.py RUN_*) -> (words, Radix colour).
RUN_STATUS = {
    "queued": ("Waiting to run", "gray"),
    "running": ("Running", "blue"),
    "done": ("Scanned", "green"),
    "unreachable": ("Site not reached", "red"),
    "skipped_quota": ("Skipped: no scans left this month", "amber"),
    "failed": ("Failed", "red"),
    "skipped": ("Skipped: the subscription is not active", "gray"),
}
TOO_MANY = f"You already monitor {MAX_MONITORS} sites, the most a subscription can. Remove one to add another."


@dataclass(frozen=True)
class MonitorRow:
    id: int
    url: str
    interval: str
    next_run: str
    last_run: str  # "" before the first run
    status: str
    tone: str
    report_link: str  # "" when the last run kept no report
    site_link: str


def monitor_row(view: MonitorView) -> MonitorRow:
    words, tone = RUN_STATUS.get(view.last_status or "", ("Not run yet", "gray"))
    return MonitorRow(
        id=view.id,
        url=view.url,
        interval=INTERVAL_LABELS.get(view.interval, view.interval),
        next_run=minute(view.next_run_at),
        last_run=minute(view.last_run_at) if view.last_run_at else "",
        status=words,
        tone=tone,
        report_link=report_path(view.last_report_id) if view.last_report_id else "",
        site_link=site_path(view.url),
    )


class MonitorsState(rx.State):
    rows: list[MonitorRow] = []
    #: What is wrong with the address as typed, shown next to its field.
    url_error: str = ""
    #: A refusal that is not about the field (the limit), shown as an alert above the form.
    problem: str = ""
    #: What the last add or remove did (a polite status line).
    notice: str = ""
    adding: bool = False

    @rx.var
    def at_limit(self) -> bool:
        return len(self.rows) >= MAX_MONITORS

    @rx.var
    def count_text(self) -> str:
        return f"{len(self.rows)} of {MAX_MONITORS} monitors in use."

    async def _account(self) -> Subscriber | None:
        return (await self.get_state(ProState)).account_or_none()

    @rx.event
    async def load(self) -> None:
        """on_mount of the signed-in Pro area."""
        self.url_error = self.problem = self.notice = ""
        await self._refresh()

    async def _refresh(self) -> None:
        account = await self._account()
        self.rows = [monitor_row(v) for v in await monitors.listed(current_runtime(), account)] if account else []

    @rx.event
    async def add(self, form: dict[str, Any]) -> None:
        url = str(form.get("url") or "").strip()
        interval = str(form.get("interval") or "daily")
        self.problem, self.notice = "", ""
        self.url_error = url_field_problem(url)
        if self.url_error:
            return
        account = await self._account()
        if account is None:
            return
        runtime = current_runtime()
        self.adding = True
        try:
            added = await monitors.add(runtime, account, url, interval)
        except TooManyMonitors:
            self.problem = TOO_MANY
            return
        except (InvalidTarget, ScanError) as exc:
            self.url_error = describe(exc, runtime.now()).text
            return
        except ValueError:
            self.problem = "Choose how often to scan: daily or weekly."
            return
        finally:
            self.adding = False
        self.notice = f"{added.url} is now monitored {added.interval}; its first scan runs within a few minutes."
        await self._refresh()

    @rx.event
    async def remove(self, monitor_id: int) -> None:
        account = await self._account()
        if account is None:
            return
        self.problem = self.url_error = ""
        gone = next((r.url for r in self.rows if r.id == monitor_id), "The site")
        if await monitors.remove(current_runtime(), account, monitor_id):
            self.notice = f"{gone} is no longer monitored. Its kept scans stay in its history."
        else:
            self.notice = f"{gone} was already not monitored."
        await self._refresh()


__all__ = ["INTERVAL_LABELS", "RUN_STATUS", "MonitorRow", "MonitorsState", "monitor_row"]
