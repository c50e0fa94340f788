"""A scan blocked by a bot challenge (or a check that crashed) leaves its headers "not checked": status warn, no
rule of the header. Every renderer names them as not checked; none describes a finding nobody made. The PDF,
the compliance report and the web report each looked the header's rule up by status and took the first warn
rule: "Content Security Policy allows inline scripts" for a header never seen (the visual audit of this
session), counted as a compliance problem."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import make_snapshot
from tests.pdf_text import pdf_pages
from websec_app.scanner.report import header_outcome
from websec_app.scanner.scan import grade_snapshot
from websec_app.services.compliance import assess
from websec_app.services.pdf import render_compliance_pdf, render_scan_pdf
from websec_app.ui.view import report_view

IMPERVA_BLOCK = (
    '<html><head><META NAME="robots" CONTENT="noindex,nofollow"></head><body>'
    '<iframe src="/_Incapsula_Resource?CWUDNSAI=9&xinfo=1" frameborder=0></iframe></body></html>'
)
HEADERS = ("Content-Security-Policy", "Strict-Transport-Security", "Referrer-Policy", "X-Frame-Options")


@pytest.fixture(scope="module")
def blocked() -> dict[str, Any]:
    snapshot = make_snapshot(
        status=403,
        headers=[("X-Iinfo", "9-12345678-0 0NNN RT(1700000000000 0) q(0 -1 -1 -1) r(0 -1)"), ("X-CDN", "Imperva")],
        body=IMPERVA_BLOCK,
    )
    body = grade_snapshot(snapshot).to_dict()
    assert {"outcome": "scan.blocked", "max_grade": "F"} in body["grading"]["caps"]
    return body


def _text(pdf: bytes) -> str:
    return " ".join(pdf_pages(pdf))


def test_a_header_left_not_checked_is_no_rule_of_that_header(blocked: dict[str, Any]) -> None:
    for name in HEADERS:
        assert header_outcome(name, blocked["headers"][name]) == "check.error"


def test_the_scan_pdf_names_them_not_checked(blocked: dict[str, Any]) -> None:
    text = " ".join(_text(render_scan_pdf(blocked)).split())

    assert "Content-Security-Policy: not checked" in text
    assert "allows inline scripts" not in text and "shorter than a year" not in text


def test_the_compliance_report_does_not_count_them_as_problems(blocked: dict[str, Any]) -> None:
    assessment = assess(blocked)

    assert not [f for f in assessment.findings if f.subject in HEADERS]
    assert "headers" in assessment.not_assessed
    text = " ".join(_text(render_compliance_pdf(blocked)).split())
    assert "allows inline scripts" not in text


def test_the_web_report_names_them_not_checked_and_offers_no_fix_to_unlock(blocked: dict[str, Any]) -> None:
    free = {**blocked, "pro_locked": True}
    view = report_view(free)

    [headers] = [s for s in view.sections if s.key == "headers"]
    shown = {f.title: f for f in [*headers.problems, *headers.passed]}
    assert "Content-Security-Policy not checked" in shown and "Content-Security-Policy weakened" not in shown
    assert shown["Content-Security-Policy not checked"].checked is False
