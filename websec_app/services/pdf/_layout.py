"""What both PDFs share: styles, colours, escaping, the page frame ("Page 3 of 7"), small tables."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Paragraph, Table, TableStyle

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN = 18 * mm
CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN

INK = colors.HexColor("#1f2328")
MUTED = colors.HexColor("#656d76")
RULE = colors.HexColor("#d0d7de")
HEADER_FILL = colors.HexColor("#f6f8fa")
BRAND = colors.HexColor("#0b3d91")

STATUS_COLOURS = {
    "good": colors.HexColor("#1a7f37"),
    "pass": colors.HexColor("#1a7f37"),
    "warn": colors.HexColor("#9a6700"),
    "partial": colors.HexColor("#9a6700"),
    "weak": colors.HexColor("#bc4c00"),
    "missing": colors.HexColor("#cf222e"),
    "bad": colors.HexColor("#cf222e"),
    "fail": colors.HexColor("#cf222e"),
    "not tested": colors.HexColor("#656d76"),
}
SEVERITY_COLOURS = {
    "critical": colors.HexColor("#cf222e"),
    "important": colors.HexColor("#bc4c00"),
    "minor": colors.HexColor("#656d76"),
}
GRADE_COLOURS = {
    "A+": colors.HexColor("#1a7f37"),
    "A": colors.HexColor("#2da44e"),
    "B": colors.HexColor("#7d8c00"),
    "C": colors.HexColor("#bf8700"),
    "D": colors.HexColor("#bc4c00"),
    "F": colors.HexColor("#cf222e"),
}
_MAX_CHARS = 600
# Characters reportlab's paragraph parser or the PDF text layer cannot take (C0 controls except tab/newline).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class PdfRenderError(Exception):
    """The PDF could not be produced (the API answers 500 and counts no scan)."""


def text(value: Any, limit: int = _MAX_CHARS) -> str:
    """Escape untrusted text for reportlab's mini-markup (names, header values, notes, URLs)."""
    raw = "" if value is None else _CONTROL.sub("", str(value))
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return escape(raw)


def code(value: Any, limit: int = _MAX_CHARS) -> str:
    """Escaped monospace text that may break anywhere (long header values, fixes)."""
    return f'<font face="Courier">{text(value, limit)}</font>'


def styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    body = ParagraphStyle(
        "body", parent=base["BodyText"], fontName="Helvetica", fontSize=9.5, leading=12.5, textColor=INK
    )
    return {
        "title": ParagraphStyle(
            "title", parent=body, fontName="Helvetica-Bold", fontSize=22, leading=27, spaceAfter=4, textColor=BRAND
        ),
        "subtitle": ParagraphStyle("subtitle", parent=body, fontSize=12, leading=16, textColor=MUTED),
        "h1": ParagraphStyle(
            "h1", parent=body, fontName="Helvetica-Bold", fontSize=15, leading=19, spaceBefore=10, spaceAfter=6
        ),
        "h2": ParagraphStyle(
            "h2", parent=body, fontName="Helvetica-Bold", fontSize=12, leading=16, spaceBefore=10, spaceAfter=4
        ),
        "body": body,
        "small": ParagraphStyle("small", parent=body, fontSize=8, leading=10.2),
        "item": ParagraphStyle("item", parent=body, fontSize=8, leading=10.2, spaceAfter=7),
        "cell": ParagraphStyle("cell", parent=body, fontSize=8, leading=10.2),
        "cellbold": ParagraphStyle("cellbold", parent=body, fontName="Helvetica-Bold", fontSize=8, leading=10.2),
        "grade": ParagraphStyle(
            "grade",
            parent=body,
            fontName="Helvetica-Bold",
            fontSize=44,
            leading=50,
            textColor=colors.white,
            alignment=1,
        ),
        "muted": ParagraphStyle("muted", parent=body, fontSize=8, leading=10.2, textColor=MUTED),
    }


def badge(value: Any, palette: dict[str, colors.Color] = STATUS_COLOURS) -> str:
    colour = palette.get(str(value), INK)
    return f'<font color="{colour.hexval()}"><b>{text(str(value).upper())}</b></font>'


def table(
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    *,
    header: bool = True,
    extra: Sequence[tuple[Any, ...]] = (),
) -> Table:
    """A grid with a shaded header row that repeats on every page it spans."""
    result = Table([list(row) for row in rows], colWidths=list(widths), repeatRows=1 if header else 0)
    style: list[tuple[Any, ...]] = [
        ("GRID", (0, 0), (-1, -1), 0.4, RULE),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 3),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
    ]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), HEADER_FILL))
    result.setStyle(TableStyle(style + list(extra)))
    return result


def grade_box(grade: str, score: Any, style: dict[str, ParagraphStyle]) -> Flowable:
    """The grade in a coloured square with the score beside it: the first thing a reader sees."""
    colour = GRADE_COLOURS.get(grade, INK)
    score_text = Paragraph(
        f'<font size="26"><b>{text(score)}</b></font><font size="12" color="{MUTED.hexval()}"> / 100</font>',
        ParagraphStyle("score", parent=style["body"], leading=30),
    )
    box = Table(
        [[Paragraph(text(grade), style["grade"]), score_text]],
        colWidths=[34 * mm, 50 * mm],
        rowHeights=[30 * mm],
    )
    box.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (0, 0), colour),
                ("ALIGN", (0, 0), (0, 0), "CENTER"),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                ("LEFTPADDING", (1, 0), (1, 0), 5 * mm),
            ]
        )
    )
    box.hAlign = "LEFT"
    return box


def numbered_canvas(header_left: str, header_right: str, footer_left: str) -> type[Canvas]:
    """A canvas that draws the running header and "Page n of N" on every page after the last one is known.

    reportlab knows the page count only at the end, so pages are kept and drawn at `save()`
    (the reportlab user guide's NumberedCanvas recipe). Header texts are drawn as plain strings,
    never parsed as markup.
    """

    class _NumberedCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._pages: list[dict[str, Any]] = []

        def showPage(self) -> None:  # noqa: N802 - reportlab's name
            self._pages.append(dict(self.__dict__))
            self._startPage()  # type: ignore[attr-defined]

        def save(self) -> None:
            total = len(self._pages)
            for state in self._pages:
                self.__dict__.update(state)
                self._frame(total)
                super().showPage()
            super().save()

        def _frame(self, total: int) -> None:
            self.saveState()
            self.setStrokeColor(RULE)
            self.setLineWidth(0.5)
            top = PAGE_HEIGHT - MARGIN + 6 * mm
            self.line(MARGIN, top - 2 * mm, PAGE_WIDTH - MARGIN, top - 2 * mm)
            self.line(MARGIN, MARGIN - 6 * mm, PAGE_WIDTH - MARGIN, MARGIN - 6 * mm)
            self.setFont("Helvetica-Bold", 8)
            self.setFillColor(BRAND)
            self.drawString(MARGIN, top, _plain(header_left, 70))
            self.setFont("Helvetica", 8)
            self.setFillColor(MUTED)
            self.drawRightString(PAGE_WIDTH - MARGIN, top, _plain(header_right, 80))
            self.drawString(MARGIN, MARGIN - 10 * mm, _plain(footer_left, 100))
            page = self._pageNumber  # type: ignore[attr-defined]
            self.drawRightString(PAGE_WIDTH - MARGIN, MARGIN - 10 * mm, f"Page {page} of {total}")
            self.restoreState()

    return _NumberedCanvas


def _plain(value: str, limit: int) -> str:
    value = _CONTROL.sub("", value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


Builder = Callable[[], list[Flowable]]
