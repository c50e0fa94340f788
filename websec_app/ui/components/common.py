"""Small pieces every page uses: status and grade badges, copyable text, labelled fields, messages."""

from __future__ import annotations

import reflex as rx

#: Status (spec 2.3) -> (label, Radix colour). "locked" is ours: a Pro-only section of a free report.
STATUS_STYLE = {
    "good": ("Good", "green"),
    "warn": ("Warning", "amber"),
    "weak": ("Weak", "orange"),
    "missing": ("Missing", "red"),
    "bad": ("Bad", "red"),
    "locked": ("Pro", "indigo"),
}
SEVERITY_STYLE = {"critical": ("Critical", "red"), "important": ("Important", "orange"), "minor": ("Minor", "gray")}
GRADE_COLORS = {"A+": "green", "A": "green", "B": "lime", "C": "amber", "D": "orange", "F": "red"}


def status_badge(status: rx.Var[str] | str) -> rx.Component:
    cases = [
        (name, rx.badge(label, color_scheme=color, variant="soft", size="2", high_contrast=True))
        for name, (label, color) in STATUS_STYLE.items()
    ]
    return rx.match(status, *cases, rx.badge(status, color_scheme="gray", variant="soft"))


def severity_badge(severity: rx.Var[str] | str) -> rx.Component:
    cases = [
        (name, rx.badge(label, color_scheme=color, variant="outline", size="1"))
        for name, (label, color) in SEVERITY_STYLE.items()
    ]
    return rx.match(severity, *cases, rx.fragment())


def grade_badge(grade: rx.Var[str] | str, size: str = "large") -> rx.Component:
    """The grade in a coloured square: the first thing anyone reads on a report."""
    big = size == "large"

    def square(color: str) -> rx.Component:
        return rx.center(
            # Radix's text colour for each scale: dark on light lime (B) and amber (C), where white read at
            # about 1.5:1 (WCAG 2.2 SC 1.4.3 asks 3:1 of large text, 4.5:1 of the small square's); white elsewhere.
            rx.text(grade, weight="bold", size="9" if big else "4", color=f"var(--{color}-contrast)", line_height="1"),
            width="7rem" if big else "2.75rem",
            height="7rem" if big else "2.75rem",
            border_radius="var(--radius-4)",
            background_color=rx.color(color, 10),
            flex_shrink="0",
            role="img",
            aria_label=f"Grade {grade}",
            data_testid="grade" if big else "grade-small",
        )

    return rx.match(grade, *[(g, square(c)) for g, c in GRADE_COLORS.items()], square("gray"))


def copy_button(text: rx.Var[str] | str, what: str = "") -> rx.Component:
    label = f"Copy {what}".strip()
    return rx.button(
        rx.icon("copy", size=14, aria_hidden="true"),
        "Copy",
        on_click=[rx.set_clipboard(text), rx.toast.success("Copied to the clipboard", duration=2000)],
        variant="soft",
        size="1",
        aria_label=label,
        type="button",
    )


def copyable(text: rx.Var[str] | str, what: str = "", testid: str = "") -> rx.Component:
    """Monospace text with a Copy button (fixes, links, curl commands)."""
    return rx.flex(
        rx.el.pre(rx.el.code(text), class_name="copyable", **({"data_testid": testid} if testid else {})),
        copy_button(text, what),
        spacing="2",
        # On phones the button sits above the text, which keeps the full width.
        direction={"initial": "column-reverse", "sm": "row"},
        align={"initial": "end", "sm": "start"},
        width="100%",
    )


def problem_callout(kind: rx.Var[str] | str, title: rx.Var[str] | str, text: rx.Var[str] | str) -> rx.Component:
    """A refusal or an error, announced to screen readers (role=alert)."""
    return rx.cond(
        title != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert", aria_hidden="true")),
            rx.vstack(
                # a host name or address in the message can be longer than a phone is wide
                rx.text(title, weight="bold", class_name="break-anywhere"),
                rx.text(text, class_name="break-anywhere"),
                rx.cond(
                    kind == "quota",
                    rx.hstack(
                        rx.link(rx.button("See prices", size="2"), href="/pricing", underline="none"),
                        rx.link(
                            rx.button("Use a one-time token", size="2", variant="outline"),
                            href="/one-time-scan",
                            underline="none",
                        ),
                        wrap="wrap",
                        padding_top="0.25rem",
                    ),
                ),
                spacing="1",
            ),
            color_scheme=rx.cond(kind == "quota", "amber", "red"),
            role="alert",
            data_kind=kind,
            id="problem",
            size="2",
            width="100%",
        ),
    )


def section_card(*children: rx.Component, **props: object) -> rx.Component:
    return rx.card(rx.vstack(*children, spacing="3", width="100%", align="stretch"), size="3", width="100%", **props)
