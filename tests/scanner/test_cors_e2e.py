"""The CORS section of whole scans of loopback sites whose origin checks go wrong in the ways real ones do:
what the probes sent, what the site answered, and what the report makes of it."""

from __future__ import annotations

import re
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
    assert section["foreign_origin"]["origin_sent"] == FOREIGN_PROBE and section["foreign_origin"]["error"]
    assert section["null_origin"]["status_code"] == 200


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


def validating(host: str, accept: Callable[[str], bool]) -> Site:
    """The best-practice site that echoes, with credentials, every Origin `accept` lets through."""
    page = catalog.best_practices(host).routes["/"]
    assert isinstance(page, Response)
    return answering(host, lambda origin: echoing_with_credentials(page, origin) if accept(origin) else None)


async def test_a_suffix_check_is_caught_by_the_look_alike(site_factory: SiteFactory, scan_settings: Settings) -> None:
    # Given a site accepting every Origin that ends with its name (`attacker<host>` included)
    host = site_factory.unique_host("cors-suffix")
    site = site_factory(validating(host, lambda origin: origin.endswith(host)))

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then the look-alike was echoed with credentials: critical, as any reflection
    lookalike = f"https://{host}.websecprobe{host}"
    assert lookalike in origins_sent(site)
    assert [f["check"] for f in section["findings"]] == ["cors.lookalike_credentials"]
    assert section["deduction"] == 40 and section["lookalike_origin"]["allow_origin"] == lookalike


async def test_a_prefix_check_is_caught_by_the_look_alike(site_factory: SiteFactory, scan_settings: Settings) -> None:
    # Given a site accepting every Origin that starts with its own (`https://<host>.attacker.net` included)
    host = site_factory.unique_host("cors-prefix")
    site = site_factory(validating(host, lambda origin: origin.startswith(f"https://{host}")))

    section = await cors_section(site, scan_settings)

    assert [f["check"] for f in section["findings"]] == ["cors.lookalike_credentials"]


async def test_trusting_the_http_origin_with_credentials_is_caught(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given an https site trusting its own https:// and http:// origins with credentials
    host = site_factory.unique_host("cors-http")
    site = site_factory(validating(host, lambda origin: origin in (f"https://{host}", f"http://{host}")))

    report = (await scan(site.url, scan_settings)).to_dict()

    # Then the http:// probe was echoed: bad, 20 points, a B at best
    assert f"http://{host}" in origins_sent(site)
    assert [f["check"] for f in report["cors"]["findings"]] == ["cors.http_origin_credentials"]
    assert report["cors"]["deduction"] == 20 and report["grade"] == "B"


async def test_a_correct_subdomain_pattern_is_not_exposed(site_factory: SiteFactory, scan_settings: Settings) -> None:
    # Given a site echoing, with credentials, the https origins of its domain and its subdomains only
    host = site_factory.unique_host("cors-subdomains")
    pattern = re.compile(rf"https://([a-z0-9-]+\.)*{re.escape(host)}")
    site = site_factory(validating(host, lambda origin: pattern.fullmatch(origin) is not None))

    report = (await scan(site.url, scan_settings)).to_dict()

    # Then none of the probes got through, and the site keeps its A+
    assert len(origins_sent(site)) == 4
    assert [f["check"] for f in report["cors"]["findings"]] == ["cors.not_exposed"]
    assert report["grade"] == "A+"
