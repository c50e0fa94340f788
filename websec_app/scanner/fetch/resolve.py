"""Name resolution through dnspython, and pinning each host to one guarded address.

Every name the scanner touches is resolved here (never by the OS resolver), through
`WEBSEC_DNS_SERVERS` when set. A host is resolved once per scan; the connection layer
then connects only to the address pinned for it, so a second, different DNS answer
(DNS rebinding) can never redirect a connection to an internal address.

With WEBSEC_ALLOW_PRIVATE_TARGETS (tests, local development) names resolve as the system would:
`localhost` is loopback (RFC 6761 6.3) and the hosts file answers before DNS ("files dns", the
usual nsswitch.conf order). dnspython (2.9) has no hosts-file support, hence `parse_hosts`. With
the setting off nothing here reads the hosts file, and the guard refuses loopback names.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

import dns.exception
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from ...settings import Settings
from ..errors import TargetRefused, TargetUnreachable
from ..snapshot import DnsAnswer, PassedOver
from ..target import ip_literal
from . import _dns_udp
from .guard import ensure_allowed, is_localhost_name

if TYPE_CHECKING:
    import dns.asyncresolver

T = TypeVar("T")


class _Answer(Protocol):
    """What a query's answer is read for: dnspython's resolver Answer, or _dns_udp's."""

    @property
    def response(self) -> dns.message.Message: ...

    @property
    def rrset(self) -> dns.rrset.RRset | None: ...


SYSTEM_RESOLV_CONF = Path("/etc/resolv.conf")


def first_nameserver(resolv_conf: str) -> str | None:
    """The first `nameserver` address of a resolv.conf(5) text, as dnspython would read it first."""
    for line in resolv_conf.splitlines():
        fields = line.split("#", 1)[0].split(";", 1)[0].split()
        if len(fields) >= 2 and fields[0] == "nameserver" and ip_literal(fields[1]) is not None:
            return fields[1]
    return None


def _system_nameserver() -> str | None:
    if sys.platform == "win32":  # pragma: no cover - the registry, which only dnspython reads
        return None
    try:
        return first_nameserver(SYSTEM_RESOLV_CONF.read_text("utf-8", errors="replace"))
    except OSError:
        return None


def _try_seconds(settings: Settings) -> float:
    """How long one server is given to answer one try (the whole query has `limits.dns_seconds`)."""
    return min(2.0, settings.limits.dns_seconds)


def _make_resolver(settings: Settings) -> dns.asyncresolver.Resolver:
    # Imported here: dnspython's resolver (with its transports, DDR, TSIG and zone transfer modules) is
    # ~40 modules a fresh process would load before its first scan, for the uncommon replies only.
    import dns.asyncresolver
    import dns.flags
    import dns.nameserver
    import dns.resolver

    if settings.dns_servers:
        resolver = dns.asyncresolver.Resolver(configure=False)
        resolver.nameservers = [dns.nameserver.Do53Nameserver(s.host, s.port) for s in settings.dns_servers]
    else:
        try:
            resolver = dns.asyncresolver.Resolver(configure=True)
        except dns.resolver.NoResolverConfiguration:
            raise TargetUnreachable("No DNS resolver is configured on this machine (set WEBSEC_DNS_SERVERS)") from None
    resolver.lifetime = settings.limits.dns_seconds
    resolver.timeout = _try_seconds(settings)
    resolver.use_edns(0, dns.flags.DO, 1232)  # ask for DNSSEC records; 1232 avoids fragmentation (DNS flag day 2020)
    # Checking Disabled (RFC 4035 §3.2.2): a validating resolver must still hand us a bogus zone's
    # records, so a broken DNSSEC chain becomes the dns.dnssec_broken finding, not a failed scan.
    resolver.flags = dns.flags.RD | dns.flags.CD
    return resolver


SYSTEM_HOSTS_FILE = Path("/etc/hosts")


def parse_hosts(text: str) -> dict[str, tuple[str, ...]]:
    """A hosts file (hosts(5)) as {lowercase name: addresses in file order}.

    Each line is an address followed by one or more names; `#` starts a comment anywhere.
    Lines whose address does not parse, or carries an IPv6 zone (`fe80::1%eth0`, which names
    an interface and cannot be pinned), are skipped, as are lines without a name.
    """
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2 or "%" in fields[0]:
            continue
        address = ip_literal(fields[0])
        if address is None:
            continue
        for name in fields[1:]:
            found = table.setdefault(name.rstrip(".").lower(), [])
            if str(address) not in found:
                found.append(str(address))
    return {name: tuple(addresses) for name, addresses in table.items()}


def _read_hosts(path: Path) -> dict[str, tuple[str, ...]]:
    try:
        return parse_hosts(path.read_text("utf-8", errors="replace"))
    except OSError:  # no hosts file (a minimal container): only DNS answers
        return {}


class Resolver:
    """One scan's resolver: answers are cached, and concurrent identical queries share one lookup.

    `hosts_file` is read (once, on first use) only when private targets are allowed.
    """

    def __init__(self, settings: Settings, *, hosts_file: Path | None = None) -> None:
        self._settings = settings
        self._resolver: dns.asyncresolver.Resolver | None = None  # dnspython's, made for the first uncommon reply
        # The first server (the settings', else the system's) is asked over UDP through _dns_udp first.
        if settings.dns_servers:
            self._udp_server: tuple[str, int] | None = (settings.dns_servers[0].host, settings.dns_servers[0].port)
        else:
            system = _system_nameserver()
            self._udp_server = (system, 53) if system is not None else None
        self._lifetime = settings.limits.dns_seconds
        self._timeout = _try_seconds(settings)
        if self._udp_server is None:
            self._resolver = _make_resolver(settings)  # no server of our own: dnspython's configuration decides
        self._inflight: dict[tuple[str, str], asyncio.Task[DnsAnswer]] = {}
        self._system_names = settings.allow_private_targets
        self._hosts_file = hosts_file or SYSTEM_HOSTS_FILE
        self._hosts: dict[str, tuple[str, ...]] | None = None

    def _from_system(self, host: str) -> list[str] | None:
        """The addresses the system would give `host` before asking DNS, when private targets are allowed."""
        if not self._system_names:
            return None
        if is_localhost_name(host):
            return ["127.0.0.1", "::1"]  # RFC 6761 6.3: always loopback, whatever the hosts file says
        if self._hosts is None:
            self._hosts = _read_hosts(self._hosts_file)
        found = self._hosts.get(host.rstrip(".").lower())
        return list(found) if found else None

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        """Never raises: failures are recorded in the answer's rcode and error."""
        key = (name.rstrip(".").lower(), rdtype.upper())
        task = self._inflight.get(key)
        if task is None:
            task = self._inflight[key] = asyncio.ensure_future(self._query(*key))
        return await asyncio.shield(task)

    async def _resolve(self, name: str, rdtype: str) -> _Answer | Literal["NXDOMAIN"]:
        """The answer through _dns_udp in the common case, else through dnspython's resolver (TCP after a
        truncated reply, the other servers, retries, its errors), within the same lifetime."""
        started = time.monotonic()
        if self._udp_server is not None:
            answer = await _dns_udp.ask(*self._udp_server, name, rdtype, self._timeout)
            if answer is not None:
                return answer
        if self._resolver is None:
            self._resolver = _make_resolver(self._settings)
        lifetime = max(self._lifetime - (time.monotonic() - started), 0.05)
        return await self._resolver.resolve(
            dns.name.from_text(name), rdtype, raise_on_no_answer=False, search=False, lifetime=lifetime
        )

    async def _query(self, name: str, rdtype: str) -> DnsAnswer:
        try:
            answer = await self._resolve(name, rdtype)
        except dns.exception.DNSException as exc:
            return _failed(name, rdtype, exc)
        if answer == "NXDOMAIN":
            return DnsAnswer(name, rdtype, "NXDOMAIN")
        rcode = dns.rcode.to_text(answer.response.rcode())
        records: tuple[str, ...] = ()
        signatures: tuple[str, ...] = ()
        if answer.rrset is not None:
            records = _in_stable_order(rdtype, [rdata.to_text() for rdata in answer.rrset])
            # The RRSIGs over the answer (we ask with the DO bit), kept so checks can validate DNSSEC themselves.
            rrsigs = answer.response.get_rrset(
                answer.response.answer,
                answer.rrset.name,
                dns.rdataclass.IN,
                dns.rdatatype.RRSIG,
                answer.rrset.rdtype,
            )
            if rrsigs is not None:
                signatures = tuple(rdata.to_text() for rdata in rrsigs)
        return DnsAnswer(name, rdtype, rcode, records, signatures=signatures)

    async def addresses(self, host: str) -> list[str]:
        """A and AAAA addresses of `host` (A first); raises TargetUnreachable when there are none."""
        system = self._from_system(host)
        if system is not None:
            return system
        a, aaaa = await asyncio.gather(self.query(host, "A"), self.query(host, "AAAA"))
        found = [r for r in a.records + aaaa.records if ip_literal(r) is not None]
        if found:
            return found
        if a.rcode == "NXDOMAIN":
            raise TargetUnreachable(f"DNS lookup failed: {host} does not exist (NXDOMAIN)")
        failure = a.error or aaaa.error
        if failure:
            raise TargetUnreachable(f"DNS lookup failed for {host}: {failure}")
        raise TargetUnreachable(f"DNS lookup failed: {host} has no A or AAAA record")


def _in_stable_order(rdtype: str, records: list[str]) -> tuple[str, ...]:
    """An RRset's records in one order whatever order the server sent them in: an RRset is a set (RFC 2181 5)
    and servers rotate or shuffle it on each answer, so two scans of an unchanged zone would list (and a report
    cut to its first hundred show) different records, and pin a different address. Addresses in numeric order,
    other types by their text."""
    if rdtype in ("A", "AAAA"):
        family = socket.AF_INET if rdtype == "A" else socket.AF_INET6
        return tuple(sorted(records, key=lambda address: socket.inet_pton(family, address)))
    return tuple(sorted(records))


def _failed(name: str, rdtype: str, exc: dns.exception.DNSException) -> DnsAnswer:
    """The answer recorded for dnspython's resolver's errors (only its path raises them)."""
    import dns.resolver

    if isinstance(exc, dns.resolver.NXDOMAIN):
        return DnsAnswer(name, rdtype, "NXDOMAIN")
    if isinstance(exc, dns.resolver.LifetimeTimeout):
        return DnsAnswer(name, rdtype, "TIMEOUT", error="no answer before the DNS timeout")
    if isinstance(exc, dns.resolver.NoNameservers):  # its text names our own resolvers' addresses: not for a report
        return DnsAnswer(name, rdtype, "SERVFAIL", error="no DNS server gave a usable answer (SERVFAIL or refused)")
    return DnsAnswer(name, rdtype, "ERROR", error=f"{type(exc).__name__}: {exc}")


#: At most this many of a host's addresses are tried for one port, one after the other (each within the
#: connect timeout): enough for a dead backend or two among a site's addresses, without a storm of connections
#: to a host that answers none.
MAX_ADDRESSES_TRIED = 4


class Pinner:
    """Resolves and guards each host once; the connection layer connects only to pinned addresses.

    Every address of a host passes the guard before any connection. Connections to a host's port go to its
    first address (IPv4 before IPv6, each in numeric order) until one fails to open; they then go to the next,
    as a browser moves on to a name's next address (RFC 8305 5-6), until one opens, and stay on that address
    for the rest of the scan. One exception: a connection that times out at an address that has opened a
    connection on another port stays failed, since the address is up and the port filtered there; trying the
    next address would most likely time out again, each try a connect timeout more."""

    def __init__(self, resolver: Resolver, settings: Settings) -> None:
        self._resolver = resolver
        self._allow_private = settings.allow_private_targets
        self._addresses: dict[str, tuple[str, ...]] = {}  # host -> its guarded addresses, in the order tried
        self._locks: dict[str, asyncio.Lock] = {}
        self._tried: dict[tuple[str, int], int] = {}  # (host, port) -> index of the address connections go to
        self._settled: set[tuple[str, int]] = set()  # (host, port) whose address accepted a connection
        self._up: set[str] = set()  # addresses that accepted a connection
        self.passed_over: list[PassedOver] = []  # each address a port moved on from, in that order

    def address_for(self, host: str, port: int | None = None) -> str | None:
        """The address connections to `host` (on `port`) go to now; None when `host` was not pinned."""
        addresses = self._addresses.get(host.lower())
        return None if addresses is None else self._now(host.lower(), port, addresses)

    def _now(self, host: str, port: int | None, addresses: tuple[str, ...]) -> str:
        return addresses[0] if port is None else addresses[self._tried.get((host, port), 0)]

    async def pin(self, host: str, port: int | None = None) -> str:
        """The guarded address for `host`: its first, or the one connections to `port` go to now. Resolves and
        guards `host` the first time; raises TargetRefused or TargetUnreachable."""
        host = host.lower()
        if host not in self._addresses:
            async with self._locks.setdefault(host, asyncio.Lock()):
                if host not in self._addresses:
                    self._addresses[host] = await self._resolve_and_guard(host)
        return self._now(host, port, self._addresses[host])

    def connected(self, host: str, port: int, address: str) -> None:
        """A connection to `address` for `host`:`port` was made: that port's connections stay on it."""
        key = (host.lower(), port)
        addresses = self._addresses.get(key[0], ())
        self._up.add(address)
        if key not in self._settled and address in addresses:
            self._tried[key] = addresses.index(address)
            self._settled.add(key)

    def failed(self, host: str, port: int, address: str, *, timed_out: bool) -> str | None:
        """The address to connect to after a connection to `address` for `host`:`port` failed to open (refused or
        unreachable, or `timed_out`); None when the failure stands: no address is left to try, that port's address
        opened connections before, or the connection timed out at an address that is up (on another port)."""
        key = (host.lower(), port)
        addresses = self._addresses.get(key[0], ())
        index = self._tried.get(key, 0)
        if not addresses:
            return None
        if addresses[index] != address:  # another connection has moved on already, or settled elsewhere
            return addresses[index]
        if key in self._settled or index + 1 >= min(len(addresses), MAX_ADDRESSES_TRIED):
            return None
        if timed_out and address in self._up:
            return None
        self._tried[key] = index + 1
        self.passed_over.append(PassedOver(key[0], port, address, timed_out, addresses[index + 1]))
        return addresses[index + 1]

    def passed_over_to_an_open_address(self) -> tuple[PassedOver, ...]:
        """Each address a port moved on from (`passed_over`), for the ports that then opened at another address.
        Where every address failed, the host does not serve that port (an HTTPS-only site's port 80, a plain-HTTP
        site's 443): no address of it is down, and the report must not advise taking one out of the DNS."""
        return tuple(passed for passed in self.passed_over if (passed.host, passed.port) in self._settled)

    async def reach(
        self,
        host: str,
        port: int,
        attempt: Callable[[str], Awaitable[T]],
        not_opened: Callable[[Exception], bool | None],
    ) -> T:
        """`attempt(address)` at the address connections to `host`:`port` go to now, and at the next one while an
        attempt fails to open its connection (`not_opened(exc)`: True when it timed out, False when it was refused or
        unreachable, None for any other failure, raised as it is); the address that opened is where the port stays.
        `host` must have been pinned."""
        address = self._now(host.lower(), port, self._addresses[host.lower()])
        while True:
            try:
                result = await attempt(address)
            except Exception as exc:
                timed_out = not_opened(exc)
                following = None if timed_out is None else self.failed(host, port, address, timed_out=timed_out)
                if following is None:
                    raise
                address = following
                continue
            self.connected(host, port, address)
            return result

    async def _resolve_and_guard(self, host: str) -> tuple[str, ...]:
        literal = ip_literal(host)
        if literal is not None:
            ensure_allowed(literal, allow_private=self._allow_private)
            return (str(literal),)
        if is_localhost_name(host) and not self._allow_private:
            raise TargetRefused(f"Refusing to scan: {host} is a loopback name. Only public addresses can be scanned.")
        addresses = await self._resolver.addresses(host)
        # Every address must pass: a name with one public and one private answer is refused,
        # or the attacker would only need the connection to pick the private one.
        for address in addresses:
            ensure_allowed(address, allow_private=self._allow_private, host=host)
        ipv4 = [a for a in addresses if isinstance(ipaddress.ip_address(a), ipaddress.IPv4Address)]
        return tuple(dict.fromkeys([*ipv4, *addresses]))
