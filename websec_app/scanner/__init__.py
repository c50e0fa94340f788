"""The scanner: fetch a site once into a snapshot, run pure checks, grade with the rule table.

Imports nothing of the web framework, the UI or the store: API, UI, CLI and reports
all call `scan()` and render the `ScanReport` it returns.
"""

from __future__ import annotations

from .lazy_regex import lazy_patterns_of

# First, before the fetch layer (pyOpenSSL) imports it: the RFC 4514 parser's patterns, ~10 ms to compile and
# never used by a scan, are compiled only if something parses a name from a string (lazy_regex.py).
with lazy_patterns_of(frozenset({"cryptography.x509.name"})):
    import cryptography.x509  # noqa: F401

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
