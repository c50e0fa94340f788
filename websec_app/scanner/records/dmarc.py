"""DMARC (RFC 7489): parse the policy record of `_dmarc.<domain>` as a mail receiver would.

Section 6.3 (the tags), 6.4 (the formal syntax), 6.6.3 (policy discovery: records that do not
start with v=DMARC1 are discarded, several records mean no policy, an invalid p or sp falls back
to p=none only when a valid rua is present) and 7.1 (reports sent to another domain need that
domain's consent record `<domain>._report._dmarc.<other>`). The tags DMARCbis adds
(draft-ietf-dmarc-dmarcbis: np, psd, t) are understood and validated; other unknown tags are
ignored, as 6.3 requires ("Unknown tags MUST be ignored").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    "mailto_address",
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
_SIZE = re.compile(r"^\d+[kmgt]?$", re.IGNORECASE)
_PCT = re.compile(r"[0-9]{1,3}")  # ASCII digits only: int() also takes "-5", "+5", " 5" and "٥"
_LOCAL_PART = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$")


@dataclass(frozen=True)
class ReportUri:
    uri: str
    valid: bool
    problem: str | None = None
    domain: str | None = None  # the mailbox domain, for mailto: URIs


@dataclass
class DmarcRecord:
    text: str
    tags: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    rua: list[ReportUri] = field(default_factory=list)
    ruf: list[ReportUri] = field(default_factory=list)

    @property
    def policy(self) -> str | None:
        value = self.tags.get("p", "").lower()
        sp_valid = self.tags.get("sp", "none").lower() in POLICIES
        if value in POLICIES and sp_valid:
            return value
        # RFC 7489 6.6.3 step 5: a missing or invalid p, or an invalid sp, with a valid rua is
        # treated as p=none; without one, no DMARC processing is applied at all.
        return "none" if any(u.valid for u in self.rua) else None

    @property
    def non_existent_policy(self) -> str | None:
        """DMARCbis np: the policy for subdomains that do not exist; defaults to sp, then p."""
        value = self.tags.get("np", "").lower()
        return value if value in POLICIES and self.policy is not None else self.subdomain_policy

    @property
    def testing(self) -> bool:
        """DMARCbis t=y: the owner asks receivers not to apply the policy yet."""
        return self.tags.get("t", "n").lower() == "y"

    @property
    def ignored_tags(self) -> list[str]:
        return [name for name in self.tags if name not in KNOWN_TAGS]

    @property
    def subdomain_policy(self) -> str | None:
        value = self.tags.get("sp", "").lower()
        return value if value in POLICIES and self.policy is not None else self.policy

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
    """RFC 7489 6.6.3 steps 3-4: the DMARC records among a name's TXT strings, and the records
    discarded although they look like DMARC (a wrong-case version, leading whitespace, v not first)."""
    records = [t for t in txt_values if is_dmarc(t)]
    near_misses = [t for t in txt_values if not is_dmarc(t) and _LOOKS_LIKE_DMARC.search(t)]
    return records, near_misses


def is_mail_address(address: str) -> bool:
    """local-part@domain, as a report mailto: URI needs (RFC 7489 6.2, RFC 8460 3)."""
    local, at, domain = address.partition("@")
    return bool(at and local and _LOCAL_PART.match(local) and is_domain_name(domain))


def mailto_address(path: str) -> str:
    """The address of a mailto: URI (what follows `mailto:`): RFC 6068 2, header fields such as `?subject=x`
    follow the first `?`, which the address itself holds only percent-encoded. RFC 7489 6.2 (DMARC) and RFC
    8460 3 (TLS-RPT) take report addresses as such URIs."""
    return path.partition("?")[0]


def _report_uri(raw: str) -> ReportUri:
    """RFC 7489 6.2: a URI, optionally followed by "!" and a size limit."""
    uri = raw.strip()
    address, bang, size = uri.partition("!")
    if bang and not _SIZE.match(size):
        return ReportUri(uri, False, f"bad size limit in {uri!r}")
    scheme, colon, rest = address.partition(":")
    if not colon:
        return ReportUri(uri, False, f"{uri!r} is not a URI (mailto:... expected)")
    scheme = scheme.lower()
    if scheme == "mailto":
        mailbox = mailto_address(rest)
        if not is_mail_address(mailbox):
            return ReportUri(uri, False, f"{uri!r} is not a valid mailto: address")
        return ReportUri(uri, True, domain=mailbox.partition("@")[2].rstrip(".").lower())
    if scheme == "https":
        return ReportUri(uri, True)
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
        if name in record.tags:
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
        if uri.valid and uri.domain and registrable_domain(uri.domain) != own and uri.domain not in found:
            found.append(uri.domain)
    return found


def consent_name(domain: str, report_domain: str) -> str:
    return f"{domain}._report._dmarc.{report_domain}"
