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


def echoing_with_credentials(page: Response, origin: str) -> Response:
    cors = [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")]
    return replace(page, headers=[*page.headers, *cors])


async def test_echoing_every_origin_costs_the_same_with_or_without_null(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given two sites echoing every Origin with credentials, one of them `null` too
    page = catalog.best_practices("page.test").routes["/"]
    assert isinstance(page, Response)
    everything = site_factory(
        answering(site_factory.unique_host("cors-all"), lambda origin: echoing_with_credentials(page, origin))
    )
    all_but_null = site_factory(
        answering(
            site_factory.unique_host("cors-not-null"),
            lambda origin: None if origin == "null" else echoing_with_credentials(page, origin),
        )
    )

    # When both are scanned
    reports = [(await scan(site.url, scan_settings)).to_dict() for site in (everything, all_but_null)]

    # Then it is one misconfiguration each, costing the same: 40 points and a C at best
    assert "null" in origins_sent(everything)
    assert [r["cors"]["deduction"] for r in reports] == [40, 40]
    assert reports[0]["score"] == reports[1]["score"] and reports[0]["grade"] == reports[1]["grade"] == "C"
    assert [f["check"] for f in reports[0]["cors"]["findings"]] == ["cors.origin_reflected_credentials"]
