"""A site one of whose addresses is down is scanned at the next one, as a browser reaches it (resolve.Pinner).

The scan pins a host's lowest IPv4 address first. Before it moved on, a site whose lowest address was a dead
backend was "unreachable" on every scan, though every visitor's browser got through at the next address."""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import RunningSite, Site, SiteFactory, html
from websec_app.scanner import TargetUnreachable, scan
from websec_app.scanner.fetch import fetch_snapshot
from websec_app.scanner.target import parse_target
from websec_app.settings import ScanLimits, Settings


def _quick(settings: Settings) -> Settings:
    """A connect timeout short enough that an address timing out costs the test little."""
    return dataclasses.replace(settings, limits=dataclasses.replace(ScanLimits(), connect_seconds=0.5))


def _outcomes(report: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """Every finding of a report: its status and deduction, by check."""
    sections = [section for section in report.values() if isinstance(section, dict) and "findings" in section]
    return {f["check"]: (f["status"], f["deduction"]) for section in sections for f in section["findings"]}


@pytest.mark.parametrize("timing_out", [False, True], ids=["refused", "timing-out"])
async def test_a_site_whose_first_address_is_down_is_scanned_at_the_next(
    timing_out: bool, site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site with two A records, the lower one an address that is down, and its twin with one address
    down = site_factory.down(timing_out=timing_out)
    host = site_factory.unique_host("second-address")
    best = catalog.best_practices(host)
    site = site_factory(dataclasses.replace(best, dns=(*best.dns, (host, "A", down.ip))))
    assert ipaddress.ip_address(down.ip) < ipaddress.ip_address(site.ip)
    twin = site_factory(catalog.best_practices(site_factory.unique_host("one-address")))
    settings = _quick(scan_settings)

    # When it is scanned
    report = (await scan(site.url, settings)).to_dict()
    snapshot = await fetch_snapshot(parse_target(site.url), settings)

    # Then it is graded as its twin is, finding for finding, every part fetched from the second address; one more
    # finding names the first address, worth no points
    alone = (await scan(twin.url, settings)).to_dict()
    assert (report["grade"], report["score"]) == (alone["grade"], alone["score"])
    assert _outcomes(report) == {**_outcomes(alone), "dns.address_down": ("warn", 0)}
    why = (
        "did not answer on ports 80 and 443 within the connect timeout"
        if timing_out
        else "refused connections to ports 80 and 443"
    )
    down_finding = next(f for f in report["dns"]["findings"] if f["check"] == "dns.address_down")
    assert down_finding["subjects"] == [down.ip]
    assert down_finding["note"] == f"{down.ip} ({host}) {why}, and the scan went on at {site.ip}"
    assert snapshot.tls.address == site.ip and snapshot.tls.failure is None and snapshot.tls.protocols
    assert snapshot.main.final is not None and snapshot.main.final.address == site.ip
    assert [r.address for r in snapshot.http_upgrade.responses] == [site.ip, site.ip]
    assert snapshot.security_txt.final is not None and snapshot.security_txt.final.status_code == 200


async def test_a_site_all_of_whose_addresses_are_down_is_unreachable(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    first, second = site_factory.down(), site_factory.down(timing_out=True)
    host = site_factory.unique_host("all-down")
    site_factory(Site(names=(host,), tls=None, http=None, dns=((host, "A", first.ip), (host, "A", second.ip))))

    with pytest.raises(TargetUnreachable, match="Could not reach"):
        await scan(f"https://{host}/", _quick(scan_settings))


def _answering_on_80(site_factory: SiteFactory, host: str) -> RunningSite:
    """A second address for `host` that answers on port 80 only, with a page of its own."""
    second = site_factory(Site(names=(site_factory.unique_host("second"),), tls=None, http=html("the second")))
    assert site_factory.dns is not None
    site_factory.dns.add(host, "A", second.ip)
    return second


async def test_a_port_refused_at_the_first_address_is_asked_of_the_next(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose first address serves HTTPS and refuses port 80, and whose second answers on 80
    host = site_factory.unique_host("refused-80")
    first = site_factory(dataclasses.replace(catalog.best_practices(host), http=None))
    second = _answering_on_80(site_factory, host)

    # When it is scanned, http://host/ is asked of the second address, as a browser would ask it
    snapshot = await fetch_snapshot(parse_target(first.url), _quick(scan_settings))

    assert [r.address for r in snapshot.http_upgrade.responses] == [second.ip]
    assert snapshot.http_upgrade.responses[0].body == b"the second"
    assert snapshot.main.final is not None and snapshot.main.final.address == first.ip


async def test_a_port_timing_out_at_an_address_that_is_up_is_not_asked_of_the_next(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose first address serves HTTPS and drops port 80, and whose second answers on 80
    host = site_factory.unique_host("filtered-80")
    first = site_factory(dataclasses.replace(catalog.best_practices(host), http=None))
    first.drop_connections()
    second = _answering_on_80(site_factory, host)

    # When it is scanned, port 80 is taken as filtered there (its address is up on 443): the next one is not tried,
    # which would most likely time out as well, a connect timeout more
    snapshot = await fetch_snapshot(parse_target(first.url), _quick(scan_settings))

    assert snapshot.http_upgrade.failure is not None and snapshot.http_upgrade.failure.kind == "timeout"
    assert snapshot.http_upgrade.responses == () and second.requests == []
    assert snapshot.main.final is not None and snapshot.main.final.address == first.ip


async def test_a_port_no_address_serves_names_no_address_down(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given an HTTPS-only site (nothing listens on port 80) whose host has a second address that refuses everything,
    # and a plain-HTTP site (nothing on 443) with such a second address: a dual-stack host whose port is closed on
    # both addresses is the common case
    settings = _quick(scan_settings)
    for name, make in (
        ("https-only", lambda host: dataclasses.replace(catalog.best_practices(host), http=None)),
        ("http-only", lambda host: catalog.simple_site(host, tls=None, http=html("plain"))),
    ):
        host = site_factory.unique_host(name)
        first = site_factory(make(host))
        down = site_factory.down()
        assert site_factory.dns is not None and ipaddress.ip_address(first.ip) < ipaddress.ip_address(down.ip)
        site_factory.dns.add(host, "A", down.ip)
        url = f"https://{host}/" if name == "https-only" else f"http://{host}/"

        # When it is scanned, the closed port is asked of both addresses, as a browser asks it
        report = (await scan(url, settings)).to_dict()

        # Then no address is reported down (each refused the port alike): the advice to take the first out of the
        # DNS, which serves the site, was wrong
        assert "dns.address_down" not in _outcomes(report), report["dns"]["findings"]
        assert report["final_url"] == url
