"""The CORS section of whole scans of loopback sites whose origin checks go wrong in the ways real ones do:
what the probes sent, what the site answered, and what the report makes of it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Behaviour, Garbage, Redirect, Request, Response, RunningSite, Site, SiteFactory
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


async def test_a_look_alike_answered_with_garbage_is_not_graded_unexposed(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site that breaks the connection when asked with the look-alike origin (the first probe sent), and
    # answers the others plainly
    host = site_factory.unique_host("cors-garbage")
    lookalike = f"https://{host}.websecprobe{host}"
    site = site_factory(answering(host, lambda o: Garbage() if o == lookalike else None))

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then the probe was sent, and the section says it could not check it instead of "not exposed"
    assert lookalike in origins_sent(site)
    assert [f["check"] for f in section["findings"]] == ["check.error"]
    assert section["findings"][0]["subjects"] == [f"Origin: {lookalike}"]
    assert section["lookalike_origin"]["origin_sent"] == lookalike and section["lookalike_origin"]["error"]
    assert section["null_origin"]["status_code"] == 200
    # and, knowing nothing of the look-alike, the scanner asked the foreign origin (answered plainly)
    assert section["foreign_origin"]["status_code"] == 200


async def test_a_foreign_origin_answered_with_garbage_is_not_graded_by_the_look_alike_alone(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site that echoes the look-alike with credentials, and breaks the connection for the foreign origin
    host = site_factory.unique_host("cors-garbage-foreign")
    lookalike = f"https://{host}.websecprobe{host}"
    page = catalog.best_practices(host).routes["/"]
    assert isinstance(page, Response)

    def answer(origin: str) -> Behaviour | None:
        if origin == FOREIGN_PROBE:
            return Garbage()
        return echoing_with_credentials(page, origin) if origin == lookalike else None

    site = site_factory(answering(host, answer))

    section = await cors_section(site, scan_settings)

    # Then the look-alike's echo is graded, and whether every Origin is echoed is "could not check"
    assert FOREIGN_PROBE in origins_sent(site)
    assert [f["check"] for f in section["findings"]] == ["cors.lookalike_credentials", "check.error"]
    assert section["findings"][1]["subjects"] == [f"Origin: {FOREIGN_PROBE}"]
    assert section["foreign_origin"]["error"]


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

    # Then none of the probes got through (the look-alike, http:// and null: no foreign one was needed), and the
    # site keeps its A+
    assert len(origins_sent(site)) == 3
    assert [f["check"] for f in report["cors"]["findings"]] == ["cors.not_exposed"]
    assert report["grade"] == "A+"


@pytest.mark.parametrize("keep_alive", [False, True], ids=["closing", "keep-alive"])
async def test_the_foreign_probe_is_sent_only_when_the_look_alike_is_echoed(
    site_factory: SiteFactory, scan_settings: Settings, keep_alive: bool
) -> None:
    # Given a site without CORS headers and one echoing every Origin with credentials
    page = catalog.best_practices("page.test").routes["/"]
    assert isinstance(page, Response)
    quiet_host = site_factory.unique_host("cors-quiet")
    echo_host = site_factory.unique_host("cors-echo")
    quiet = site_factory(replace(answering(quiet_host, lambda origin: None), keep_alive=keep_alive))
    echo = site_factory(
        replace(answering(echo_host, lambda origin: echoing_with_credentials(page, origin)), keep_alive=keep_alive)
    )

    # When both are scanned
    quiet_section = await cors_section(quiet, scan_settings)
    echo_section = await cors_section(echo, scan_settings)

    # Then the quiet site was sent three probes: the look-alike, its http:// origin and null
    quiet_probes = [f"https://{quiet_host}.websecprobe{quiet_host}", f"http://{quiet_host}", "null"]
    echo_lookalike = f"https://{echo_host}.websecprobe{echo_host}"
    echo_probes = [echo_lookalike, FOREIGN_PROBE, f"http://{echo_host}", "null"]
    # (a closing site gets them at once, in no set order; the foreign one waits for the look-alike's answer)
    sent = origins_sent(quiet), origins_sent(echo)
    if keep_alive:
        assert sent == (quiet_probes, echo_probes)
    else:
        assert (sorted(sent[0]), sorted(sent[1])) == (sorted(quiet_probes), sorted(echo_probes))
        assert sent[1].index(echo_lookalike) < sent[1].index(FOREIGN_PROBE)
    assert [f["check"] for f in quiet_section["findings"]] == ["cors.not_exposed"]
    # and the echoing one four, the foreign origin telling an echo of everything from a broken check
    assert [f["check"] for f in echo_section["findings"]] == ["cors.origin_reflected_credentials"]


def cookie_gated(host: str, gate_cookie: str) -> Site:
    """A consent gate (/ sets `gate_cookie`, seen=1, and redirects to itself) in front of a page that echoes every
    Origin with credentials."""
    base = catalog.best_practices(host)
    page = base.routes["/"]
    assert isinstance(page, Response)

    def gated(request: Request) -> Behaviour:
        if "seen=1" not in (request.header("cookie") or ""):
            return Redirect("https://{host}/", status=302, headers=[("Set-Cookie", gate_cookie)])
        origin = request.header("origin")
        return page if origin is None else echoing_with_credentials(page, origin)

    return replace(base, routes={**base.routes, "/": gated})


def probes_sent(site: RunningSite) -> list[Request]:
    return [r for r in site.requests if r.path == "/" and r.header("origin") is not None]


async def test_a_site_behind_a_cookie_gate_is_probed_with_the_gates_cookie(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a consent gate whose cookie browsers send from other sites (SameSite=None, Secure)
    site = site_factory(cookie_gated(site_factory.unique_host("cors-gate"), "seen=1; Path=/; Secure; SameSite=None"))

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then the probes carried the cookie a browser's credentialed request carries, reached the page, and the echo
    # of every Origin is found
    probes = probes_sent(site)
    assert probes and all(r.header("cookie") == "seen=1" for r in probes)
    assert [f["check"] for f in section["findings"]] == ["cors.origin_reflected_credentials"]
    assert section["foreign_origin"]["cookies_sent"] == ["seen"]


@pytest.mark.parametrize(
    "attributes",
    ["Secure", "Secure; SameSite=Lax", "Secure; SameSite=Strict", "Secure; SameSite=None; Partitioned"],
    ids=["no SameSite (Lax to Chromium)", "Lax", "Strict", "Partitioned"],
)
async def test_a_gate_whose_cookie_stays_home_answers_the_probes_as_it_answers_other_sites(
    site_factory: SiteFactory, scan_settings: Settings, attributes: str
) -> None:
    # Given a consent gate whose cookie browsers keep from other sites' requests (SameSite Lax, Strict or unset;
    # Partitioned: the site's own partition), in front of a page that echoes every Origin with credentials
    host = site_factory.unique_host("cors-gate-home")
    site = site_factory(cookie_gated(host, f"seen=1; Path=/; {attributes}"))

    # When it is scanned
    report = (await scan(site.url, scan_settings)).to_dict()

    # Then the page itself was reached with the cookie, but no probe carried it: each got the gate's redirect, as an
    # attacker's page would, and the section says what each could not check instead of grading an echo no other
    # site can get
    assert any(r.header("cookie") == "seen=1" and r.header("origin") is None for r in site.requests if r.path == "/")
    probes = probes_sent(site)
    assert probes and all(r.header("cookie") is None for r in probes)
    section = report["cors"]
    [finding] = section["findings"]
    assert finding["check"] == "check.error" and len(finding["subjects"]) == 3
    assert "answered with a redirect" in finding["note"]
    assert section["lookalike_origin"]["cookies_withheld"] == ["seen", "__Host-session"]
    assert section["deduction"] == 0 and report["grade"] == "A+"


def session_gated_cors(host: str, session_cookie: str) -> Site:
    """A site whose / redirects to /app setting `session_cookie` (sid=...) and a SameSite=None one (pref=dark), and
    whose /app lets every Origin read it with credentials only for a request carrying sid: an API that answers
    CORS for signed-in sessions."""
    base = catalog.best_practices(host)
    page = base.routes["/"]
    assert isinstance(page, Response)
    setting = [("Set-Cookie", session_cookie), ("Set-Cookie", "pref=dark; Path=/; Secure; SameSite=None")]

    def app(request: Request) -> Behaviour:
        origin = request.header("origin")
        signed_in = "sid=" in (request.header("cookie") or "")
        return echoing_with_credentials(page, origin) if origin is not None and signed_in else page

    return replace(
        base, routes={**base.routes, "/": Redirect("https://{host}/app", status=302, headers=setting), "/app": app}
    )


@pytest.mark.parametrize(
    "attributes",
    ["Secure; HttpOnly", "Secure; HttpOnly; SameSite=Lax", "Secure; HttpOnly; SameSite=Strict"],
    ids=["no SameSite (Lax to Chromium)", "Lax", "Strict"],
)
async def test_an_echo_only_the_sites_own_session_cookie_unlocks_is_not_graded(
    site_factory: SiteFactory, scan_settings: Settings, attributes: str
) -> None:
    # Given a site answering CORS with credentials only to requests with its session cookie, which browsers keep
    # from other sites' requests
    host = site_factory.unique_host("cors-session-home")
    site = site_factory(session_gated_cors(host, f"sid=s3cr3t; Path=/; {attributes}"))

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then every probe (the http:// one too: another site to an https page) carried only the SameSite=None cookie,
    # as an attacker's page would, got no CORS headers, and the site is not exposed
    probes = [r for r in site.requests if r.path == "/app" and r.header("origin") is not None]
    assert len(probes) == 3 and all(r.header("cookie") == "pref=dark" for r in probes)
    assert [f["check"] for f in section["findings"]] == ["cors.not_exposed"]
    assert section["http_origin"]["cookies_sent"] == ["pref"]
    # (the best-practice page's own __Host-session is SameSite=Lax: it stays home too)
    assert section["http_origin"]["cookies_withheld"] == ["sid", "__Host-session"]


async def test_an_echo_a_session_cookie_sent_across_sites_unlocks_is_critical_and_named(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given the same site, its session cookie SameSite=None: browsers send it from any site
    host = site_factory.unique_host("cors-session-none")
    site = site_factory(session_gated_cors(host, "sid=s3cr3t; Path=/; Secure; HttpOnly; SameSite=None"))

    section = await cors_section(site, scan_settings)

    # Then the probes carried it, and the echo of every Origin is found, its note naming the session cookie
    probes = [r for r in site.requests if r.path == "/app" and r.header("origin") is not None]
    assert probes and all(r.header("cookie") == "sid=s3cr3t; pref=dark" for r in probes)
    [finding] = section["findings"]
    assert finding["check"] == "cors.origin_reflected_credentials"
    assert "the session cookie sid" in finding["note"]


async def test_the_probes_carry_the_cookies_the_page_itself_sets(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a page that sets its session cookie itself (SameSite=None, and a Lax one beside it) and lets every
    # Origin read it with credentials only for a request carrying that cookie
    host = site_factory.unique_host("cors-page-session")
    base = catalog.best_practices(host)
    page = base.routes["/"]
    assert isinstance(page, Response)
    cookies = [
        ("Set-Cookie", "sid=s3cr3t; Path=/; Secure; HttpOnly; SameSite=None"),
        ("Set-Cookie", "csrftoken=t; Path=/; Secure; SameSite=Lax"),
    ]
    with_cookies = replace(page, headers=[*page.headers, *cookies])

    def home(request: Request) -> Behaviour:
        origin = request.header("origin")
        signed_in = "sid=" in (request.header("cookie") or "")
        return echoing_with_credentials(with_cookies, origin) if origin is not None and signed_in else with_cookies

    site = site_factory(replace(base, routes={**base.routes, "/": home}))

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then the probes carried the cookie a visitor who loaded the page holds and browsers send from any site, and
    # the echo is found
    probes = probes_sent(site)
    assert probes and all(r.header("cookie") == "sid=s3cr3t" for r in probes)
    assert [f["check"] for f in section["findings"]] == ["cors.origin_reflected_credentials"]
    assert section["null_origin"]["cookies_withheld"] == ["__Host-session", "csrftoken"]


#: Origin checks that trust a cleartext origin of the site's own host, as real ones do (`request`: the probe).
CLEARTEXT_CHECKS: dict[str, Callable[[str, Request], bool]] = {
    # the Origin's host and port against the Host header, the scheme left out
    "host and port, any scheme": lambda origin, request: urlsplit(origin).netloc == request.netloc,
    # an allowlist of the site's origins, its http:// site (port 80) among them
    "an allowlist with the http site": lambda origin, request: (
        origin in (f"https://{request.netloc}", f"http://{request.host}")
    ),
    # the host name alone
    "the host name, any scheme or port": lambda origin, request: urlsplit(origin).hostname == request.host,
}


@pytest.mark.parametrize(
    ("check", "echoed"),
    [
        ("host and port, any scheme", ["http://{host}:{port}"]),
        ("an allowlist with the http site", ["http://{host}"]),
        # the port 80 origin is judged first: the subject the finding had before the other probe was sent
        ("the host name, any scheme or port", ["http://{host}", "http://{host}:{port}"]),
    ],
)
async def test_an_https_site_on_another_port_is_asked_about_both_of_its_cleartext_origins(
    site_factory: SiteFactory, scan_settings: Settings, check: str, echoed: list[str]
) -> None:
    # Given an https site on a port of its own whose origin check, with credentials, trusts a cleartext origin of
    # its host: anyone on the network path can forge a page of either (they answer the cleartext request)
    host = site_factory.unique_host("cors-port")
    base = catalog.best_practices(host)
    page = base.routes["/"]
    assert isinstance(page, Response)
    accept = CLEARTEXT_CHECKS[check]

    def handler(request: Request) -> Behaviour:
        origin = request.header("origin")
        return echoing_with_credentials(page, origin) if origin is not None and accept(origin, request) else page

    site = site_factory(replace(base, routes={**base.routes, "/": handler}, https_port=0))
    port = site.https_port
    assert port is not None and port != 443

    # When it is scanned
    section = await cors_section(site, scan_settings)

    # Then it was sent the page's host and port over http, and the host's port 80 origin, and the one echoed
    # first is the finding (the other, a note on it): the site trusts an origin the network can forge
    own, port_80 = f"http://{host}:{port}", f"http://{host}"
    assert {own, port_80} <= set(origins_sent(site))
    first, *others = [origin.format(host=host, port=port) for origin in echoed]
    [finding] = section["findings"]
    assert finding["check"] == "cors.http_origin_credentials" and finding["subjects"] == [f"Origin: {first}"]
    assert all(f"Origin: {other} was echoed" in finding["note"] for other in others)
    assert section["deduction"] == 20
    assert section["http_origin"]["origin_sent"] == own and section["http_port_80_origin"]["origin_sent"] == port_80
