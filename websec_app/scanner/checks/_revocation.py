"""Judge what the certificate's CA said of it (fetch/revocation.py). Pure: the DER comes from the snapshot, the
issuer from the verified path.

- An OCSP response is judged as a staple is (checks/_ocsp.py): for this certificate, signed by its issuer or a
  responder it delegated to, current.
- A CRL by RFC 5280 6.3.3: issued and signed by the certificate's issuer (whose Key Usage allows cRLSign), of the
  form RFC 5280 5 requires (a CRL number, a nextUpdate, no critical extension unknown), for every certificate of
  the distribution point it was fetched from (no delta CRL, none for CA or attribute certificates or some reasons
  only, none of another shard), and listing the serial number or not. A revocation is for good (RFC 5280 5.3.1;
  a certificateHold is refused while it lasts, as browsers do), so a listed certificate is revoked even when the
  CRL is past its nextUpdate; an unlisted one is confirmed only by a current CRL. Held to x509-limbo's CRL cases
  (tests/conformance/test_limbo_crl.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.x509.oid import ExtensionOID

from ..snapshot import CA_CLOCK_SKEW, RevocationAnswer
from ._ocsp import judge_staple


@dataclass(frozen=True)
class RevocationVerdict:
    status: Literal["good", "revoked", "unknown"]
    note: str


def judge_revocation(answer: RevocationAnswer, leaf_der: bytes, now: datetime) -> RevocationVerdict:
    issuer_der = answer.issuer
    if answer.body is None:
        where = f"{answer.url}: " if answer.url and not (answer.failure or "").startswith(answer.url) else ""
        return RevocationVerdict("unknown", f"{where}{answer.failure or 'no answer'}")
    if answer.method == "ocsp":
        staple = judge_staple(answer.body, leaf_der, issuer_der, now, named="the CA's OCSP response")
        if staple.status == "good":
            return RevocationVerdict("good", f"the CA's OCSP responder ({answer.url}) confirms it is not revoked")
        if staple.status == "revoked":
            return RevocationVerdict("revoked", f"the CA's OCSP responder ({answer.url}) says it was {staple.note}")
        return RevocationVerdict("unknown", f"{answer.url}: {staple.note}")
    return _judge_crl(answer.url, answer.body, leaf_der, issuer_der, now)


def _load_crl(body: bytes) -> x509.CertificateRevocationList:
    """RFC 5280 5: DER; a PEM one is read too (a few CAs serve it so)."""
    if body.lstrip().startswith(b"-----BEGIN"):
        return x509.load_pem_x509_crl(body)
    return x509.load_der_x509_crl(body)


#: The CRL extensions RFC 5280 5.2 defines (and the AIA of RFC 5280 5.2.7): a critical one of any other kind makes
#: the CRL unusable ("MUST NOT be used to determine the status of certificates", RFC 5280 5.2).
_KNOWN_EXTENSIONS = {
    ExtensionOID.AUTHORITY_KEY_IDENTIFIER,
    ExtensionOID.ISSUER_ALTERNATIVE_NAME,
    ExtensionOID.CRL_NUMBER,
    ExtensionOID.DELTA_CRL_INDICATOR,
    ExtensionOID.ISSUING_DISTRIBUTION_POINT,
    ExtensionOID.FRESHEST_CRL,
    ExtensionOID.AUTHORITY_INFORMATION_ACCESS,
}


def _form_problem(crl: x509.CertificateRevocationList) -> str | None:
    """Why this CRL is not one RFC 5280 5 lets a client use, or None: its extensions unreadable, a critical one
    unknown, no CRL number or a critical one (5.2.3), a delta CRL (5.2.4: only beside its complete CRL), or no
    nextUpdate (5.1.2.5)."""
    try:
        extensions = crl.extensions
    except ValueError as exc:  # a malformed or duplicated extension
        return f"its extensions cannot be read ({exc})"
    unknown = [e.oid.dotted_string for e in extensions if e.critical and e.oid not in _KNOWN_EXTENSIONS]
    if unknown:
        return f"it has a critical extension clients do not know ({', '.join(unknown)[:200]})"
    numbers = [e for e in extensions if e.oid == ExtensionOID.CRL_NUMBER]
    if not numbers:
        return "it has no CRL number (RFC 5280 5.2.3)"
    if numbers[0].critical:
        return "its CRL number is marked critical (RFC 5280 5.2.3)"
    if any(e.oid == ExtensionOID.DELTA_CRL_INDICATOR for e in extensions):
        return "it is a delta CRL"
    if crl.next_update_utc is None:
        return "it has no nextUpdate (RFC 5280 5.1.2.5)"
    return None


def _scope_problem(crl: x509.CertificateRevocationList, url: str) -> str | None:
    """Why this CRL, fetched from `url` (the certificate's distribution point), does not cover a server certificate
    (RFC 5280 5.2.5, 6.3.3 (b)(2)(i); CA/B Forum BR 7.2.2.1), or None. A sharded CA (Let's Encrypt) names each
    shard's URL in its CRLs, byte for byte the certificate's: another shard, genuine and signed, lists none of this
    certificate's revocations."""
    try:
        point = crl.extensions.get_extension_for_class(x509.IssuingDistributionPoint).value
    except x509.ExtensionNotFound:
        return None
    if point.only_contains_ca_certs or point.only_contains_attribute_certs:
        return "it lists CA or attribute certificates only"
    if point.only_some_reasons is not None:
        return "it lists revocations for some reasons only"
    if point.indirect_crl:
        return "it is an indirect CRL"
    if point.relative_name is not None:
        return "its distribution point is named relative to its issuer, not by a URL"
    names = list(point.full_name or ())
    urls = [name.value for name in names if isinstance(name, x509.UniformResourceIdentifier)]
    if len(urls) < len(names):
        return "its distribution point is named by more than URLs"
    if names and url not in urls:
        return f"it is the CRL of another distribution point ({', '.join(urls)[:200]})"
    return None


def _issuer_problem(issuer: x509.Certificate) -> str | None:
    """RFC 5280 6.3.3 (f): an issuer whose Key Usage is present must allow cRLSign to sign CRLs."""
    try:
        usage = issuer.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        return None
    except ValueError as exc:
        return f"its issuer's Key Usage cannot be read ({exc})"
    return None if usage.crl_sign else "its issuer's Key Usage does not allow signing CRLs (cRLSign)"


def _judge_crl(url: str, body: bytes, leaf_der: bytes, issuer_der: bytes | None, now: datetime) -> RevocationVerdict:
    leaf = x509.load_der_x509_certificate(leaf_der)
    try:
        crl = _load_crl(body)
    except ValueError as exc:
        return RevocationVerdict("unknown", f"the CRL at {url} cannot be parsed ({exc})")
    if issuer_der is None:
        return RevocationVerdict("unknown", f"the CRL at {url} cannot be verified: the certificate's issuer is unknown")
    issuer = x509.load_der_x509_certificate(issuer_der)
    if crl.issuer != leaf.issuer:
        return RevocationVerdict("unknown", f"the CRL at {url} is issued by {crl.issuer.rfc4514_string()[:200]}")
    try:
        signed = crl.is_signature_valid(issuer.public_key())  # type: ignore[arg-type]
    except (UnsupportedAlgorithm, TypeError, ValueError):
        signed = False
    if not signed:
        return RevocationVerdict("unknown", f"the CRL at {url} is not signed by the certificate's issuer")
    problem = _form_problem(crl) or _issuer_problem(issuer)
    if problem is not None:
        return RevocationVerdict("unknown", f"the CRL at {url} cannot be used: {problem}")
    problem = _scope_problem(crl, url)
    if problem is not None:
        return RevocationVerdict("unknown", f"the CRL at {url} does not cover the certificate: {problem}")
    if crl.last_update_utc > now + CA_CLOCK_SKEW:
        return RevocationVerdict("unknown", f"the CRL at {url} is dated in the future ({crl.last_update_utc:%Y-%m-%d})")
    entry = crl.get_revoked_certificate_by_serial_number(leaf.serial_number)
    reason = _reason(entry) if entry is not None else None
    if entry is not None and reason != x509.ReasonFlags.remove_from_crl:
        named = reason.name if reason is not None else "no reason given"
        when = f"{entry.revocation_date_utc:%Y-%m-%d}"
        return RevocationVerdict("revoked", f"the CA's CRL ({url}) lists it as revoked on {when} ({named})")
    next_update = crl.next_update_utc
    if next_update is not None and next_update < now:  # never None here (_form_problem)
        return RevocationVerdict("unknown", f"the CRL at {url} expired on {next_update:%Y-%m-%d %H:%M} UTC")
    return RevocationVerdict(
        "good", f"the CA's CRL ({url}, issued {crl.last_update_utc:%Y-%m-%d %H:%M} UTC) does not list it"
    )


def _reason(entry: x509.RevokedCertificate) -> x509.ReasonFlags | None:
    try:
        return entry.extensions.get_extension_for_class(x509.CRLReason).value.reason
    except (x509.ExtensionNotFound, ValueError):
        return None
