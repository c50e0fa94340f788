"""What both PDFs share: styles, colours, escaping, the page frame ("Page 3 of 7"), small tables."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Paragraph, Table, TableStyle

from ._fonts import fonts, markup

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
#: The running header's font size.
_HEADER_SIZE = 8
# Characters reportlab's paragraph parser or the PDF text layer cannot take (C0 controls except tab/newline).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# `code` in rule texts (Markdown backticks): printed as a monospace span, never as a backtick.
_BACKTICKS = re.compile(r"`([^`]*)`")
CODE_FILL = colors.HexColor("#f3f5f7")
#: Rows up to this share of a page are never cut: they move to the next page whole.
_CUT_ROWS_OVER = 1 / 3
#: Neither part of a cut row is shorter than this (points, about five lines): no lone title at a page foot.
_MIN_ROW_PART = 56

#: What a reader sees for a status or verdict (never the raw value).
STATUS_LABELS = {
    "good": "Good",
    "pass": "Pass",
    "warn": "Warning",
    "partial": "Partial",
    "weak": "Weak",
    "missing": "Missing",
    "bad": "Problem",
    "fail": "Fail",
    "not tested": "Not tested",
    "critical": "Critical",
    "important": "Important",
    "minor": "Minor",
}


class PdfRenderError(Exception):
    """The PDF could not be produced (the API answers 500 and counts no scan)."""


def _clean(value: Any, limit: int | None) -> str:
    raw = "" if value is None else _CONTROL.sub("", str(value))
    if limit is not None and len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return raw


def text(value: Any, limit: int | None = _MAX_CHARS) -> str:
    """Escape untrusted text for reportlab's mini-markup (names, header values, notes, URLs), in fonts
    that have its characters."""
    return markup(_clean(value, limit))


def code(value: Any, limit: int | None = None) -> str:
    """Escaped monospace text (inline): header names, values, commands."""
    mono = fonts().mono
    return f'<font face="{mono}">{markup(_clean(value, limit), mono)}</font>'


def prose(value: Any, limit: int | None = 2000) -> str:
    """Rule text (explanations, fixes) with its `backtick` spans as monospace and no backtick left."""
    raw = _clean(value, limit)
    parts: list[str] = []
    last = 0
    for match in _BACKTICKS.finditer(raw):
        parts.append(markup(raw[last : match.start()]))
        parts.append(code(match.group(1)))
        last = match.end()
    parts.append(markup(raw[last:].replace("`", "")))
    return "".join(parts)


def observed(note: str, limit: int = 2000) -> str:
    """ "Observed:" and a finding's one note (what the scan found on the site), as a line of a paragraph."""
    return f"<b>Observed:</b> {prose(note, limit)}"


def observed_list(notes: Sequence[str], st: dict[str, ParagraphStyle], limit: int = 2000) -> list[Paragraph]:
    """A finding's several notes as a list (`cell_bullet`: a paragraph each, its wrapped lines under its text; a
    note may hold a "; " of its own), `limit` characters in all as for one note, then how many more were not shown.
    It follows an "Observed:" line."""
    shown: list[str] = []
    left = limit
    for index, note in enumerate(notes):
        if left <= 1:
            shown.append(markup(f"and {len(notes) - index:,} more not shown here"))
            break
        shown.append(prose(note, left))
        left -= len(note)
    return [para(f"<bullet>•</bullet>{note}", st["cell_bullet"]) for note in shown]


# Scripts whose letters change shape or order with their neighbours (Hebrew, Arabic, Indic, Thai, Lao,
# Myanmar, Khmer, and Arabic presentation forms): only paragraphs holding them are shaped.
_NEEDS_SHAPING = re.compile(
    "[\u0590-\u08ff\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\ufb1d-\ufdff\ufe70-\ufeff]"
)
_SHAPED_STYLES: dict[str, ParagraphStyle] = {}


def para(markup_text: str, style: ParagraphStyle) -> Paragraph:
    """A Paragraph, shaped with HarfBuzz when its text needs it and the body font allows it."""
    if fonts().shaping and _NEEDS_SHAPING.search(markup_text):
        shaped = _SHAPED_STYLES.get(style.name)
        if shaped is None:
            shaped = _SHAPED_STYLES[style.name] = ParagraphStyle(f"{style.name}-shaped", parent=style, shaping=1)
        style = shaped
    return Paragraph(markup_text, style)


def plain(value: Any) -> str:
    """A detail value as a reader says it: Yes/No, not True/False; lists joined; nothing for None."""
    if value is True:
        return "Yes"
    if value is False:
        return "No"
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value if plain(v))
    return str(value)


def when(value: Any) -> str:
    """ "2026-11-22T12:00:00Z" -> "22 November 2026, 12:00 UTC" (anything else as given)."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return str(value or "")
    return f"{moment.day} {moment:%B %Y, %H:%M} UTC"


def status_label(value: Any) -> str:
    return STATUS_LABELS.get(str(value), str(value).replace("_", " ").capitalize())


def styles() -> dict[str, ParagraphStyle]:
    chosen = fonts()
    base = getSampleStyleSheet()
    body = ParagraphStyle(
        "body",
        parent=base["BodyText"],
        fontName=chosen.sans,
        fontSize=9.5,
        leading=12.5,
        textColor=INK,
        shaping=0,  # on only where a script needs it (`para`): HarfBuzz on every word triples the time
    )
    bold = chosen.bold
    return {
        "title": ParagraphStyle(
            "title", parent=body, fontName=bold, fontSize=22, leading=27, spaceAfter=4, textColor=BRAND
        ),
        "subtitle": ParagraphStyle("subtitle", parent=body, fontSize=12, leading=16, textColor=MUTED),
        "h1": ParagraphStyle("h1", parent=body, fontName=bold, fontSize=15, leading=19, spaceBefore=10, spaceAfter=6),
        "h2": ParagraphStyle("h2", parent=body, fontName=bold, fontSize=12, leading=16, spaceBefore=10, spaceAfter=4),
        "h3": ParagraphStyle("h3", parent=body, fontName=bold, fontSize=10, leading=13, spaceBefore=6, spaceAfter=2),
        "body": body,
        "small": ParagraphStyle("small", parent=body, fontSize=8, leading=10.2),
        "item": ParagraphStyle("item", parent=body, fontSize=8, leading=10.2, spaceAfter=7),
        # an item broken around a list (cell_bullet): its part before the list, and its part after
        "item_head": ParagraphStyle("item_head", parent=body, fontSize=8, leading=10.2, spaceAfter=0),
        "item_tail": ParagraphStyle("item_tail", parent=body, fontSize=8, leading=10.2, spaceBefore=1, spaceAfter=7),
        "cell": ParagraphStyle("cell", parent=body, fontSize=8, leading=10.2),
        # a list item in a cell: its bullet at the cell's edge, its wrapped lines under its text (reportlab indents
        # the first line further when the bullet, plus 0.6 of its font size, passes leftIndent)
        "cell_bullet": ParagraphStyle(
            "cell_bullet",
            parent=body,
            fontSize=8,
            leading=10.2,
            spaceBefore=1,
            leftIndent=9,
            bulletIndent=0,
            bulletFontName=chosen.sans,
            bulletFontSize=8,
        ),
        "cellbold": ParagraphStyle("cellbold", parent=body, fontName=bold, fontSize=8, leading=10.2),
        "mono": ParagraphStyle("mono", parent=body, fontName=chosen.mono, fontSize=7.5, leading=9.4, splitLongWords=1),
        "grade": ParagraphStyle(
            "grade",
            parent=body,
            fontName=bold,
            fontSize=44,
            leading=50,
            textColor=colors.white,
            alignment=1,
        ),
        "muted": ParagraphStyle("muted", parent=body, fontSize=8, leading=10.2, textColor=MUTED),
        "header": ParagraphStyle("header", parent=body, fontSize=_HEADER_SIZE, leading=10, textColor=MUTED),
        "header_right": ParagraphStyle(
            "header_right", parent=body, fontSize=_HEADER_SIZE, leading=10, textColor=MUTED, alignment=2
        ),
    }


def mono_box(
    value: Any, st: dict[str, ParagraphStyle], width: float, label: str | None = None, *, as_prose: bool = False
) -> Table:
    """Code or a header value in a shaded monospace box that wraps (between words, and inside a long
    token where it must) instead of cutting anything off. `as_prose`: rule text with `code` spans."""
    cell: list[Any] = []
    if label:
        cell.append(para(label, st["muted"]))
    if as_prose:
        cell.append(para(prose(value, 20_000), st["cell"]))
    else:
        lines = _clean(value, 20_000).splitlines() or [""]
        mono = fonts().mono
        cell.append(para("<br/>".join(markup(line, mono) for line in lines), st["mono"]))
    # splitInRow: a box taller than what is left of a page (a long header value) goes on over the next
    box = Table([[cell]], colWidths=[width], splitInRow=_MIN_ROW_PART)
    box.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, -1), CODE_FILL),
                ("BOX", (0, 0), (-1, -1), 0.4, RULE),
                ("LEFTPADDING", (0, 0), (-1, -1), 4),
                ("RIGHTPADDING", (0, 0), (-1, -1), 4),
                ("TOPPADDING", (0, 0), (-1, -1), 3),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    box.hAlign = "LEFT"
    return box


def badge(value: Any, palette: dict[str, colors.Color] = STATUS_COLOURS) -> str:
    colour = palette.get(str(value), INK)
    return f'<font color="{colour.hexval()}"><b>{text(status_label(value))}</b></font>'


def _has_content(cell: Any) -> bool:
    return bool(cell) if isinstance(cell, list | tuple | str) else cell is not None


class _Grid(Table):
    """A Table that breaks where a reader expects it to.

    reportlab's own split first breaks between rows, then lays the rest (its header row repeated) in what
    is left of the page and cuts a row there: a header in mid-page, and a row's text continued under it.
    Here one decision is made per page: rows move whole to the next page, and the header is repeated only
    at the top of one. A row taller than a third of a page is cut instead (moving it would leave a page
    mostly blank; one taller than a page could not be set at all), and the cells it leaves empty on the
    next page say "(continued)".
    """

    _continuation = False  # made by a split: starts with the repeated header row

    def split(self, availWidth: float, availHeight: float) -> list[Flowable]:  # noqa: N803 - reportlab's names
        grid: Any = self  # reportlab's table internals are untyped
        grid._calc(availWidth, availHeight)
        frame = getattr(self, "_frame", None)  # set by Frame.split; absent when nested or split by hand
        at_top = frame is None or bool(frame._atTop)
        if self._continuation and not at_top:
            return []  # its header row would sit in mid-page: start the next page with it
        first = grid._getFirstPossibleSplitRowPosition(availHeight)  # the first row that does not fit
        heights: list[float] = grid._rowHeights
        page = frame._aH if frame is not None else availHeight
        too_tall = at_top and first <= self.repeatRows  # no row fits even on a fresh page
        parts: list[Any] = []
        if first < len(heights) and (too_tall or heights[first] > page * _CUT_ROWS_OVER):
            parts = grid._splitRows(availHeight, doInRowSplit=1)
            if parts and not too_tall and _last_row_height(parts[0], availWidth, availHeight) < _MIN_ROW_PART:
                parts = []  # only a title would stay on this page: move the row whole
            # A row that fits on no page must be cut on this one. A box nested in it (a long snippet) refuses a cut
            # that leaves less than _MIN_ROW_PART of it for the next page, and a row a little taller than a page
            # is cut just there (an Apache site's 14 cookies): cut it higher, down to half the page.
            higher = availHeight - _MIN_ROW_PART
            while too_tall and not parts and higher >= page / 2:
                parts = grid._splitRows(higher, doInRowSplit=1)
                higher -= _MIN_ROW_PART
        if not parts:
            parts = grid._splitRows(availHeight, doInRowSplit=0)
        if len(parts) == 2:
            parts[1]._continuation = bool(self.repeatRows)
        return parts

    def _splitCell(self, value: Any, style: Any, oldHeight: float, newHeight: float, width: float) -> Any:  # noqa: N803
        base: Any = Table
        parts = base._splitCell(self, value, style, oldHeight, newHeight, width)
        if parts and _has_content(parts[0]) and not _has_content(parts[1]):
            return (parts[0], (Paragraph("<i>(continued)</i>", _continued_style()),))
        return parts


def _last_row_height(part: Any, width: float, height: float) -> float:
    part.wrap(width, height)
    return float(part._rowHeights[-1])


def _continued_style() -> ParagraphStyle:
    return ParagraphStyle("continued", fontName=fonts().sans, fontSize=8, leading=10.2, textColor=MUTED)


def table(
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    *,
    header: bool = True,
    extra: Sequence[tuple[Any, ...]] = (),
) -> Table:
    """A grid with a shaded header row that repeats at the top of every page it continues on."""
    result = _Grid(
        [list(row) for row in rows],
        colWidths=list(widths),
        repeatRows=1 if header else 0,
        splitInRow=_MIN_ROW_PART,
    )
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
    score_text = para(
        f'<font size="26"><b>{text(score)}</b></font><font size="12" color="{MUTED.hexval()}"> / 100</font>',
        ParagraphStyle("score", parent=style["body"], leading=30),
    )
    box = Table(
        [[para(text(grade), style["grade"]), score_text]],
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
            page = self._pageNumber  # type: ignore[attr-defined]
            half = CONTENT_WIDTH / 2
            # The header has room for one line above its rule: a long host is shortened in the middle to fit.
            left_width, right_width = half + 20 * mm, half - 20 * mm
            shown_left = one_line(header_left, fonts().bold, _HEADER_SIZE, left_width)
            left = f'<font color="{BRAND.hexval()}"><b>{text(shown_left, None)}</b></font>'
            _draw_line(self, left, MARGIN, top, left_width, "header")
            shown_right = one_line(header_right, fonts().sans, _HEADER_SIZE, right_width)
            _draw_line(self, text(shown_right, None), MARGIN + left_width, top, right_width, "header_right")
            # The footer may hold a client name in any script, up to two lines: it grows downwards.
            _draw_line(self, text(footer_left, 200), MARGIN, MARGIN - 10 * mm, CONTENT_WIDTH - 30 * mm, "header")
            _draw_line(
                self,
                f"Page {page} of {total}",
                MARGIN + CONTENT_WIDTH - 30 * mm,
                MARGIN - 10 * mm,
                30 * mm,
                "header_right",
            )
            self.restoreState()

    return _NumberedCanvas


_FRAME_STYLES: dict[str, ParagraphStyle] = {}


@lru_cache(maxsize=64)  # the same header on every page
def one_line(value: str, font: str, size: float, width: float) -> str:
    """`value` as it fits on one line `width` wide in `font` at `size`: whole, or with the middle of its longest
    word (a host name) replaced by "…", so that the host keeps its first labels and its registered domain."""
    value = _clean(value, None)
    if stringWidth(value, font, size) <= width:
        return value
    longest = max(re.finditer(r"\S+", value), key=lambda word: len(word.group()), default=None)
    if longest is not None:
        before, word, after = value[: longest.start()], longest.group(), value[longest.end() :]
        for keep in range(len(word) - 1, 0, -1):
            shortened = f"{before}{word[: (keep + 1) // 2]}…{word[len(word) - keep // 2 :]}{after}"
            if stringWidth(shortened, font, size) <= width:
                return shortened
    while value and stringWidth(f"{value}…", font, size) > width:  # the rest alone is too long: cut its end
        value = value[:-1]
    return f"{value}…"


def _draw_line(canvas: Canvas, markup_text: str, x: float, baseline: float, width: float, style: str) -> None:
    """Draw a short paragraph whose first line sits on `baseline` (header and footer text, shaped)."""
    if not _FRAME_STYLES:
        _FRAME_STYLES.update(styles())
    paragraph = para(markup_text, _FRAME_STYLES[style])
    _, height = paragraph.wrap(width, 30 * mm)
    first_line = _FRAME_STYLES[style].leading
    paragraph.drawOn(canvas, x, baseline - height + first_line - 2)


Builder = Callable[[], list[Flowable]]
