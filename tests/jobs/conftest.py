from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import RunningSite, SiteFactory
from tests.jobs.cluster import Cluster
from tests.pg_server import get_server
from websec_app.store import Database

#: How long the slow site takes to answer its page: long enough to kill a worker in the middle of a scan.
SLOW_PAGE_SECONDS = 3.0


@pytest.fixture
def shared_database() -> Iterator[Database]:
    database = Database(get_server().migrated_database())
    yield database
    database.dispose()


@pytest.fixture
def cluster(tmp_path: Path, shared_database: Database, scan_env: dict[str, str]) -> Iterator[Cluster]:
    url = shared_database.engine.url.render_as_string(hide_password=False)
    running = Cluster(database_url=url, directory=tmp_path, env=scan_env)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="session")
def slow_site(site_factory: SiteFactory) -> RunningSite:
    """https://slow.test/: the best practices, but the page takes SLOW_PAGE_SECONDS to come."""
    site = catalog.best_practices("slow.test")
    page = site.routes["/"]

    async def slowly(request: object) -> object:
        await asyncio.sleep(SLOW_PAGE_SECONDS)
        return page

    return site_factory(replace(site, routes={**site.routes, "/": slowly}))
