"""The report being shown: filled by a finished scan, or loaded by its link (`/report/<id>`)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from websec_app.usecases import scans

from ..runtime import current_runtime
from ..view import ReportView, report_view

#: The report page's route; its last part is the stored report's id (store.save_report).
REPORT_ROUTE = "/report/[report_key]"

EMPTY = ReportView(
    url="",
    final_url="",
    grade="",
    score=0,
    pro=False,
    scanned_at="",
    critical=0,
    important=0,
    minor=0,
    total=0,
    locked=0,
    locked_text="",
    clear_text="",
    floor_text="",
    caps=[],
    top=[],
    sections=[],
)


def report_path(report_id: str) -> str:
    return f"/report/{report_id}"


class ReportState(rx.State):
    report_id: str = ""
    view: ReportView = EMPTY
    missing: bool = False
    share_url: str = ""

    def show(self, report_id: str, body: dict[str, Any]) -> None:
        """Show a report that was just stored (called by the scan handlers before they navigate here)."""
        self.report_id = report_id
        self.view = report_view(body)
        self.missing = False
        origin = self.router.url.origin if self.router.url.netloc else current_runtime().settings.base_url
        self.share_url = f"{origin}{report_path(report_id)}"

    @rx.event
    async def load(self) -> None:
        """on_load of the report page: the stored report named by the link, unless it is already shown."""
        wanted = self.router.url.path.rstrip("/").rsplit("/", 1)[-1]
        if wanted == self.report_id and not self.missing:
            return
        body = await scans.load_report(current_runtime(), wanted)
        if body is None:
            self.report_id, self.view, self.missing, self.share_url = wanted, EMPTY, True, ""
            return
        self.show(wanted, body)

    @rx.var
    def has_report(self) -> bool:
        return bool(self.view.grade)
