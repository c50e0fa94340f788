"""Report bodies from real scans of the fixture sites, shared by the format tests (one scan each per session)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.fixtures.sites import RunningSite
from websec_app.scanner import scan
from websec_app.settings import Settings


@pytest.fixture(scope="session")
def worst_body(worst_site: RunningSite, scan_settings: Settings) -> dict[str, Any]:
    return asyncio.run(scan(worst_site.url, scan_settings)).to_dict()


@pytest.fixture(scope="session")
def best_body(best_site: RunningSite, scan_settings: Settings) -> dict[str, Any]:
    return asyncio.run(scan(best_site.url, scan_settings)).to_dict()
