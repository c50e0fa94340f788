"""The report: grade, score and counts, the worst findings, then every section with its findings.

Renders `ReportState.view` (`ui/view.py`), whichever way the report came: a scan that just
finished, or a shared link. Free reports show the Pro-only sections locked and say where the
fixes are; Pro and one-time reports show each fix with a Copy button.
"""

from __future__ import annotations

import reflex as rx

from websec_app.services.prices import Product

from ..purchases import price_text
from ..state.report import ReportState
from ..view import LOCKED_PITCH, PRO_ONLY_NAMES, FindingView, SectionView
from .common import copy_button, copyable, grade_badge, section_card, severity_badge, status_badge
from .evidence import fix_snippets, score_chart, section_evidence


def _count(label: str, value: rx.Var[int] | int, color: str, testid: str) -> rx.Component:
    return rx.vstack(
        rx.text(value, size="7", weight="bold", color=rx.color(color, 11)),
        rx.text(label, size="2", color_scheme="gray"),
        spacing="0",
        align="center",
        padding="0.75rem 1rem",
        border_radius="var(--radius-3)",
        background_color=rx.color(color, 2),
        border=f"1px solid {rx.color(color, 5)}",
        min_width="0",
        flex="1",
        data_testid=testid,
    )


def summary() -> rx.Component:
    view = ReportState.view
    return section_card(
        rx.flex(
            grade_badge(view.grade),
            rx.vstack(
                rx.text(
                    rx.cond(view.pro, "Full report", "Free report"),
                    size="2",
                    weight="medium",
                    color_scheme="indigo",
                ),
                rx.heading(view.final_url, as_="h1", size="6", class_name="break-anywhere", data_testid="report-url"),
                rx.flex(
                    rx.text("Score ", rx.el.strong(view.score, data_testid="score"), " / 100", size="4"),
                    rx.text("Scanned ", view.scanned_at, size="2", color_scheme="gray"),
                    spacing="4",
                    wrap="wrap",
                    align="baseline",
                ),
                rx.foreach(view.caps, lambda cap: rx.text(cap, size="2", color_scheme="gray")),
                spacing="2",
                min_width="0",
                flex="1",
            ),
            spacing="5",
            align="center",
            direction={"initial": "column", "sm": "row"},
            width="100%",
        ),
        rx.flex(
            _count("Critical", view.critical, "red", "count-critical"),
            _count("Important", view.important, "orange", "count-important"),
            _count("Minor", view.minor, "gray", "count-minor"),
            spacing="3",
            width="100%",
        ),
        # The counts above are what this report shows (issue_counts); the locked sections hold `locked` more.
        rx.cond(
            view.locked > 0,
            rx.hstack(
                rx.icon("lock", size=14, color=rx.color("indigo", 9), aria_hidden="true", flex_shrink="0"),
                rx.text(view.locked_text, " ", rx.link("See prices", href="/pricing", underline="always"), size="2"),
                align="center",
                spacing="2",
                data_testid="locked-count",
            ),
        ),
        rx.cond(
            ReportState.share_url != "",
            rx.vstack(
                rx.el.label("Shareable link to this report", html_for="share-link", class_name="field-label"),
                rx.flex(
                    rx.input(
                        id="share-link",
                        value=ReportState.share_url,
                        read_only=True,
                        size="2",
                        flex="1",
                        min_width="0",
                        data_testid="share-link",
                    ),
                    copy_button(ReportState.share_url, "link"),
                    spacing="2",
                    align="center",
                    width="100%",
                ),
                spacing="1",
                width="100%",
            ),
        ),
        rx.cond(
            ~view.pro,
            rx.callout.root(
                rx.callout.icon(rx.icon("lock", aria_hidden="true")),
                rx.callout.text(
                    f"This free report shows what is wrong. A one-time scan ({price_text(Product.ONE_TIME_SCAN)}) or "
                    f"Pro adds the exact fix for every finding and the {PRO_ONLY_NAMES} sections. ",
                    rx.link("See prices", href="/pricing", weight="bold"),
                ),
                color_scheme="indigo",
                size="1",
            ),
        ),
        data_testid="report-summary",
    )


def _top_item(finding: FindingView) -> rx.Component:
    return rx.el.li(
        rx.link(
            rx.flex(
                status_badge(finding.status),
                rx.box(
                    rx.text(
                        finding.title, size={"initial": "2", "sm": "3"}, weight="medium", color=rx.color("gray", 12)
                    ),
                    # On phones the points go under the title: a column beside it left the title a few words a line
                    rx.text(finding.points, size="1", color_scheme="gray", class_name="phone-only"),
                    flex="1",
                    min_width="0",
                ),
                rx.text(
                    finding.points,
                    size="2",
                    color_scheme="gray",
                    white_space="nowrap",
                    class_name="wide-only",
                ),
                spacing="3",
                align="center",
            ),
            href=f"#finding-{finding.key}",
            underline="hover",
        ),
        padding_y="0.5rem",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
    )


def top_findings() -> rx.Component:
    return rx.cond(
        ReportState.view.top.length() > 0,  # type: ignore[attr-defined]
        section_card(
            rx.heading("Fix these first", as_="h2", size="5"),
            rx.text(
                "The problems that cost the most points come first; equal points, the more severe first. ",
                ReportState.view.floor_text,
                size="2",
                color_scheme="gray",
                data_testid="top-findings-about",
            ),
            rx.el.ol(rx.foreach(ReportState.view.top, _top_item), class_name="plain-list", data_testid="top-findings"),
        ),
        section_card(
            rx.hstack(
                rx.icon("circle-check", color=rx.color("green", 10), aria_hidden="true", flex_shrink="0"),
                rx.text(ReportState.view.clear_text, weight="medium", data_testid="no-problems"),
                align="center",
            ),
        ),
    )


def _finding(finding: FindingView, pro: rx.Var[bool] | bool) -> rx.Component:
    return rx.box(
        rx.flex(
            status_badge(finding.status),
            severity_badge(finding.severity),
            rx.cond(finding.deduction > 0, rx.text(finding.points, size="1", color_scheme="gray")),
            rx.cond(finding.cwe != "", rx.text(finding.cwe, size="1", color_scheme="gray")),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        rx.heading(finding.title, as_="h3", size="3", margin_top="0.4rem"),
        rx.cond(finding.detail != "", rx.text(finding.detail, size="2", margin_top="0.25rem")),
        rx.cond(
            finding.many_notes,
            rx.box(  # several notes, one a line: a note may hold a "; " of its own
                rx.text(rx.el.strong("Found:"), size="2", color_scheme="gray"),
                rx.el.ul(
                    rx.foreach(finding.notes, lambda note: rx.el.li(note)),
                    class_name="bullets break-anywhere",
                    color=rx.color("gray", 11),
                ),
                data_testid="finding-notes",
            ),
            rx.cond(
                finding.note != "",
                rx.text(
                    rx.el.strong("Found: "), finding.note, size="2", color_scheme="gray", class_name="break-anywhere"
                ),
            ),
        ),
        rx.cond(
            finding.fix != "",
            rx.box(
                rx.text("How to fix", size="2", weight="bold"),
                copyable(finding.fix, "fix"),
                rx.cond(
                    finding.fix_note != "",
                    rx.text(
                        finding.fix_note,
                        size="2",
                        color_scheme="gray",
                        margin_top="0.35rem",
                        class_name="break-anywhere",
                        data_testid="fix-note",
                    ),
                ),
                fix_snippets(finding),
                margin_top="0.5rem",
            ),
            rx.cond(
                ~pro & finding.checked,
                rx.hstack(
                    rx.icon("lock", size=14, color=rx.color("gray", 10), aria_hidden="true"),
                    rx.text(
                        "The fix is in the full report. ",
                        rx.link("Unlock fixes", href="/pricing", underline="always"),
                        size="2",
                        color_scheme="gray",
                    ),
                    align="center",
                    spacing="1",
                    margin_top="0.35rem",
                ),
            ),
        ),
        id=f"finding-{finding.key}",
        padding_y="0.85rem",
        border_top=f"1px solid {rx.color('gray', 4)}",
        data_testid="finding",
        data_status=finding.status,
    )


def _passed(finding: FindingView) -> rx.Component:
    return rx.el.li(
        rx.hstack(
            rx.icon("check", size=14, color=rx.color("green", 10), aria_hidden="true"),
            rx.text(finding.title, size="2"),
            align="center",
        ),
        rx.foreach(
            finding.notes,
            lambda note: rx.text(
                note, size="1", color_scheme="gray", padding_left="1.4rem", class_name="break-anywhere"
            ),
        ),
        padding_y="0.3rem",
    )


def _locked(section: SectionView) -> rx.Component:
    return rx.flex(
        rx.icon("lock", size=28, color=rx.color("indigo", 9), aria_hidden="true"),
        rx.vstack(
            rx.text(LOCKED_PITCH, size="2"),
            rx.hstack(
                rx.link(rx.button("Unlock with Pro", size="2"), href="/pricing", underline="none"),
                rx.link(
                    rx.button("One-time scan", size="2", variant="outline"),
                    href="/checkout/one-time-scan",
                    underline="none",
                ),
                wrap="wrap",
            ),
            spacing="2",
        ),
        spacing="4",
        align="center",
        padding="1rem",
        border_radius="var(--radius-3)",
        background_color=rx.color("indigo", 2),
        border=f"1px dashed {rx.color('indigo', 7)}",
        width="100%",
        data_testid="locked",
    )


def _section(section: SectionView) -> rx.Component:
    pro = ReportState.view.pro
    return section_card(
        rx.flex(
            rx.heading(section.title, as_="h2", size="5", flex="1", min_width="0"),
            rx.hstack(
                rx.cond(section.deduction > 0, rx.text(section.points, size="2", color_scheme="gray")),
                status_badge(section.status),
                align="center",
                flex_shrink="0",
            ),
            spacing="3",
            justify="between",
            align="start",
            width="100%",
        ),
        # Below the title row, full width: beside the points and badge it wrapped into a narrow column on phones.
        rx.text(section.about, size="2", color_scheme="gray"),
        rx.cond(
            section.locked,
            _locked(section),
            rx.box(
                rx.foreach(section.problems, lambda f: _finding(f, pro)),
                rx.cond(
                    section.passed.length() > 0,  # type: ignore[attr-defined]
                    rx.el.details(
                        rx.el.summary(
                            section.passed.length(),  # type: ignore[attr-defined]
                            rx.cond(section.passed.length() == 1, " check passed", " checks passed"),  # type: ignore[attr-defined]
                        ),
                        rx.el.ul(rx.foreach(section.passed, _passed), class_name="plain-list"),
                        class_name="passed",
                    ),
                ),
                section_evidence(section.key),
                width="100%",
            ),
        ),
        id=f"section-{section.key}",
        data_testid=f"section-{section.key}",
    )


def report_body() -> rx.Component:
    return rx.vstack(
        summary(),
        top_findings(),
        section_card(score_chart()),
        rx.foreach(ReportState.view.sections, _section),
        spacing="5",
        width="100%",
    )
