"""Machine formats of a scan report for CI pipelines (issue 17): SARIF 2.1.0, JUnit XML, Markdown.

Each is a pure function of a report body (`ScanReport.to_dict()`): no I/O, no clock, so the CLI gate,
the API and tests render the same bytes for the same scan.
"""

from __future__ import annotations

from .junit import render_junit
from .markdown import render_markdown
from .sarif import render_sarif

__all__ = ["render_junit", "render_markdown", "render_sarif"]
