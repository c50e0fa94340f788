"""`websec scan --text`: the summary names the fixes that cost the most first."""

from __future__ import annotations

from tests.reports import PRO_ORDER, impact_report
from websec_app.cli.scan_cmd import render_text
from websec_app.scanner import SECTIONS


def test_the_text_summary_lists_the_fixes_by_points_lost() -> None:
    # Given issue 11's report (CSP -15, HSTS -12, a session cookie -10)
    text = render_text(impact_report())

    # When the "Fix these first" block is read
    lines = text.splitlines()
    start = lines.index("Fix these first:")
    block = lines[start + 1 : start + 1 + len(PRO_ORDER)]

    # Then it is the shared ranking, one numbered line per fix, CSP first, its section by its short label
    assert block[0] == "  1. -15  Content-Security-Policy (Headers, warn, important)"
    assert block[2] == "  3. -10  cookie.session_no_secure [sid] (Cookies, bad, important)"
    assert [line.split()[1] for line in block] == [f"-{d}" for _, _, d in PRO_ORDER]
    assert [line.split()[2] for line in block] == [name for _, name, _ in PRO_ORDER]


def test_the_text_summary_counts_issues_in_words() -> None:
    text = render_text(impact_report())

    assert "issues: 0 critical, 4 important, 6 minor" in text


def test_the_text_summary_titles_and_orders_its_sections_from_the_section_table() -> None:
    # Given a full report
    text = render_text(impact_report())

    # When the section blocks after "Fix these first" are read (each starts after a blank line)
    blocks = text.split("\n\n")[2:]

    # Then each is headed by the table's title, in the table's order
    assert [block.split(":")[0] for block in blocks] == [s.title for s in SECTIONS]
