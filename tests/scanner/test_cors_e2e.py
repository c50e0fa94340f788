"""The CORS section of whole scans of loopback sites whose origin checks go wrong in the ways real ones do:
what the probes sent, what the site answered, and what the report makes of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tests.fixtures import catalog
from tests.fixtures.sites import Behaviour, Garbage, Request, Response, RunningSite, Site, SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings

FOREIGN_PROBE = "https://websec-cors-probe.invalid"


def answering(host: str, answer: Callable[[str], Behaviour | None]) -> Site:
    """The best-practice site whose page, asked with an `Origin`, gets `answer(origin)` when that is not None."""
    base = catalog.best_practices(host)
    page = base.routes["/"]
    assert isinstance(page, Response)

    def handler(request: Request) -> Behaviour:
        origin = request.header("origin")
        answered = answer(origin) if origin is not None else None
        return page if answered is None else answered

    return replace(base, routes={**base.routes, "/": handler})


def origins_sent(site: RunningSite) -> list[str]:
    return [origin for r in site.requests if r.path == "/" and (origin := r.header("origin")) is not None]


async def cors_section(site: RunningSite, settings: Settings) -> dict[str, Any]:
    section: dict[str, Any] = (await scan(site.url, settings)).to_dict()["cors"]
    return section


async def test_a_foreign_origin_answered_with_garbage_is_not_graded_unexposed(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site that breaks the connection when asked with the foreign origin, and answers `null` plainly
    site = site_factory(
        answering(site_factory.unique_host("cors-garbage"), lambda o: Garbage() if o == FOREIGN_PROBE else None)
    )

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then the probe was sent, and the section says it could not check it instead of "not exposed"
    assert FOREIGN_PROBE in origins_sent(site)
    assert [f["check"] for f in section["findings"]] == ["check.error"]
    assert section["findings"][0]["subjects"] == [f"Origin: {FOREIGN_PROBE}"]
    assert section["foreign_origin"] is None and section["null_origin"]["status_code"] == 200
