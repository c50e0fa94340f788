"""The scanner: fetch a site once into a snapshot, run pure checks, grade with the rule table.

Imports nothing of the web framework, the UI or the store: API, UI, CLI and reports
all call `scan()` and render the `ScanReport` it returns.
"""

from __future__ import annotations

from . import library_startup  # noqa: F401 - first: before the libraries it prepares are imported
from .errors import InvalidTarget, ScanError, TargetRefused, TargetUnreachable
from .report import ScanReport
from .scan import grade_snapshot, scan, scan_sync
from .sections import PRO_ONLY_SECTIONS, SECTION_ORDER, SECTIONS, Section, section
from .target import Target, parse_target

__all__ = [
    "InvalidTarget",
    "PRO_ONLY_SECTIONS",
    "SECTIONS",
    "SECTION_ORDER",
    "Section",
    "ScanError",
    "ScanReport",
    "Target",
    "TargetRefused",
    "TargetUnreachable",
    "grade_snapshot",
    "parse_target",
    "scan",
    "scan_sync",
    "section",
]
