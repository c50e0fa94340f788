"""DMARC (RFC 7489): parse the policy record of `_dmarc.<domain>` as a mail receiver would.

Section 6.3 (the tags), 6.4 (the formal syntax), 6.6.3 (policy discovery: records that do not
start with v=DMARC1 are discarded, several records mean no policy, an invalid p or sp falls back
to p=none only when a valid rua is present) and 7.1 (reports sent to another domain need that
domain's consent record `<domain>._report._dmarc.<other>`). The tags DMARCbis adds
(draft-ietf-dmarc-dmarcbis: np, psd, t) are understood and validated, and an invalid np falls back
like an invalid sp (its policy discovery); other unknown tags are ignored, as 6.3 requires
("Unknown tags MUST be ignored").

Where receivers are laxer than 6.4's grammar, this module follows them, and says so: p may come
anywhere after v (6.4 wants it second; OpenDMARC and DMARCbis's grammar take any order), and a
tag given twice keeps its last value (DKIM's tag-list, which 6.3 adopts, makes such a record
invalid; OpenDMARC reads it in order, the last value winning), reported as an error either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..registrable import registrable_domain
from .dns_text import is_domain_name

__all__ = [
    "DmarcRecord",
    "KNOWN_TAGS",
    "POLICIES",
    "ReportUri",
    "consent_name",
    "discover",
    "external_report_domains",
    "is_dmarc",
    "is_mail_address",
    "mailto_addresses",
    "parse_dmarc",
]

POLICIES = ("none", "quarantine", "reject")
# RFC 7489 6.3 tags, then the ones draft-ietf-dmarc-dmarcbis adds (np, psd, t). DMARCbis drops
# pct, rf and ri; receivers still read them, so they stay known.
KNOWN_TAGS = ("v", "p", "sp", "rua", "ruf", "adkim", "aspf", "pct", "fo", "rf", "ri", "np", "psd", "t")
# DMARCbis: psd=y (a public suffix domain), n (not one), u (unknown, the default); t=y asks
# receivers not to apply the policy (testing, what pct=0 meant), t=n is the default.
_BIS_VALUES = {"psd": ("y", "n", "u"), "t": ("y", "n")}
# RFC 7489 6.4: dmarc-version = "v" *WSP "=" *WSP %x44 %x4d %x41 %x52 %x43 %x31, and a record is
# dmarc-version first, then dmarc-sep (*WSP ";" *WSP). The tag name is the ABNF literal "v",
# case-insensitive (RFC 5234 2.3); the value is spelled with %x codes, i.e. exactly "DMARC1",
# which 6.3 repeats ("The value of this tag MUST match precisely; if it does not or it is absent,
# the entire retrieved record MUST be ignored. It MUST be the first tag in the list."). Nothing
# may come before it, whitespace included. A bare "v=DMARC1" (consent records, erratum 5440) counts.
_VERSION = re.compile(r"(?i:v)[ \t]*=[ \t]*DMARC1[ \t]*(?:;|$)")
# What an author probably meant as a DMARC record: said in the "no DMARC record" note.
_LOOKS_LIKE_DMARC = re.compile(r"\bv\s*=\s*dmarc", re.IGNORECASE)
# tag-name "=" value (RFC 7489 6.4), whitespace allowed around each. Only the name and "=" are matched;
# parse_dmarc strips the value in Python. `=\s*(.*?)\s*$` tried every end of the value against the
# whole run of whitespace after it: quadratic in a long run of spaces (`x=y` + 60 KB of spaces + `z`:
# 7.9 s, on the event loop, as fetch/dns.py parses the record while fetching).
_TAG = re.compile(r"\s*+([a-z][a-z0-9_]*+)\s*+=", re.IGNORECASE)
# RFC 7489 6.4: dmarc-uri = URI [ "!" 1*DIGIT [ "k" / "m" / "g" / "t" ] ], "the numeric portion MUST fit
# within an unsigned 64-bit integer". ASCII digits (`\d` also takes "٥"), and at most 20 of them: int() refuses a
# number past 4,300 digits, which a 64 KB record can hold.
_SIZE = re.compile(r"([0-9]{1,20})[kmgt]?", re.IGNORECASE)
_MAX_SIZE = 2**64 - 1
_PCT = re.compile(r"[0-9]{1,3}")  # ASCII digits only: int() also takes "-5", "+5", " 5" and "٥"
# RFC 7489 6.4: dmarc-fo = ( "0" / "1" / "d" / "s" ) *(*WSP ":" *WSP ( "0" / "1" / "d" / "s" ))
_FO = re.compile(r"[01ds](?:[ \t]*:[ \t]*[01ds])*", re.IGNORECASE)
# 6.3: ri is a 32-bit unsigned integer of seconds; rf lists formats from the registry of 11, which holds afrf.
_RI = re.compile(r"[0-9]{1,10}")
_MAX_RI = 2**32 - 1
_REPORT_FORMATS = ("afrf",)
_LOCAL_PART = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$")


@dataclass(frozen=True)
class ReportUri:
    uri: str
    valid: bool
    problem: str | None = None
    # Where the reports go, whose consent 7.1 asks when outside the domain's organisation: each mailbox's domain
    # of a mailto: URI, the host of an https: one ("the host portion of the authority component").
    hosts: tuple[str, ...] = ()


@dataclass
class DmarcRecord:
    text: str
    tags: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    rua: list[ReportUri] = field(default_factory=list)
    ruf: list[ReportUri] = field(default_factory=list)

    @property
    def _policy_tags_valid(self) -> bool:
        """RFC 7489 6.6.3 step 6: a valid p, and a valid sp where there is one; DMARCbis's discovery adds np."""
        return self.tags.get("p", "").lower() in POLICIES and all(
            self.tags.get(name, "none").lower() in POLICIES for name in ("sp", "np")
        )

    @property
    def policy(self) -> str | None:
        if self._policy_tags_valid:
            return self.tags["p"].lower()
        # RFC 7489 6.6.3 step 6 (DMARCbis's policy discovery the same, np included): a missing or invalid p, or
        # an invalid sp or np, with a valid rua is read as a record "v=DMARC1; p=none"; without one, no DMARC
        # processing is applied at all. (DMARCbis reads a record without p as p=none whatever its rua; RFC 7489's
        # rule is kept: without a rua, neither applies any policy to forged mail.)
        return "none" if any(u.valid for u in self.rua) else None

    @property
    def subdomain_policy(self) -> str | None:
        """sp, or p without one; the fallback record of `policy` has neither, so its subdomains get its none."""
        value = self.tags.get("sp", "").lower()
        return value if self._policy_tags_valid and value else self.policy

    @property
    def non_existent_policy(self) -> str | None:
        """DMARCbis np: the policy for subdomains that do not exist; defaults to sp, then p."""
        value = self.tags.get("np", "").lower()
        return value if self._policy_tags_valid and value else self.subdomain_policy

    @property
    def testing(self) -> bool:
        """DMARCbis t=y: the owner asks receivers not to apply the policy yet."""
        return self.tags.get("t", "n").lower() == "y"

    @property
    def ignored_tags(self) -> list[str]:
        return [name for name in self.tags if name not in KNOWN_TAGS]

    @property
    def pct(self) -> int:
        """RFC 7489 6.3, 6.4: pct = 1*3DIGIT, 0 to 100; anything else ("-5", "+50", " 5", "²") is an
        error (parse_dmarc says so) and the default 100 applies."""
        value = self.tags.get("pct", "100")
        if _PCT.fullmatch(value) and int(value) <= 100:
            return int(value)
        return 100


def is_dmarc(text: str) -> bool:
    """RFC 7489 6.6.3 step 4: only records beginning with the v=DMARC1 tag count (see _VERSION)."""
    return bool(_VERSION.match(text))


def discover(txt_values: list[str]) -> tuple[list[str], list[str]]:
    """RFC 7489 6.6.3 step 2: the DMARC records among a name's TXT strings, and the records
    discarded although they look like DMARC (a wrong-case version, leading whitespace, v not first)."""
    records = [t for t in txt_values if is_dmarc(t)]
    near_misses = [t for t in txt_values if not is_dmarc(t) and _LOOKS_LIKE_DMARC.search(t)]
    return records, near_misses


def is_mail_address(address: str) -> bool:
    """local-part@domain, as a report mailto: URI needs (RFC 7489 6.2, RFC 8460 3)."""
    local, at, domain = address.partition("@")
    return bool(at and local and _LOCAL_PART.match(local) and is_domain_name(domain))


def mailto_addresses(path: str) -> list[str]:
    """The addresses of a mailto: URI (what follows `mailto:`), percent-decoded: RFC 6068 2, `to` is addr-spec
    *("," addr-spec) with characters outside the URI's percent-encoded, and header fields such as `?subject=x`
    follow the first `?`, which the addresses themselves hold only percent-encoded. RFC 7489 6.2 (DMARC) and
    RFC 8460 3 (TLS-RPT) take report addresses as such URIs, where a comma between two addresses is
    percent-encoded too (a bare one separates URIs). None for a URI without one."""
    to = unquote(path.partition("?")[0])
    return to.split(",") if to else []


def _uri_host(uri: str) -> str | None:
    try:
        host = urlsplit(uri).hostname
    except ValueError:  # an unbalanced "[" in the host, a bad port
        return None
    return (host or "").rstrip(".") or None


def _report_uri(raw: str) -> ReportUri:
    """RFC 7489 6.2: a URI, optionally followed by "!" and a size limit (commas and "!" in the URI itself are
    percent-encoded, 6.4: the first "!" starts the limit)."""
    uri = raw.strip()
    address, bang, size = uri.partition("!")
    limit = _SIZE.fullmatch(size)
    if bang and (limit is None or int(limit.group(1)) > _MAX_SIZE):
        return ReportUri(uri, False, f"bad size limit in {uri!r} (a number of at most 64 bits, then k, m, g or t)")
    scheme, colon, rest = address.partition(":")
    if not colon:
        return ReportUri(uri, False, f"{uri!r} is not a URI (mailto:... expected)")
    scheme = scheme.lower()
    if scheme == "mailto":
        mailboxes = mailto_addresses(rest)
        if not mailboxes or not all(is_mail_address(mailbox) for mailbox in mailboxes):
            return ReportUri(uri, False, f"{uri!r} is not a valid mailto: address")
        domains = (mailbox.rpartition("@")[2].rstrip(".").lower() for mailbox in mailboxes)
        return ReportUri(uri, True, hosts=tuple(dict.fromkeys(domains)))
    if scheme == "https":
        host = _uri_host(address)
        if host is None:
            return ReportUri(uri, False, f"{uri!r} names no host to send reports to")
        return ReportUri(uri, True, hosts=(host.lower(),))
    return ReportUri(uri, False, f"{uri!r}: reports are sent by mail (mailto:) or HTTPS, not {scheme}:")


def parse_dmarc(text: str) -> DmarcRecord:
    record = DmarcRecord(text)
    for part in text.split(";"):
        if not part.strip():
            continue
        match = _TAG.match(part)
        value = part[match.end() :].strip() if match else ""
        if not match or "\n" in value:  # a value is one line (the `.` of the pattern this replaced)
            record.errors.append(f"{part.strip()!r} is not tag=value")
            continue
        name = match.group(1).lower()
        if name in record.tags:  # the last value is kept, as OpenDMARC does (see the module's docstring)
            record.errors.append(f"the tag {name} appears twice")
        record.tags[name] = value
    for name in ("p", "sp", "np"):
        if name in record.tags and record.tags[name].lower() not in POLICIES:
            record.errors.append(f"{name}={record.tags[name]} is not none, quarantine or reject")
    for name, allowed in _BIS_VALUES.items():
        if name in record.tags and record.tags[name].lower() not in allowed:
            record.errors.append(f"{name}={record.tags[name]} is not {' or '.join(allowed)} (DMARCbis)")
    if "p" not in record.tags:
        record.errors.append("the required p tag is missing")
    if "pct" in record.tags:
        value = record.tags["pct"]
        # 6.4: pct = 1*3DIGIT (ASCII; str.isdigit takes "²", which int() refuses, and int() takes "-5").
        if not _PCT.fullmatch(value) or int(value) > 100:
            record.errors.append(f"pct={value} is not a whole number from 0 to 100")
    for name in ("adkim", "aspf"):
        if name in record.tags and record.tags[name].lower() not in ("r", "s"):
            record.errors.append(f"{name}={record.tags[name]} is not r or s")
    # fo, rf and ri only shape reports, but OpenDMARC discards a whole record with a bad value in any of them
    if "fo" in record.tags and not _FO.fullmatch(record.tags["fo"]):
        record.errors.append(f"fo={record.tags['fo']} is not 0, 1, d or s, or a list of them separated by ':'")
    if "rf" in record.tags:
        formats = [f.strip(" \t").lower() for f in record.tags["rf"].split(":")]
        if not all(f in _REPORT_FORMATS for f in formats):
            record.errors.append(f"rf={record.tags['rf']} is not afrf, the one registered failure report format")
    if "ri" in record.tags:
        value = record.tags["ri"]
        if not _RI.fullmatch(value) or int(value) > _MAX_RI:
            record.errors.append(f"ri={value} is not a number of seconds (a 32-bit unsigned integer)")
    for name in ("rua", "ruf"):
        if name in record.tags:
            uris = [_report_uri(u) for u in record.tags[name].split(",") if u.strip()]
            setattr(record, name, uris)
    return record


def external_report_domains(domain: str, record: DmarcRecord) -> list[str]:
    """Mailbox domains outside `domain`'s organisation: each must consent (RFC 7489 7.1)."""
    own = registrable_domain(domain)
    found = []
    for uri in (*record.rua, *record.ruf):
        for host in uri.hosts if uri.valid else ():
            if registrable_domain(host) != own and host not in found:
                found.append(host)
    return found


def consent_name(domain: str, report_domain: str) -> str:
    return f"{domain}._report._dmarc.{report_domain}"
