"""Where DANE puts a service's TLSA records (RFC 6698 3: _<port>._tcp.<host>; for SMTP, RFC 7672, the MX host's at
port 25), and which zone signs them: read by the fetch, which asks for them, and by the checks, which validate them
and hold them to the certificate the server presents: an MX host's after STARTTLS (RFC 7672 3.1: `dane_match`), the
web server's (RFC 7671: `web_dane_match`)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from functools import lru_cache

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.padding import PSS, PKCS1v15
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_der_public_key

from ..registrable import registrable_domain
from ..snapshot import DnsAnswer


def dane_name(host: str, port: int = 25) -> str:
    """Where a service's TLSA records are (RFC 6698 3): by default an MX host's (RFC 7672 2.2.3: port 25 over TCP)."""
    return f"_{port}._tcp.{host}"


def dane_zone(host: str, domain: str, tlsa: DnsAnswer | None = None, port: int = 25) -> str:
    """The zone that signs a host's TLSA records: the signer their RRSIGs name, when it is a name above them (a
    subdomain delegated as a zone of its own, mail.example.com); else the domain's own zone for its names, or the
    host's registrable domain (a provider's MX, mx1.mail.example.net: example.net). A name that is not a zone apex
    there is judged unknown by the check (that zone's SOA says so), never validated against the wrong keys."""
    signer = _signer(tlsa) if tlsa is not None else None
    if signer is not None and dane_name(host, port).endswith("." + signer):
        return signer
    return domain if host == domain or host.endswith("." + domain) else registrable_domain(host)


def _signer(answer: DnsAnswer) -> str | None:
    """The signer name of the answer's first RRSIG (RFC 4034 3.2 presentation: type, algorithm, labels, TTL,
    expiration, inception, key tag, signer, signature)."""
    for text in answer.signatures[:1]:
        fields = text.split()
        if len(fields) > 8:
            return fields[7].rstrip(".").lower() or None
    return None


#: RFC 7672 3.1: the certificate usages SMTP uses, DANE-TA(2) and DANE-EE(3). PKIX-TA(0) and PKIX-EE(1) are
#: "unusable" to an SMTP client (3.1.3), as are selectors and matching types RFC 6698 does not define. A web client
#: uses all four (RFC 6698 2.1.1).
_USAGES = {2: "DANE-TA", 3: "DANE-EE"}
_WEB_USAGES = (0, 1, 2, 3)
_SELECTORS = (0, 1)  # the full certificate, its SubjectPublicKeyInfo
_MATCHING = {0: None, 1: "sha256", 2: "sha512"}  # exact, SHA2-256, SHA2-512


@dataclass(frozen=True)
class Tlsa:
    """One TLSA record (RFC 6698 2.1) as its presentation form gives it: "3 1 1 <hex>"."""

    usage: int
    selector: int
    matching: int
    data: bytes

    @property
    def usable(self) -> bool:
        """RFC 7672 3.1.3: whether an SMTP client uses the record at all."""
        return self.usage in _USAGES and self._defined

    @property
    def usable_on_the_web(self) -> bool:
        """Whether a web client uses the record (RFC 6698 2.1: every usage it defines, PKIX-TA and PKIX-EE too)."""
        return self.usage in _WEB_USAGES and self._defined

    @property
    def _defined(self) -> bool:
        return self.selector in _SELECTORS and self.matching in _MATCHING

    @property
    def shown(self) -> str:
        """ "3 1 1": which kind of record it is, without its data."""
        return f"{self.usage} {self.selector} {self.matching}"

    def matches(self, certificate_der: bytes) -> bool:
        """Whether the certificate (DER) is the one the record names: its full DER or its SubjectPublicKeyInfo,
        exact or hashed (RFC 6698 2.1.2-2.1.3)."""
        if not self.usable_on_the_web:
            return False
        selected = certificate_der if self.selector == 0 else _spki(certificate_der)
        if selected is None:
            return False
        algorithm = _MATCHING[self.matching]
        found = selected if algorithm is None else hashlib.new(algorithm, selected).digest()
        return hmac.compare_digest(found, self.data)


@lru_cache(maxsize=64)
def _spki(certificate_der: bytes) -> bytes | None:
    """The certificate's SubjectPublicKeyInfo (DER), read once however many records are held to it (a TLSA RRset
    of a 64 KiB answer holds hundreds); None when cryptography cannot read the certificate or its key."""
    try:
        key = x509.load_der_x509_certificate(certificate_der).public_key()
        return key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None


def parse_tlsa(text: str) -> Tlsa | None:
    """A TLSA record's presentation form ("3 1 1 a1b2..."; dnspython may break the hex with spaces); None when it is
    not one."""
    fields = text.split()
    if len(fields) < 4 or not all(field.isdigit() for field in fields[:3]):
        return None
    try:
        data = bytes.fromhex("".join(fields[3:]))
    except ValueError:
        return None
    return Tlsa(int(fields[0]), int(fields[1]), int(fields[2]), data)


def spki_sha256(certificate_der: bytes) -> str | None:
    """The hex SHA-256 of the certificate's SubjectPublicKeyInfo: the data of a "3 1 1" TLSA record for it (None when
    its key cannot be read)."""
    spki = _spki(certificate_der)
    return hashlib.sha256(spki).hexdigest() if spki is not None else None


def _issues(issuer_der: bytes, subject_der: bytes) -> bool:
    """Whether `issuer_der` signed `subject_der` (names chained and the signature valid)."""
    try:
        subject = x509.load_der_x509_certificate(subject_der)
        subject.verify_directly_issued_by(x509.load_der_x509_certificate(issuer_der))
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return True


def dane_match(records: list[Tlsa], chain: tuple[bytes, ...], leaf_names_host: bool, leaf_current: bool) -> Tlsa | None:
    """The usable record that authenticates the chain a server sent (DER, leaf first), as RFC 7672 3.1 has an SMTP
    client judge it; None when none does. DANE-EE(3) names the leaf itself, whatever its names and dates (3.1.1).
    DANE-TA(2) names a trust anchor, which must have issued the chain down to the leaf; the leaf must then name the MX
    host (`leaf_names_host`) and be within its validity period (`leaf_current`). The anchor is a certificate the
    server sends above its leaf (3.1.2), or one the record holds whole, certificate or public key (Full(0): RFC 7671
    5.2.2, which the server need not send). As OpenSSL ranks them: DANE-EE first, then the anchor nearest the leaf."""
    usable = [record for record in records if record.usable]
    if not chain or not usable:
        return None
    for record in usable:
        if record.usage == 3 and record.matches(chain[0]):
            return record
    authorities = [record for record in usable if record.usage == 2]
    if not (authorities and leaf_names_host and leaf_current):
        return None
    path = [chain[0], *_issuing(chain)]  # the leaf, then each certificate above it that signed the one below
    for anchor in path[1:]:
        for record in authorities:
            if record.matches(anchor):
                return record
    whole = [record for record in authorities if record.matching == 0][:MAX_WHOLE_ANCHORS]
    for record in whole:  # an anchor the record holds whole: it signed the top of the path (or a certificate on it)
        if any(_signed_with(record, certificate) for certificate in path):
            return record
    return None


def _signed_with(record: Tlsa, certificate_der: bytes) -> bool:
    """Whether the trust anchor a Full(0) record holds (a certificate, or a SubjectPublicKeyInfo) signed the
    certificate."""
    try:
        certificate = x509.load_der_x509_certificate(certificate_der)
        if record.selector == 0:
            certificate.verify_directly_issued_by(x509.load_der_x509_certificate(record.data))
            return True
        key = load_der_public_key(record.data)
        signature, signed, digest = (
            certificate.signature,
            certificate.tbs_certificate_bytes,
            certificate.signature_hash_algorithm,
        )
        if isinstance(key, ec.EllipticCurvePublicKey) and digest is not None:
            key.verify(signature, signed, ec.ECDSA(digest))
        elif isinstance(key, rsa.RSAPublicKey) and digest is not None:
            padding = certificate.signature_algorithm_parameters
            if not isinstance(padding, (PKCS1v15, PSS)):
                return False
            key.verify(signature, signed, padding, digest)
        elif isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
            key.verify(signature, signed)
        else:
            return False
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return True


#: The Full(0) DANE-TA records tried as anchors the server did not send: each costs a signature check per certificate
#: of the path, and a zone publishes one or two (the current anchor, the next).
MAX_WHOLE_ANCHORS = 8
#: How far up a chain DANE-TA looks: real chains hold 2-4 certificates, and each link is a signature to verify.
MAX_CHAIN_LINKS = 8


def _issuing(chain: tuple[bytes, ...]) -> list[bytes]:
    """The certificates above the leaf, in order, as long as each signed the one below it."""
    linked = []
    for position in range(1, min(len(chain), MAX_CHAIN_LINKS + 1)):
        if not _issues(chain[position], chain[position - 1]):
            break
        linked.append(chain[position])
    return linked


@dataclass(frozen=True)
class WebChain:
    """What `web_dane_match` holds a web server's TLSA records to: the chain it sent (DER, leaf first); when the chain
    is PKIX-valid, the path the verifier built (DER, leaf first, anchor left out) and the trust anchor it ends at
    (DER); whether the leaf names the host, and is within its dates."""

    sent: tuple[bytes, ...]
    verified: tuple[bytes, ...]
    anchor: bytes | None
    names_host: bool
    current: bool

    @property
    def pkix_valid(self) -> bool:
        return bool(self.verified) and self.names_host and self.current


def web_dane_match(records: list[Tlsa], chain: WebChain) -> Tlsa | None:
    """The record that authenticates a web server (RFC 6698 2.1.1, with RFC 7671's updates), first found in the order
    DANE-EE, DANE-TA, PKIX-EE, PKIX-TA; None when none does:
    - DANE-EE(3): the leaf, whatever its names and dates (RFC 7671 5.1);
    - DANE-TA(2): an anchor that issued the chain, the leaf naming the host and current (RFC 7671 5.2), as for SMTP;
    - PKIX-EE(1): the leaf, and the chain PKIX-valid (the browsers' own test);
    - PKIX-TA(0): a CA on the PKIX-valid path, its trust anchor included (which the server need not send)."""
    usable = [record for record in records if record.usable_on_the_web]
    if not chain.sent or not usable:
        return None
    found = dane_match([r for r in usable if r.usage in (2, 3)], chain.sent, chain.names_host, chain.current)
    if found is not None or not chain.pkix_valid:
        return found
    authorities = (*chain.verified[1:], *((chain.anchor,) if chain.anchor is not None else ()))
    for record in usable:
        if record.usage == 1 and record.matches(chain.sent[0]):
            return record
    for record in usable:
        if record.usage == 0 and any(record.matches(der) for der in authorities):
            return record
    return None
