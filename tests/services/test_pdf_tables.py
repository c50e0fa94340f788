"""PDF tables across pages: the header row repeats only at the top of a page, rows are not cut at a page
foot leaving empty cells, and a row taller than a whole page is still set. Word positions are read back
with `pdftotext -bbox` (poppler-utils)."""

from __future__ import annotations

import html
import io
import re
import subprocess
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, SimpleDocTemplate

from tests.api.fakes import make_report
from tests.factories import make_snapshot
from websec_app.scanner.scan import grade_snapshot
from websec_app.services.pdf import render_scan_pdf
from websec_app.services.pdf._layout import CONTENT_WIDTH, MARGIN, mono_box, para, styles, table

_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">([^<]*)</word>')
WIDTHS = [30 * mm, CONTENT_WIDTH - 30 * mm]


def page_words(data: bytes) -> list[list[tuple[float, str]]]:
    """Every page's words in reading order, each with its top edge (points from the top of the page)."""
    out = subprocess.run(["pdftotext", "-bbox", "-", "-"], input=data, capture_output=True, check=True, timeout=60)
    pages = out.stdout.decode("utf-8").split("<page ")[1:]
    words = [sorted((round(float(y)), float(x), html.unescape(w)) for x, y, w in _WORD.findall(page)) for page in pages]
    return [[(y, w) for y, _, w in page] for page in words]


def build(story: list[Flowable]) -> bytes:
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(
        buffer, pagesize=A4, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=MARGIN, bottomMargin=MARGIN
    )
    doc.build(story)
    return buffer.getvalue()


def grid(body: list[list[Any]]) -> Flowable:
    st = styles()
    header = [para("<b>HEADA</b>", st["cell"]), para("<b>HEADB</b>", st["cell"])]
    return table([header, *body], WIDTHS)


def row(n: int, words: int) -> list[Any]:
    st = styles()
    text = f"START{n:02d} " + "word " * words + f"END{n:02d}"
    return [para(f"ROW{n:02d} Fail", st["cell"]), para(text, st["cell"])]


def many_rows() -> Flowable:
    """60 rows of 5 to 12 lines: none is a third of a page, and page feet fall inside rows."""
    return grid([row(n, 100 + 37 * (n % 5)) for n in range(60)])


def intro() -> Flowable:
    return para("intro " * 150, styles()["body"])


def test_the_header_row_repeats_only_at_the_top_of_a_page() -> None:
    pages = page_words(build([intro(), many_rows()]))
    assert len(pages) >= 3
    for number, words in enumerate(pages, 1):
        headers = [y for y, w in words if w == "HEADA"]
        assert len(headers) == 1, f"page {number}: the header row {len(headers)} times"
        if number > 1:  # a continued table starts its page with the header, nothing above it
            assert words[0][1] in ("HEADA", "HEADB"), f"page {number} starts with {words[0][1]!r}"


def test_short_rows_move_whole_to_the_next_page() -> None:
    """A row of a few lines is never cut at a page foot (its Result cell empty on the next page)."""
    pages = page_words(build([intro(), many_rows()]))
    where: dict[str, set[int]] = {}
    for number, words in enumerate(pages, 1):
        for _, word in words:
            if re.fullmatch(r"(ROW|START|END)\d\d", word):
                where.setdefault(word[-2:], set()).add(number)
    assert len(where) == 60
    cut = {n: sorted(p) for n, p in where.items() if len(p) > 1}
    assert not cut, f"rows cut across pages: {cut}"
    assert "(continued)" not in " ".join(w for words in pages for _, w in words)


def test_a_row_taller_than_a_page_is_cut_and_its_other_cells_say_continued() -> None:
    st = styles()
    width = WIDTHS[1] - 12
    code = "\n".join(f"line{i:03d} " + "x" * 40 for i in range(300))  # a header value longer than a page
    body = [
        row(0, 40),
        [para("ROW01 Fail", st["cell"]), para("START01 " + "longword " * 3000 + "END01", st["cell"])],
        [para("ROW02 Fail", st["cell"]), [para("START02", st["cell"]), mono_box(code, st, width, label="Value:")]],
        row(3, 40),
    ]
    pages = page_words(build([intro(), grid(body)]))  # no LayoutError
    text = [w for words in pages for _, w in words]
    assert text.count("longword") == 3000
    assert [w for w in text if w.startswith("line")] == [f"line{i:03d}" for i in range(300)]
    assert text.index("START01") < text.index("END01") < text.index("START02") < text.index("line299")
    assert text.index("line299") < text.index("START03") < text.index("END03")
    assert len(pages) >= 5
    for number, words in enumerate(pages[1:], 2):
        assert words[0][1] in ("HEADA", "HEADB"), f"page {number} starts with {words[0][1]!r}"
        assert [w for _, w in words].count("HEADA") == 1
        # the first column of the cut row is not left empty on the next page
        top = sorted(w for _, w in words[:4])
        assert "(continued)" in top or any(w.startswith("ROW") for w in top), f"page {number}: {top}"


def test_a_scan_pdf_with_a_header_value_longer_than_a_page_renders() -> None:
    report = make_report().to_dict(pro=True)
    value = "default-src 'self'; script-src " + " ".join(f"https://cdn{i}.example-assets.com" for i in range(450))
    report["headers"]["Content-Security-Policy"].update(present=True, status="weak", value=value)
    pages = page_words(render_scan_pdf(report, "Acme"))
    text = " ".join(w for words in pages for _, w in words)
    assert "https://cdn449.example-assets.com" in text
    assert "(continued)" in text


def test_a_row_a_little_taller_than_a_page_is_cut_higher_than_the_page_foot() -> None:
    # Given rows holding a box a few lines longer than what a page has room for: cut at the page foot, less than
    # a minimum part of the box would go on the next page, which the box refuses (an Apache site's cookie snippet
    # of 14 cookies, 1 report in 5 of 10 to 60 cookies, raised LayoutError)
    st = styles()
    for lines in range(124, 142):
        code = "\n".join(f"line{i:03d} " + "x" * 40 for i in range(lines))
        box = [para("START01", st["cell"]), mono_box(code, st, WIDTHS[1] - 12, label="Value:")]
        body = [row(0, 40), [para("ROW01 Fail", st["cell"]), box], row(2, 40)]

        # When the table is set, then it is (no LayoutError), every line once and in order, then the next row
        text = [w for words in page_words(build([intro(), grid(body)])) for _, w in words]
        assert [w for w in text if w.startswith("line")] == [f"line{i:03d}" for i in range(lines)], lines
        assert text.index(f"line{lines - 1:03d}") < text.index("START02")


def test_the_scan_pdf_of_a_site_setting_a_thousand_cookies_renders() -> None:
    # Given an Apache site whose page sets 1,000 cookies without any attribute (the snippets are Apache's)
    headers = [("Server", "Apache")] + [("Set-Cookie", f"c{i}=1") for i in range(1_000)]
    report = grade_snapshot(make_snapshot(headers=headers, body=b"<html></html>")).to_dict()

    # When its PDF is made, then it renders, naming the 50 cookies each finding lists and what was left out
    text = " ".join(w for words in page_words(render_scan_pdf(report, "Acme")) for _, w in words)
    start = text.index("Affects: c837,")
    affects = text[start : text.index("Observed:", start)].split()
    assert affects[1:] == [f"c{i}," for i in range(837, 886)] + ["c886"]
    assert "113 more subjects like these" in text  # the 163 Chromium keeps (c837 to c999) graded, 50 listed
    assert "837 of these" in text  # cookie.too_many: the cookies of 837 lines are evicted
