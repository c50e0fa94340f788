"""The frame of every page: a skip link, the top bar, the main column and the footer."""

from __future__ import annotations

import reflex as rx

#: (label, path) of the top bar, in reading order.
NAV = (("Scan", "/"), ("Pricing", "/pricing"), ("Pro", "/pro"), ("API", "/api-docs"))

#: The widest the main column gets; pages use the full width below it.
MAX_WIDTH = "1080px"


def logo() -> rx.Component:
    return rx.link(
        rx.hstack(
            rx.icon("shield-check", size=24, color=rx.color("indigo", 10), aria_hidden="true"),
            rx.text("websec", weight="bold", size="5", color=rx.color("gray", 12)),
            spacing="2",
            align="center",
        ),
        href="/",
        underline="none",
        aria_label="websec home",
    )


def _nav_link(label: str, path: str) -> rx.Component:
    return rx.link(
        label, href=path, size="3", weight="medium", color_scheme="gray", high_contrast=True, underline="hover"
    )


def top_bar() -> rx.Component:
    return rx.el.header(
        rx.flex(
            logo(),
            rx.el.nav(
                rx.hstack(*[_nav_link(label, path) for label, path in NAV], spacing="5", align="center"),
                aria_label="Main",
            ),
            justify="between",
            align="center",
            wrap="wrap",
            spacing="3",
            max_width=MAX_WIDTH,
            margin_x="auto",
            padding_x="1rem",
            padding_y="0.85rem",
        ),
        border_bottom=f"1px solid {rx.color('gray', 5)}",
        background_color=rx.color("gray", 1),
        position="sticky",
        top="0",
        z_index="10",
    )


def footer() -> rx.Component:
    return rx.el.footer(
        rx.flex(
            rx.text("websec: website security scans, explained.", size="2", color_scheme="gray"),
            rx.hstack(
                rx.link("Pricing", href="/pricing", size="2", color_scheme="gray"),
                rx.link("API reference", href="/docs", size="2", color_scheme="gray", is_external=True),
                rx.link("OpenAPI", href="/openapi.json", size="2", color_scheme="gray", is_external=True),
                spacing="4",
                wrap="wrap",
            ),
            justify="between",
            wrap="wrap",
            spacing="3",
            max_width=MAX_WIDTH,
            margin_x="auto",
            padding="1.5rem 1rem",
        ),
        border_top=f"1px solid {rx.color('gray', 5)}",
        margin_top="3rem",
    )


def page(*children: rx.Component, width: str = MAX_WIDTH) -> rx.Component:
    """A page: skip link, top bar, `children` in the main column, footer."""
    return rx.box(
        rx.el.a(
            "Skip to content",
            href="#main",
            class_name="skip-link",
        ),
        top_bar(),
        rx.el.main(
            rx.vstack(*children, spacing="6", width="100%", align="stretch"),
            id="main",
            tab_index=-1,
            # "true" once the page is connected to its state: forms work from then on (the tests wait for it).
            data_ready=rx.State.is_hydrated,
            max_width=width,
            margin_x="auto",
            padding_x="1rem",
            padding_top="2rem",
            width="100%",
            flex="1 0 auto",  # a short page (404, a refusal) still has its footer at the bottom
        ),
        footer(),
        display="flex",
        flex_direction="column",
        min_height="100vh",
        background_color=rx.color("gray", 1),
    )


def page_heading(title: str, lead: str | rx.Var[str] | None = None) -> rx.Component:
    return rx.vstack(
        rx.heading(title, as_="h1", size="8", weight="bold"),
        rx.text(lead, size="4", color_scheme="gray") if lead is not None else rx.fragment(),
        spacing="2",
    )
