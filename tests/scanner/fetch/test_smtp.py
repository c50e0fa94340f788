"""fetch/smtp.py against a real SMTP server (aiosmtpd) and scripted ones: the MX host's STARTTLS and certificate read
as a sender meets them, and a server that misbehaves (silence, endless lines and replies, refusals, garbage after
STARTTLS) ends the dialogue within its bounds, with a reason."""

from __future__ import annotations

import dataclasses

import pytest

from tests.fixtures import mail_servers
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.mail_servers import mail_address, scripted_server, smtp_server
from tests.fixtures.pki import Pki
from tests.fixtures.ports import free_port
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.fetch.smtp import MAX_REPLY_LINE, MAX_REPLY_LINES, ehlo_name, fetch_mail_servers
from websec_app.settings import ScanLimits, Settings

_counter = 0


def _mx(dns_server: AuthDnsServer, address: str) -> str:
    """A fresh MX host name at `address`."""
    global _counter
    _counter += 1
    name = f"mx{_counter}.smtp-fetch.test"
    dns_server.add(name, "A", address)
    return name


def _settings(scan_settings: Settings, port: int, *, seconds: float = 5.0) -> Settings:
    limits = dataclasses.replace(ScanLimits(), connect_seconds=seconds / 2, read_seconds=seconds / 2)
    return dataclasses.replace(scan_settings, smtp_port=port, limits=limits)


async def _asked(names: list[str], settings: Settings):
    return await fetch_mail_servers(names, Pinner(Resolver(settings), settings), settings)


async def test_starttls_and_the_certificate_after_it_are_read_from_a_real_smtp_server(
    pki: Pki, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    port, address = free_port(), mail_address()
    name = _mx(dns_server, address)
    with smtp_server(address, port, name, pki.issue("valid", (name,))):
        [server] = await _asked([name], _settings(scan_settings, port))
    assert server.failure is None and server.starttls is True
    assert server.greeting is not None and server.greeting.startswith(f"220 {name} ")
    tls = server.tls
    assert tls is not None and tls.failure is None and (tls.host, tls.port, tls.address) == (name, port, address)
    assert tls.protocol == "TLSv1.3" and tls.trusted and tls.hostname_matches
    assert tls.chain[0].san_dns == (name,)


async def test_a_server_without_starttls_says_so_and_is_left_with_quit(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    port, address = free_port(), mail_address()
    name = _mx(dns_server, address)
    with smtp_server(address, port, name, None):
        [server] = await _asked([name], _settings(scan_settings, port))
    assert server.starttls is False and server.tls is None
    assert (
        server.failure is not None
        and server.failure.message == "the server does not offer STARTTLS in its answer to EHLO"
    )


async def test_each_mx_host_is_asked_at_once_and_reported_in_the_order_given(
    pki: Pki, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    port, first, second = free_port(), mail_address(), mail_address()
    names = [_mx(dns_server, first), _mx(dns_server, second), _mx(dns_server, mail_address())]  # the third: nothing
    with smtp_server(first, port, names[0], pki.issue("valid", (names[0],))), smtp_server(second, port, names[1], None):
        servers = await _asked(names, _settings(scan_settings, port))
    assert [s.host for s in servers] == names
    assert [s.starttls for s in servers] == [True, False, None]
    assert servers[2].failure is not None and servers[2].failure.message == f"connection refused on port {port}"


@pytest.mark.parametrize(
    ("script", "kind", "message"),
    [
        (
            mail_servers.offering_starttls(mail_servers.refusing_starttls),
            "protocol",
            "the server answered STARTTLS with 454 4.7.0 TLS not available due to local problem",
        ),
        (mail_servers.greeting_554, "protocol", "the server greeted with 554 5.7.1 scanners not welcome, not 220"),
        (mail_servers.endless_line, "protocol", f"the server sent a reply line longer than {MAX_REPLY_LINE} bytes"),
        (mail_servers.endless_reply, "protocol", f"the server's reply ran past {MAX_REPLY_LINES} lines"),
        (mail_servers.not_smtp, "protocol", "the server answered what is no SMTP reply ('HTTP/1.1 400 Bad Request')"),
        (mail_servers.silent, "timeout", "the server stopped answering, waiting for the server's greeting"),
    ],
    ids=["starttls-refused", "greeting-554", "endless-line", "endless-reply", "not-smtp", "silent"],
)
async def test_a_server_that_misbehaves_ends_the_dialogue_with_a_reason(
    script, kind: str, message: str, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    port, address = free_port(), mail_address()
    name = _mx(dns_server, address)
    server = await scripted_server(address, port, script)
    try:
        [mail] = await _asked([name], _settings(scan_settings, port, seconds=2.0))
    finally:
        server.close()
    assert mail.tls is None and mail.failure is not None
    assert (mail.failure.kind, mail.failure.message) == (kind, message)


async def test_garbage_after_starttls_is_the_handshakes_failure(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    port, address = free_port(), mail_address()
    name = _mx(dns_server, address)
    server = await scripted_server(address, port, mail_servers.offering_starttls(mail_servers.ready_then_garbage))
    try:
        [mail] = await _asked([name], _settings(scan_settings, port))
    finally:
        server.close()
    assert mail.failure is None and mail.starttls is True
    assert mail.tls is not None and mail.tls.failure is not None
    assert mail.tls.failure.message.startswith("TLS handshake failed")


async def test_an_mx_host_at_a_private_address_is_refused_by_the_guard(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    name = _mx(dns_server, "10.1.2.3")
    guarded = dataclasses.replace(_settings(scan_settings, 2525), allow_private_targets=False)
    [server] = await _asked([name], guarded)
    assert server.failure is not None and server.failure.kind == "unreachable"
    assert "Only public addresses can be scanned" in server.failure.message
    assert server.greeting is None and server.starttls is None


async def test_port_0_asks_no_mail_server(scan_settings: Settings) -> None:
    assert await _asked(["mx.example.com"], _settings(scan_settings, 0)) == ()


def test_the_ehlo_name_is_the_services_own_host_or_plainly_no_ones() -> None:
    assert ehlo_name(Settings(base_url="https://websec.example/")) == "websec.example"
    assert ehlo_name(Settings(base_url="http://localhost:3000")) == "scanner.invalid"
    assert ehlo_name(Settings(base_url="http://127.0.0.1:3000")) == "scanner.invalid"


def test_the_smtp_port_comes_from_the_environment() -> None:
    from websec_app.settings import SettingsError

    assert Settings.from_env({}).smtp_port == 25
    assert Settings.from_env({"WEBSEC_SMTP_PORT": "0"}).smtp_port == 0
    assert Settings.from_env({"WEBSEC_SMTP_PORT": "2525"}).smtp_port == 2525
    for wrong in ("70000", "-1", "smtp"):
        with pytest.raises(SettingsError, match="WEBSEC_SMTP_PORT"):
            Settings.from_env({"WEBSEC_SMTP_PORT": wrong})
