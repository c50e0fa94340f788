"""The test servers themselves: if these fail, end-to-end scanner tests cannot be trusted."""

from __future__ import annotations

import socket
import ssl
import time
import warnings

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.resolver
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.clock import TEST_NOW
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.pki import WRONG_HOST_NAME, Pki
from tests.fixtures.sites import (
    Drip,
    Garbage,
    Huge,
    Request,
    Response,
    RunningSite,
    Site,
    SiteFactory,
    Stall,
    TlsConfig,
    raw_request,
)
from websec_app.settings import DnsServer, Settings

# -- helpers ------------------------------------------------------------------------------------


#: OpenSSL's X509_V_FLAG_NO_CHECK_TIME, which Python's ssl.VerifyFlags does not name.
_NO_CHECK_TIME = ssl.VerifyFlags(0x200000)


def _trusting(pki: Pki) -> ssl.SSLContext:
    """pki.client_context() (the test root alone, hostname checked) with OpenSSL's date check off: OpenSSL reads
    the machine's clock, which the tests do not control, and the fixture certificates are issued around the suite's
    (TEST_NOW). Where dates matter, `_valid_at_test_now` reads them."""
    context = pki.client_context()
    context.verify_flags |= _NO_CHECK_TIME
    return context


def _valid_at_test_now(leaf: x509.Certificate) -> str | None:
    """Why `leaf` is not valid at the suite's clock, in OpenSSL's words; None when it is."""
    if TEST_NOW < leaf.not_valid_before_utc:
        return "certificate is not yet valid"
    if TEST_NOW > leaf.not_valid_after_utc:
        return "certificate has expired"
    return None


def _get(site: RunningSite, pki: Pki, path: str = "/", **headers: str) -> httpx.Response:
    """GET over HTTPS to the site's address, with SNI and Host set to its name, trusting the test root."""
    with httpx.Client(verify=_trusting(pki), trust_env=False) as client:
        return client.get(
            f"https://{site.ip}{path}",
            headers={"Host": site.host, **headers},
            extensions={"sni_hostname": site.host},
        )


def _get_http(site: RunningSite, path: str = "/", **headers: str) -> httpx.Response:
    with httpx.Client(trust_env=False) as client:
        return client.get(f"http://{site.ip}{path}", headers={"Host": site.host, **headers})


def _handshake(site: RunningSite, context: ssl.SSLContext) -> ssl.SSLSocket:
    raw = socket.create_connection((site.ip, site.https_port or 443), timeout=3)
    try:
        return context.wrap_socket(raw, server_hostname=site.host)
    except (OSError, ssl.SSLError):
        raw.close()
        raise


def _permissive() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers("ALL:@SECLEVEL=0")
    return context


def _wait_until(predicate, timeout: float = 3.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# -- the catalog sites over real sockets -----------------------------------------------------------


def test_best_site_serves_every_control_over_trusted_https(best_site: RunningSite, pki: Pki) -> None:
    response = _get(best_site, pki)

    assert response.status_code == 200
    assert response.headers["strict-transport-security"] == "max-age=63072000; includeSubDomains; preload"
    assert response.headers["content-security-policy"] == catalog.BEST_CSP
    assert response.headers["server"] == "nginx"
    assert response.headers.get_list("set-cookie") == [catalog.BEST_COOKIE]
    assert "access-control-allow-origin" not in response.headers
    assert f'integrity="{catalog.CDN_SCRIPT_INTEGRITY}" crossorigin="anonymous"' in response.text
    assert best_site.requests[-1].sni == "best.test"
    assert best_site.url == "https://best.test/"
    assert best_site.http_url == "http://best.test/"


def test_best_site_redirects_http_to_https_on_port_80(best_site: RunningSite) -> None:
    response = _get_http(best_site, "/?a=1")

    assert response.status_code == 301
    assert response.headers["location"] == "https://best.test/?a=1"


def test_best_site_has_a_valid_security_txt(best_site: RunningSite, pki: Pki) -> None:
    response = _get(best_site, pki, "/.well-known/security.txt")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    fields = dict(line.split(": ", 1) for line in response.text.splitlines())
    assert fields["Contact"] == "mailto:security@best.test"
    assert fields["Canonical"] == "https://best.test/.well-known/security.txt"
    assert fields["Expires"].endswith("Z")


def test_best_site_publishes_its_dns_records(best_site: RunningSite, dns_server: AuthDnsServer) -> None:
    resolver = dns_server.resolver()

    caa = {r.to_text() for r in resolver.resolve("best.test", "CAA")}
    dmarc = resolver.resolve("_dmarc.best.test", "TXT")

    assert '0 issue "letsencrypt.org"' in caa
    assert b"".join(dmarc[0].strings).startswith(b"v=DMARC1; p=reject")


def test_worst_site_does_everything_wrong(worst_site: RunningSite, pki: Pki) -> None:
    response = _get(worst_site, pki, Origin="https://attacker.test")

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://attacker.test"
    assert response.headers["access-control-allow-credentials"] == "true"
    assert response.headers.get_list("set-cookie") == ["sessionid=xyz; Path=/", "csrftoken=abc"]
    assert response.headers["x-powered-by"] == "PHP/7.4.3"
    assert "strict-transport-security" not in response.headers
    assert '<base href="https://evil.test/">' in response.text
    assert _get(worst_site, pki, "/.well-known/security.txt").status_code == 404


def test_worst_site_serves_plain_http_without_redirect(worst_site: RunningSite) -> None:
    response = _get_http(worst_site)

    assert response.status_code == 200
    assert "No practices" in response.text


async def test_sites_work_from_async_tests(best_site: RunningSite, pki: Pki) -> None:
    async with httpx.AsyncClient(verify=_trusting(pki), trust_env=False) as client:
        response = await client.get(
            f"https://{best_site.ip}/", headers={"Host": "best.test"}, extensions={"sni_hostname": "best.test"}
        )

    assert response.status_code == 200


# -- settings for the scanner -------------------------------------------------------------------


def test_scan_settings_point_at_the_fixtures(scan_settings: Settings, scan_env: dict[str, str], pki: Pki) -> None:
    from_env = Settings.from_env(scan_env)

    assert scan_settings.allow_private_targets
    assert scan_settings.ca_bundle == pki.ca_bundle_path
    assert from_env.dns_servers == scan_settings.dns_servers
    assert from_env.ca_bundle == scan_settings.ca_bundle
    assert from_env.allow_private_targets
    assert isinstance(scan_settings.dns_servers[0], DnsServer)


def test_ca_bundle_holds_only_the_root(pki: Pki) -> None:
    certificates = x509.load_pem_x509_certificates(pki.ca_bundle_path.read_bytes())

    assert certificates == [pki.root_cert]


# -- certificates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("expired", "certificate has expired"),
        ("not_yet_valid", "certificate is not yet valid"),
        ("wrong_host", "Hostname mismatch"),
        ("self_signed", "self-signed certificate"),
        ("missing_intermediate", "unable to get local issuer certificate"),
        ("rsa1024", "EE certificate key too weak"),
        ("sha1", "CA signature digest algorithm too weak"),
    ],
)
def test_bad_certificates_fail_verification_for_the_expected_reason(
    site_factory: SiteFactory, pki: Pki, kind: str, reason: str
) -> None:
    site = site_factory(Site(names=(site_factory.unique_host(kind.replace("_", "-")),), tls=TlsConfig(cert=kind)))

    if kind in ("expired", "not_yet_valid"):  # at the suite's clock; the chain and name verify
        with _handshake(site, _trusting(pki)) as tls:
            leaf = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        assert _valid_at_test_now(leaf) == reason
        return
    with pytest.raises(ssl.SSLCertVerificationError) as failure:
        _handshake(site, _trusting(pki)).close()

    assert reason in failure.value.verify_message


@pytest.mark.parametrize(
    ("kind", "key_type", "key_size"),
    [
        ("valid", ec.EllipticCurvePublicKey, 256),
        ("ec256", ec.EllipticCurvePublicKey, 256),
        ("rsa2048", rsa.RSAPublicKey, 2048),
        ("expiring_soon", ec.EllipticCurvePublicKey, 256),
    ],
)
def test_good_certificates_verify_and_have_the_expected_key(
    site_factory: SiteFactory, pki: Pki, kind: str, key_type: type, key_size: int
) -> None:
    site = site_factory(Site(names=(site_factory.unique_host(kind.replace("_", "-")),), tls=TlsConfig(cert=kind)))

    with _handshake(site, _trusting(pki)) as tls:
        leaf = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))

    assert _valid_at_test_now(leaf) is None
    assert isinstance(leaf.public_key(), key_type)
    assert leaf.public_key().key_size == key_size


def test_weak_certificates_are_really_served_and_chain_to_the_root(site_factory: SiteFactory, pki: Pki) -> None:
    # At security level 0 both verify, so the SHA-1 signature made by hand is a real one.
    lenient = _trusting(pki)
    lenient.set_ciphers("DEFAULT:@SECLEVEL=0")
    for kind in ("sha1", "rsa1024"):
        site = site_factory(Site(names=(site_factory.unique_host(kind),), tls=TlsConfig(cert=kind)))
        with _handshake(site, lenient) as tls:
            leaf = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        if kind == "sha1":
            assert leaf.signature_hash_algorithm is not None
            assert leaf.signature_hash_algorithm.name == "sha1"
        else:
            assert leaf.public_key().key_size == 1024


def test_valid_chain_sends_the_intermediate_and_missing_intermediate_does_not(pki: Pki) -> None:
    valid = pki.issue("valid", ["chain.test"])
    missing = pki.issue("missing_intermediate", ["chain.test"])
    wrong = pki.issue("wrong_host", ["chain.test"])

    assert valid.chain == (valid.certificate, pki.intermediate_cert)
    assert missing.chain == (missing.certificate,)
    assert wrong.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    ) == [WRONG_HOST_NAME]
    assert pki.issue("valid", ["chain.test"]) is valid  # cached


# -- TLS versions -------------------------------------------------------------------------------


def test_tls12_only_server_refuses_a_tls13_only_client(site_factory: SiteFactory) -> None:
    site = site_factory(
        Site(names=(site_factory.unique_host("tls12"),), tls=TlsConfig(maximum_version=ssl.TLSVersion.TLSv1_2))
    )
    tls13_only = _permissive()
    tls13_only.minimum_version = ssl.TLSVersion.TLSv1_3

    with pytest.raises(ssl.SSLError):
        _handshake(site, tls13_only).close()
    with _handshake(site, _permissive()) as tls:
        assert tls.version() == "TLSv1.2"


def test_tls10_only_server_speaks_tls10(site_factory: SiteFactory) -> None:
    site = site_factory(
        Site(names=(site_factory.unique_host("tls10"),), tls=TlsConfig(maximum_version=ssl.TLSVersion.TLSv1))
    )
    old_client = _permissive()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old_client.minimum_version = ssl.TLSVersion.TLSv1

    with _handshake(site, old_client) as tls:
        assert tls.version() == "TLSv1"


# -- behaviours ---------------------------------------------------------------------------------


def test_exact_header_bytes_duplicates_and_malformed_lines_reach_the_wire(site_factory: SiteFactory) -> None:
    site = site_factory(
        Site(
            names=(site_factory.unique_host("raw"),),
            tls=None,
            http={
                "/": Response(200, [("X-Dup", "1"), ("x-dup", "2"), b"Broken header without colon"], "hi"),
                "/raw": Response(raw=b"HTTP/1.0 200 OK\r\nX-Only: this\r\n\r\nbody"),
            },
        )
    )

    reply = raw_request((site.ip, 80), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    raw = raw_request((site.ip, 80), b"GET /raw HTTP/1.1\r\nHost: x\r\n\r\n")

    assert reply == (
        b"HTTP/1.1 200 OK\r\nX-Dup: 1\r\nx-dup: 2\r\nBroken header without colon\r\n"
        b"Content-Length: 2\r\nConnection: close\r\n\r\nhi"
    )
    assert raw == b"HTTP/1.0 200 OK\r\nX-Only: this\r\n\r\nbody"


def test_absent_listeners_refuse_connections(site_factory: SiteFactory) -> None:
    site = site_factory(Site(names=(site_factory.unique_host("nohttp"),)))

    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((site.ip, 80), timeout=2).close()
    site.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((site.ip, 443), timeout=2).close()


def test_a_site_can_use_any_port_and_a_dynamic_handler(site_factory: SiteFactory, pki: Pki) -> None:
    async def echo(request: Request) -> Response:
        return Response(200, [("X-Echo", request.header("x-ping") or "")], request.path)

    site = site_factory(Site(names=(site_factory.unique_host("port"),), https_port=0, routes={"/e": echo}))

    response = _get_with_port(site, pki, "/e", x_ping="pong")

    assert site.https_port not in (None, 443)
    assert site.url == f"https://{site.host}:{site.https_port}/"
    assert (response.status_code, response.headers["x-echo"], response.text) == (200, "pong", "/e")


def test_a_failing_handler_answers_500_and_is_recorded(site_factory: SiteFactory) -> None:
    def broken(request: Request) -> Response:
        raise KeyError("oops")

    site = site_factory(Site(names=(site_factory.unique_host("broken"),), tls=None, http={"/": broken}))

    reply = raw_request((site.ip, 80), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

    assert reply.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert [type(e) for e in site.errors] == [KeyError]


def _get_with_port(site: RunningSite, pki: Pki, path: str, **headers: str) -> httpx.Response:
    with httpx.Client(verify=_trusting(pki), trust_env=False) as client:
        return client.get(
            f"https://{site.ip}:{site.https_port}{path}",
            headers={"Host": site.host, **{k.replace("_", "-"): v for k, v in headers.items()}},
            extensions={"sni_hostname": site.host},
        )


def test_drip_sends_headers_then_a_byte_at_a_time_until_the_client_leaves(site_factory: SiteFactory) -> None:
    assert Drip().interval == 1.0  # the default is one byte per second
    site = site_factory(
        Site(names=(site_factory.unique_host("drip"),), tls=None, http={"/": Drip(interval=0.05, chunk=b"x")})
    )

    with socket.create_connection((site.ip, 80), timeout=3) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while received.count(b"x") < 3:
            received += sock.recv(1024)

    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length" not in received
    assert _wait_until(lambda: site.open_connections == 0)


def test_huge_claims_five_gigabytes_and_stops_when_the_client_leaves(site_factory: SiteFactory) -> None:
    site = site_factory(Site(names=(site_factory.unique_host("huge"),), tls=None, http={"/": Huge()}))

    with socket.create_connection((site.ip, 80), timeout=3) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while len(received) < 1024 * 1024:
            received += sock.recv(65536)

    assert b"Content-Length: 5368709120\r\n" in received
    assert _wait_until(lambda: site.open_connections == 0)
    assert raw_request((site.ip, 80), b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n").endswith(b"\r\n\r\n")


def test_garbage_and_stall(site_factory: SiteFactory) -> None:
    site = site_factory(
        Site(names=(site_factory.unique_host("junk"),), tls=None, http={"/junk": Garbage(), "/stall": Stall()})
    )

    junk = raw_request((site.ip, 80), b"GET /junk HTTP/1.1\r\nHost: x\r\n\r\n")
    with socket.create_connection((site.ip, 80), timeout=0.3) as sock:
        sock.sendall(b"GET /stall HTTP/1.1\r\nHost: x\r\n\r\n")
        with pytest.raises(TimeoutError):
            sock.recv(1)

    assert len(junk) > 1000
    assert not junk.startswith(b"HTTP/")
    assert _wait_until(lambda: site.open_connections == 0)


def test_a_second_site_with_a_taken_name_is_refused(site_factory: SiteFactory, best_site: RunningSite) -> None:
    with pytest.raises(ValueError, match="already served"):
        site_factory(Site(names=("best.test",)))


# -- DNS ----------------------------------------------------------------------------------------


def test_dns_answers_a_nxdomain_nodata_and_cname(dns_server: AuthDnsServer, best_site: RunningSite) -> None:
    dns_server.set("www.dnstest.test", "CNAME", "dnstest.test")
    dns_server.set("dnstest.test", "A", "127.0.0.9")
    resolver = dns_server.resolver()

    a = resolver.resolve("best.test", "A")
    cname = resolver.resolve("www.dnstest.test", "A")
    with pytest.raises(dns.resolver.NXDOMAIN):
        resolver.resolve("missing.best.test", "A")
    with pytest.raises(dns.resolver.NoAnswer) as nodata:
        resolver.resolve("best.test", "SRV")  # best.test has A and AAAA (catalog.best_dns_records)

    assert [r.address for r in a] == [best_site.ip]
    assert [r.address for r in cname] == ["127.0.0.9"]
    assert [rrset.rdtype for rrset in cname.response.answer] == [dns.rdatatype.CNAME, dns.rdatatype.A]
    negative = nodata.value.response()
    assert negative.rcode() == dns.rcode.NOERROR
    assert negative.authority[0].rdtype == dns.rdatatype.SOA
    assert negative.flags & dns.flags.AA


def test_dns_negative_answers_carry_the_soa_and_tcp_works(dns_server: AuthDnsServer, best_site: RunningSite) -> None:
    query = dns.message.make_query("nope.best.test", "A")

    udp = dns.query.udp(query, dns_server.ip, port=dns_server.port, timeout=2)
    tcp = dns.query.tcp(query, dns_server.ip, port=dns_server.port, timeout=2)
    refused = dns.query.udp(dns.message.make_query("example.com", "A"), dns_server.ip, port=dns_server.port, timeout=2)

    assert udp.rcode() == tcp.rcode() == dns.rcode.NXDOMAIN
    assert udp.authority[0].name.to_text() == "best.test."
    assert refused.rcode() == dns.rcode.REFUSED
    assert any(q.transport == "tcp" for q in dns_server.queries_for("nope.best.test"))


def test_dns_cname_into_nothing_is_nxdomain_and_empty_non_terminals_exist(dns_server: AuthDnsServer) -> None:
    dns_server.set("dangling.dnstest2.test", "CNAME", "gone.dnstest2.test")
    dns_server.set("a.b.dnstest2.test", "A", "127.0.0.10")
    query = dns.message.make_query

    dangling = dns.query.udp(query("dangling.dnstest2.test", "A"), dns_server.ip, port=dns_server.port, timeout=2)
    ent = dns.query.udp(query("b.dnstest2.test", "A"), dns_server.ip, port=dns_server.port, timeout=2)

    assert dangling.rcode() == dns.rcode.NXDOMAIN
    assert dangling.answer[0].rdtype == dns.rdatatype.CNAME
    assert (ent.rcode(), ent.answer) == (dns.rcode.NOERROR, [])


def test_dns_mx_txt_caa_ns_soa_records(dns_server: AuthDnsServer) -> None:
    dns_server.add("records.test", "MX", "10 mail.records.test")
    dns_server.add("records.test", "TXT", '"v=spf1 -all"')
    dns_server.add("records.test", "CAA", '0 issue "letsencrypt.org"')
    resolver = dns_server.resolver()

    assert resolver.resolve("records.test", "MX")[0].exchange.to_text() == "mail.records.test."
    assert resolver.resolve("records.test", "TXT")[0].strings == (b"v=spf1 -all",)
    assert resolver.resolve("records.test", "CAA")[0].value == b"letsencrypt.org"
    assert resolver.resolve("records.test", "NS")[0].target.to_text() == "ns1.records.test."
    assert resolver.resolve("records.test", "SOA")[0].mname.to_text() == "ns1.records.test."
    assert resolver.resolve("test", "NS")[0].target.to_text() == "ns1.test."


def test_dns_rebinding_alternates_and_private_names(dns_server: AuthDnsServer) -> None:
    resolver = dns_server.resolver()
    dns_server.reset_rebinding(catalog.REBIND_HOST)

    answers = [resolver.resolve(catalog.REBIND_HOST, "A")[0].address for _ in range(3)]

    assert answers == [catalog.REBIND_PUBLIC_IP, "127.0.0.1", catalog.REBIND_PUBLIC_IP]
    assert resolver.resolve(catalog.PRIVATE_HOST, "A")[0].address == "10.0.0.1"
    with pytest.raises(dns.resolver.NoAnswer):
        resolver.resolve(catalog.REBIND_HOST, "AAAA")


def test_drip_can_stall_inside_the_headers_and_huge_can_be_chunked(site_factory: SiteFactory) -> None:
    site = site_factory(
        Site(
            names=(site_factory.unique_host("slowhead"),),
            tls=None,
            http={"/head": Drip(interval=0.05, phase="headers"), "/chunked": Huge(size=10, chunked=True)},
        )
    )

    with socket.create_connection((site.ip, 80), timeout=3) as sock:
        sock.sendall(b"GET /head HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while b"X-Drip: .." not in received:
            received += sock.recv(1024)
    chunked = raw_request((site.ip, 80), b"GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n")

    assert received.startswith(b"HTTP/1.1 200 OK\r\nX-Drip: ..")
    assert b"\r\n\r\n" not in received
    assert chunked.endswith(b"\r\n\r\na\r\nAAAAAAAAAA\r\n0\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in chunked


def test_zones_can_be_signed_in_place_and_signatures_are_served(dns_server: AuthDnsServer) -> None:
    # The extension point for DNSSEC tests: sign a zone with dnspython, the server hands out RRSIGs.
    import dns.dnssec

    dns_server.set("signed-selftest.test", "A", "127.0.0.11")
    zone = dns_server.zone("signed-selftest.test")
    key = ec.generate_private_key(ec.SECP256R1())
    dnskey = dns.dnssec.make_dnskey(key.public_key(), dns.dnssec.Algorithm.ECDSAP256SHA256, flags=257)
    with zone.writer() as txn:
        dns.dnssec.sign_zone(zone, txn=txn, keys=[(key, dnskey)], add_dnskey=True, dnskey_ttl=300, lifetime=3600)

    query = dns.message.make_query("signed-selftest.test", "A", want_dnssec=True)
    response = dns.query.udp(query, dns_server.ip, port=dns_server.port, timeout=2)

    assert [rrset.rdtype for rrset in response.answer] == [dns.rdatatype.A, dns.rdatatype.RRSIG]
    dns.dnssec.validate(response.answer[0], response.answer[1], {zone.origin: zone.get_rdataset(zone.origin, "DNSKEY")})


def test_no_fixture_server_hit_an_internal_error(dns_server: AuthDnsServer) -> None:
    assert dns_server.errors == []
