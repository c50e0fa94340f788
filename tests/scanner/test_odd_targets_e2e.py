"""Odd but real targets, scanned end to end on loopback (issue 11, "findings users can trust").

- the HTTP -> HTTPS upgrade is judged on the http:// URL the user gave (any port, any path);
- odd statuses (406, 451, 5xx with a body) are reported plainly, never as an unreachable site;
- a refused TCP connection says "connection refused".
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Redirect, Site, TlsConfig, html
from websec_app.scanner import TargetUnreachable, scan
from websec_app.settings import ScanLimits, Settings


def _checks(section: dict[str, Any]) -> list[str]:
    return [f["check"] for f in section["findings"]]


def _finding(section: dict[str, Any], check: str) -> dict[str, Any]:
    return next(f for f in section["findings"] if f["check"] == check)


# -- HTTP -> HTTPS on the URL the user gave -------------------------------------------------------


async def test_given_an_http_url_on_another_port_when_it_redirects_then_that_redirect_is_judged(
    site_factory, scan_settings
) -> None:
    # Given plain HTTP on port 8080-like (any free port) redirecting to HTTPS, and nothing on port 80
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host("port-upgrade"), http=Redirect("https://{host}{path}"), http_port=0
        )
    )
    assert site.http_port != 80
    # When the user scans that http:// URL
    body = (await scan(site.http_url, scan_settings)).to_dict()
    # Then the redirect it followed is the one judged, not a probe of port 80
    redirection = body["redirection"]
    assert redirection["http_url"] == site.http_url
    assert _checks(redirection) == ["redirect.to_https"], redirection
    assert redirection["http_chain"][0]["status_code"] == 301
    assert body["final_url"] == site.url
    # And the http:// URL was fetched once (the main chain is the upgrade chain)
    plain = [r for r in site.requests if r.scheme == "http"]
    assert len(plain) == 1, plain


async def test_given_an_http_url_with_a_path_when_scanned_then_the_upgrade_of_that_path_is_judged(
    site_factory, scan_settings
) -> None:
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host("path-upgrade"),
            http={"/deep/page": Redirect("https://{host}/"), "/": html("plain")},
            http_port=0,
        )
    )
    url = site.http_url + "deep/page?x=1"
    body = (await scan(url, scan_settings)).to_dict()
    assert body["redirection"]["http_url"] == url
    assert _checks(body["redirection"]) == ["redirect.to_https"]


async def test_given_an_http_only_site_on_another_port_when_scanned_then_redirect_missing_not_unserved(
    site_factory, scan_settings
) -> None:
    # Given a site that serves its page over plain HTTP on a non-default port and never upgrades
    site = site_factory(
        Site(
            names=(site_factory.unique_host("plain-only"),),
            tls=None,
            http={"/": html("plain")},
            http_port=0,
            https_port=0,
        )
    )
    body = (await scan(site.http_url, scan_settings)).to_dict()
    redirection = body["redirection"]
    # Then the report does not claim "does not answer plain HTTP at all"
    assert _checks(redirection) == ["redirect.missing"], redirection
    assert site.http_url in (_finding(redirection, "redirect.missing")["note"] or "")
    # The page itself was fetched once (the CORS probes, with their Origin header, are other requests, and so is
    # security.txt, asked over http too on a site whose https origin does not answer)
    plain = [
        r
        for r in site.requests
        if r.scheme == "http" and r.path == "/" and not any(k.lower() == "origin" for k, _ in r.headers)
    ]
    assert len(plain) == 1, plain


async def test_given_an_https_url_the_http_form_on_port_80_stays_the_probe(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("https-probe")))
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["redirection"]["http_url"] == f"http://{site.host}/"
    assert _checks(body["redirection"]) == ["redirect.to_https"]


async def test_given_a_domain_that_redirects_to_www_without_hsts_then_its_own_name_is_reported(
    site_factory, scan_settings
) -> None:
    # Given example.test redirecting over HTTPS to www.example.test, whose page has every header right (HSTS too),
    # and its http:// form redirecting to https://example.test/ first, as hstspreload.org asks
    host = site_factory.unique_host("apex")
    best = catalog.best_practices(host, extra_names=(f"www.{host}",), dns=False)
    page = best.routes["/"]

    def on_https(request: Any) -> Any:
        return page if (request.host or "").startswith("www.") else Redirect(f"https://www.{host}/")

    def on_http(request: Any) -> Any:
        return Redirect(f"https://{request.host}{{path}}")

    site = site_factory(dataclasses.replace(best, routes={**best.routes, "/": on_https}, http=on_http))
    for url in (f"https://{host}/", f"http://{host}/"):
        # When either of its addresses is scanned
        body = (await scan(url, scan_settings)).to_dict()
        # Then the headers of www's page are good, and the redirection section says example.test gets no HSTS
        assert (
            body["final_url"] == f"https://www.{host}/"
            and body["headers"]["Strict-Transport-Security"]["status"] == "good"
        )
        assert sorted(_checks(body["redirection"])) == ["redirect.host_without_hsts", "redirect.to_https"], url
        note = _finding(body["redirection"], "redirect.host_without_hsts")["note"]
        assert note.startswith(
            f"https://{host}/ redirects on to https://www.{host}/ without a Strict-Transport-Security"
        )
        assert body["redirection"]["deduction"] == 3
    site.stop()


async def test_given_a_domain_whose_own_certificate_expired_before_the_redirect_to_www_then_it_is_graded_f(
    site_factory, scan_settings
) -> None:
    # Given example.test serving an expired certificate and redirecting to www.example.test, whose own is right:
    # a browser stops at example.test's certificate, and visitors who type the name never reach www
    host = site_factory.unique_host("expired-apex")
    www = site_factory(catalog.best_practices(f"www.{host}", dns=False))
    apex = site_factory(
        Site(
            names=(host,),
            default=Redirect(f"https://www.{host}/", headers=[("Strict-Transport-Security", "max-age=63072000")]),
            tls=TlsConfig(cert="expired"),
            http=Redirect(f"https://{host}/"),
        )
    )

    # When the name is scanned
    body = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the TLS section grades the page's certificate and the name's: F, the expired one named (it said A+ on
    # www's certificate alone)
    assert body["final_url"] == f"https://www.{host}/" and body["tls"]["host"] == f"www.{host}"
    expired = _finding(body["tls"], "tls.cert_expired")
    assert expired["note"].startswith(f"{host}, the address scanned, which redirects to www.{host}: expired on ")
    assert body["grade"] == "F" and {"outcome": "tls.cert_expired", "max_grade": "F"} in body["grading"]["caps"]
    www.stop()
    apex.stop()


# -- odd statuses are reported plainly ------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (406, "Not Acceptable"),
        (451, "Unavailable For Legal Reasons"),
        (500, "Internal Server Error"),
        (503, "Service Unavailable"),
    ],
)
async def test_given_an_odd_status_with_a_body_when_scanned_then_a_plain_finding_names_it(
    site_factory, scan_settings, status: int, words: str
) -> None:
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host(f"status{status}"), status=status, body=f"<h1>{status} {words}</h1>"
        )
    )
    report = await scan(site.url, scan_settings)  # never TargetUnreachable: the server answered
    body = report.to_dict()
    assert body["status_code"] == status
    finding = _finding(body["page_analysis"], "scan.error_status")
    assert f"{status} {words}" in finding["note"]
    assert "unreachable" not in finding["note"].lower() and "down" not in finding["note"].lower()
    assert "scan.blocked" not in _checks(body["page_analysis"])


async def test_given_a_200_page_then_no_status_finding(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("status200")))
    body = (await scan(site.url, scan_settings)).to_dict()
    assert "scan.error_status" not in _checks(body["page_analysis"])


# -- connection refused ---------------------------------------------------------------------------


async def test_given_a_closed_port_when_scanned_then_connection_refused(site_factory, scan_settings) -> None:
    # Given a name whose address has nothing listening on 443 (its own loopback address: refused)
    site = site_factory(Site(names=(site_factory.unique_host("closed"),), tls=None, http=None))
    limits = dataclasses.replace(ScanLimits(), connect_seconds=2, total_seconds=10)
    settings: Settings = dataclasses.replace(scan_settings, limits=limits)
    with pytest.raises(TargetUnreachable) as caught:
        await scan(f"https://{site.host}/", settings)
    message = str(caught.value)
    assert "connection refused" in message.lower(), message
    assert "All connection attempts failed" not in message


async def test_given_nothing_on_port_80_then_the_probe_note_says_refused(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("no80"), http=None))
    body = (await scan(site.url, scan_settings)).to_dict()
    redirection = body["redirection"]
    assert _checks(redirection) == ["redirect.http_not_served"]
    assert "All connection attempts failed" not in (redirection.get("error") or "")
    assert "refused" in (redirection.get("error") or "")


async def test_every_hop_of_the_chains_keeps_its_raw_headers_in_wire_order(site_factory, scan_settings) -> None:
    # Given a site whose http:// form redirects and whose page sends a header twice
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host("raw-headers"),
            http=Redirect("https://{host}{path}"),
            headers=[("X-Twice", "one"), ("X-Twice", "two")],
        )
    )
    # When it is scanned
    redirection = (await scan(site.url, scan_settings)).to_dict()["redirection"]
    # Then each hop carries the headers it answered with, duplicates and order kept (the report's evidence)
    page = redirection["main_chain"][-1]["headers"]
    assert [value for name, value in page if name.lower() == "x-twice"] == ["one", "two"]
    hop = redirection["http_chain"][0]
    assert ["location", f"https://{site.host}/"] in [[name.lower(), value] for name, value in hop["headers"]]


# -- names browsers accept that IDNA2008 would not ------------------------------------------------


@pytest.mark.parametrize("label", ["a_b", "-edge-", "r3---sn-4g5e6nsz"])
async def test_given_a_name_with_an_underscore_or_edge_hyphens_when_scanned_then_it_is_a_site_like_any(
    site_factory, scan_settings, label: str
) -> None:
    # Given a site under a name browsers accept (WHATWG URL: UTS #46 without CheckHyphens or STD3 rules),
    # with a cookie for its parent domain
    parent = site_factory.unique_host("odd-names")
    host = f"{label}.{parent}"
    cookie = f"sid=1; Domain={parent}; Path=/; Secure; HttpOnly; SameSite=Lax"
    site = site_factory(catalog.best_practices(host, cookie=cookie))
    # When it is scanned
    body = (await scan(f"https://{host}/", scan_settings)).to_dict()
    # Then it was resolved and reached over TLS with the name as SNI, the certificate matched it, and the
    # cookie for its parent domain was stored as a browser stores it
    assert body["final_url"] == f"https://{host}/"
    assert {r.sni for r in site.requests if r.scheme == "https"} == {host}
    assert _checks(body["tls"]) == ["tls.cert_valid"]
    assert [(c["name"], c["domain"], c["rejected"]) for c in body["cookies"]["cookies"]] == [("sid", parent, None)]
    assert not [
        f
        for section in body.values()
        if isinstance(section, dict)
        for f in section.get("findings", ())
        if f["check"] == "check.error"
    ]
