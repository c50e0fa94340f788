"""`/report/<id>`: a stored report, for whoever has the link."""

from __future__ import annotations

import reflex as rx

from ..components.layout import page
from ..components.report import report_body
from ..state.report import ReportState


def _missing() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading("Report not found", as_="h1", size="6"),
            rx.text("This report does not exist, or the link is incomplete. Check that the whole link was copied."),
            rx.link(rx.button("Scan a website"), href="/", underline="none"),
            spacing="3",
        ),
        size="3",
        data_testid="report-missing",
    )


def _loading() -> rx.Component:
    return rx.card(
        rx.hstack(rx.spinner(size="3"), rx.text("Loading the report…"), align="center"),
        size="3",
        role="status",
    )


def report() -> rx.Component:
    return page(
        rx.cond(
            ReportState.missing,
            _missing(),
            rx.cond(ReportState.has_report, report_body(), _loading()),
        ),
    )
