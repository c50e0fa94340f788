"""Page one's chart: how many issues of each severity, and where the points went (reportlab graphics,
vector shapes: sharp at any zoom and a few hundred bytes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reportlab.graphics.shapes import Drawing, Line, Rect, String
from reportlab.lib.colors import Color
from reportlab.lib.units import mm

from ._fonts import fonts
from ._layout import INK, MUTED, RULE, SEVERITY_COLOURS

_BAR = 5 * mm
_ROW = _BAR + 2 * mm
#: The area bars take at most the height of eight rows: all ten areas fit without pushing page one's
#: "Fix these first" table onto page two.
_AREAS_HEIGHT = 8 * _ROW


def _bar(x: float, y: float, length: float, colour: Color, thickness: float = _BAR) -> Rect:
    bar = Rect(x, y, length, thickness)
    bar.fillColor = colour
    bar.strokeColor = None
    return bar


def summary_chart(severities: Mapping[str, int], points_by_area: Sequence[tuple[str, int]], width: float) -> Drawing:
    """Left: issues by severity (horizontal bars). Right: points lost per area, largest first."""
    sans, bold = fonts().sans, fonts().bold
    area_row = min(_ROW, _AREAS_HEIGHT / max(1, len(points_by_area)))
    height = 12 * mm + max(3 * _ROW, len(points_by_area) * area_row)
    drawing = Drawing(width, height)
    half = width * 0.42
    top = height - 6 * mm

    drawing.add(String(0, top, "Issues by severity", fontName=bold, fontSize=9, fillColor=INK))
    top_count = max([1, *severities.values()])
    label_width = 22 * mm
    bar_room = half - label_width - 12 * mm
    for row, severity in enumerate(("critical", "important", "minor")):
        y = top - 6 * mm - row * _ROW
        count = int(severities.get(severity, 0))
        drawing.add(String(0, y + 1.2 * mm, severity.capitalize(), fontName=sans, fontSize=8, fillColor=INK))
        length = bar_room * count / top_count
        if count:
            drawing.add(_bar(label_width, y, length, SEVERITY_COLOURS[severity]))
        drawing.add(
            String(label_width + length + 1.5 * mm, y + 1.2 * mm, str(count), fontName=bold, fontSize=8, fillColor=INK)
        )

    left = half + 6 * mm
    drawing.add(Line(half, 0, half, height - 2 * mm, strokeColor=RULE, strokeWidth=0.5))
    drawing.add(String(left, top, "Points lost, by area", fontName=bold, fontSize=9, fillColor=INK))
    if not points_by_area:
        drawing.add(String(left, top - 6 * mm, "No points lost.", fontName=sans, fontSize=8, fillColor=MUTED))
        return drawing
    most = max(points for _, points in points_by_area) or 1
    area_label = 34 * mm
    room = width - left - area_label - 12 * mm
    thickness = area_row - 2 * mm
    for row, (area, points) in enumerate(points_by_area):
        y = top - 6 * mm - row * area_row
        text_y = y + thickness / 2 - 1.3 * mm  # 8 pt text centred on its bar
        drawing.add(String(left, text_y, area, fontName=sans, fontSize=8, fillColor=INK))
        length = room * points / most
        drawing.add(_bar(left + area_label, y, length, SEVERITY_COLOURS["important"], thickness))
        drawing.add(String(left + area_label + length + 1.5 * mm, text_y, f"-{points}", fontName=bold, fontSize=8))
    return drawing


__all__ = ["summary_chart"]
