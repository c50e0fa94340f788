"""The README badge (issue 17): an SVG in the shields.io look, label "websec", the latest grade in its colour.

It carries the grade and the scan's date (in its title, which screen readers and tooltips read) and
nothing else. Text is drawn in Verdana/DejaVu Sans 11 px like shields.io's flat style; widths come from a
small table of advance widths so the badge needs no font at render time.
"""

from __future__ import annotations

from datetime import datetime
from xml.sax.saxutils import escape

LABEL = "websec"
NOT_SCANNED = "not scanned"

#: shields.io's named colours, best grade to worst.
GRADE_COLOURS = {
    "A+": "#44cc11",  # brightgreen
    "A": "#97ca00",  # green
    "B": "#a4a61d",  # yellowgreen
    "C": "#dfb317",  # yellow
    "D": "#fe7d37",  # orange
    "F": "#e05d44",  # red
}
GREY = "#9f9f9f"

# Verdana 11 px advance widths (px), rounded: enough for the label, grades and "not scanned".
_WIDTHS = {" ": 3.9, "+": 9.2, "-": 4.9, ".": 3.9}
_WIDTHS.update({c: 7.5 for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})
_WIDTHS.update({c: 6.6 for c in "abcdeghknopqsuvxyz"})
_WIDTHS.update({"f": 3.9, "i": 3.0, "j": 3.3, "l": 3.0, "m": 10.7, "r": 4.7, "t": 4.3, "w": 8.9})


def _text_width(text: str) -> int:
    return round(sum(_WIDTHS.get(ch, 7.0) for ch in text))


def render_badge(grade: str | None, scanned_at: datetime | None) -> str:
    """The badge SVG for a grade (None: a grey "not scanned")."""
    value = grade if grade else NOT_SCANNED
    colour = GRADE_COLOURS.get(grade or "", GREY)
    title = f"{LABEL}: {value}"
    if grade and scanned_at is not None:
        title += f" (scanned {scanned_at.date().isoformat()})"
    left = _text_width(LABEL) + 10
    right = _text_width(value) + 10
    width = left + right
    label_x = left * 5  # text is drawn at 10x scale and scaled down, as shields.io does, for crisp kerning
    value_x = (left + right / 2) * 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="110">'
        f'<text aria-hidden="true" x="{label_x}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)">'
        f"{LABEL}</text>"
        f'<text x="{label_x}" y="140" transform="scale(.1)">{LABEL}</text>'
        f'<text aria-hidden="true" x="{value_x:.0f}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)">'
        f"{escape(value)}</text>"
        f'<text x="{value_x:.0f}" y="140" transform="scale(.1)">{escape(value)}</text>'
        "</g></svg>"
    )
