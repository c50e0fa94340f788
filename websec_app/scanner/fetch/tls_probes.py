"""Extra handshakes that find what a server accepts, not just what it prefers.

One handshake per protocol version (minimum = maximum = that version) and one per weak
cipher family (TLS 1.0-1.2 offering only that family, data/weak_ciphers.json). A probe the
local OpenSSL cannot even offer is recorded as "not testable" with the reason, and no
packet is sent for it: absence of evidence is never reported as a pass.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache

from OpenSSL import SSL

from ..data import CipherFamily, weak_cipher_families
from ..snapshot import TlsProbe
from ._tls_client import ALL_CIPHERS, PROTOCOL_VERSIONS, HandshakeRejected, handshake, make_context, offer_problem

#: Protocol versions probed, newest first (RFC 8996 deprecates TLS 1.0 and 1.1; RFC 7568 SSL 3.0).
PROBED_PROTOCOLS = ("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3")


@lru_cache(maxsize=32)
def _context(minimum: int, maximum: int, ciphers: str) -> SSL.Context:
    return make_context(minimum=minimum, maximum=maximum, ciphers=ciphers)


async def _probe(
    name: str,
    minimum: int,
    maximum: int,
    ciphers: str,
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
) -> TlsProbe:
    problem = offer_problem(minimum, maximum, ciphers)
    if problem is not None:
        return TlsProbe(name, "not_testable", detail=problem)
    address, port, host = target
    async with limit:
        try:
            result = await handshake(address, port, host, _context(minimum, maximum, ciphers), timeout)
        except HandshakeRejected as exc:
            return TlsProbe(name, "rejected", detail=str(exc))
        except TimeoutError:
            return TlsProbe(name, "error", detail=f"no answer within {timeout:.0f} seconds")
        except OSError as exc:
            return TlsProbe(name, "error", detail=f"could not connect: {exc.strerror or exc}")
    return TlsProbe(name, "accepted", protocol=result.protocol, cipher=result.cipher)


async def probe_protocols(
    target: tuple[str, int, str], timeout: float, limit: asyncio.Semaphore
) -> tuple[TlsProbe, ...]:
    """One probe per version in PROBED_PROTOCOLS, in that order."""
    probes = []
    for name in PROBED_PROTOCOLS:
        version = PROTOCOL_VERSIONS[name]
        ciphers = ALL_CIPHERS  # TLS 1.3 suites are configured apart and always offered with 1.3
        probes.append(_probe(name, version, version, ciphers, target, timeout, limit))
    return tuple(await asyncio.gather(*probes))


async def probe_cipher_families(
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    families: tuple[CipherFamily, ...] | None = None,
) -> tuple[TlsProbe, ...]:
    """One probe per weak family: TLS 1.0 to 1.2 (these suites do not exist in TLS 1.3)."""
    chosen = weak_cipher_families() if families is None else families
    probes = [
        _probe(family.id, SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, family.openssl, target, timeout, limit)
        for family in chosen
    ]
    return tuple(await asyncio.gather(*probes))
