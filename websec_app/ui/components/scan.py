"""The scan form and its progress: a step list with a live timer, so a running scan is visibly alive."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from ..state.scan import ScanState
from .common import problem_callout
from .field import field_input, field_row_form


def _step(label: rx.Var[str], index: Any) -> rx.Component:
    done = index < ScanState.step
    current = index == ScanState.step
    return rx.el.li(
        rx.hstack(
            rx.cond(
                done,
                rx.icon("circle-check", size=18, color=rx.color("green", 10), aria_hidden="true"),
                rx.cond(
                    current,
                    rx.spinner(size="2"),
                    rx.icon("circle", size=18, color=rx.color("gray", 8), aria_hidden="true"),
                ),
            ),
            rx.text(
                label,
                size="2",
                weight=rx.cond(current, "bold", "regular"),
                color_scheme=rx.cond(done | current, "gray", "gray"),
                high_contrast=current,
            ),
            align="center",
            spacing="2",
        ),
        aria_current=rx.cond(current, "step", "false"),
        padding_y="0.2rem",
    )


def progress(kind: str) -> rx.Component:
    """Shown while a scan of this kind runs (role=status: screen readers hear the steps)."""
    return rx.cond(
        ScanState.running & (ScanState.kind == kind),
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.text("Scanning ", rx.el.strong(ScanState.target), size="3", class_name="break-anywhere"),
                    rx.spacer(),
                    rx.badge(ScanState.elapsed, variant="soft", color_scheme="indigo", data_testid="elapsed"),
                    width="100%",
                    align="center",
                ),
                rx.cond(
                    ScanState.waiting,
                    rx.text(
                        "Waiting for a free scanner: every scan slot of this server is busy. Your scan starts as "
                        "soon as one is free; nothing is counted until then.",
                        size="2",
                        color_scheme="amber",
                        data_testid="scan-waiting",
                    ),
                ),
                rx.progress(value=(ScanState.step + 1) * 30, max=100, size="1", aria_label="Scan progress"),
                rx.el.ol(rx.foreach(ScanState.step_labels, _step), class_name="plain-list"),
                rx.text(
                    "The site is fetched once; every check then runs on what was fetched. Most scans take a few "
                    "seconds, slow sites up to 20.",
                    size="1",
                    color_scheme="gray",
                ),
                spacing="3",
                width="100%",
            ),
            role="status",
            aria_live="polite",
            data_testid="scan-progress",
            width="100%",
        ),
    )


def problem(kind: str) -> rx.Component:
    """The last refusal or error of a scan of this kind."""
    return rx.cond(
        ScanState.kind == kind,
        problem_callout(ScanState.problem_kind, ScanState.problem_title, ScanState.problem_text),
    )


def url_form(
    kind: str,
    on_submit: Callable[..., object],
    *,
    button: str = "Scan",
    icon: str = "scan-search",
    extra: tuple[rx.Component, ...] = (),
    url_default: rx.Var[str] | str | None = None,
) -> rx.Component:
    """URL field (uncontrolled: no event per keystroke), optional extra fields, submit button."""
    return field_row_form(
        field_input(
            "Website address",
            "url",
            placeholder="https://example.com",
            input_type="text",
            default_value=url_default,
            autocomplete="url",
            form=kind,
            required=True,
            error=ScanState.field_errors[f"{kind}-url"],
        ),
        submit=button,
        icon=icon,
        loading=ScanState.running & (ScanState.kind == kind),
        test_id=f"{kind}-submit",
        on_submit=on_submit,
        extra=extra,
        aria_label=button,
    )
