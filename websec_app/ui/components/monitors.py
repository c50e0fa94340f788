"""The Pro area's monitors: the list (next run, last run and its report, the site page), a form to add one,
and a remove button that asks first (an alert dialog: focus moves into it and back, Escape cancels)."""

from __future__ import annotations

import reflex as rx

from ..state.monitors import INTERVAL_LABELS, MonitorRow, MonitorsState
from .common import section_card
from .field import field_input, field_row_form

_FORM = "monitor"
_INTERVAL_LABEL_ID = "monitor-interval-label"


def _remove_button(row: MonitorRow) -> rx.Component:
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(
            rx.button(
                rx.icon("trash-2", size=14, aria_hidden="true"),
                # An icon alone on phones leaves the address the width (the button keeps its aria-label).
                rx.text.span("Remove", display=rx.breakpoints(initial="none", sm="inline")),
                variant="soft",
                color_scheme="red",
                size="2",
                type="button",
                aria_label="Remove the monitor of " + row.url,
                data_testid="monitor-remove",
            )
        ),
        rx.alert_dialog.content(
            rx.alert_dialog.title("Stop monitoring this site?"),
            rx.alert_dialog.description(
                rx.el.strong(row.url, class_name="break-anywhere"),
                " will no longer be scanned ",
                row.interval.lower(),
                ". Its kept scans stay in its history.",
                size="2",
            ),
            rx.flex(
                rx.alert_dialog.cancel(rx.button("Keep it", variant="soft", color_scheme="gray", type="button")),
                rx.alert_dialog.action(
                    rx.button(
                        "Stop monitoring",
                        color_scheme="red",
                        type="button",
                        on_click=MonitorsState.remove(row.id),  # type: ignore[operator]
                        data_testid="monitor-remove-confirm",
                    )
                ),
                spacing="3",
                justify="end",
                margin_top="1rem",
                wrap="wrap",
            ),
            max_width="28rem",
        ),
    )


def _status(row: MonitorRow) -> rx.Component:
    return rx.cond(
        row.last_run != "",
        rx.flex(
            rx.badge(row.status, color_scheme=row.tone, variant="soft", high_contrast=True),
            rx.text(row.last_run, size="1", color_scheme="gray"),
            rx.cond(
                row.report_link != "",
                rx.link(
                    "Report",
                    rx.el.span(" of ", row.last_run, class_name="visually-hidden"),
                    href=row.report_link,
                    size="1",
                ),
            ),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        rx.text("Not run yet", size="1", color_scheme="gray"),
    )


def _monitor(row: MonitorRow) -> rx.Component:
    return rx.el.li(
        rx.flex(
            rx.vstack(
                rx.link(
                    row.url,
                    href=row.site_link,
                    weight="medium",
                    class_name="break-anywhere",
                    data_testid="monitor-site-link",
                ),
                rx.text(
                    row.interval,
                    " · next run ",
                    row.next_run,
                    size="1",
                    color_scheme="gray",
                    data_testid="monitor-next",
                ),
                _status(row),
                spacing="1",
                min_width="0",
                flex="1",
            ),
            _remove_button(row),
            justify="between",
            align="start",
            spacing="3",
        ),
        padding_y="0.75rem",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        data_testid="monitor",
        data_url=row.url,
    )


def _interval_choice() -> rx.Component:
    return rx.vstack(
        rx.text("How often", id=_INTERVAL_LABEL_ID, class_name="field-label"),
        rx.radio_group.root(
            rx.flex(
                *[
                    rx.el.label(
                        rx.radio_group.item(value=value, id=f"monitor-interval-{value}"),
                        label,
                        html_for=f"monitor-interval-{value}",
                        display="flex",
                        align_items="center",
                        gap="0.4rem",
                        font_size="var(--font-size-2)",
                    )
                    for value, label in INTERVAL_LABELS.items()
                ],
                spacing="4",
                min_height="var(--space-7)",  # level with the address field's input
                align="center",
            ),
            name="interval",
            default_value="daily",
            aria_labelledby=_INTERVAL_LABEL_ID,
        ),
        spacing="1",
        flex_shrink="0",
    )


def _add_form() -> rx.Component:
    return field_row_form(
        field_input(
            "Website address",
            "url",
            placeholder="https://example.com",
            autocomplete="url",
            required=True,
            form=_FORM,
            error=MonitorsState.url_error,
        ),
        submit="Add monitor",
        icon="plus",
        loading=MonitorsState.adding,
        test_id="monitor-add",
        on_submit=MonitorsState.add,
        extra=(_interval_choice(),),
        aria_label="Add a monitor",
    )


def monitors_section() -> rx.Component:
    return section_card(
        rx.heading("Monitors", as_="h2", size="5"),
        rx.text(
            "websec scans each monitored site daily or weekly (one of the month's scans each time) and emails you "
            "when the grade drops, a serious finding appears, the certificate is about to expire or the site "
            "cannot be reached.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            MonitorsState.rows.length() > 0,  # type: ignore[attr-defined]
            rx.el.ul(rx.foreach(MonitorsState.rows, _monitor), class_name="plain-list", data_testid="monitor-list"),
            rx.text("No monitored sites yet.", size="2", data_testid="monitor-empty"),
        ),
        rx.text(MonitorsState.count_text, size="1", color_scheme="gray", data_testid="monitor-count"),
        rx.heading("Add a monitor", as_="h3", size="3", margin_top="0.5rem"),
        rx.cond(
            MonitorsState.problem != "",
            rx.callout(
                MonitorsState.problem,
                icon="triangle-alert",
                color_scheme="red",
                role="alert",
                width="100%",
                data_testid="monitor-problem",
            ),
        ),
        _add_form(),
        rx.text(MonitorsState.notice, role="status", size="2", color_scheme="green", data_testid="monitor-notice"),
        on_mount=MonitorsState.load,
        data_testid="monitors",
    )


__all__ = ["monitors_section"]
