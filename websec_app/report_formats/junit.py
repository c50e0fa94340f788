"""JUnit XML: one test suite per report section, one test case per check (every header object and
finding the report lists). An issue is a failure, a check that could not run is skipped, the rest pass;
CI systems (GitLab, Jenkins, Azure) show it as a test report."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from ..scanner.report import ReportItem, report_items
from ..scanner.sections import section as section_entry
from ._items import describe, detail, fix_note_of, fix_text, plain

# XML 1.0 cannot carry most control characters, and a site's headers or page reach the notes: drop them.
_NOT_XML = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF])


def _xml(text: str) -> str:
    return "".join(ch for ch in text.translate(_NOT_XML) if not 0xD800 <= ord(ch) <= 0xDFFF)


def _case(suite: ET.Element, item: ReportItem) -> None:
    case = ET.SubElement(suite, "testcase", {"classname": f"websec.{item.section}", "name": _xml(describe(item))})
    if item.not_checked:
        ET.SubElement(case, "skipped", {"message": _xml(plain(item.item.get("note")) or "not checked")})
    elif item.is_issue:
        text = detail(item, lines=True)
        fix = fix_text(item)
        if fix is not None:
            text += f"\nFix: {fix}"
        if (fix_note := fix_note_of(item)) is not None:
            text += f"\n{fix_note}"
        failure = ET.SubElement(
            case,
            "failure",
            {"message": f"{item.status}, {item.severity}, -{item.deduction} points", "type": item.severity},
        )
        failure.text = _xml(text)


def render_junit(body: Mapping[str, Any]) -> str:
    """The report as JUnit XML text."""
    items = report_items(body)
    root = ET.Element("testsuites", {"name": _xml(f"websec {body.get('url', '')}")})
    by_section: dict[str, list[ReportItem]] = {}
    for item in items:
        by_section.setdefault(item.section, []).append(item)
    for name, section_items in by_section.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": section_entry(name).title,
                "tests": str(len(section_items)),
                "failures": str(sum(1 for i in section_items if i.is_issue)),
                "skipped": str(sum(1 for i in section_items if i.not_checked)),
                "errors": "0",
            },
        )
        for item in section_items:
            _case(suite, item)
    root.set("tests", str(len(items)))
    root.set("failures", str(sum(1 for i in items if i.is_issue)))
    root.set("skipped", str(sum(1 for i in items if i.not_checked)))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
