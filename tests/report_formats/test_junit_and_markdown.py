"""`scan --format junit` and `--format markdown` (issue 17), from real scans and from hostile text."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from typing import Any

from markdown_it import MarkdownIt

from websec_app.report_formats import render_junit, render_markdown
from websec_app.report_formats.markdown import TOP_FIXES, escape
from websec_app.scanner.report import report_items

HOSTILE_NOTE = "X-Evil: <img src=x onerror=alert(1)> [click](javascript:alert(1)) @octocat | `tick` \x01 end"


def _with_hostile_note(body: dict[str, Any]) -> dict[str, Any]:
    """The worst site's report, its costliest CORS finding's note replaced by what a hostile site could send."""
    hostile = copy.deepcopy(body)
    hostile["cors"]["findings"][0].update(note=HOSTILE_NOTE, notes=[HOSTILE_NOTE])
    return hostile


def test_junit_has_one_test_case_per_check_and_a_failure_per_issue(worst_body) -> None:
    root = ET.fromstring(render_junit(worst_body))
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(report_items(worst_body)) == int(root.get("tests", "-1"))
    failures = [case for case in cases if case.find("failure") is not None]
    assert len(failures) == worst_body["issue_counts"]["total"] == int(root.get("failures", "-1"))
    csp = next(case for case in cases if case.get("name") == "headers/Content-Security-Policy")
    failure = csp.find("failure")
    assert failure is not None and failure.get("type") == "important"
    assert "\nFix: " in (failure.text or "")


def test_junit_lists_a_failures_several_notes_one_a_line(worst_body) -> None:
    # Given the worst site's CORS reflection, which echoed four origins: a note for each echo
    notes = worst_body["cors"]["findings"][0]["notes"]
    assert len(notes) == 4
    root = ET.fromstring(render_junit(worst_body))
    case = next(c for c in root.iter("testcase") if c.get("name", "").startswith("cors.origin_reflected_credentials"))
    text = case.find("failure").text or ""  # type: ignore[union-attr]
    # Then the failure's text (which CI systems show with its line breaks) has each note on a line of its own
    assert "Found:\n" + "\n".join(f"- {note}" for note in notes) + "\nFix: " in text


def test_junit_of_a_good_site_passes_where_the_site_is_good(best_body) -> None:
    root = ET.fromstring(render_junit(best_body))
    assert int(root.get("failures", "-1")) == best_body["issue_counts"]["total"]
    hsts = next(c for c in root.iter("testcase") if c.get("name") == "headers/Strict-Transport-Security")
    assert list(hsts) == []  # passed: neither failure nor skipped


def test_junit_stays_well_formed_xml_whatever_the_site_sent(worst_body) -> None:
    text = render_junit(_with_hostile_note(worst_body))
    root = ET.fromstring(text)  # a control character would make this raise
    assert "\x01" not in text
    assert any("onerror=alert(1)" in (f.text or "") for f in root.iter("failure"))  # kept, as text


def test_markdown_leads_with_the_grade_and_the_costliest_fixes(worst_body) -> None:
    text = render_markdown(worst_body)
    assert text.startswith(f"### websec: grade F ({worst_body['score']}/100)")
    table = [line for line in text.splitlines() if line.startswith("| -")]
    assert len(table) == min(TOP_FIXES, worst_body["issue_counts"]["total"])
    assert "cors.origin_reflected_credentials" in table[0]


def test_markdown_quotes_the_grade_caps_strictest_first_a_paragraph_each(worst_body) -> None:
    # Given the worst site, graded F by its score, with caps at C, B and A
    assert worst_body["grade"] == "F"
    grades = sorted({cap["max_grade"] for cap in worst_body["grading"]["caps"]})
    assert grades == ["A", "B", "C"]
    html = MarkdownIt("commonmark").render(render_markdown(worst_body))
    quote = html[html.index("<blockquote>") : html.index("</blockquote>")]
    # Then each cap is a paragraph of one quote (consecutive "> " lines ran on as one), the strictest first, and
    # none claims to have capped an F the score set
    paragraphs = re.findall(r"<p>(.*?)</p>", quote, re.S)
    assert [p.split(" by ")[0] for p in paragraphs] == ["Grade at most C", "Grade at most B", "Grade at most A"]
    assert all(p.endswith(", whatever the score") for p in paragraphs)


def test_markdown_renders_what_a_hostile_site_sent_as_text_only(worst_body) -> None:
    text = render_markdown(_with_hostile_note(worst_body))
    html = MarkdownIt("commonmark").enable("table").render(text)
    # no element comes out of the site's text: no image, no link, no raw HTML; it reads as the text it was
    assert re.search(r"<(img|a|script)\b", html) is None
    assert "X-Evil: &lt;img src=x onerror=alert(1)&gt; [click](javascript:alert(1))" in html
    assert "\x01" not in text
    # and a mention cannot ping anyone on GitHub
    assert "@octocat" not in text
    # every table row still has its four cells (a | in a value must not open a fifth)
    rows = [line for line in html.split("<tr>")[2:]]
    assert rows and all(row.count("<td") == 4 for row in rows)


def test_markdown_shows_a_sites_bidirectional_controls_instead_of_obeying_them(worst_body) -> None:
    # Given a note whose RIGHT-TO-LEFT OVERRIDE would make the rest of the comment's line read backwards
    hostile = copy.deepcopy(worst_body)
    note = "Server: nginx\u202e1.2.3 is fine\u202c, \u2067isolate\u2069"
    hostile["cors"]["findings"][0].update(note=note, notes=[note])
    text = render_markdown(hostile)
    html = MarkdownIt("commonmark").enable("table").render(text)
    # no bidirectional control reaches the reader; each is named where the site put it
    assert re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", html) is None
    assert "nginx\\u202e1\\.2\\.3 is fine\\u202c, \\u2067isolate\\u2069" in text


def test_markdown_lists_a_findings_several_notes_one_an_item(worst_body) -> None:
    # Given the worst site's CORS reflection, which echoed four origins: one finding, a note for each echo
    finding = worst_body["cors"]["findings"][0]
    assert len(finding["notes"]) == 4 and finding["note"] == "; ".join(finding["notes"])
    lines = render_markdown(worst_body).splitlines()
    # Then its line in the list of every check is followed by its notes, an item each (joined, the first note's own
    # "; " ran them into one list), and no line holds two of them
    at = next(
        i for i, line in enumerate(lines) if line.startswith("- ") and "cors.origin_reflected_credentials" in line
    )
    assert lines[at + 1 : at + 5] == [f"  - {escape(note)}" for note in finding["notes"]]
    assert not lines[at + 5].startswith("  - ")
    html = MarkdownIt("commonmark").render("\n".join(lines))
    assert all(f"<li>{note}</li>" in html for note in finding["notes"][1:])  # the echoes: no markup in them
