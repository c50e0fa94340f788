"""The site page's parts: the score over time (an SVG line chart), the kept scans, and the latest diff.

The chart is drawn from the geometry `ui/history_view.py` computes: a 0..100 plot stretched to its box
(`preserveAspectRatio="none"`), lines and dots with non-scaling strokes so they keep their width at any size,
and the axis labels in HTML beside it so they stay readable on a phone. Screen readers get the chart as one
sentence (its `aria-labelledby`), and every point is also a row of the history table below it.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ..history_view import PLOT_SIZE, SCORE_TICKS, ChartPoint, DiffRow, HistoryRow
from ..state.site import SiteState
from .common import grade_badge, section_card, severity_badge

_PLOT_HEIGHT = "220px"
_TITLE_ID, _SUMMARY_ID = "score-chart-title", "score-chart-summary"


def _gridline(score: int) -> rx.Component:
    y = PLOT_SIZE - score
    return rx.el.svg.line(
        x1=0,
        x2=PLOT_SIZE,
        y1=y,
        y2=y,
        stroke=rx.color("gray", 6),
        stroke_width="1px",
        vector_effect="non-scaling-stroke",
    )


def _dot(point: ChartPoint) -> rx.Component:
    return rx.el.svg.path(
        rx.el.svg.title(point.when, ": score ", point.score, ", grade ", point.grade),
        d=point.dot,
        stroke=rx.color("indigo", 10),
        stroke_width="10px",
        stroke_linecap="round",
        vector_effect="non-scaling-stroke",
        data_testid="chart-point",
        data_score=point.score,
        data_grade=point.grade,
        data_when=point.when,
        data_x=point.x,
        data_y=point.y,
    )


def _y_label(score: int) -> rx.Component:
    return rx.text(
        str(score),
        size="1",
        color_scheme="gray",
        position="absolute",
        right="0",
        top=f"{PLOT_SIZE - score}%",
        transform="translateY(-50%)",
        line_height="1",
    )


def score_chart() -> rx.Component:
    chart = SiteState.chart
    return rx.el.figure(
        rx.el.figcaption(
            rx.heading("Score over time", as_="h2", size="5", id=_TITLE_ID),
            rx.text(chart.summary, id=_SUMMARY_ID, size="2", color_scheme="gray", data_testid="chart-summary"),
            margin_bottom="0.75rem",
        ),
        rx.flex(
            rx.box(
                *[_y_label(s) for s in SCORE_TICKS],
                position="relative",
                width="1.75rem",
                flex_shrink="0",
                aria_hidden="true",
            ),
            rx.box(
                rx.el.svg(
                    *[_gridline(s) for s in SCORE_TICKS],
                    rx.el.svg.polyline(
                        points=chart.line,
                        fill="none",
                        stroke=rx.color("indigo", 9),
                        stroke_width="2px",
                        stroke_linejoin="round",
                        vector_effect="non-scaling-stroke",
                    ),
                    rx.foreach(chart.points, _dot),
                    view_box=f"0 0 {PLOT_SIZE} {PLOT_SIZE}",
                    preserve_aspect_ratio="none",
                    width="100%",
                    height="100%",
                    overflow="visible",
                    display="block",
                    role="img",
                    aria_labelledby=f"{_TITLE_ID} {_SUMMARY_ID}",
                    data_testid="score-chart-svg",
                ),
                flex="1",
                min_width="0",
                # Room for the first and last dots, which sit on the plot's edges.
                margin_x="6px",
            ),
            height=_PLOT_HEIGHT,
            spacing="2",
            margin_y="6px",
        ),
        rx.flex(
            rx.text(chart.first_day, size="1", color_scheme="gray"),
            rx.text(chart.last_day, size="1", color_scheme="gray"),
            justify="between",
            padding_left="calc(1.75rem + var(--space-2))",
            aria_hidden="true",
        ),
        margin="0",
        width="100%",
        data_testid="score-chart",
    )


def _history_row(row: HistoryRow) -> rx.Component:
    return rx.table.row(
        rx.table.cell(grade_badge(row.grade, size="small")),
        rx.table.cell(rx.text(row.score, weight="medium")),
        rx.table.cell(
            rx.vstack(
                rx.text(row.when, size="2"),
                rx.text(row.kind, size="1", color_scheme="gray"),
                spacing="0",
            )
        ),
        rx.table.cell(
            rx.link("View", rx.el.span(" report of ", row.when, class_name="visually-hidden"), href=row.link)
        ),
        align="center",
        data_testid="history-row",
    )


def history_table() -> rx.Component:
    return section_card(
        rx.heading("Kept scans", as_="h2", size="5"),
        rx.text(
            "Newest first. Every Pro scan, PDF report and monitor run of this address is kept.",
            size="2",
            color_scheme="gray",
        ),
        rx.table.root(
            rx.table.header(
                rx.table.row(
                    rx.table.column_header_cell("Grade"),
                    rx.table.column_header_cell("Score"),
                    rx.table.column_header_cell("Scanned"),
                    rx.table.column_header_cell(rx.el.span("Report", class_name="visually-hidden")),
                )
            ),
            rx.table.body(rx.foreach(SiteState.shown_rows, _history_row)),
            width="100%",
            size="1",
            data_testid="history-table",
        ),
        rx.cond(
            SiteState.more_rows > 0,
            rx.button(
                rx.cond(SiteState.show_all, "Show fewer", rx.text.span("Show ", SiteState.more_rows, " more")),
                on_click=SiteState.toggle_rows,
                variant="soft",
                size="2",
                type="button",
                align_self="start",
                aria_expanded=rx.cond(SiteState.show_all, "true", "false"),
            ),
        ),
        rx.cond(
            SiteState.total > SiteState.rows.length(),  # type: ignore[attr-defined]
            rx.text(
                "The latest ",
                SiteState.rows.length(),  # type: ignore[attr-defined]
                " of ",
                SiteState.total,
                " scans are shown.",
                size="1",
                color_scheme="gray",
            ),
        ),
    )


def _change(row: DiffRow) -> rx.Component:
    return rx.el.li(
        rx.text(row.title, weight="medium", class_name="break-anywhere"),
        # Severity and points on a line of their own: the same place at any width, whatever the title's length.
        rx.flex(
            severity_badge(row.severity),
            rx.text(row.detail, size="2", color_scheme="gray"),
            spacing="2",
            align="center",
            wrap="wrap",
            margin_top="0.15rem",
        ),
        # a new finding: what the scan found, its first notes, a line each
        rx.cond(
            row.found.length() > 0,  # type: ignore[attr-defined]
            rx.box(
                rx.foreach(
                    row.found,
                    lambda note: rx.text(
                        "Found: ",
                        note,
                        size="1",
                        color_scheme="gray",
                        class_name="break-anywhere",
                        data_testid="diff-found",
                    ),
                ),
                rx.cond(row.more_found != "", rx.text(row.more_found, size="1", color_scheme="gray")),
                margin_top="0.3rem",
            ),
        ),
        padding_y="0.4rem",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        data_testid="diff-item",
    )


def _changes(title: str, rows: Any, testid: str, icon: str, color: str) -> rx.Component:
    return rx.cond(
        rows.length() > 0,
        rx.box(
            rx.heading(
                rx.icon(icon, size=18, color=rx.color(color, 10), aria_hidden="true"),
                title,
                " (",
                rows.length(),
                ")",
                as_="h3",
                size="3",
                display="flex",
                align_items="center",
                gap="0.4rem",
            ),
            rx.el.ul(rx.foreach(rows, _change), class_name="plain-list"),
            width="100%",
            data_testid=testid,
        ),
    )


def latest_diff() -> rx.Component:
    diff = SiteState.diff
    return section_card(
        rx.heading("What changed in the latest scan", as_="h2", size="5"),
        rx.cond(
            diff.shown,
            rx.vstack(
                rx.text("Compared with the scan of ", diff.before_when, ".", size="2", color_scheme="gray"),
                rx.flex(
                    rx.hstack(
                        grade_badge(diff.grade_before, size="small"),
                        rx.icon("arrow-right", aria_hidden="true"),
                        grade_badge(diff.grade_after, size="small"),
                        align="center",
                        spacing="2",
                    ),
                    rx.text(
                        "Score ",
                        rx.el.strong(diff.score_before),
                        " → ",
                        rx.el.strong(diff.score_after),
                        " (",
                        diff.score_change,
                        ")",
                        size="3",
                        data_testid="diff-score",
                    ),
                    spacing="4",
                    align="center",
                    wrap="wrap",
                ),
                rx.text(diff.summary, size="2", data_testid="diff-summary"),
                rx.cond(
                    diff.rules_note != "",
                    rx.callout(diff.rules_note, icon="info", size="1", color_scheme="gray", data_testid="diff-rules"),
                ),
                _changes("New findings", diff.new, "diff-new", "circle-alert", "red"),
                _changes("Fixed", diff.fixed, "diff-fixed", "circle-check", "green"),
                _changes("Changed", diff.changed, "diff-changed", "arrow-left-right", "amber"),
                spacing="3",
                width="100%",
            ),
            rx.text(
                "Only one scan is kept so far: the next one will be compared with it.",
                size="2",
                color_scheme="gray",
                data_testid="diff-none",
            ),
        ),
        data_testid="latest-diff",
    )


__all__ = ["history_table", "latest_diff", "score_chart"]
