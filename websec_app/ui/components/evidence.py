"""The evidence on the report page: where the points went, the raw response headers, the redirect chains,
the TLS tables and certificate chain, and a finding's fix for each server (tabs, the site's own first).

Renders `ReportState.view.evidence` and `FindingView.snippets` (ui/evidence.py). Wide tables scroll
sideways inside their own box (focusable, so keyboard users can scroll them too); long values wrap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from ..evidence import CertRow, Hop, MailServerRow, NameServerRow, ProbeRow, Row, ScoreBar, Snippet
from ..state.report import ReportState
from ..view import FindingView

_CELL = {"text_align": "left", "vertical_align": "top", "padding": "0.45rem 0.6rem"}
#: Plain HTML tables (not Radix's Table, whose scroll area is not focusable): cells, borders, zebra rows.
_TABLE_STYLE = {
    "width": "100%",
    "border_collapse": "collapse",
    "font_size": "var(--font-size-2)",
    "line_height": "1.5",
    "& th": {**_CELL, "font_weight": "600", "color": "var(--gray-12)"},
    "& thead th": {"background": "var(--gray-3)"},
    "& tbody th": {"border_top": "1px solid var(--gray-4)"},
    "& td": {**_CELL, "border_top": "1px solid var(--gray-4)", "color": "var(--gray-12)"},
    "& td.mono, & th.mono": {"font_family": "var(--code-font-family)", "font_size": "0.8125rem"},
    "& td.wrap": {"overflow_wrap": "anywhere", "word_break": "break-word"},
}
_TONE = {"good": "green", "bad": "red", "neutral": "gray"}
#: A name/value table on a phone: each name above its value, both the full width (a third of 340 px broke
#: header names like Permissions-Policy inside the word).
_STACKED_ON_PHONES = {
    "@media (max-width: 519px)": {
        "& thead": {"display": "none"},
        "& tr, & tbody th, & tbody td": {"display": "block", "width": "100% !important"},
        "& tbody th": {"padding_bottom": "0", "border_top": "none"},
        "& tbody td": {"border_top": "none", "padding_top": "0.1rem"},
        "& tbody tr + tr": {"border_top": "1px solid var(--gray-4)"},
    }
}


def _sub_heading(text: str) -> rx.Component:
    return rx.heading(text, as_="h3", size="3", margin_top="0.75rem")


def _scroll_box(label: str, table: rx.Component, testid: str) -> rx.Component:
    """A table in a box of its own that scrolls sideways when the table is wider than the screen."""
    return rx.el.div(
        table,
        role="region",
        aria_label=label,
        tab_index=0,
        overflow_x="auto",
        width="100%",
        max_width="100%",
        border=f"1px solid {rx.color('gray', 5)}",
        border_radius="var(--radius-2)",
        data_testid=testid,
    )


def _table(
    label: str,
    columns: tuple[str, ...],
    rows: Any,  # a list Var of the view (mypy sees the dataclass's list)
    render: Callable[..., rx.Component],
    testid: str,
    *,
    min_width: str = "0",
    name_value: bool = False,
) -> rx.Component:
    table = rx.el.table(
        rx.el.thead(rx.el.tr(*[rx.el.th(name, scope="col") for name in columns])),
        rx.el.tbody(rx.foreach(rows, render)),
        style={
            **_TABLE_STYLE,
            "min_width": min_width,
            # Name/value: long values wrap in their column instead of widening the table; names get a third.
            **(
                {"table_layout": "fixed", "& thead th:first-child": {"width": "34%"}, **_STACKED_ON_PHONES}
                if name_value
                else {}
            ),
        },
    )
    return _scroll_box(label, table, testid)


def _row(row: Row) -> rx.Component:
    return rx.el.tr(
        rx.el.th(row.name, scope="row", class_name="mono wrap", style={"width": "34%", "font_weight": "500"}),
        rx.el.td(row.value, class_name="mono wrap"),
    )


def _field(row: Row) -> rx.Component:
    return rx.el.tr(
        rx.el.th(row.name, scope="row", style={"width": "34%", "font_weight": "500"}),
        rx.el.td(row.value, class_name="wrap"),
    )


def _probe(row: ProbeRow) -> rx.Component:
    tone = rx.match(row.tone, *[(name, color) for name, color in _TONE.items()], "gray")
    return rx.el.tr(
        rx.el.th(row.name, scope="row", style={"font_weight": "500"}),
        rx.el.td(rx.badge(row.outcome, color_scheme=tone, variant="soft", high_contrast=True), data_tone=row.tone),
    )


def _cert(row: CertRow) -> rx.Component:
    return rx.el.tr(
        rx.el.th(row.role, scope="row", style={"font_weight": "500", "white_space": "nowrap"}),
        # The chain table scrolls sideways on phones: names keep a readable width instead of breaking anywhere.
        rx.el.td(row.subject, style={"min_width": "12rem", "overflow_wrap": "break-word"}),
        rx.el.td(row.issuer, style={"min_width": "12rem", "overflow_wrap": "break-word"}),
        rx.el.td(row.expires, style={"white_space": "nowrap"}),
        rx.el.td(row.key, style={"white_space": "nowrap"}),
        rx.el.td(row.signature),
    )


# -- where the points went ---------------------------------------------------------------------------------


def _bar(bar: ScoreBar) -> rx.Component:
    return rx.el.li(
        rx.flex(
            rx.cond(bar.locked, rx.icon("lock", size=14, color=rx.color("indigo", 9), flex_shrink="0")),
            rx.text(bar.title, size="2", flex="1", min_width="0"),
            rx.text(bar.points, size="2", weight="bold", white_space="nowrap"),
            justify="between",
            align="center",
            spacing="3",
            width="100%",
        ),
        rx.box(
            rx.box(
                width=f"{bar.percent}%",
                min_width="3px",
                height="100%",
                # the hidden sections' points: the locked sections' indigo, not a section of this report
                background_color=rx.cond(bar.locked, rx.color("indigo", 9), rx.color("red", 9)),
                border_radius="var(--radius-1)",
            ),
            width="100%",
            height="0.6rem",
            background_color=rx.color("gray", 4),
            border_radius="var(--radius-1)",
            margin_top="0.2rem",
        ),
        padding_y="0.3rem",
        data_testid="score-bar",
        data_section=bar.section,
    )


def score_chart() -> rx.Component:
    """One bar per section for the points it lost (of the 100 a score starts from), then the grade caps.

    Screen readers get the chart as one sentence (`score_text`); the bars and their labels are hidden from
    them so nothing is read twice."""
    evidence = ReportState.view.evidence
    return rx.el.figure(
        rx.el.figcaption(
            rx.heading("Where the points went", as_="h2", size="5"),
            rx.text(
                "Every score starts at 100; each section loses the points of its findings.",
                size="2",
                color_scheme="gray",
            ),
            margin_bottom="0.5rem",
        ),
        rx.text(evidence.score_text, class_name="visually-hidden", data_testid="score-text"),
        rx.cond(
            evidence.score_bars.length() > 0,  # type: ignore[attr-defined]
            rx.el.ul(rx.foreach(evidence.score_bars, _bar), class_name="plain-list", aria_hidden="true"),
            rx.text("No points lost.", size="2", aria_hidden="true"),
        ),
        rx.cond(
            evidence.caps.length() > 0,  # type: ignore[attr-defined]
            rx.box(
                rx.text("Grade caps", size="2", weight="bold"),
                rx.el.ul(
                    rx.foreach(evidence.caps, lambda cap: rx.el.li(cap, data_testid="score-cap")),
                    class_name="bullets",
                ),
                margin_top="0.5rem",
            ),
        ),
        margin="0",
        width="100%",
        data_testid="score-chart",
    )


# -- raw headers and redirects ----------------------------------------------------------------------------


def raw_headers() -> rx.Component:
    evidence = ReportState.view.evidence
    return rx.cond(
        evidence.final_headers.length() > 0,  # type: ignore[attr-defined]
        rx.box(
            _sub_heading("Raw response headers"),
            rx.text(
                "As the final response sent them (status ",
                evidence.final_status,
                "), in their order, repeated headers included.",
                size="2",
                color_scheme="gray",
                margin_bottom="0.4rem",
            ),
            _table(
                "Raw response headers",
                ("Header", "Value"),
                evidence.final_headers,
                _row,
                "raw-headers",
                name_value=True,
            ),
            width="100%",
        ),
    )


def _hop(hop: Hop) -> rx.Component:
    return rx.el.li(
        rx.flex(
            rx.badge(hop.status, color_scheme="gray", variant="surface", high_contrast=True, flex_shrink="0"),
            rx.text(
                hop.url,
                rx.cond(hop.location != "", rx.fragment(" → ", rx.el.span(hop.location))),
                size="2",
                class_name="break-anywhere",
                font_family="var(--code-font-family)",
            ),
            spacing="2",
            align="start",
        ),
        padding_y="0.25rem",
        data_testid="hop",
    )


def _chain(title: str, hops: Any, testid: str) -> rx.Component:
    return rx.cond(
        hops.length() > 0,
        rx.box(
            rx.text(title, size="2", weight="medium"),
            rx.el.ol(rx.foreach(hops, _hop), class_name="plain-list", data_testid=testid),
            margin_top="0.4rem",
        ),
    )


def redirect_chains() -> rx.Component:
    evidence = ReportState.view.evidence
    return rx.cond(
        evidence.main_chain.length() + evidence.http_chain.length() > 0,  # type: ignore[attr-defined]
        rx.box(
            _sub_heading("Redirect chain"),
            _chain("The address scanned", evidence.main_chain, "main-chain"),
            _chain("Its http:// form", evidence.http_chain, "http-chain"),
            width="100%",
        ),
    )


# -- TLS -----------------------------------------------------------------------------------------------


def tls_evidence() -> rx.Component:
    evidence = ReportState.view.evidence
    return rx.cond(
        evidence.negotiated.length() > 0,  # type: ignore[attr-defined]
        rx.vstack(
            _sub_heading("Connection a browser gets"),
            _table(
                "Negotiated connection",
                ("Parameter", "Value"),
                evidence.negotiated,
                _field,
                "tls-negotiated",
                name_value=True,
            ),
            rx.grid(
                rx.box(
                    _sub_heading("Protocol versions"),
                    _table(
                        "Protocol versions", ("Version", "Server's answer"), evidence.protocols, _probe, "tls-protocols"
                    ),
                ),
                rx.box(
                    _sub_heading("Weak cipher families"),
                    _table(
                        "Weak cipher families",
                        ("Family", "Server's answer"),
                        evidence.weak_ciphers,
                        _probe,
                        "tls-weak-ciphers",
                    ),
                ),
                columns={"initial": "1", "md": "2"},
                spacing="4",
                width="100%",
            ),
            rx.cond(
                evidence.not_testable.length() > 0,  # type: ignore[attr-defined]
                rx.box(
                    rx.text("Not testable from here", size="2", weight="medium"),
                    rx.el.ul(rx.foreach(evidence.not_testable, lambda item: rx.el.li(item)), class_name="bullets"),
                    color=rx.color("gray", 11),
                ),
            ),
            rx.cond(
                evidence.certificate.length() > 0,  # type: ignore[attr-defined]
                rx.box(
                    _sub_heading("Certificate"),
                    _table(
                        "Certificate",
                        ("Field", "Value"),
                        evidence.certificate,
                        _field,
                        "tls-certificate",
                        name_value=True,
                    ),
                    width="100%",
                ),
            ),
            rx.cond(
                evidence.entry_certificate.length() > 0,  # type: ignore[attr-defined]
                rx.box(
                    _sub_heading("Certificate of the address scanned"),
                    rx.text(
                        "Served by ",
                        rx.el.strong(evidence.entry_host),
                        ", which redirects to the page: visitors who type that address meet this certificate first.",
                        size="2",
                        color_scheme="gray",
                    ),
                    _table(
                        "Certificate of the address scanned",
                        ("Field", "Value"),
                        evidence.entry_certificate,
                        _field,
                        "tls-entry-certificate",
                        name_value=True,
                    ),
                    width="100%",
                ),
            ),
            rx.cond(
                evidence.chain.length() > 0,  # type: ignore[attr-defined]
                rx.box(
                    _sub_heading("Certificate chain"),
                    rx.text(
                        "As the server sent it, the site's certificate first.",
                        # A class, not a responsive prop: on a plain element Reflex passes {"initial": ...,
                        # "md": ...} through as the CSS value, which browsers drop, so it showed at every width.
                        # Shown below 1024 px (styles.css), where the table may no longer fit its card.
                        rx.el.span(" Scroll the table sideways for the rest.", class_name="narrow-only"),
                        size="2",
                        color_scheme="gray",
                    ),
                    _table(
                        "Certificate chain",
                        ("Certificate", "Subject", "Issuer", "Expires", "Key", "Signature"),
                        evidence.chain,
                        _cert,
                        "tls-chain",
                        min_width="720px",
                    ),
                    width="100%",
                ),
            ),
            spacing="2",
            width="100%",
            align="stretch",
        ),
    )


def _mail_server(row: MailServerRow) -> rx.Component:
    return rx.el.tr(
        rx.el.th(row.host, scope="row", style={"font_weight": "500", "overflow_wrap": "anywhere"}),
        rx.el.td(row.starttls, style={"white_space": "nowrap"}),
        rx.el.td(row.protocol, style={"white_space": "nowrap"}),
        rx.el.td(row.certificate, style={"min_width": "12rem", "overflow_wrap": "break-word"}),
        rx.el.td(row.days_left, style={"white_space": "nowrap"}),
    )


def _name_server(row: NameServerRow) -> rx.Component:
    tone = rx.match(row.tone, *[(name, color) for name, color in _TONE.items()], "gray")
    return rx.el.tr(
        # The table scrolls sideways on phones: names and addresses keep whole lines instead of breaking anywhere.
        rx.el.th(
            row.server, scope="row", style={"font_weight": "500", "min_width": "9rem", "overflow_wrap": "break-word"}
        ),
        rx.el.td(row.address, class_name="mono", style={"white_space": "nowrap"}),
        rx.el.td(row.named_by),
        rx.el.td(rx.badge(row.verdict, color_scheme=tone, variant="soft", high_contrast=True), data_tone=row.tone),
        rx.el.td(row.answer, style={"min_width": "10rem", "overflow_wrap": "break-word"}),
    )


def _dns_table(heading: str, explanation: str, table: rx.Component) -> rx.Component:
    return rx.vstack(
        _sub_heading(heading),
        rx.text(
            explanation,
            rx.el.span(" Scroll the table sideways for the rest.", class_name="narrow-only"),
            size="2",
            color_scheme="gray",
        ),
        table,
        spacing="2",
        width="100%",
        align="stretch",
    )


def dns_evidence() -> rx.Component:
    evidence = ReportState.view.evidence
    name_servers = evidence.name_servers.length() > 0  # type: ignore[attr-defined]
    mail_servers = evidence.mail_servers.length() > 0  # type: ignore[attr-defined]
    return rx.cond(
        name_servers | mail_servers,
        rx.vstack(
            rx.cond(
                name_servers,
                _dns_table(
                    "Name servers",
                    "Each name server the domain is delegated to, asked directly whether it serves the domain's zone. "
                    "One that does not is a lame delegation.",
                    _table(
                        "Name servers",
                        ("Name server", "Address", "Named by", "Serves the zone?", "Its answer"),
                        evidence.name_servers,
                        _name_server,
                        "dns-name-servers",
                        min_width="640px",
                    ),
                ),
            ),
            rx.cond(
                mail_servers,
                _dns_table(
                    "Mail servers",
                    "Each MX host as a sending mail server meets it: whether it offers STARTTLS, and the certificate "
                    "it presents after it.",
                    _table(
                        "Mail servers",
                        ("MX host", "STARTTLS", "Protocol", "Certificate", "Expires in"),
                        evidence.mail_servers,
                        _mail_server,
                        "dns-mail-servers",
                        min_width="640px",
                    ),
                ),
            ),
            spacing="4",
            width="100%",
            align="stretch",
            margin_top="1rem",
            padding_top="0.25rem",
            border_top=f"1px solid {rx.color('gray', 4)}",
        ),
    )


def section_evidence(section_key: Any) -> rx.Component:
    """What a section shows under its findings: raw headers, TLS tables, redirect chains."""

    def block(evidence: rx.Component) -> rx.Component:
        return rx.box(evidence, margin_top="1rem", padding_top="0.25rem", border_top=f"1px solid {rx.color('gray', 4)}")

    return rx.match(
        section_key,
        ("headers", block(raw_headers())),
        ("tls", block(tls_evidence())),
        ("redirection", block(redirect_chains())),
        ("dns", dns_evidence()),  # its own border: a domain without name or mail servers asked shows none
        rx.fragment(),
    )


# -- fix snippets ---------------------------------------------------------------------------------------------


def _snippet_tab(snippet: Snippet) -> rx.Component:
    return rx.tabs.trigger(snippet.label, value=snippet.server, data_testid="snippet-tab", data_server=snippet.server)


def _snippet_panel(snippet: Snippet) -> rx.Component:
    return rx.tabs.content(
        rx.flex(
            rx.el.pre(rx.el.code(snippet.code), class_name="copyable", data_testid="snippet-code"),
            rx.button(
                rx.icon("copy", size=14, aria_hidden="true"),
                "Copy",
                on_click=[rx.set_clipboard(snippet.code), rx.toast.success("Copied to the clipboard", duration=2000)],
                variant="soft",
                size="1",
                aria_label="Copy the " + snippet.label + " fix",
                type="button",
                data_testid="snippet-copy",
            ),
            spacing="2",
            # On phones the button sits above the code, which keeps the full width.
            direction={"initial": "column-reverse", "sm": "row"},
            align={"initial": "end", "sm": "start"},
            width="100%",
        ),
        value=snippet.server,
        padding_top="0.5rem",
    )


def fix_snippets(finding: FindingView) -> rx.Component:
    """The fix for each server as tabs, the scanned site's own first; nothing when the report has none."""
    return rx.cond(
        finding.snippets.length() > 0,  # type: ignore[attr-defined]
        rx.box(
            rx.text("For your server", size="2", weight="bold", margin_top="0.5rem"),
            rx.tabs.root(
                rx.tabs.list(
                    rx.foreach(finding.snippets, _snippet_tab),
                    size="1",
                    aria_label="Fix for your server",
                    flex_wrap="wrap",
                ),
                rx.foreach(finding.snippets, _snippet_panel),
                default_value=finding.first_server,
            ),
            data_testid="fix-snippets",
            width="100%",
        ),
    )
