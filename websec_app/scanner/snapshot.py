"""Frozen records of everything one scan fetched.

The fetch layer builds exactly one `SiteSnapshot`; every check is a pure function of
it. Nothing here does I/O, so tests build snapshots by hand (see tests/factories.py).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from .errors import InvalidTarget
from .target import Target, parse_target


@dataclass(frozen=True)
class Failure:
    """Why one part of the fetch did not produce data. Errors are data, not exceptions."""

    # "refused" | "unreachable" | "timeout" | "tls" | "too_many_redirects" | "bad_redirect" | "protocol" | "skipped"
    kind: str
    message: str


@dataclass(frozen=True)
class HeaderList:
    """Response headers in wire order, duplicates kept, names compared case-insensitively."""

    items: tuple[tuple[str, str], ...] = ()

    def get_all(self, name: str) -> tuple[str, ...]:
        wanted = name.lower()
        return tuple(value for key, value in self.items if key.lower() == wanted)

    def get(self, name: str) -> str | None:
        """All values of a header joined with ", " (RFC 9110 5.3), or None when absent."""
        values = self.get_all(name)
        return ", ".join(values) if values else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_all(name))

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.items)

    @classmethod
    def of(cls, *pairs: tuple[str, str], **simple: str) -> HeaderList:
        """Build from pairs and/or keyword arguments (underscores become dashes)."""
        items = list(pairs) + [(k.replace("_", "-"), v) for k, v in simple.items()]
        return cls(tuple(items))


@dataclass(frozen=True)
class HttpResponse:
    """One HTTP response as received (the body possibly truncated at the size limit)."""

    url: str
    status_code: int
    headers: HeaderList
    body: bytes = b""
    body_truncated: bool = False
    address: str = ""  # the IP address the connection went to
    http_version: str = "HTTP/1.1"
    # Why the body is incomplete or not the decoded content (fetch/body.py): cut at the size, time or
    # compression-ratio limit, or kept as sent under a Content-Encoding of more than three codings
    # (body.MAX_CODINGS; up to three are decoded) or an unknown one. None: whole.
    body_note: str | None = None

    @property
    def location(self) -> str | None:
        return self.headers.get_all("location")[0] if "location" in self.headers else None

    @property
    def is_redirect(self) -> bool:
        """A redirect status with a Location to follow: browsers show the body of one whose Location is blank
        (Chromium's HttpResponseHeaders::IsRedirect skips empty Location values)."""
        location = self.location
        return self.status_code in (301, 302, 303, 307, 308) and location is not None and bool(location.strip(" \t"))

    @property
    def content_type(self) -> str:
        """The media type, lowercase, without parameters ("" when absent)."""
        raw = self.headers.get_all("content-type")
        return raw[0].split(";")[0].strip().lower() if raw else ""

    @property
    def charset(self) -> str | None:
        raw = self.headers.get_all("content-type")
        if not raw:
            return None
        for param in raw[0].split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"')
        return None

    def text(self) -> str:
        """The body decoded with its declared charset, falling back to UTF-8 with replacement when Python has no
        codec by that name (LookupError) or one that cannot decode with replacement: `idna`, `punycode` and
        `undefined` raise UnicodeError whatever the bytes, a name holding NUL raises ValueError."""
        encoding = self.charset or "utf-8"
        try:
            return self.body.decode(encoding, errors="replace")
        except (LookupError, ValueError):  # UnicodeError is a ValueError
            return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class FetchChain:
    """A request and the redirects it followed: `responses[-1]` is the final one."""

    start_url: str
    responses: tuple[HttpResponse, ...] = ()
    failure: Failure | None = None  # set when the chain stopped early (a hop failed)

    @property
    def final(self) -> HttpResponse | None:
        return self.responses[-1] if self.responses else None

    @property
    def final_url(self) -> str:
        return self.responses[-1].url if self.responses else self.start_url


@dataclass(frozen=True)
class CertificateInfo:
    """One certificate, parsed with `cryptography` (fields the checks need, plus the DER)."""

    der: bytes
    subject: str
    issuer: str
    not_before: datetime
    not_after: datetime
    san_dns: tuple[str, ...] = ()
    san_ip: tuple[str, ...] = ()
    key_type: str = ""  # "RSA", "EC", "Ed25519", "DSA", ...
    key_size: int = 0
    signature_hash: str | None = None  # "sha256", "sha1", "md5", None for Ed25519
    serial: str = ""
    self_signed: bool = False
    sha256_fingerprint: str = ""
    is_ca: bool = False  # basicConstraints cA=TRUE
    embedded_scts: tuple[SignedTimestamp, ...] = ()  # RFC 6962 3.3: the precertificate SCT list extension
    must_staple: bool = False  # RFC 7633: the TLS Feature extension lists status_request (OCSP Must-Staple)
    # RFC 5280 4.2.1.3: the Key Usage bits set ("digital_signature", "key_encipherment", ...); None without the
    # extension (any use allowed).
    key_usage: tuple[str, ...] | None = None
    # RFC 5280 4.2.1.12: the Extended Key Usage purposes, by RFC 5280's names ("serverAuth", "clientAuth", ...; an
    # unnamed one as its OID); None without the extension (any purpose).
    extended_key_usage: tuple[str, ...] | None = None

    def dated_problem(self, at: datetime) -> tuple[Literal["expired", "not_yet_valid"], str] | None:
        """("expired", "expired on 2026-01-01") or ("not_yet_valid", "valid only from 2026-01-01") when `at`
        is outside the certificate's validity period (RFC 5280 4.1.2.5), else None: one rule for the TLS
        check and HSTS's."""
        if self.not_after < at:
            return "expired", f"expired on {self.not_after:%Y-%m-%d}"
        if self.not_before > at:
            return "not_yet_valid", f"valid only from {self.not_before:%Y-%m-%d}"
        return None


#: CA/B Forum BR 6.3.2: a subscriber certificate issued since 2020-09-01 is valid for at most 398 days; Chrome
#: refuses a longer one whenever it was issued (ERR_CERT_VALIDITY_TOO_LONG) unless it chains to a locally installed
#: root: the fetch looks up the root (TlsHandshake.public_root) only for a leaf beyond it, and the check grades it.
MAX_PUBLIC_LIFETIME = timedelta(days=398)

#: Chrome's and Apple's Certificate Transparency policies (Chrome's since 2018, ERR_CERTIFICATE_TRANSPARENCY_REQUIRED):
#: a certificate from a public CA comes with SCTs from at least this many different logs, counted across where they
#: come from when any comes in the TLS handshake or a stapled OCSP response; embedded in the certificate alone, as
#: many as `embedded_logs_required` asks.
CT_LOGS_REQUIRED = 2


def embedded_logs_required(lifetime: timedelta) -> int:
    """The different logs whose SCTs a certificate valid for `lifetime` must embed when it comes with no other:
    2 for at most 180 days, 3 beyond (Chrome's and Apple's CT policies)."""
    return CT_LOGS_REQUIRED if lifetime <= timedelta(days=180) else 3


#: How far ahead of the scan's clock a CA's answer (an OCSP response's thisUpdate, a CRL's lastUpdate) may be dated:
#: the CA's clock may run a little ahead. One allowance for the fetch and the checks alike.
CA_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class SignedTimestamp:
    """One Certificate Transparency SCT (RFC 6962 3.2): which log promised to publish, and when."""

    log_id: str  # base64 of the log's key hash
    timestamp: datetime

    @staticmethod
    def read(scts: Iterable[Any]) -> tuple[SignedTimestamp, ...]:
        """`cryptography`'s SCTs (a certificate's, an OCSP response's) by log and date; one it cannot date (past year
        9999: no log issued it) is left out, as clients leave it out."""
        read = []
        for sct in scts:
            try:
                stamp = sct.timestamp
            except (ValueError, OverflowError):
                continue
            when = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
            read.append(SignedTimestamp(base64.b64encode(sct.log_id).decode(), when))
        return tuple(read)


@dataclass(frozen=True)
class HeartbeatCheck:
    """What a server that offers TLS heartbeats (RFC 6520) answered to the Heartbleed probe (CVE-2014-0160,
    fetch/_legacy_hello.py): "vulnerable" (it answered a request for more payload than it carried), "safe" (only the
    well-formed one), "unanswered" (neither), "error" (the probe's own handshake failed)."""

    verdict: Literal["vulnerable", "safe", "unanswered", "error"]
    detail: str | None = None


@dataclass(frozen=True)
class RevocationAnswer:
    """What the certificate's CA said of it (fetch/revocation.py): its OCSP responder's response or its CRL, DER as
    served, or why neither was had."""

    method: Literal["ocsp", "crl"]
    url: str  # the responder's or the CRL's, as the certificate names it
    body: bytes | None = None
    failure: str | None = None
    issuer: bytes | None = None  # DER of the certificate's issuer (the verified path's), to judge the answer by


@dataclass(frozen=True)
class TlsProbe:
    """One extra handshake restricted to a protocol version or a cipher family.

    result: "accepted" (the handshake completed within the restriction), "rejected" (the server
    refused it), "not_testable" (the local TLS library cannot offer it, so nothing was sent) or
    "error" (no answer: timeout, refused connection; we cannot tell).
    """

    name: str  # "TLSv1.2" for a protocol probe, a cipher family id ("3des", "null", ...) otherwise
    result: str
    protocol: str | None = None  # what was negotiated when accepted
    cipher: str | None = None
    detail: str | None = None  # the server's alert, or why the probe is not testable
    # RFC 5746: did the server's ServerHello carry renegotiation_info? None at TLS 1.3, or when not read.
    secure_renegotiation: bool | None = None

    @property
    def accepted(self) -> bool:
        return self.result == "accepted"


def dhe_suite(cipher: str | None) -> bool:
    """Is this an ephemeral finite-field DH suite, by its OpenSSL name (DHE-RSA-AES128-GCM-SHA256,
    EDH-RSA-DES-CBC3-SHA, EXP-EDH-...) or its IANA one (TLS_DHE_RSA_WITH_...)? ECDHE is not. Here, beside
    DhGroup, so that the probes that read a group and the renderers that show it ask the same question."""
    return bool(cipher) and any(part in ("DHE", "EDH") for part in re.split(r"[-_]", cipher or ""))


@dataclass(frozen=True)
class DhGroup:
    """The finite-field Diffie-Hellman group a server uses for its DHE suites (Logjam, CVE-2015-4000): the size
    of the prime dh_p of its ServerKeyExchange (RFC 5246 7.4.3), read from one ClientHello offering only DHE
    suites at TLS 1.0-1.2 (fetch/tls_probes.py), sent on every scan with probes: a server preferring ECDHE still
    gives this group to the clients that offer no ECDHE.

    prime_bits is None when the size could not be read (the server timed out, closed in the middle of its key
    exchange, or sent something that is not a ServerKeyExchange, or refused that hello while another handshake
    of the scan got a DHE suite): `detail` says why, and nothing is judged from it."""

    prime_bits: int | None
    protocol: str | None = None  # what the DHE-only ClientHello got
    cipher: str | None = None  # IANA name of the DHE suite the server chose
    detail: str | None = None


@dataclass(frozen=True)
class TlsHandshake:
    """One TLS handshake to the target host (SNI and verification against our trust store)."""

    host: str
    port: int
    address: str = ""
    protocol: str | None = None  # "TLSv1.3", ...
    cipher: str | None = None  # OpenSSL cipher name
    cipher_bits: int | None = None
    chain: tuple[CertificateInfo, ...] = ()  # leaf first, as far as the server sent and we could read
    # The path the verifier built from the leaf to a trust anchor, the anchor left out (leaf first; it may hold an
    # intermediate from the trust store, and leaves out what the server sent off the path, such as a cross-signed
    # copy of the root). Empty when untrusted, unreadable or hand-made: then the chain as sent is what is judged.
    verified_path: tuple[CertificateInfo, ...] = ()
    trusted: bool = False  # the chain verified against the system store plus WEBSEC_CA_BUNDLE
    verify_error: str | None = None  # OpenSSL's reason when not trusted
    hostname_matches: bool = False
    failure: Failure | None = None  # no handshake at all
    key_exchange_group: str | None = None  # "x25519", "secp256r1", ... (None: unknown or RSA key exchange)
    # The chain lacks an intermediate: False only when a trusted path exists once it is added (found in
    # the local store, above a gap in what was sent, or at the caIssuers URL); missing_issuer names it.
    # None when the chain was not judged (hand-made snapshots, failed handshakes, an untrusted CA).
    chain_complete: bool | None = None
    missing_issuer: str | None = None
    # Not trusted because the path ends at a CA no trust store holds (a private root): its name.
    untrusted_ca: str | None = None
    ocsp_staple: bytes | None = None  # the stapled OCSP response (DER); None when none was stapled
    # The trusted path ends at a public root (in certifi's bundle, Mozilla's program, or the system's default
    # bundle): True; at a root installed locally (found only in WEBSEC_CA_BUNDLE): False. None when not looked
    # at: untrusted, hand-made, or a leaf within the CA/B lifetime limit that embeds the SCTs browsers ask of a
    # public CA's (the checks that need it; see fetch/tls.py `_public_root`).
    public_root: bool | None = None
    # The SHA-256 (hex) of the SubjectPublicKeyInfo of the root the trusted path ends at: None when untrusted,
    # unread or hand-made. What the browsers' constraints on a root are keyed by (data/distrusted_roots.toml).
    anchor_key: str | None = None
    # That root's certificate (DER), as the trust store holds it (servers need not send it): what a PKIX-TA TLSA
    # record may name (checks/tls_dane.py). None when anchor_key is.
    anchor: bytes | None = None
    # The server's DHE group (fetch/tls.py asks every server along with the probes): None when the server accepts
    # no DHE suite, or it was not asked (no probes, hand-made snapshots).
    dh_group: DhGroup | None = None
    protocols: tuple[TlsProbe, ...] = ()  # one probe per protocol version, newest first (empty: not probed)
    cipher_probes: tuple[TlsProbe, ...] = ()  # one probe per weak cipher family (empty: not probed)
    not_testable: tuple[str, ...] = ()  # what this scanner cannot observe, with the reason
    # RFC 5746, as the grading handshake's ServerHello showed it: None at TLS 1.3 (the probes may tell) or unread.
    secure_renegotiation: bool | None = None
    # The server asked for a client certificate in the grading handshake (mutual TLS), whether or not the
    # handshake then completed without one: browsers without one are refused, or prompted to pick one.
    client_certificate_requested: bool = False
    # The CA's word on the leaf (a trusted one the server staples no current OCSP answer for): None when not asked.
    revocation: RevocationAnswer | None = None
    # The server offered TLS heartbeats in the grading handshake (RFC 6520; no current browser or OpenSSL has them),
    # and what it answered to the Heartbleed probe then: None when it offered none, or was not asked.
    heartbeat: HeartbeatCheck | None = None
    # The Certificate Transparency SCTs the server sent in the grading handshake (RFC 6962 3.3.1: in the ServerHello
    # up to TLS 1.2, with the certificate in TLS 1.3): () when none, None when not read (failed or hand-made).
    handshake_scts: tuple[SignedTimestamp, ...] | None = None

    @property
    def leaf(self) -> CertificateInfo | None:
        return self.chain[0] if self.chain else None

    def refused_by_browsers(self, at: datetime) -> str | None:
        """Why a browser refuses this handshake's certificate at `at`, or None when it accepts it: an untrusted
        chain, a leaf outside its validity period (the fetch counts the leaf's dates as trusted, since the checks
        grade them at the scan's time), a name mismatch. One rule for HSTS's "secure transport errors" (RFC 6797
        §8.1) and a www that HSTS sends browsers to. Say nothing of a failed handshake (its `failure` does)."""
        leaf = self.leaf
        if not self.trusted:
            return self.verify_error or "untrusted"
        if leaf is not None and (dated := leaf.dated_problem(at)) is not None:
            kind, words = dated
            return f"the certificate {words}" if kind == "expired" else f"the certificate is {words}"
        if not self.hostname_matches:
            names = [*leaf.san_dns, *leaf.san_ip] if leaf is not None else []
            # a host name has at most 253 characters (RFC 1035 3.1): anything longer is cut, not copied whole
            named = ", ".join(n if len(n) <= 253 else n[:253] + "…" for n in names[:3])
            named += f" and {len(names) - 3} more" if len(names) > 3 else ""
            return f"the certificate names {named or 'no host'}, not {self.host}"
        return None


@dataclass(frozen=True)
class PassedOver:
    """An address of a host that opened no connection to one of its ports, and the address the scan went on at
    (fetch/resolve.py Pinner): refused or unreachable, or no answer within the connect timeout (`timed_out`)."""

    host: str
    port: int
    address: str
    timed_out: bool
    instead: str


@dataclass(frozen=True)
class DnsAnswer:
    """The answer to one DNS query. rcode: "NOERROR", "NXDOMAIN", "SERVFAIL", "TIMEOUT", ..."""

    name: str
    rdtype: str
    rcode: str = "NOERROR"
    records: tuple[str, ...] = ()  # presentation format (dnspython to_text())
    error: str | None = None
    signatures: tuple[str, ...] = ()  # RRSIGs covering the records (asked with the DO bit), presentation format

    @property
    def exists(self) -> bool:
        return self.rcode == "NOERROR"


@dataclass(frozen=True)
class NameserverReply:
    """What one name server said when asked directly, without recursion (fetch/nameservers.py): a server the domain's
    NS records or its parent zone's delegation name, asked for the domain's SOA (does it serve the zone?), or a
    server of the parent zone asked for the domain's NS records (which servers the registry delegates it to).

    rcode: "NOERROR", "REFUSED", "SERVFAIL", "NXDOMAIN", ... as the server said it; "TIMEOUT" for no reply in time,
    "ERROR" for none at all (a refused address, a socket error, a reply that does not parse, an address lookup that
    failed), with `error`; "NOADDRESS" for a server not asked because it has no address (its A and AAAA lookups
    answered with none), with an empty `address` and why in `error` ("the name does not exist").
    authoritative: the reply's AA bit. records: the answer's records of that name and type; referral: the name
    servers a referral's authority section names (the parent's delegation)."""

    server: str
    address: str
    name: str
    rdtype: str
    rcode: str = "NOERROR"
    authoritative: bool = False
    records: tuple[str, ...] = ()
    referral: tuple[str, ...] = ()
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.rcode not in ("TIMEOUT", "ERROR", "NOADDRESS")


@dataclass(frozen=True)
class DnsSnapshot:
    """Every DNS answer the scan collected, keyed by (name, rdtype), and the replies of the name servers it asked
    directly (`nameserver_replies`)."""

    host: str
    answers: tuple[DnsAnswer, ...] = ()
    nameserver_replies: tuple[NameserverReply, ...] = ()
    #: Why the fetch stopped asking before it had asked every follow-up its answers call for (the scan's time
    #: budget, the follow-ups' deadline, an error: fetch/dns.py); None when nothing stopped it. A lookup a cut
    #: snapshot lacks may be one a check needs and nobody asked, which says nothing of the records there.
    cut: str | None = None

    def get(self, name: str, rdtype: str) -> DnsAnswer | None:
        name, rdtype = name.rstrip(".").lower(), rdtype.upper()
        for answer in self.answers:
            if answer.name == name and answer.rdtype == rdtype:
                return answer
        return None

    def records(self, name: str, rdtype: str) -> tuple[str, ...]:
        answer = self.get(name, rdtype)
        return answer.records if answer else ()


@dataclass(frozen=True)
class Timing:
    """When one part of the fetch ran, in seconds since the scan started."""

    part: str
    start: float
    end: float


CorsProbeKind = Literal["foreign", "lookalike", "http", "http_port_80", "null"]


@dataclass(frozen=True)
class CorsProbe:
    """The final URL requested once more with an `Origin` that another page could send (checks/cors.py).

    kind: "lookalike" (a name that a prefix, suffix or substring check of the target's name accepts, and no
    correct allowlist does), "foreign" (a site that is nothing to the target, asked only when the look-alike's
    answer leaves it something to tell), "http" (the page's own origin over cleartext http, its host and port,
    asked only of an https page), "http_port_80" (the host's http origin on port 80, asked besides of an https
    page on another port than 443) or "null" (sandboxed iframes, `data:` documents). The origins are built by
    fetch/cors_origins.py.

    cookies: the names of the cookies the request carried, those a browser that loaded the page sends with a
    request from a page of that origin; cookies_withheld: the names of those the site's own request for the page
    carries and a browser keeps from that origin's requests (SameSite, CHIPS)."""

    kind: CorsProbeKind
    origin: str
    response: HttpResponse | None = None
    failure: Failure | None = None  # why there is no response
    cookies: tuple[str, ...] = ()
    cookies_withheld: tuple[str, ...] = ()


@dataclass(frozen=True)
class MailServer:
    """One MX host as a sending mail server meets it (fetch/smtp.py): its greeting ("220 mx.example.com ESMTP"),
    whether its answer to EHLO offers STARTTLS (None: the dialogue did not get that far), and the TLS handshake after
    STARTTLS (host: the MX host, port: the SMTP port), whose own failure is the handshake's; `failure` when the
    dialogue stopped before it (no connection, no STARTTLS, a refusal, silence)."""

    host: str
    greeting: str | None = None
    starttls: bool | None = None
    tls: TlsHandshake | None = None
    failure: Failure | None = None

    @property
    def mail_tls(self) -> MailTls:
        """What a sending server gets here: the handshake after STARTTLS when it completed; else why mail goes
        without TLS (no STARTTLS, refused, a handshake that fails after it); else why the scan could not tell (no
        connection, a refusal of the scanner, silence: a timeout after STARTTLS is silence, not a verdict)."""
        failure = self.failure
        if failure is None and self.tls is not None:
            if self.tls.failure is None:
                return MailTls("tls", self.tls)
            return MailTls(
                "none", f"the TLS handshake with {self.host} fails after STARTTLS ({self.tls.failure.message})"
            )
        if failure is not None and self.starttls is False:
            return MailTls("none", f"{self.host} does not offer STARTTLS")
        if failure is not None and self.starttls and failure.kind != "timeout":
            return MailTls("none", f"{self.host} offers STARTTLS and then fails it ({failure.message})")
        return MailTls("unknown", failure.message if failure is not None else "no answer")


@dataclass(frozen=True)
class MailTls:
    """`MailServer.mail_tls`: "tls" with the handshake, or "none" (mail goes in cleartext) or "unknown" (the scan
    could not tell) with why, in words."""

    state: Literal["tls", "none", "unknown"]
    what: TlsHandshake | str

    @property
    def handshake(self) -> TlsHandshake | None:
        return self.what if isinstance(self.what, TlsHandshake) else None

    def said(self, state: Literal["none", "unknown"]) -> str | None:
        """Why, when the state is `state`."""
        return self.what if self.state == state and isinstance(self.what, str) else None


@dataclass(frozen=True)
class SiteSnapshot:
    """Everything fetched for one scan. Checks read it; nothing writes it."""

    target: Target
    main: FetchChain  # the URL as given, following redirects
    fetched_at: datetime  # when the fetch started: checks use it as "now", so they stay pure
    http_upgrade: FetchChain | None = None  # http://host/, to grade the HTTP -> HTTPS redirect
    cors_probes: tuple[CorsProbe, ...] = ()  # in the order they were sent; empty: none were
    security_txt: FetchChain | None = None  # /.well-known/security.txt (or /security.txt fallback)
    tls: TlsHandshake | None = None
    dns: DnsSnapshot = field(default_factory=lambda: DnsSnapshot(host=""))
    timings: tuple[Timing, ...] = ()
    # RFC 8461 MTA-STS: the policy file (fetched only when the `_mta-sts` TXT record announces one,
    # never following redirects, section 3.3) and the handshake with its host, whose certificate must be valid.
    mta_sts_policy: FetchChain | None = None
    mta_sts_tls: TlsHandshake | None = None
    # addresses that opened no connection to a port another address then opened, in the order they failed
    passed_over: tuple[PassedOver, ...] = ()
    # The handshake of the host scanned when the page is on another host (`tls` is the page's): visitors meet its
    # certificate first, at the redirect. None when the page is on the host scanned.
    entry_tls: TlsHandshake | None = None
    # www.<domain>'s HTTPS (one handshake, no probes) when the page is at the registered domain and its HSTS policy
    # includes subdomains: browsers that keep the policy send every visit to www over HTTPS. None when not asked, or
    # www has no address the scan may reach.
    www_tls: TlsHandshake | None = None
    # The domain's MX hosts asked for STARTTLS (fetch/smtp.py), in the MX records' order: () when none were asked (no
    # MX, null MX, an IP target, or Settings.smtp_port 0).
    mail_servers: tuple[MailServer, ...] = ()

    @property
    def final(self) -> HttpResponse | None:
        return self.main.final

    @property
    def final_target_host(self) -> str:
        try:
            return parse_target(self.main.final_url).host
        except (InvalidTarget, ValueError):  # a malformed final URL falls back to the input host
            return self.target.host
