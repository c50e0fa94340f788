"""DMARC (RFC 7489): parse the policy record of `_dmarc.<domain>` as a mail receiver would.

Section 6.3 (the tags), 6.4 (the formal syntax), 6.6.3 (policy discovery: records that do not
start with v=DMARC1 are ignored, several records mean no policy, an invalid p falls back to
p=none only when a valid rua is present) and 7.1 (reports sent to another domain need that
domain's consent record `<domain>._report._dmarc.<other>`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..registrable import registrable_domain
from ._dns_text import is_domain_name

POLICIES = ("none", "quarantine", "reject")
_TAG = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SIZE = re.compile(r"^\d+[kmgt]?$", re.IGNORECASE)
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
        if value in POLICIES:
            return value
        # RFC 7489 6.6.3: an invalid or missing p with a valid rua is treated as p=none.
        return "none" if any(u.valid for u in self.rua) else None

    @property
    def subdomain_policy(self) -> str | None:
        value = self.tags.get("sp", "").lower()
        return value if value in POLICIES else self.policy

    @property
    def pct(self) -> int:
        try:
            return int(self.tags.get("pct", "100"))
        except ValueError:
            return 100


def is_dmarc(text: str) -> bool:
    """RFC 7489 6.6.3: only records beginning with the v=DMARC1 tag count."""
    return bool(re.match(r"^\s*v\s*=\s*DMARC1\s*(;|$)", text))


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
        local, at, domain = rest.partition("@")
        if not at or not local or not _LOCAL_PART.match(local) or not is_domain_name(domain):
            return ReportUri(uri, False, f"{uri!r} is not a valid mailto: address")
        return ReportUri(uri, True, domain=domain.rstrip(".").lower())
    if scheme == "https":
        return ReportUri(uri, True)
    return ReportUri(uri, False, f"{uri!r}: reports are sent by mail (mailto:) or HTTPS, not {scheme}:")


def parse_dmarc(text: str) -> DmarcRecord:
    record = DmarcRecord(text)
    for part in text.split(";"):
        if not part.strip():
            continue
        match = _TAG.match(part)
        if not match:
            record.errors.append(f"{part.strip()!r} is not tag=value")
            continue
        name, value = match.group(1).lower(), match.group(2)
        if name in record.tags:
            record.errors.append(f"the tag {name} appears twice")
        record.tags[name] = value
    for name in ("p", "sp"):
        if name in record.tags and record.tags[name].lower() not in POLICIES:
            record.errors.append(f"{name}={record.tags[name]} is not none, quarantine or reject")
    if "p" not in record.tags:
        record.errors.append("the required p tag is missing")
    if "pct" in record.tags:
        value = record.tags["pct"]
        if not value.isdigit() or int(value) > 100:
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
