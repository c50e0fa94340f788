"""The Reflex app: wires the JSON API into the one web server and registers the pages.

Reflex loads this module by name (`app_name` in rxconfig.py); nothing else imports it (STYLE.md).
The home page is deliberately small: a URL, a Scan button, and the grade with each section's status.
The full UI (ui/) is a later issue; its handlers stay as thin as this one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import reflex as rx

from api_routes import create_api
from websec_app.scanner import SECTION_ORDER, ScanError, ScanReport, scan
from websec_app.scanner.findings import STATUSES
from websec_app.settings import get_settings

#: Badge colours per status (spec 2.3 statuses, best first).
_STATUS_COLOR = {"good": "green", "warn": "amber", "weak": "orange", "missing": "red", "bad": "red"}


def section_rows(report: ScanReport) -> list[dict[str, str]]:
    """One row per report section, in spec order: its name and worst status.

    `headers` is a bare map of header objects (spec 2.3), so its status is the worst of theirs.
    """
    rows = []
    for name in SECTION_ORDER:
        section = report.sections.get(name)
        if section is None:
            continue
        if name == "headers":
            statuses = [h["status"] for h in section.values() if isinstance(h, dict) and "status" in h]
            status = max(statuses, key=STATUSES.index) if statuses else "good"
        else:
            status = str(section.get("status", "good"))
        rows.append({"section": name.replace("_", " "), "status": status})
    return rows


class ScanState(rx.State):
    """The home page: one URL in, one summary out. No storage, no business logic here."""

    scanning: bool = False
    error: str = ""
    scanned_url: str = ""
    grade: str = ""
    score: int = 0
    sections: list[dict[str, str]] = []

    @rx.event
    async def run_scan(self, form: dict[str, Any]) -> AsyncIterator[None]:
        url = str(form.get("url", "")).strip()
        self.error, self.grade, self.sections = "", "", []
        if not url:
            self.error = "Enter the address of a website, for example https://example.com"
            return
        self.scanning = True
        yield  # show the spinner while the scan runs
        try:
            report = await scan(url)
        except ScanError as exc:
            self.error = str(exc) or type(exc).__name__
        else:
            self.scanned_url = report.final_url or report.url
            self.grade = report.grade
            self.score = report.score
            self.sections = section_rows(report)
        finally:
            self.scanning = False


def _status_badge(status: rx.Var[str]) -> rx.Component:
    cases = [(name, rx.badge(name, color_scheme=color, variant="soft")) for name, color in _STATUS_COLOR.items()]
    return rx.match(status, *cases, rx.badge(status, color_scheme="gray", variant="soft"))


def _result() -> rx.Component:
    return rx.cond(
        ScanState.grade != "",
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.heading(ScanState.grade, size="9", color_scheme="gray", id="grade"),
                    rx.vstack(
                        rx.text(ScanState.scanned_url, weight="medium"),
                        rx.text(f"Score {ScanState.score} / 100", id="score"),
                        spacing="1",
                    ),
                    align="center",
                    spacing="5",
                ),
                rx.table.root(
                    rx.table.body(
                        rx.foreach(
                            ScanState.sections,
                            lambda row: rx.table.row(
                                rx.table.cell(row["section"]),
                                rx.table.cell(_status_badge(row["status"])),
                            ),
                        ),
                    ),
                    width="100%",
                ),
                width="100%",
            ),
            width="100%",
        ),
    )


def index() -> rx.Component:
    return rx.container(
        rx.vstack(
            rx.heading("websec", size="8"),
            rx.text("How well does a website protect its visitors? Headers, TLS, cookies, CORS, DNS and more."),
            rx.form(
                rx.hstack(
                    rx.input(
                        name="url",
                        placeholder="https://example.com",
                        type="text",
                        size="3",
                        width="100%",
                    ),
                    rx.button("Scan", type="submit", size="3", loading=ScanState.scanning),
                    width="100%",
                ),
                on_submit=ScanState.run_scan,
                reset_on_submit=False,
                width="100%",
            ),
            rx.cond(ScanState.error != "", rx.callout(ScanState.error, icon="triangle_alert", color_scheme="red")),
            _result(),
            spacing="5",
            width="100%",
        ),
        size="2",
        padding_top="10vh",
    )


# Fail at start on a bad setting, and log the private-targets warning once (settings.py).
get_settings()

app = rx.App(
    api_transformer=create_api(),
    head_components=[rx.el.link(rel="icon", href="/favicon.svg", type="image/svg+xml")],
)
app.add_page(index, route="/", title="websec: website security scan")
