# Test cases adapted from x509-limbo (https://github.com/C2SP/x509-limbo), the C2SP suite of X.509 path validation
# test vectors. Used under the Apache License 2.0, reproduced in full in tests/conformance/files/x509-limbo.LICENSE.
"""x509-limbo's server name cases held to websec's name match (scanner/hostname.py, docs/conformance.md).

Each limbo case issues a leaf and says whether a validator accepts it for a DNS name or IP address (`succeeds`) or
rejects it (`fails`). The leaves are ported as data (the subject's common name, the subjectAltName entries, how the
extension is marked or encoded), built here with `cryptography`, read as the scan reads a served certificate
(`fetch/tls.py` `parse_certificate`) and matched as it matches the host scanned (`certificate_matches_host`, which
decides tls.cert_hostname_mismatch). A case **agrees** when the leaf matches exactly when limbo accepts it; a case
with `why` is a documented divergence and must not agree.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Literal

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtensionOID, NameOID

from websec_app.scanner.fetch.tls import parse_certificate
from websec_app.scanner.hostname import certificate_matches_host

AT = datetime(2024, 1, 1, tzinfo=UTC)

#: Chrome's rule, which the scan follows (hostname.py): the subject's common name is never matched, so what a
#: certificate's CN says, beside SAN entries that match, does not decide whether browsers accept the name.
_CN_IGNORED = (
    "Chrome (since 58) and websec match the subjectAltName only and never read the common name; the Baseline "
    "Requirements' rule for the CN (7.1.4.3: a copy of a SAN entry) binds the CA that issues the certificate, and "
    "browsers do not refuse a certificate for it"
)


@dataclass(frozen=True)
class Case:
    name: str  # limbo's testcase, as it names it
    module: str  # where limbo defines it (limbo/testcases/<module>.py)
    limbo: Literal["succeeds", "fails"]
    peer: str  # the name (or IP address) the certificate is checked for
    san: tuple[x509.GeneralName, ...] | None  # None: no subjectAltName extension
    common_name: str | None = "example.com"
    san_critical: bool = False
    malformed_san: bool = False  # the extension's value is "example.com" in ASCII, not DER
    why: str | None = None


def _dns(*names: str) -> tuple[x509.GeneralName, ...]:
    return tuple(x509.DNSName(name) for name in names)


def _ip(*addresses: str) -> tuple[x509.GeneralName, ...]:
    return tuple(x509.IPAddress(ipaddress.ip_address(address)) for address in addresses)


CASES = (
    # limbo/testcases/webpki/san.py
    Case("exact-dns-san", "webpki.san", "succeeds", "example.com", _dns("example.com")),
    Case("exact-localhost-ip-san", "webpki.san", "succeeds", "127.0.0.1", _ip("127.0.0.1")),
    Case("mismatch-domain-san", "webpki.san", "fails", "example2.com", _dns("example.com")),
    Case("mismatch-subdomain-san", "webpki.san", "fails", "def.example.com", _dns("abc.example.com")),
    Case("mismatch-subdomain-apex-san", "webpki.san", "fails", "abc.example.com", _dns("example.com")),
    Case("mismatch-apex-subdomain-san", "webpki.san", "fails", "example.com", _dns("abc.example.com")),
    Case("public-suffix-wildcard-san", "webpki.san", "fails", "example.com", _dns("*.com")),
    Case("leftmost-wildcard-san", "webpki.san", "succeeds", "foo.example.com", _dns("*.example.com")),
    Case("wildcard-embedded-leftmost-san", "webpki.san", "fails", "baz.example.com", _dns("ba*.example.com")),
    Case("wildcard-not-in-leftmost-san", "webpki.san", "fails", "foo.bar.example.com", _dns("foo.*.example.com")),
    Case("wildcard-match-across-labels-san", "webpki.san", "fails", "foo.bar.example.com", _dns("*.example.com")),
    Case(
        "wildcard-embedded-ulabel-san",
        "webpki.san",
        "fails",
        "xn--bliss-1b3c148a.example.com",
        _dns("xn--*-1b3c148a.example.com"),
    ),
    Case(
        "unicode-emoji-san",
        "webpki.san",
        "fails",
        "xn--628h.example.com",
        (x509.DNSName._init_without_validation("😜.example.com"),),
    ),
    Case("no-san", "webpki.san", "fails", "example.com", None),
    Case(
        "san-critical-with-nonempty-subject",
        "webpki.san",
        "fails",
        "example.com",
        _dns("example.com"),
        common_name="something-else",
        san_critical=True,
        why=(
            "the Baseline Requirements (7.1.2.7.12) have the CA mark the extension critical only for an empty "
            "subject; a critical one beside a subject is an error of the CA's profile, and websec, as Chrome's name "
            "match, reads the names the extension lists whatever its criticality: the name matches"
        ),
    ),
    # limbo/testcases/rfc5280/san.py
    Case("malformed", "rfc5280.san", "fails", "example.com", None, malformed_san=True),
    Case(
        "noncritical-with-empty-subject",
        "rfc5280.san",
        "fails",
        "example.com",
        _dns("example.com"),
        None,
        why=(
            "RFC 5280 4.2.1.6 has the CA mark the extension critical when the subject is empty, a rule for the CA; "
            "websec matches the names the extension lists"
        ),
    ),
    # limbo/testcases/webpki/cn.py
    Case(
        "cabf-cn-ipv4-hex-mismatch",
        "webpki.cn",
        "fails",
        "192.168.1.1",
        _ip("192.168.1.1"),
        "0xC0A80101",
        why=_CN_IGNORED,
    ),
    Case(
        "cabf-cn-ipv4-leading-zeros-mismatch",
        "webpki.cn",
        "fails",
        "192.168.1.1",
        _ip("192.168.1.1"),
        "192.168.001.001",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-ipv6-uppercase-mismatch",
        "webpki.cn",
        "fails",
        "2001:db8::8a2e:370:7334",
        _ip("2001:db8::8a2e:370:7334"),
        "2001:DB8::8A2E:370:7334",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-ipv6-uncompressed-mismatch",
        "webpki.cn",
        "fails",
        "2001:db8::1",
        _ip("2001:db8::1"),
        "2001:0db8:0000:0000:0000:0000:0000:0001",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-ipv6-non-rfc5952-mismatch",
        "webpki.cn",
        "fails",
        "2001:db8::1:0:0:1",
        _ip("2001:db8::1:0:0:1"),
        "2001:db8:0:0:1:0:0:1",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-punycode-not-in-san",
        "webpki.cn",
        "fails",
        "xn--n3h.com",
        _dns("xn--n3h.com"),
        "xn--nxasmq6b.com",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-utf8-vs-punycode-mismatch",
        "webpki.cn",
        "fails",
        "xn--test--wg5h0h.com",
        _dns("xn--test--wg5h0h.com"),
        "test-測試.com",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-not-in-san",
        "webpki.cn",
        "fails",
        "valid.example.com",
        _dns("valid.example.com", "another.example.com"),
        "notinsan.example.com",
        why=_CN_IGNORED,
    ),  # fmt: skip
    Case(
        "cabf-cn-case-mismatch",
        "webpki.cn",
        "fails",
        "example.com",
        _dns("example.com"),
        "Example.COM",
        why=_CN_IGNORED,
    ),
)

MODULES = ("webpki.san", "rfc5280.san", "webpki.cn")
SECTIONS: dict[str, list[Case]] = {module: [c for c in CASES if c.module == module] for module in MODULES}
NOT_PORTED: dict[str, str] = {}
NOT_PORTED_IN: dict[str, list[str]] = {}


@cache
def _key(role: str) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _leaf(case: Case) -> bytes:
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "x509-limbo root")])
    subject = x509.Name([] if case.common_name is None else [x509.NameAttribute(NameOID.COMMON_NAME, case.common_name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(_key("leaf").public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(AT - timedelta(days=30))
        .not_valid_after(AT + timedelta(days=60))
    )
    if case.malformed_san:
        value = x509.UnrecognizedExtension(ExtensionOID.SUBJECT_ALTERNATIVE_NAME, b"example.com")
        builder = builder.add_extension(value, critical=False)
    elif case.san is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(case.san)), critical=case.san_critical)
    return builder.sign(_key("root"), hashes.SHA256()).public_bytes(Encoding.DER)


def matches(case: Case) -> bool:
    return certificate_matches_host(parse_certificate(_leaf(case)), case.peer)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_limbo_name_case(case: Case) -> None:
    agrees = matches(case) is (case.limbo == "succeeds")
    if case.why is None:
        assert agrees, f"{case.name}: limbo {case.limbo}, websec {'matches' if matches(case) else 'does not match'}"
    else:
        assert not agrees, f"{case.name} now agrees: drop its divergence"


def test_the_cases_are_each_named_once() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)) and all(c.module in MODULES for c in CASES)
