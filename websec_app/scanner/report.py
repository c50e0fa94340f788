"""The ScanReport that the API, UI, CLI and PDFs all render."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

#: Report sections in the order the spec lists them (2.1/2.2), then our additions.
SECTION_ORDER = (
    "headers",
    "tls",
    "dns",
    "cookies",
    "cross_origin",
    "security_txt",
    "cors",
    "server_fingerprint",
    "page_analysis",
    "redirection",
)
#: Sections only a Pro (or one-time token) scan shows (spec 2.1: "cookies and cross_origin omitted").
PRO_ONLY_SECTIONS = ("cookies", "cross_origin")


@dataclass(frozen=True)
class ScanReport:
    url: str
    final_url: str
    status_code: int
    score: int
    grade: str
    algorithm_version: str
    scanned_at: str  # ISO 8601, UTC
    duration_ms: int
    issue_counts: dict[str, int]
    sections: dict[str, dict[str, Any]]
    caps: tuple[dict[str, str], ...] = ()
    uncapped_score: int = 0
    timings: tuple[dict[str, Any], ...] = field(default=())

    def to_dict(self, *, pro: bool = True, include_fix: bool = True) -> dict[str, Any]:
        """The JSON body: spec 2.2 when `pro`, spec 2.1 otherwise (fixes only with `include_fix`)."""
        body: dict[str, Any] = {
            "url": self.url,
            "final_url": self.final_url,
            "status_code": self.status_code,
            "grade": self.grade,
            "score": self.score,
            "pro_locked": not pro,
            "issue_counts": dict(self.issue_counts),
        }
        for name in SECTION_ORDER:
            if name not in self.sections or (not pro and name in PRO_ONLY_SECTIONS):
                continue
            section = copy.deepcopy(self.sections[name])
            if not include_fix:
                _strip_fixes(section)
            body[name] = section
        body["grading"] = {
            "algorithm_version": self.algorithm_version,
            "uncapped_score": self.uncapped_score,
            "caps": [dict(c) for c in self.caps],
        }
        body["scanned_at"] = self.scanned_at
        body["duration_ms"] = self.duration_ms
        return body


def _strip_fixes(node: Any) -> None:
    """Null every `fix` value, in header objects and in findings alike."""
    if isinstance(node, dict):
        if "fix" in node:
            node["fix"] = None
        for value in node.values():
            _strip_fixes(value)
    elif isinstance(node, list):
        for item in node:
            _strip_fixes(item)
