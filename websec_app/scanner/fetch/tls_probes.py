"""Extra handshakes that find what a server accepts, not just what it prefers.

One handshake per protocol version (minimum = maximum = that version) and one per weak
cipher family (TLS 1.0-1.2 offering only that family, data/weak_ciphers.json), with pyOpenSSL.

What the local OpenSSL 3 cannot offer at all (SSL 3.0; EXPORT, single-DES, RC4 and 3DES suites)
is probed the way testssl.sh does: one ClientHello offering only that family's IANA code points
(or, for SSL 3.0, version 3.0 with the suites of its era), then the server's first answer is read.
A ServerHello choosing one of the offered suites at an offered version is an acceptance; an
alert or a closed connection a refusal. No handshake is completed and no key is exchanged,
so no cryptography the local library lacks is needed. The ClientHello is built and the
ServerHello read by `_hello_codec.py` (its bytes are tested against tlslite-ng, the library
tlsfuzzer builds its ClientHellos with), over the same pinned asyncio connection and timeout
as every probe.
Considered and not chosen: nassl's legacy OpenSSL 1.0.2 client (blocking C, a thread per
probe, a second OpenSSL in the process, for a handshake whose end we do not need) and a
full tlslite-ng handshake (no EXPORT or DES suites at all).

A probe that cannot be offered either way is recorded as "not testable" with the reason, and no
packet is sent for it: absence of evidence is never reported as a pass.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from functools import lru_cache, partial
from pathlib import Path

import OpenSSL
from OpenSSL import SSL

from .. import data as _data
from ..data import CipherFamily, weak_cipher_families
from ..snapshot import DhGroup, HeartbeatCheck, TlsProbe
from . import _tls_client
from ._hello_codec import LegacyHello
from ._tls_client import (
    ALL_CIPHERS,
    PROTOCOL_VERSIONS,
    HandshakeRejected,
    handshake,
    make_context,
)

#: Protocol versions probed, newest first (RFC 8996 deprecates TLS 1.0 and 1.1; RFC 7568 SSL 3.0).
PROBED_PROTOCOLS = ("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3")


# -- hand-built ClientHellos (what OpenSSL 3 cannot offer), sent by _legacy_hello.py -----------------

# SSL 3.0 era suites besides the weak families' (RFC 3268 AES, RFC 4492 ECDHE): a server that speaks
# SSL 3.0 at all picks one of these or a weak one.
_SSL3_SUITES = (0x002F, 0x0035, 0x0033, 0x0039, 0x0032, 0x0038, 0xC013, 0xC014, 0xC009, 0xC00A, 0x0041, 0x0084)


@lru_cache(maxsize=32)
def _context(minimum: int, maximum: int, ciphers: str) -> SSL.Context:
    return make_context(minimum=minimum, maximum=maximum, ciphers=ciphers)


async def _guarded(
    name: str, timeout: float, limit: asyncio.Semaphore, attempt: Callable[[], Awaitable[TlsProbe]]
) -> TlsProbe:
    """Run one probe's connection within the per-server limit; refusals and failures become its result."""
    async with limit:
        try:
            return await attempt()
        except HandshakeRejected as exc:
            return TlsProbe(name, "rejected", detail=str(exc))
        except TimeoutError:
            return TlsProbe(name, "error", detail=f"no answer within {timeout:.0f} seconds")
        except OSError as exc:
            return TlsProbe(name, "error", detail=f"could not connect: {exc.strerror or exc}")


async def _by_hand(name: str, hello: LegacyHello, target: tuple[str, int, str], timeout: float) -> TlsProbe:
    from ._legacy_hello import hello_probe

    return await hello_probe(name, hello, target, timeout)


async def _probe(
    name: str,
    minimum: int,
    maximum: int,
    ciphers: str,
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    hello: LegacyHello | None = None,
) -> TlsProbe:
    """A full pyOpenSSL handshake; when the local OpenSSL cannot offer it, the hand-built `hello`."""
    problem = _offer_problem(minimum, maximum, ciphers)
    if problem is not None and hello is None:
        return TlsProbe(name, "not_testable", detail=problem)
    if hello is not None and problem is not None:
        return await _guarded(name, timeout, limit, partial(_by_hand, name, hello, target, timeout))
    address, port, host = target

    async def attempt() -> TlsProbe:
        result = await handshake(address, port, host, _context(minimum, maximum, ciphers), timeout, certificates=False)
        return TlsProbe(
            name,
            "accepted",
            protocol=result.protocol,
            cipher=result.cipher,
            secure_renegotiation=result.secure_renegotiation,
        )

    return await _guarded(name, timeout, limit, attempt)


#: The versions a browser-like handshake (TLS 1.0 to 1.3 offered) can end up with on a current server:
#: their probe waits for that handshake, which answers it when it negotiated that very version.
IMPLIED_BY_GRADING = ("TLSv1.3", "TLSv1.2")

#: What the grading handshake negotiated, (protocol, cipher); None when it failed.
Negotiated = tuple[str, str | None] | None


async def _implied_or_probe(
    name: str,
    grading: asyncio.Future[Negotiated],
    timeout: float,
    probe: Callable[[], Awaitable[TlsProbe]],
) -> TlsProbe:
    """`name` accepted when the grading handshake completed at that version (the same evidence as the
    probe's own full handshake: a server negotiates the highest version both sides offer, RFC 8446
    4.2.1, and it did at this one); otherwise, or when that handshake has not answered within the
    probe's own `timeout`, the probe runs."""
    done, _ = await asyncio.wait((grading,), timeout=timeout)
    if done and not grading.cancelled() and grading.exception() is None:
        negotiated = grading.result()
        if negotiated is not None and negotiated[0] == name:
            return TlsProbe(name, "accepted", protocol=name, cipher=negotiated[1])
    return await probe()


#: Deprecated versions (RFC 8996) first offered together, in one handshake: a server refuses a ClientHello
#: offering TLS 1.0 to 1.1 only when it speaks neither (it answers with the highest version both sides
#: have, RFC 5246 E.1), which is what most servers do now.
SHARED_LEGACY = ("TLSv1.1", "TLSv1")


#: The legacy versions' ClientHello versions, for the hand-built fallback below.
_LEGACY_HELLO_VERSIONS = {"TLSv1.1": (3, 2), "TLSv1": (3, 1)}
#: Refusals of the version itself (RFC 5246 7.2.2 protocol_version, RFC 7507 inappropriate_fallback): no suite
#: offered would change the answer.
_VERSION_REFUSALS = ("protocol version", "inappropriate fallback", "wrong version number", "unsupported protocol")


def _refused_for_its_suites(probe: TlsProbe) -> bool:
    """The OpenSSL probe was refused with a handshake alert that is not about the version (handshake_failure,
    insufficient_security): the server may well speak that version, only not with a suite OpenSSL 3 offers."""
    detail = probe.detail or ""
    return probe.result == "rejected" and "alert" in detail and not any(r in detail for r in _VERSION_REFUSALS)


async def _with_legacy_fallback(
    name: str,
    first: Callable[[], Awaitable[TlsProbe]],
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
) -> TlsProbe:
    """TLS 1.0 or 1.1 as OpenSSL probed it; when that was refused for its suites, once more by hand, at that
    version with the legacy suites OpenSSL 3 cannot offer (3DES, RC4, DES, EXPORT): a server that speaks
    TLS 1.0 only with 3DES accepts it. Only such a refusal costs the extra connection (a server that does
    not speak the version answers protocol_version, or closes)."""
    result = await first()
    if not _refused_for_its_suites(result):
        return result
    version = _LEGACY_HELLO_VERSIONS[name]
    hello = LegacyHello(version, version, _legacy_suites())
    fallback = await _guarded(name, timeout, limit, partial(_by_hand, name, hello, target, timeout))
    return fallback if fallback.accepted else result


@lru_cache(maxsize=1)
def _legacy_suites() -> tuple[tuple[int, str], ...]:
    """Every IANA suite of the weak families (those OpenSSL 3 cannot offer), each once."""
    return tuple(dict(suite for family in weak_cipher_families() for suite in family.iana).items())


async def _screened(name: str, screen: asyncio.Future[TlsProbe], probe: Callable[[], Awaitable[TlsProbe]]) -> TlsProbe:
    """`name` refused with the shared hello's refusal; its own probe when that hello got any other answer."""
    shared = await asyncio.shield(screen)
    if shared.result == "rejected":
        return TlsProbe(name, "rejected", detail=shared.detail)
    return await probe()


async def probe_protocols(
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    grading: asyncio.Future[Negotiated] | None = None,
) -> tuple[TlsProbe, ...]:
    """One probe per version in PROBED_PROTOCOLS, in that order. With `grading` (what the grading
    handshake negotiated), the version it got is answered by it, without a handshake of its own; TLS 1.1
    and 1.0 are first offered together (SHARED_LEGACY), and each gets its own probe only when that
    hello is not refused; refused for its suites, each is offered by hand with the legacy suites."""
    legacy = [PROTOCOL_VERSIONS[name] for name in SHARED_LEGACY]
    screen: asyncio.Future[TlsProbe] | None = None
    if all(_offer_problem(version, version, ALL_CIPHERS) is None for version in legacy):
        name = "+".join(SHARED_LEGACY)
        screen = asyncio.ensure_future(_probe(name, min(legacy), max(legacy), ALL_CIPHERS, target, timeout, limit))
    probes: list[Awaitable[TlsProbe]] = []
    for name in PROBED_PROTOCOLS:
        version = PROTOCOL_VERSIONS[name]
        ciphers = ALL_CIPHERS  # TLS 1.3 suites are configured apart and always offered with 1.3
        hello = _ssl3_hello() if name == "SSLv3" else None
        probe = partial(_probe, name, version, version, ciphers, target, timeout, limit, hello)
        if grading is not None and name in IMPLIED_BY_GRADING:
            probes.append(_implied_or_probe(name, grading, timeout, probe))
        elif screen is not None and name in SHARED_LEGACY:
            # Made when they run: a probe cancelled before it starts (the scan moved to the host's next address
            # at once) must not leave a coroutine never awaited
            screened = partial(_screened, name, screen, probe)
            probes.append(_with_legacy_fallback(name, screened, target, timeout, limit))
        elif name in SHARED_LEGACY:
            probes.append(_with_legacy_fallback(name, probe, target, timeout, limit))
        else:
            probes.append(probe())
    try:
        return tuple(await asyncio.gather(*probes))
    finally:
        if screen is not None and not screen.done():
            screen.cancel()
            await asyncio.gather(screen, return_exceptions=True)


@lru_cache(maxsize=1)
def _ssl3_hello() -> LegacyHello:
    """SSL 3.0 offered with every suite of its era, weak families included (RFC 6101 A.6)."""
    weak = [suite for family in weak_cipher_families() for suite in family.iana]
    named = tuple((code, f"0x{code:04X}") for code in _SSL3_SUITES)
    return LegacyHello((3, 0), (3, 0), tuple(dict([*named, *weak]).items()))


@lru_cache(maxsize=32)
def _suite_names(ciphers: str) -> tuple[str, ...]:
    """The TLS 1.0-1.2 suites (OpenSSL names) an OpenSSL cipher string offers with this build."""
    known = _offer_table()[1].get(ciphers)
    return tuple(known) if known is not None else _local_suite_names(ciphers)


def _local_suite_names(ciphers: str) -> tuple[str, ...]:
    context = make_context(minimum=SSL.TLS1_VERSION, maximum=SSL.TLS1_2_VERSION, ciphers=ciphers)
    names = SSL.Connection(context, None).get_cipher_list()
    return tuple(name for name in names if not name.startswith("TLS_"))  # TLS_*: the TLS 1.3 suites


# -- what this OpenSSL can offer, kept across processes ----------------------------------------------

#: (minimum, maximum, cipher string) -> why it cannot be offered (None: it can), and cipher string -> the
#: TLS 1.0-1.2 suite names it offers.
_OfferTable = tuple[dict[tuple[int, int, str], str | None], dict[str, tuple[str, ...]]]


def _offer_problem(minimum: int, maximum: int, ciphers: str) -> str | None:
    """`_tls_client.offer_problem`, answered from the table of the probes a scan makes when it has the question."""
    offers = _offer_table()[0]
    key = (minimum, maximum, ciphers)
    return offers[key] if key in offers else _tls_client.offer_problem(minimum, maximum, ciphers)


@lru_cache(maxsize=1)
def _offer_table() -> _OfferTable:
    """What the local OpenSSL can offer for every probe of a default scan, from the parse cache.

    Deciding it builds an OpenSSL context and a ClientHello per question, ~20 contexts: a tenth of a
    command-line scan's CPU in a fresh process (issue 14). The answers depend only on the OpenSSL build,
    its configuration, pyOpenSSL and the cipher families, so they are kept beside the byte-code like a
    `.pyc` (parsed_cache.py), keyed by those; a context is then made only for a probe that connects."""
    from ..parsed_cache import cached

    sources = [Path(__file__), Path(_tls_client.__file__), Path(_data.__file__).parent / "weak_ciphers.json"]
    config = os.environ.get("OPENSSL_CONF")
    if config and Path(config).is_file():
        sources.append(Path(config))
    library = (SSL.OpenSSL_version(SSL.OPENSSL_VERSION), SSL.OpenSSL_version(SSL.OPENSSL_DIR), OpenSSL.__version__)
    return cached("tls-offers", sources, _build_offer_table, key=(library, config))


def _build_offer_table() -> _OfferTable:
    offers: dict[tuple[int, int, str], str | None] = {}
    suites: dict[str, tuple[str, ...]] = {}

    def ask(minimum: int, maximum: int, ciphers: str) -> str | None:
        offers[minimum, maximum, ciphers] = _tls_client.offer_problem(minimum, maximum, ciphers)
        return offers[minimum, maximum, ciphers]

    for name in PROBED_PROTOCOLS:
        ask(PROTOCOL_VERSIONS[name], PROTOCOL_VERSIONS[name], ALL_CIPHERS)
    legacy = [PROTOCOL_VERSIONS[name] for name in SHARED_LEGACY]
    ask(min(legacy), max(legacy), ALL_CIPHERS)
    by_openssl = []
    for family in weak_cipher_families():
        if ask(SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, family.openssl) is None:
            by_openssl.append(family)
            suites[family.openssl] = _local_suite_names(family.openssl)
    if len(by_openssl) >= 2:  # the screen's own cipher string
        ask(SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, _screen_ciphers(by_openssl, suites.__getitem__))
    return offers, suites


def _family_probe(
    family: CipherFamily, target: tuple[str, int, str], timeout: float, limit: asyncio.Semaphore
) -> Awaitable[TlsProbe]:
    hello = LegacyHello((3, 3), (3, 1), family.iana) if family.iana else None
    return _probe(family.id, SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, family.openssl, target, timeout, limit, hello)


async def _screen(
    families: list[CipherFamily], target: tuple[str, int, str], timeout: float, limit: asyncio.Semaphore
) -> TlsProbe | None:
    """One ClientHello offering every suite of `families`, made the way each family's own probe is
    (OpenSSL's, or by hand), or None when there is nothing to share."""
    if len(families) < 2:
        return None
    name = "+".join(family.id for family in families)
    if all(family.iana and _offer_problem(SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, family.openssl) for family in families):
        suites = tuple(dict(suite for family in families for suite in family.iana).items())
        hello = LegacyHello((3, 3), (3, 1), suites)
        return await _guarded(name, timeout, limit, partial(_by_hand, name, hello, target, timeout))
    return await _probe(name, SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, _screen_ciphers(families), target, timeout, limit)


def _screen_ciphers(families: list[CipherFamily], suite_names: Callable[[str], tuple[str, ...]] = _suite_names) -> str:
    """One OpenSSL cipher string offering every suite of `families` (OpenSSL offers them all)."""
    names = dict.fromkeys(suite for family in families for suite in suite_names(family.openssl))
    return ":".join(names) + ":@SECLEVEL=0"


async def probe_cipher_families(
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    families: tuple[CipherFamily, ...] | None = None,
) -> tuple[TlsProbe, ...]:
    """One probe per weak family: TLS 1.0 to 1.2 (these suites do not exist in TLS 1.3).

    Most servers refuse every weak family, so the families probed the same way (OpenSSL's ClientHello,
    or a hand-built one) are first offered together, in one handshake each: a server that refuses
    that handshake has no suite of any of them it would pick (it chooses from the suites offered, with
    the same extensions), and each family is refused without a handshake of its own. When the server
    accepts, or the screen fails, every family of that group gets its own probe, as without a screen
    (its report names the suite that family gets)."""
    chosen = weak_cipher_families() if families is None else families
    by_openssl = [f for f in chosen if _offer_problem(SSL.TLS1_VERSION, SSL.TLS1_2_VERSION, f.openssl) is None]
    by_hand = [f for f in chosen if f not in by_openssl and f.iana]
    screens = await asyncio.gather(
        _screen(by_openssl, target, timeout, limit), _screen(by_hand, target, timeout, limit)
    )
    refused: dict[str, TlsProbe] = {}
    for group, screen in zip((by_openssl, by_hand), screens, strict=True):
        if screen is not None and screen.result == "rejected":
            refused.update({family.id: TlsProbe(family.id, "rejected", detail=screen.detail) for family in group})
    probes = [
        _answered(refused[family.id]) if family.id in refused else _family_probe(family, target, timeout, limit)
        for family in chosen
    ]
    return tuple(await asyncio.gather(*probes))


async def _answered(probe: TlsProbe) -> TlsProbe:
    return probe


# -- the server's DHE group (Logjam) -----------------------------------------------------------------

#: The ephemeral finite-field DH suites (IANA TLS Cipher Suites registry), AEAD first: every RSA- and
#: DSS-authenticated DHE suite the local OpenSSL knows, and 3DES for servers of its era. No EXPORT suite: those
#: are the export family's finding, and old servers used a separate 512-bit group for them.
DHE_SUITES: tuple[tuple[int, str], ...] = (
    (0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"),
    (0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384"),
    (0xCCAA, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    (0x00A2, "TLS_DHE_DSS_WITH_AES_128_GCM_SHA256"),
    (0x00A3, "TLS_DHE_DSS_WITH_AES_256_GCM_SHA384"),
    (0xC09E, "TLS_DHE_RSA_WITH_AES_128_CCM"),
    (0xC09F, "TLS_DHE_RSA_WITH_AES_256_CCM"),
    (0xC0A2, "TLS_DHE_RSA_WITH_AES_128_CCM_8"),
    (0xC0A3, "TLS_DHE_RSA_WITH_AES_256_CCM_8"),
    (0xC052, "TLS_DHE_RSA_WITH_ARIA_128_GCM_SHA256"),
    (0xC053, "TLS_DHE_RSA_WITH_ARIA_256_GCM_SHA384"),
    (0xC056, "TLS_DHE_DSS_WITH_ARIA_128_GCM_SHA256"),
    (0xC057, "TLS_DHE_DSS_WITH_ARIA_256_GCM_SHA384"),
    (0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256"),
    (0x006B, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256"),
    (0x0040, "TLS_DHE_DSS_WITH_AES_128_CBC_SHA256"),
    (0x006A, "TLS_DHE_DSS_WITH_AES_256_CBC_SHA256"),
    (0x00BE, "TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA256"),
    (0x00C4, "TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA256"),
    (0x00BD, "TLS_DHE_DSS_WITH_CAMELLIA_128_CBC_SHA256"),
    (0x00C3, "TLS_DHE_DSS_WITH_CAMELLIA_256_CBC_SHA256"),
    (0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA"),
    (0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA"),
    (0x0032, "TLS_DHE_DSS_WITH_AES_128_CBC_SHA"),
    (0x0038, "TLS_DHE_DSS_WITH_AES_256_CBC_SHA"),
    (0x0045, "TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA"),
    (0x0088, "TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA"),
    (0x0044, "TLS_DHE_DSS_WITH_CAMELLIA_128_CBC_SHA"),
    (0x0087, "TLS_DHE_DSS_WITH_CAMELLIA_256_CBC_SHA"),
    (0x0016, "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"),
    (0x0013, "TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA"),
)
#: TLS 1.2 down to TLS 1.0 (ServerDHParams is the same in all three); the legacy hello's extensions, whose
#: supported_groups name curves only, so a server applying RFC 7919 still shows the group it gives clients
#: that name no FFDHE group (every browser that offered DHE).
DHE_HELLO = LegacyHello((3, 3), (3, 1), DHE_SUITES)


async def probe_dh_group(target: tuple[str, int, str], timeout: float) -> DhGroup | None:
    """The server's DHE group size (DHE_HELLO, read up to its ServerKeyExchange); None when the server accepts no
    DHE suite. A timeout or a connection that fails is an unknown size, with the reason, as is a key exchange that
    cannot be read."""
    from ._legacy_hello import dh_group_probe

    try:
        return await dh_group_probe(DHE_HELLO, target, timeout)
    except TimeoutError:
        return DhGroup(None, detail=f"no answer within {timeout:.0f} seconds")
    except OSError as exc:
        return DhGroup(None, detail=f"could not connect: {exc.strerror or exc}")


#: Suites a server of OpenSSL 1.0.1's day (2012-2014) takes, ECDHE and RSA key exchange with AES-GCM, AES-CBC, 3DES
#: or RC4: the Heartbleed probe's ClientHello must be answered up to its ServerHelloDone.
_HEARTBLEED_SUITES = tuple(
    (code, f"0x{code:04X}")
    for code in (
        0xC02F, 0xC030, 0xC02B, 0xC02C, 0x009E, 0x009F, 0x009C, 0x009D, 0xC027, 0xC028, 0xC023, 0xC024, 0xC013,
        0xC014, 0xC009, 0xC00A, 0x0067, 0x006B, 0x0033, 0x0039, 0x003C, 0x003D, 0x002F, 0x0035, 0xC012, 0x0016,
        0x000A, 0xC011, 0x0005,
    )
)  # fmt: skip
_HELLO_VERSIONS = {"TLSv1.2": (3, 3), "TLSv1.1": (3, 2), "TLSv1": (3, 1)}


async def probe_heartbleed(target: tuple[str, int, str], protocol: str, timeout: float) -> HeartbeatCheck:
    """Heartbleed (CVE-2014-0160), asked of a server that offered heartbeats to the grading handshake, at the version
    that handshake got (_legacy_hello.heartbleed_probe). A probe that fails says why, as an "error"."""
    from ._legacy_hello import heartbleed_probe

    version = _HELLO_VERSIONS.get(protocol)
    if version is None:
        return HeartbeatCheck("error", detail=f"heartbeats are not probed at {protocol}")
    try:
        return await heartbleed_probe(LegacyHello(version, version, _HEARTBLEED_SUITES), target, timeout)
    except HandshakeRejected as exc:
        return HeartbeatCheck("error", detail=str(exc))
    except TimeoutError:
        return HeartbeatCheck("error", detail=f"no answer within {timeout:.0f} seconds")
    except OSError as exc:
        return HeartbeatCheck("error", detail=f"could not connect: {exc.strerror or exc}")
