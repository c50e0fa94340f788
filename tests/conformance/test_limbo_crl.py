# Test cases adapted from x509-limbo (https://github.com/C2SP/x509-limbo), the C2SP suite of X.509 path validation
# test vectors. Used under the Apache License 2.0, reproduced in full in tests/conformance/files/x509-limbo.LICENSE.
"""x509-limbo's CRL cases held to websec's CRL verdict (checks/_revocation.py, docs/conformance.md).

Each limbo case builds a root CA, a leaf it issues and one CRL, and says whether a validator that checks revocation
accepts the leaf at a validation time (`succeeds`) or rejects it (`fails`): rejected for a revoked leaf, or for a CRL
a validator must not use. The scenarios are ported as data (what the CRL, the leaf's distribution point and the
issuer's Key Usage are), each built here with `cryptography` and judged as a scan judges the CRL it fetched from the
leaf's distribution point: `judge_revocation`, with the root as the issuer. A case **agrees** when websec's verdict
answers limbo's: `succeeds` is "not revoked" (good), `fails` is "revoked" when the leaf is listed, else "could not be
checked" (a CRL that proves nothing neither revokes nor clears). A case with `why` is a documented divergence and must
not agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Literal

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from websec_app.scanner.checks._revocation import judge_revocation
from websec_app.scanner.snapshot import RevocationAnswer

#: limbo's validation time for its CRL cases.
AT = datetime(2024, 1, 1, tzinfo=UTC)
URL = "http://example.com/cdp.crl"  # the leaf's distribution point unless a case names others
UNKNOWN_OID = x509.ObjectIdentifier("1.3.6.1.4.1.55738.666.1")


@dataclass(frozen=True)
class Case:
    name: str  # limbo's testcase, as it names it
    module: str  # where limbo defines it (limbo/testcases/<module>.py)
    limbo: Literal["succeeds", "fails"]
    crl: Mapping[str, Any] = field(default_factory=dict)  # how the CRL differs from a current, numbered, signed one
    leaf_cdp: tuple[x509.GeneralName, ...] = (x509.UniformResourceIdentifier(URL),)
    issuer_key_usage: Literal["crl_sign", "no_crl_sign", "absent"] = "crl_sign"
    why: str | None = None

    @property
    def revokes_leaf(self) -> bool:
        return bool(self.crl.get("revoke_leaf"))


def _uri(value: str) -> x509.UniformResourceIdentifier:
    return x509.UniformResourceIdentifier(value)


CASES = (
    # limbo/testcases/crl/__init__.py
    Case("revoked-certificate-with-crl", "crl", "fails", {"revoke_leaf": True}),
    Case("crlnumber-missing", "crl", "fails", {"crl_number": None, "revoke_others": 1}),
    Case("certificate-not-on-crl", "crl", "succeeds", {"revoke_others": 2}),
    Case("crlnumber-critical", "crl", "fails", {"crl_number": "critical", "revoke_others": 1}),
    Case("issuer-missing-crlsign", "crl", "fails", {"revoke_others": 1}, issuer_key_usage="no_crl_sign"),
    Case("issuer-no-keyusage-extension", "crl", "succeeds", {"revoke_others": 1}, issuer_key_usage="absent"),
    Case("issuer-valid-crlsign-and-keycertsign", "crl", "succeeds", {"revoke_others": 1}),
    # limbo/testcases/crl/structure.py
    Case("crl-invalid-signature", "crl.structure", "fails", {"signer": "ephemeral", "revoke_others": 1}),
    Case("crl-wrong-signing-key", "crl.structure", "fails", {"signer": "other_root", "revoke_others": 1}),
    Case("crl-empty", "crl.structure", "succeeds"),
    Case("crl-very-large", "crl.structure", "succeeds", {"revoke_others": 10_000}),
    Case("crl-unknown-critical-extension", "crl.structure", "fails", {"unknown_extension": True, "revoke_others": 1}),
    Case(
        "crl-unknown-noncritical-extension",
        "crl.structure",
        "succeeds",
        {"unknown_extension": False, "revoke_others": 1},
    ),
    Case(
        "crl-duplicate-revoked-serial",
        "crl.structure",
        "fails",
        {"duplicate_entry": True},
        why=(
            "websec looks the leaf's serial number up in the CRL (cryptography's parser: 3 ms for 50,000 entries) "
            "rather than reading every entry in Python (30 ms; 240 ms at the 8 MiB it reads), so another serial listed "
            "twice goes unseen: the leaf is listed or not either way, and the CRL is taken (CA/B Forum servercert "
            "issue 589 asks whether such a CRL is malformed)"
        ),
    ),
    # limbo/testcases/crl/temporal.py
    Case("this-update-in-future", "crl.temporal", "fails", {"last_update": timedelta(days=1)}),
    Case(
        "next-update-in-past",
        "crl.temporal",
        "fails",
        {"last_update": -timedelta(days=60), "next_update": -timedelta(days=30)},
    ),
    Case("revocation-date-in-future", "crl.temporal", "fails", {"revoke_leaf": True, "revoked_at": timedelta(days=1)}),
    Case(
        "revocation-date-before-not-before",
        "crl.temporal",
        "fails",
        {"revoke_leaf": True, "revoked_at": -timedelta(days=60)},
    ),
    Case(
        "crl-validity-no-overlap",
        "crl.temporal",
        "fails",
        {"last_update": -timedelta(days=365), "next_update": -timedelta(days=180)},
    ),
    # limbo/testcases/crl/idp.py
    Case("idp-cdp-scope-mismatch", "crl.idp", "fails", {"idp": {"full_name": [_uri("http://example.com/other.crl")]}}),
    Case(
        "idp-cdp-scope-match",
        "crl.idp",
        "succeeds",
        {"idp": {"full_name": [_uri("http://example.com/partition.crl")]}},
        leaf_cdp=(_uri("http://example.com/partition.crl"),),
    ),
    Case("idp-only-contains-ca-certs-ee-target", "crl.idp", "fails", {"idp": {"only_contains_ca_certs": True}}),
    Case(
        "idp-present-certificate-cdp-non-uri-generalname",
        "crl.idp",
        "fails",
        {"idp": {"full_name": [_uri("http://example.com/partition.crl")]}},
        leaf_cdp=(_uri("http://example.com/partition.crl"), x509.DNSName("example.com")),
        why=(
            "the leaf's distribution point names a DNS name beside its URL, which the Baseline Requirements "
            "(7.1.2.11.2) forbid in a certificate; websec asks the URL, whose CRL names it byte for byte and does not "
            "list the leaf: the certificate's profile is not what its revocation decides"
        ),
    ),
    Case(
        "idp-only-contains-attribute-certs",
        "crl.idp",
        "fails",
        {"idp": {"only_contains_attribute_certs": True}, "revoke_others": 1},
    ),
    # limbo/testcases/crl/cabf.py
    Case(
        "idp-name-relative-to-crl-issuer",
        "crl.cabf",
        "fails",
        {
            "idp": {
                "relative_name": x509.RelativeDistinguishedName([x509.NameAttribute(NameOID.COMMON_NAME, "partition")])
            }
        },
    ),
    Case(
        "idp-fullname-non-uri-generalname",
        "crl.cabf",
        "fails",
        {"idp": {"full_name": [_uri("http://example.com/partition.crl"), x509.DNSName("example.com")]}},
        leaf_cdp=(_uri("http://example.com/partition.crl"),),
    ),
    Case(
        "idp-indirect-crl",
        "crl.cabf",
        "fails",
        {"idp": {"full_name": [_uri("http://example.com/partition.crl")], "indirect_crl": True}},
        leaf_cdp=(_uri("http://example.com/partition.crl"),),
    ),
    Case(
        "idp-only-some-reasons-no-complete-crl",
        "crl.cabf",
        "fails",
        {
            "idp": {
                "full_name": [_uri("http://example.com/partition.crl")],
                "only_some_reasons": frozenset([x509.ReasonFlags.key_compromise]),
            }
        },
        leaf_cdp=(_uri("http://example.com/partition.crl"),),
    ),
    Case(
        "idp-uri-not-byte-identical",
        "crl.cabf",
        "fails",
        {"idp": {"full_name": [_uri("http://example.com/crls/shard.crl")]}},
        leaf_cdp=(_uri("http://example.com/crls/%73hard.crl"),),
    ),
)

#: limbo's cases not ported, with the reason.
NOT_PORTED = {
    "certificate-serial-on-crl-different-issuer": (
        "it hands the validator two CRLs, the issuer's and another CA's listing the leaf's serial; a scan fetches the "
        "one CRL the leaf names, its issuer's (certificate-not-on-crl's case)"
    ),
    "idp-only-contains-user-certs-ca-target": "its target is a CA certificate: websec asks about the leaf only",
    "idp-present-certificate-missing-cdp": "the leaf names no CRL: websec asks only a CRL the certificate names",
    "crl-invalid-version": "its CRL is a binary asset of limbo's (bad_version.crl), not a scenario built from data",
    "crl-update-generalizedtime-2025": "its CRL is a binary asset of limbo's (generalized_time_2025.crl)",
    "crl-missing-next-update": "its CRL is a binary asset of limbo's (missing_next_update.crl)",
}
NOT_PORTED_IN = {
    "crl": ["certificate-serial-on-crl-different-issuer"],
    "crl.idp": ["idp-only-contains-user-certs-ca-target", "idp-present-certificate-missing-cdp"],
    "crl.external": ["crl-invalid-version", "crl-update-generalizedtime-2025", "crl-missing-next-update"],
}
MODULES = ("crl", "crl.structure", "crl.temporal", "crl.idp", "crl.cabf", "crl.external")
SECTIONS: dict[str, list[Case]] = {module: [c for c in CASES if c.module == module] for module in MODULES}


@cache
def _key(role: str) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _root(key_usage: str, role: str = "root") -> x509.Certificate:
    key = _key(role)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(f"x509-limbo {role}"))
        .issuer_name(_name(f"x509-limbo {role}"))
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(AT - timedelta(days=365))
        .not_valid_after(AT + timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    )
    if key_usage != "absent":
        bits = dict.fromkeys(
            ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
             "encipher_only", "decipher_only"),
            False,
        )  # fmt: skip
        usage = x509.KeyUsage(key_cert_sign=True, crl_sign=key_usage == "crl_sign", **bits)
        builder = builder.add_extension(usage, critical=True)
    return builder.sign(key, hashes.SHA256())


def _leaf(root: x509.Certificate, cdp: Sequence[x509.GeneralName]) -> x509.Certificate:
    key = _key("leaf")
    point = x509.DistributionPoint(list(cdp), None, None, None)
    return (
        x509.CertificateBuilder()
        .subject_name(_name("example.com"))
        .issuer_name(root.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(AT - timedelta(days=30))
        .not_valid_after(AT + timedelta(days=60))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("example.com")]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.CRLDistributionPoints([point]), critical=False)
        .sign(_key("root"), hashes.SHA256())
    )


def _entry(serial: int, at: datetime) -> x509.RevokedCertificate:
    return x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(at).build()


def _crl(case: Case, root: x509.Certificate, leaf: x509.Certificate) -> bytes:
    shape = case.crl
    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(root.subject)
        .last_update(AT + shape.get("last_update", -timedelta(days=1)))
        .next_update(AT + shape.get("next_update", timedelta(days=30)))
    )
    number = shape.get("crl_number", "present")
    if number is not None:
        builder = builder.add_extension(x509.CRLNumber(1), critical=number == "critical")
    if "unknown_extension" in shape:
        builder = builder.add_extension(x509.UnrecognizedExtension(UNKNOWN_OID, b""), shape["unknown_extension"])
    if "idp" in shape:
        options = {
            "full_name": None, "relative_name": None, "only_contains_user_certs": False,
            "only_contains_ca_certs": False, "only_some_reasons": None, "indirect_crl": False,
            "only_contains_attribute_certs": False, **shape["idp"],
        }  # fmt: skip
        builder = builder.add_extension(x509.IssuingDistributionPoint(**options), critical=True)
    revoked_at = AT + shape.get("revoked_at", -timedelta(days=1))
    entries = [_entry(x509.random_serial_number(), revoked_at) for _ in range(shape.get("revoke_others", 0))]
    if case.revokes_leaf:
        entries.append(_entry(leaf.serial_number, revoked_at))
    if shape.get("duplicate_entry"):
        twice = _entry(x509.random_serial_number(), revoked_at)
        entries += [twice, twice]
    for entry in entries:
        builder = builder.add_revoked_certificate(entry)
    signer = {"ephemeral": ec.generate_private_key(ec.SECP256R1()), "other_root": _key("other root")}.get(
        shape.get("signer", ""), _key("root")
    )
    return builder.sign(signer, hashes.SHA256()).public_bytes(Encoding.DER)


def verdict(case: Case) -> str:
    """websec's verdict on the case's leaf, given the CRL at its first distribution point URL."""
    root = _root(case.issuer_key_usage)
    leaf = _leaf(root, case.leaf_cdp)
    url = next(name.value for name in case.leaf_cdp if isinstance(name, x509.UniformResourceIdentifier))
    answer = RevocationAnswer("crl", url, _crl(case, root, leaf), issuer=root.public_bytes(Encoding.DER))
    return judge_revocation(answer, leaf.public_bytes(Encoding.DER), AT).status


def agrees(case: Case, status: str) -> bool:
    if case.limbo == "succeeds":
        return status == "good"
    return status == ("revoked" if case.revokes_leaf else "unknown")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_limbo_crl_case(case: Case) -> None:
    status = verdict(case)
    if case.why is None:
        assert agrees(case, status), f"{case.name}: limbo {case.limbo}, websec {status}"
    else:
        assert not agrees(case, status), f"{case.name} now agrees ({status}): drop its divergence"


def test_the_cases_and_the_parts_not_ported_are_each_named_once() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)) and not set(names) & NOT_PORTED.keys()
    assert sorted(NOT_PORTED) == sorted(n for listed in NOT_PORTED_IN.values() for n in listed)
    assert all(c.module in MODULES for c in CASES) and set(NOT_PORTED_IN) <= set(MODULES)
