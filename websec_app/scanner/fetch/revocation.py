"""Has the CA revoked the certificate? Asked of the CA, as SSL Labs does, when the server staples no answer.

Firefox refuses a revoked certificate whether or not the server staples (CRLite, built from every CA's CRLs), and
Chrome refuses those its CRLSet lists: a certificate revoked for a leaked key or a mis-issuance was graded valid
here unless the server happened to staple the CA's answer. The fetch asks, for the leaf of a trusted chain:

- the CA's OCSP responder (RFC 6960), named in the Authority Information Access extension: one small GET
  (RFC 6960 A.1, the request base64 in the path, as CDNs cache it), answered for this certificate alone; when the
  responder refuses that form (an HTTP error, or a body that is no OCSP response: a web server that decodes the
  base64's "/" in the path, say), one POST of the same request, which A.1 obliges every responder to take;
- else, or when the responder gives no usable answer, the first http:// CRL of its CRL Distribution Points
  (RFC 5280 4.2.1.13): public CAs must publish one (CA/B Forum BR 7.1.2.11.2, since OCSP became optional), and
  Let's Encrypt publishes only CRLs since 2025.

Both URLs come from the site's certificate, so they are fetched as a caIssuers URL is (fetch/tls.py
`guarded_ca_issuers`): through the scan's resolver and guard, size-limited, and within REVOCATION_SECONDS, so that a
slow CA cannot cost the TLS section. What came back is judged by checks/_revocation.py (pure: signature, dates,
serial number).
"""

from __future__ import annotations

import asyncio
import base64
from collections import OrderedDict
from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import Literal, Protocol
from urllib.parse import quote

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp
from cryptography.x509.oid import AuthorityInformationAccessOID

from ..snapshot import CA_CLOCK_SKEW, RevocationAnswer


class Download(Protocol):
    """Downloads a URL of the certificate's: the body (at most `max_bytes`), or the reason there is none (an
    `AnsweredWith` when the server answered, but not with 200). With `posted` (content type, body): a POST."""

    def __call__(
        self, url: str, max_bytes: int, *, posted: tuple[str, bytes] | None = None
    ) -> Awaitable[bytes | str]: ...


class AnsweredWith(str):
    """A download's server answered with another status than 200: the reason, in words."""


#: RFC 6960 A.1: the media type of an OCSP request sent by POST.
OCSP_REQUEST_TYPE = "application/ocsp-request"

#: An OCSP response is a few kilobytes (a responder certificate included).
MAX_OCSP_BYTES = 64 * 1024
#: A CRL lists every revoked certificate the CA has not yet seen expire: Let's Encrypt's shards are kilobytes,
#: the largest CAs' a few megabytes. Larger is not read (the answer says so).
MAX_CRL_BYTES = 8 * 1024 * 1024
#: The whole revocation question, OCSP and CRL alike: within the TLS section's time, never all of it.
REVOCATION_SECONDS = 4.0


def _http_urls(values: list[x509.GeneralName]) -> list[str]:
    """The http:// URIs among `values` (LDAP and others are left: no browser or CRLite reads them)."""
    return [
        value.value
        for value in values
        if isinstance(value, x509.UniformResourceIdentifier) and value.value.lower().startswith("http://")
    ]


def ocsp_urls(certificate: x509.Certificate) -> list[str]:
    try:
        access = certificate.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    except (x509.ExtensionNotFound, ValueError):
        return []
    return _http_urls([d.access_location for d in access if d.access_method == AuthorityInformationAccessOID.OCSP])


def crl_urls(certificate: x509.Certificate) -> list[str]:
    try:
        points = certificate.extensions.get_extension_for_class(x509.CRLDistributionPoints).value
    except (x509.ExtensionNotFound, ValueError):
        return []
    # Only full names: a relative name, or one for some reasons only (a partitioned CRL by reason), is not the
    # list of every revoked certificate.
    return _http_urls([name for point in points if point.reasons is None for name in point.full_name or ()])


def ocsp_request(certificate: x509.Certificate, issuer: x509.Certificate) -> bytes:
    """The DER OCSP request for `certificate` (SHA-1 CertID, as RFC 5019 2.1.1 asks and every responder answers; no
    nonce, so CDNs can cache the answer)."""
    request = ocsp.OCSPRequestBuilder().add_certificate(certificate, issuer, hashes.SHA1()).build()
    return request.public_bytes(serialization.Encoding.DER)


def ocsp_request_url(responder: str, request: bytes) -> str:
    """RFC 6960 A.1's GET: the responder URL, "/", and the URL-encoded base64 of the DER request."""
    return f"{responder.rstrip('/')}/{quote(base64.b64encode(request).decode(), safe='')}"


async def _asked_responder(responder: str, request: bytes, download: Download) -> bytes | str:
    """The responder's answer to the GET form, or, when it refuses that form, to a POST of the request."""
    body = await download(ocsp_request_url(responder, request), MAX_OCSP_BYTES)
    if isinstance(body, AnsweredWith) or (isinstance(body, bytes) and _ocsp_status(body) is None):
        posted = await download(responder, MAX_OCSP_BYTES, posted=(OCSP_REQUEST_TYPE, request))
        return posted if isinstance(posted, bytes) else body  # the POST's failure says no more than the GET's
    return body


async def fetch_revocation(
    leaf_der: bytes, issuer_der: bytes | None, download: Download, now: datetime
) -> RevocationAnswer | None:
    """The CA's answer for `leaf_der`: its OCSP responder's (needs the issuer, whose key the request names), else its
    CRL's, from CRL_CACHE when a scan of this process downloaded it lately (`now`: the scan's clock). None when the
    certificate names neither (a private CA's, say): nothing to ask."""
    leaf = x509.load_der_x509_certificate(leaf_der)
    issuer = x509.load_der_x509_certificate(issuer_der) if issuer_der is not None else None
    responders = ocsp_urls(leaf) if issuer is not None else []
    crls = crl_urls(leaf)
    if not responders and not crls:
        return None
    unanswered: RevocationAnswer | None = None
    asking: tuple[Literal["ocsp", "crl"], str] = ("ocsp", responders[0]) if responders else ("crl", crls[0])
    try:
        async with asyncio.timeout(REVOCATION_SECONDS):
            if responders and issuer is not None:
                body = await _asked_responder(responders[0], ocsp_request(leaf, issuer), download)
                if isinstance(body, str):
                    unanswered = RevocationAnswer("ocsp", responders[0], failure=body, issuer=issuer_der)
                elif _usable_ocsp(body):
                    return RevocationAnswer("ocsp", responders[0], body, issuer=issuer_der)
                else:
                    unanswered = RevocationAnswer("ocsp", responders[0], body, issuer=issuer_der)
            if crls:
                asking = ("crl", crls[0])
                kept = CRL_CACHE.get(crls[0], now)
                body = kept if kept is not None else await download(crls[0], MAX_CRL_BYTES)
                if isinstance(body, str):
                    return RevocationAnswer("crl", crls[0], failure=body, issuer=issuer_der)
                if kept is None:  # kept for CRL_KEEP from its download, not from its last use
                    CRL_CACHE.put(crls[0], body, now)
                return RevocationAnswer("crl", crls[0], body, issuer=issuer_der)
    except TimeoutError:
        failure = f"no answer within {REVOCATION_SECONDS:g} seconds"
        return RevocationAnswer(*asking, failure=failure, issuer=issuer_der)
    return unanswered


class CrlCache:
    """CRLs downloaded by this process, kept for the scans that follow: one CA's CRL (a Let's Encrypt shard) answers
    for every site it issued, and is hundreds of kilobytes. A CRL is kept until the earlier of its nextUpdate and
    CRL_KEEP after its download, on the scan's clock (a revocation the CA publishes meanwhile is seen within that
    time), and at most CRL_CACHE_BYTES of them in all, the least recently used going first. Only what a CA's server
    answered with 200 and the CRL parser reads is kept; each scan judges it afresh (checks/_revocation.py)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[bytes, datetime]] = OrderedDict()
        self._bytes = 0

    def get(self, url: str, now: datetime) -> bytes | None:
        kept = self._kept.get(url)
        if kept is None:
            return None
        body, until = kept
        if now >= until:
            self._drop(url)
            return None
        self._kept.move_to_end(url)
        return body

    def put(self, url: str, body: bytes, now: datetime) -> None:
        if len(body) > self.max_bytes:
            return
        try:
            next_update = x509.load_der_x509_crl(body).next_update_utc
        except ValueError:  # not a CRL the judge could use: asked again next time
            return
        until = now + CRL_KEEP if next_update is None else min(next_update, now + CRL_KEEP)
        if until <= now:
            return
        self._drop(url)
        self._kept[url] = (body, until)
        self._bytes += len(body)
        while self._bytes > self.max_bytes:
            self._drop(next(iter(self._kept)))

    def clear(self) -> None:
        self._kept.clear()
        self._bytes = 0

    def _drop(self, url: str) -> None:
        kept = self._kept.pop(url, None)
        if kept is not None:
            self._bytes -= len(kept[0])


#: How long a downloaded CRL answers for later scans at most (CAs publish new CRLs every few hours or days).
CRL_KEEP = timedelta(minutes=30)
#: All the CRLs a process keeps together: a few dozen shards of the CAs most sites use.
CRL_CACHE_BYTES = 32 * 1024 * 1024
#: This process's (each worker process keeps its own).
CRL_CACHE = CrlCache(CRL_CACHE_BYTES)


def staple_answers(staple: bytes, leaf: x509.Certificate, now: datetime) -> bool:
    """Does the server's stapled OCSP response answer for `leaf` at `now`: successful, with a single response for
    its serial number, current? Then the CA is not asked again; its signature is judged with the rest
    (checks/_ocsp.py). A staple that is not (a stale one a server kept serving while its responder was down, say) is
    set aside by browsers, and the CA is asked as if none were stapled."""
    try:
        response = ocsp.load_der_ocsp_response(staple)
        if response.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL:
            return False
        return any(
            single.serial_number == leaf.serial_number
            and single.this_update_utc <= now + CA_CLOCK_SKEW
            and (single.next_update_utc is None or now <= single.next_update_utc)
            for single in response.responses
        )
    except ValueError:
        return False


def _ocsp_status(body: bytes) -> ocsp.OCSPResponseStatus | None:
    """The responseStatus of an OCSP response; None when `body` is none."""
    try:
        return ocsp.load_der_ocsp_response(body).response_status
    except ValueError:
        return None


def _usable_ocsp(body: bytes) -> bool:
    """A successful response (a responder that answers "unauthorized" or "tryLater" tells nothing: the CRL may)."""
    return _ocsp_status(body) == ocsp.OCSPResponseStatus.SUCCESSFUL
