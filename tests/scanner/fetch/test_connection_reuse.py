"""What one scan costs on the wire (issue 14), counted by the fixture server itself: the HTTP fetches of
a scan resume one TLS session per host, the grading handshake answers its own version's probe, and every
probe that must see a fresh handshake still gets one."""

from __future__ import annotations

import asyncio
import ssl
import time

import pytest

from tests.fixtures import catalog
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, RunningSite, Site, SiteFactory
from websec_app.scanner import scan
from websec_app.scanner.data import weak_cipher_families
from websec_app.scanner.fetch.http import permissive_tls_context
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.scanner.fetch.tls_probes import PROBED_PROTOCOLS
from websec_app.settings import Settings


def _settled(site: RunningSite) -> None:
    """The server counts a handshake when it has finished it: give the last closes a moment."""
    time.sleep(0.2)


def test_a_scans_http_fetches_resume_the_first_tls_session(site_factory: SiteFactory, scan_settings: Settings):
    # Given a site that redirects http:// to https:// and serves security.txt
    site = site_factory(catalog.best_practices(site_factory.unique_host("reuse")))

    # When it is scanned once
    report = asyncio.run(scan(site.url, scan_settings))
    _settled(site)

    # Then the report is whole, and the later HTTPS fetches (the three CORS probes and security.txt, opened
    # at once as the site closes each connection) resumed a session instead of paying a full handshake each
    assert report.grade == "A+"
    assert site.tls_resumed >= 4
    # and every fresh handshake the server completed is the grading one, the probes it accepts, or
    # an HTTP fetch that had no session to resume yet
    assert site.tls_completed - site.tls_resumed <= 4


def test_the_grading_handshake_answers_its_own_versions_probe(site_factory: SiteFactory, scan_settings: Settings):
    # Given a TLS 1.2 and 1.3 site
    host = site_factory.unique_host("implied")
    site = site_factory(Site(names=(host,), routes={"/": Response(200)}))

    # When its TLS is fetched with the probes
    tls = asyncio.run(fetch_tls(host, site.https_port or 443, site.ip, scan_settings))
    _settled(site)

    # Then TLS 1.3 (what the grading handshake got) is accepted without a handshake of its own, TLS 1.2
    # is probed and accepted, and the rest are probed and refused
    results = {probe.name: probe.result for probe in tls.protocols}
    assert [probe.name for probe in tls.protocols] == list(PROBED_PROTOCOLS)
    assert tls.protocol == "TLSv1.3"
    assert results["TLSv1.3"] == "accepted" and results["TLSv1.2"] == "accepted"
    assert {results[name] for name in ("TLSv1.1", "TLSv1", "SSLv3")} <= {"rejected", "not_testable"}
    # the handshakes the server completed: the grading one, the TLS 1.2 probe, and for the weak families
    # it accepts (Python's default suites include CBC ones) the shared screen and each family's own
    # probe; none for TLS 1.3 apart
    accepted_families = sum(probe.accepted for probe in tls.cipher_probes)
    assert accepted_families >= 1
    assert site.tls_completed == 2 + 1 + accepted_families


def test_a_server_refusing_every_weak_family_costs_one_handshake_per_kind_of_hello(
    site_factory: SiteFactory, scan_settings: Settings
):
    # Given a site with Mozilla's intermediate suites only (catalog.best_practices)
    site = site_factory(catalog.best_practices(site_factory.unique_host("screened")))

    # When its TLS is fetched with the probes
    tls = asyncio.run(fetch_tls(site.host, site.https_port or 443, site.ip, scan_settings))
    _settled(site)

    # Then every weak family is refused, as each family's own probe would find
    assert {probe.name: probe.result for probe in tls.cipher_probes} == {
        family.id: "rejected" for family in weak_cipher_families()
    }
    # with two ClientHellos for the eight families (OpenSSL's and a hand-built one), beside the grading
    # handshake, three protocol probes (TLS 1.2, TLS 1.1 and 1.0 together, SSL 3.0) and the DHE-only hello that
    # asks for the server's DH group (refused here: no DHE suite for its ECDSA certificate)
    assert {probe.name: probe.result for probe in tls.protocols} == {
        "TLSv1.3": "accepted",
        "TLSv1.2": "accepted",
        "TLSv1.1": "rejected",
        "TLSv1": "rejected",
        "SSLv3": "rejected",
    }
    assert site.accepted["https"] == 1 + 3 + 2 + 1


def test_a_connection_still_in_its_handshake_is_no_session_to_resume() -> None:
    """A scan opens connections to one host at once: a new one must not read the session of one whose
    handshake is still running (CPython raises `ValueError: i2d() failed` for it)."""
    context = permissive_tls_context(resume_sessions=True)
    first = context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="concurrent.test")
    with pytest.raises(ssl.SSLWantReadError):
        first.do_handshake()  # the ClientHello is out; the ServerHello has not come

    second = context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="concurrent.test")

    assert second.session_reused is False


def _handshake(
    server_context: ssl.SSLContext, client: ssl.SSLObject, to_client: ssl.MemoryBIO, from_client: ssl.MemoryBIO
) -> ssl.SSLObject:
    """Run `client`'s handshake with a fresh server end over memory BIOs, and read the TLS 1.3 tickets
    the server sends after it."""
    to_server, from_server = ssl.MemoryBIO(), ssl.MemoryBIO()
    server = server_context.wrap_bio(to_server, from_server, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, end in (("client", client), ("server", server)):
            if not done[name]:
                try:
                    end.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
            to_server.write(from_client.read())
            to_client.write(from_server.read())
    with pytest.raises(ssl.SSLWantReadError):
        client.read(1)
    return client


def test_connections_opened_at_once_still_resume_the_finished_ones_session(pki: Pki) -> None:
    # Given one finished connection to a host, holding a ticket
    issued = pki.issue("valid", ("resume.test",))
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(str(issued.chain_path), str(issued.key_path))
    client_context = permissive_tls_context(resume_sessions=True)

    def connect() -> tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]:
        to_client, from_client = ssl.MemoryBIO(), ssl.MemoryBIO()
        return client_context.wrap_bio(to_client, from_client, server_hostname="resume.test"), to_client, from_client

    first = _handshake(server_context, *connect())
    assert first.session is not None and first.session.has_ticket

    # When five more open at once, as a closing server's four CORS probes and security.txt do
    opened = [connect() for _ in range(5)]

    # Then the last of them resumes the first one's session too, instead of paying a full handshake
    assert _handshake(server_context, *opened[-1]).session_reused
    assert _handshake(server_context, *opened[0]).session_reused


def test_on_a_keep_alive_site_the_cors_probes_and_security_txt_share_the_pages_connection(
    site_factory: SiteFactory, scan_settings: Settings
):
    # Given the same site twice: one closing every connection after a response, one keeping them open
    from dataclasses import replace

    from websec_app.scanner.fetch import fetch_snapshot
    from websec_app.scanner.target import parse_target

    closing = site_factory(catalog.best_practices(site_factory.unique_host("closing")))
    keeping = site_factory(replace(catalog.best_practices(site_factory.unique_host("keeping")), keep_alive=True))

    # When each is fetched
    snapshots = {}
    for site in (closing, keeping):
        snapshots[site.host] = asyncio.run(fetch_snapshot(parse_target(site.url), scan_settings))
        _settled(site)

    # Then both have every answer: the three CORS probes (the look-alike was not echoed, so no foreign one)
    # and security.txt
    for snapshot in snapshots.values():
        assert [probe.kind for probe in snapshot.cors_probes] == ["lookalike", "http", "null"]
        assert all(probe.response is not None and probe.response.status_code == 200 for probe in snapshot.cors_probes)
        assert snapshot.security_txt.final is not None and snapshot.security_txt.final.status_code == 200
    # and on the keep-alive site those four requests went over the page's connection, one after another
    assert keeping.accepted["https"] <= closing.accepted["https"] - 4


def test_the_upgrades_https_hop_reads_the_main_pages_answer(site_factory: SiteFactory, scan_settings: Settings):
    # Given a site whose http:// form redirects to the https:// URL that is scanned
    from websec_app.scanner.fetch import fetch_snapshot
    from websec_app.scanner.target import parse_target

    site = site_factory(catalog.best_practices(site_factory.unique_host("upgrade-shared")))

    # When it is fetched
    snapshot = asyncio.run(fetch_snapshot(parse_target(site.url), scan_settings))

    # Then the upgrade chain ends on the page itself, as before
    assert [r.status_code for r in snapshot.http_upgrade.responses] == [301, 200]
    assert snapshot.http_upgrade.final_url == snapshot.main.final_url
    assert snapshot.http_upgrade.final == snapshot.main.final
    # and the page was asked for once over HTTPS without an Origin (not once per chain)
    plain_gets = [
        r for r in site.requests_to("/") if r.scheme == "https" and not any(k.lower() == "origin" for k, _ in r.headers)
    ]
    assert len(plain_gets) == 1
