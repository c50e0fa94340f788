"""SARIF 2.1.0 (OASIS) for GitHub code scanning and other SARIF readers.

One result per issue of the report (every item `issue_counts` counts: a check that could not run is
no result), one rule per distinct check, the level from the severity, the fix as the rule's help.
GitHub reads `properties.security-severity` to rank security results; `partialFingerprints` keep a
finding the same alert from one run to the next.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from ..scanner.report import ReportItem, report_items
from ._items import (
    describe,
    detail,
    fix_note_of,
    fix_of,
    fix_text,
    grading,
    header_line,
    plain,
    rule_id,
    rule_name,
    subjects,
)
from .markdown import code_span, escape

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "websec"

#: severity -> (SARIF level, GitHub security-severity score: >= 9 critical, >= 7 high, >= 4 medium).
LEVELS: dict[str, tuple[str, str]] = {
    "critical": ("error", "9.0"),
    "important": ("warning", "7.0"),
    "minor": ("note", "3.0"),
}

# A percent-escape already in the address (a URL's path arrives encoded: "/a%20b"), kept as it is.
_ESCAPED = re.compile(r"(%[0-9A-Fa-f]{2})")


def _level(item: ReportItem) -> tuple[str, str]:
    return LEVELS.get(item.severity, LEVELS["minor"])


def _help(item: ReportItem) -> dict[str, str]:
    """The fix as help. Its Markdown is escaped like a pull-request comment (markdown.py): a fix may quote
    what the site sent (a cookie's name, the origins of a proposed CSP), and code scanning renders it."""
    fix = fix_of(item)
    if fix is None:
        return {"text": "See the explanation.", "markdown": "See the explanation."}
    if item.header:  # the header line to send (its value alone for a derived CSP: spec 2.3)
        line = header_line(item, fix)
        return {"text": f"Send the response header {line}", "markdown": f"Send: {code_span(line)}"}
    return {"text": plain(fix), "markdown": escape(plain(fix))}


def _rule(item: ReportItem) -> dict[str, Any]:
    level, security_severity = _level(item)
    explanation = plain(item.item.get("explanation")) or rule_id(item)
    first_sentence = explanation.split(". ")[0].rstrip(".") + "."
    tags = ["security", f"websec/{item.section}"]
    cwe = item.item.get("cwe")
    if isinstance(cwe, str) and cwe:
        tags.append(f"external/cwe/{cwe.lower()}")
    return {
        "id": rule_id(item),
        "name": rule_name(item),
        "shortDescription": {"text": first_sentence},
        "fullDescription": {"text": explanation},
        "help": _help(item),
        "defaultConfiguration": {"level": level},
        "properties": {"tags": tags, "security-severity": security_severity, "precision": "high"},
    }


def artifact_path(url: str) -> str:
    """Where code scanning files the result: the page's host and path as a repository-relative path
    (`www.example.com/pricing`; a port as `_8443`; no query). GitHub refuses a web address there
    ("unrecognized SARIF location URI scheme"); the address itself is the result's `page_url`."""
    parts = urlsplit(url)
    host = (parts.hostname or "site").strip("[]").replace(":", "_")
    port = f"_{parts.port}" if parts.port else ""
    # Encoded once: an escape stays as it is (quote() alone would make "%20" "%2520"), the rest is quoted.
    pieces = _ESCAPED.split(parts.path.lstrip("/"))
    path = "".join(piece if _ESCAPED.fullmatch(piece) else quote(piece, safe="/-._~") for piece in pieces)
    return f"{host}{port}/{path}"


def _not_listed(item: ReportItem) -> int:
    """How many subjects the finding has besides those it lists (grading lists 50: `subjects_not_listed`)."""
    return int(item.item.get("subjects_not_listed") or 0)


def _fingerprint(url: str, item: ReportItem) -> str:
    # SARIF 2.1.0 3.27.17: the same finding must keep its fingerprint from run to run. A cut list holds the
    # first 50 subjects in the order the site sent them, which it may change at will: such a finding is known
    # by how many subjects it has, not by which 50 were listed.
    named = subjects(item)
    if more := _not_listed(item):
        key = "\n".join([url, rule_id(item), f"{len(named) + more} subjects"])
    else:
        key = "\n".join([url, rule_id(item), *sorted(named)])
    return hashlib.sha256(key.encode()).hexdigest()


def _result(item: ReportItem, rule_index: int, url: str) -> dict[str, Any]:
    level, _ = _level(item)
    message = f"{describe(item)}: {detail(item)}"
    fix = fix_text(item)
    if fix is not None:
        message += f" Fix: {fix}"
    if (fix_note := fix_note_of(item)) is not None:  # this site's, so in the result, not the rule's help
        message += f" {fix_note}"
    return {
        "ruleId": rule_id(item),
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": message},
        "locations": [
            {
                # A whole-page finding: line 1 (code scanning needs a region with a start line).
                "physicalLocation": {"artifactLocation": {"uri": artifact_path(url)}, "region": {"startLine": 1}},
                "logicalLocations": [{"name": item.name, "fullyQualifiedName": f"{item.section}/{item.name}"}],
            }
        ],
        "partialFingerprints": {"websecFinding/v1": _fingerprint(url, item)},
        "properties": {
            "page_url": url,
            "section": item.section,
            "points": item.deduction,
            "subjects": subjects(item),
            "subjects_not_listed": _not_listed(item),
        },
    }


def render_sarif(body: Mapping[str, Any], *, information_uri: str | None = None) -> str:
    """The report as a SARIF 2.1.0 log (JSON text); `information_uri`: the service's own address, if known."""
    url = str(body.get("final_url") or body.get("url") or "")
    rules: list[dict[str, Any]] = []
    index_of: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for item in report_items(body):
        if not item.is_issue:
            continue
        if rule_id(item) not in index_of:
            index_of[rule_id(item)] = len(rules)
            rules.append(_rule(item))
        results.append(_result(item, index_of[rule_id(item)], url))
    version = str(grading(body).get("algorithm_version") or "")
    driver: dict[str, Any] = {"name": TOOL_NAME, "semanticVersion": version, "rules": rules}
    if information_uri:
        driver["informationUri"] = information_uri
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": f"websec/{body.get('url', '')}/"},
        "results": results,
        "properties": {"grade": body.get("grade"), "score": body.get("score"), "url": body.get("url")},
    }
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False)
