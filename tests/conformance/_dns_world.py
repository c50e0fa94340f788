"""What the DNS-record conformance suites share (RFC 7208, OpenDMARC, Boulder's CAA, mox): the settings of a scan
whose resolver asks one fixture DNS server, a TXT record in presentation form, and what the dns check said."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dns.rdataclass
import dns.rdatatype
from dns.rdtypes.ANY.TXT import TXT

from tests.clock import TEST_NOW
from tests.fixtures.dns_server import AuthDnsServer
from websec_app.settings import DnsServer, Settings

#: A lookup's whole time: every answer comes in milliseconds from loopback, so one that does not (a query the
#: server drops on purpose, or a failure of the suite) is waited for this long. 1 s was too short on two loaded
#: cores: in `make test`'s two workers every lookup of one of mox's cases once missed it (its server, a thread of
#: the test's process, starved while 16 cases were fetched at once); the dropped queries of RFC 7208's suite
#: cost ~4 s more at 3.
DNS_SECONDS = 3.0


def settings_for(server: AuthDnsServer, *, ca_bundle: Path | None = None) -> Settings:
    """A scan's settings at the test clock, its resolver asking `server` alone (private targets allowed: loopback),
    trusting `ca_bundle` as well when a suite serves files over HTTPS."""
    settings = Settings(
        allow_private_targets=True,
        dns_servers=(DnsServer(server.ip, server.port),),
        nameserver_port=server.port,
        **({"ca_bundle": ca_bundle} if ca_bundle is not None else {}),
    )
    limits = dataclasses.replace(settings.limits, dns_seconds=DNS_SECONDS)
    return dataclasses.replace(settings, clock_start=TEST_NOW, limits=limits)


def txt_presentation(*strings: str) -> str:
    """One TXT record of the character-strings given, in presentation form (quotes and backslashes escaped by
    dnspython). Readers concatenate the strings (RFC 7208 3.3, RFC 8461 3.1, RFC 8460 3)."""
    return TXT(dns.rdataclass.IN, dns.rdatatype.TXT, [s.encode() for s in strings]).to_text()


@dataclass(frozen=True)
class Ours:
    """What the dns check says of a case's domain: the outcomes of the protocol under test, and its details."""

    outcomes: tuple[str, ...]
    details: dict[str, Any] = field(default_factory=dict)
