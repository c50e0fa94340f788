"""Placeholder: being written."""

from __future__ import annotations

from ..findings import CheckResult
from ..snapshot import SiteSnapshot


def check_cookies(snapshot: SiteSnapshot) -> CheckResult:
    return CheckResult("cookies")
