"""`websec scan --text`: the summary names the fixes that cost the most first, honours --free, and shows what
a site sent as text (its control characters escaped)."""

from __future__ import annotations

import dataclasses
import json

from tests.cli.scan_process import run_scan
from tests.fixtures import catalog
from tests.fixtures.sites import RunningSite, SiteFactory
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


def test_the_text_summary_lists_the_grade_caps_strictest_first_and_says_which_set_the_grade() -> None:
    # Given grading's caps in the order its findings came: one mild, the one that set the grade C, one between
    caps = (
        {"outcome": "hsts.missing", "max_grade": "A"},
        {"outcome": "cors.origin_reflected_credentials", "max_grade": "C"},
        {"outcome": "page.mixed_active", "max_grade": "B"},
    )
    capped = dataclasses.replace(impact_report(), grade="C", caps=caps)
    # Then the one that set the grade reads "capped", the others "at most" (they hold once the score rises),
    # the strictest first
    assert render_text(capped).splitlines()[2:5] == [
        "  grade capped at C by cors.origin_reflected_credentials",
        "  grade at most B by page.mixed_active, whatever the score",
        "  grade at most A by hsts.missing, whatever the score",
    ]
    # And on an F the score set, none is said to have capped it (it read "grade capped at A" on an F)
    failed = render_text(dataclasses.replace(capped, grade="F", score=0)).splitlines()
    assert failed[2] == "  grade at most C by cors.origin_reflected_credentials, whatever the score"
    assert not any("capped at" in line for line in failed)


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


def test_the_text_summary_prints_each_note_of_a_finding_on_its_own_line() -> None:
    # Given a finding with two notes, each holding a "; " of its own (joined into `note` they read as one list)
    report = impact_report()
    finding = next(f for f in report.sections["cookies"]["findings"] if f["status"] != "good")
    notes = ["sid: set over plain HTTP; set it on HTTPS only", "sid (set by the redirect response from http://x.test/)"]
    finding.update(note="; ".join(notes), notes=notes)
    lines = render_text(report).splitlines()
    # Then each note is a line of its own under the finding
    at = lines.index(f"          {notes[0]}")
    assert lines[at + 1] == f"          {notes[1]}"
    # And a report made before `notes` was added prints its joined note as one line
    del finding["notes"]
    assert f"          {'; '.join(notes)}" in render_text(report).splitlines()


def test_free_text_shows_what_the_free_json_shows(worst_site: RunningSite, scan_env: dict[str, str]) -> None:
    free_json = json.loads(run_scan(worst_site.url, "--free", env=scan_env).stdout)
    full_text = run_scan(worst_site.url, "--text", env=scan_env).stdout
    free_text = run_scan(worst_site.url, "--text", "--free", env=scan_env).stdout

    # the full summary has the Pro-only cookies and the fixes written for the server; the free one has neither
    assert "cookies" not in free_json and "Cookies:" in full_text and "How to fix them in" in full_text
    assert "Cookies:" not in free_text
    assert "How to fix them in" not in free_text
    counts = free_json["issue_counts"]
    assert (
        f"issues: {counts['critical']} critical, {counts['important']} important, {counts['minor']} minor" in free_text
    )


def test_control_characters_a_site_sends_are_shown_escaped_in_the_text_summary(
    site_factory: SiteFactory, scan_env: dict[str, str]
) -> None:
    # Given a site whose Server header clears the screen, sets the window title, rings the bell, turns text red
    hostile = b"Server: nginx/1.2.3 \x1b[2J\x1b]0;pwned\x07 \x1b[31mRED"
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host("escapes"),
            headers=[hostile, b"Set-Cookie: se\x1b[31mssion=1; Path=/", ("Strict-Transport-Security", "max-age=1")],
        )
    )
    done = run_scan(site.url, "--text", env=scan_env)
    assert done.returncode == 0, done.stderr[-2000:]
    # no control character but the line breaks reaches the terminal; what the site sent is still readable
    assert [ch for ch in done.stdout if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F] == []
    assert "\\x1b[2J" in done.stdout and "\\x07" in done.stdout


def test_printable_escapes_c0_and_c1_controls_and_keeps_tabs() -> None:
    from websec_app.cli.scan_cmd import printable

    assert printable("a\x1b[2Jb\x9b31m\rc\td\x7f") == "a\\x1b[2Jb\\x9b31m\\x0dc\td\\x7f"
    assert printable("one\ntwo") == "one\\x0atwo"  # a site's text cannot start a line of its own
    assert printable("ü ☃ 日本") == "ü ☃ 日本"


def test_printable_names_bidirectional_controls_instead_of_obeying_them() -> None:
    from websec_app.cli.scan_cmd import printable

    # a RIGHT-TO-LEFT OVERRIDE would show "nginx/1.2.3 patched" as "dehctap 3.2.1/xnign" in a terminal
    assert printable("nginx/\u202e1.2.3 patched\u202c") == "nginx/\\u202e1.2.3 patched\\u202c"
    assert printable("\u2066a\u2069 \u200f \u061c") == "\\u2066a\\u2069 \\u200f \\u061c"
    assert printable("שלום עולם مرحبا") == "שלום עולם مرحبا"  # right-to-left text itself is shown as sent
