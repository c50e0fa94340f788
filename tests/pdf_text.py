"""A PDF's text as readers get it: pdftotext (poppler-utils), page by page."""

from __future__ import annotations

import subprocess


def pdf_pages(data: bytes) -> list[str]:
    """Each page's text as pdftotext reads it."""
    out = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", "-", "-"], input=data, capture_output=True, check=True, timeout=60
    )
    return out.stdout.decode("utf-8").split("\f")[:-1]
