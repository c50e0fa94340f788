"""DNSSEC for one zone, validated with dnspython's `dns.dnssec` instead of trusting a flag.

"A DS exists" proves nothing; a validating resolver (RFC 4035 5) accepts the zone only when
- a DS in the parent matches one of the zone's DNSKEYs (digest and key tag, RFC 4034 5.1.4),
- that key's RRSIG over the DNSKEY RRset verifies and is within its validity window,
- and the zone's data is signed by its DNSKEYs (we verify the SOA RRset).
The parent's own signature over the DS (and so on up to the root) is not validated here.
Pure: the records and RRSIGs come from the snapshot, "now" is the scan's start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import dns.exception
import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from ..records.dns_text import failed
from ..snapshot import DnsAnswer, DnsSnapshot


@dataclass(frozen=True)
class DnssecVerdict:
    status: str  # "secure" | "unsigned" | "island" | "broken" | "unknown"
    note: str
    ds: tuple[str, ...] = ()
    dnskeys: int = 0


def _rrset(name: dns.name.Name, rdtype: str, records: tuple[str, ...]) -> dns.rrset.RRset:
    return dns.rrset.from_text_list(name, 300, dns.rdataclass.IN, rdtype, list(records))


def _validate(
    rrset: dns.rrset.RRset, answer: DnsAnswer, name: dns.name.Name, keys: dns.rrset.RRset, now: float
) -> str | None:
    """None when a signature over `rrset` verifies with `keys`; otherwise why not."""
    if not answer.signatures:
        return f"the {answer.rdtype} records carry no signature"
    try:
        signatures = _rrset(name, "RRSIG", answer.signatures)
        import dns.dnssec  # already loaded by validate_zone

        dns.dnssec.validate(rrset, signatures, {name: keys}, now=now)
    except dns.exception.ValidationFailure as exc:
        return f"the signature over the {answer.rdtype} records does not verify ({_why(signatures, now) or exc})"
    except dns.exception.DNSException as exc:
        return f"the {answer.rdtype} signatures cannot be read ({exc})"
    return None


def _why(signatures: dns.rrset.RRset, now: float) -> str | None:
    """dnspython says only "no RRSIGs validated"; the validity window (RFC 4034 3.1.5) is the usual cause."""
    windows = [(rrsig.inception, rrsig.expiration) for rrsig in signatures]
    if windows and all(expiration < now for _, expiration in windows):
        latest = datetime.fromtimestamp(max(e for _, e in windows), UTC)
        return f"the signatures expired on {latest:%Y-%m-%d %H:%M} UTC: the zone is no longer being re-signed"
    if windows and all(inception > now for inception, _ in windows):
        return "the signatures are not valid yet (a signer clock ahead of time)"
    return None


def validate_zone(domain: str, snapshot: DnsSnapshot, now: datetime) -> DnssecVerdict | None:
    """None when the DS/DNSKEY records were not fetched."""
    ds_answer, key_answer, soa_answer = (snapshot.get(domain, t) for t in ("DS", "DNSKEY", "SOA"))
    if ds_answer is None or key_answer is None:
        return None
    for answer in (ds_answer, key_answer):
        if failed(answer):
            return DnssecVerdict("unknown", f"the {answer.rdtype} query failed ({answer.error or answer.rcode})")
    ds_records, key_records = ds_answer.records, key_answer.records
    if not ds_records and not key_records:
        return DnssecVerdict("unsigned", "no DS record in the parent zone and no DNSKEY")
    if not ds_records:
        return DnssecVerdict(
            "island",
            "the zone publishes DNSKEYs but the parent has no DS record, so no resolver can validate it",
            dnskeys=len(key_records),
        )
    if not key_records:
        return DnssecVerdict("broken", "the parent has a DS record but the zone publishes no DNSKEY", ds=ds_records)
    if not key_answer.signatures:
        # A signed zone always signs its DNSKEY RRset (RFC 4035 2.2); none at all means the resolver we
        # asked drops RRSIGs (no DNSSEC support, or the DO bit stripped): we cannot tell, so we do not guess.
        return DnssecVerdict(
            "unknown",
            "the resolver returned the DNSKEYs without signatures, so the chain could not be validated",
            ds=ds_records,
            dnskeys=len(key_records),
        )
    # dns.dnssec (and the cryptography it loads, ~25 ms) only for a zone that has a chain to validate (issue 14)
    import dns.dnssec

    name = dns.name.from_text(domain)
    timestamp = now.timestamp()
    try:
        keys = _rrset(name, "DNSKEY", key_records)
        ds_set = _rrset(name, "DS", ds_records)
    except dns.exception.DNSException as exc:
        return DnssecVerdict("unknown", f"the DNSKEY or DS records cannot be read ({exc})", ds=ds_records)
    matching = []
    unsupported = []
    for ds in ds_set:
        for key in keys:
            if dns.dnssec.key_id(key) != ds.key_tag or key.algorithm != ds.algorithm:
                continue
            try:
                if dns.dnssec.make_ds(name, key, ds.digest_type, validating=True) == ds:
                    matching.append(key)
            except (dns.exception.UnsupportedAlgorithm, dns.exception.DeniedByPolicy) as exc:
                unsupported.append(str(exc))
    if not matching:
        if unsupported:
            return DnssecVerdict("unknown", f"cannot check the DS digest: {unsupported[0]}", ds=ds_records)
        return DnssecVerdict(
            "broken",
            "no DNSKEY of the zone matches the DS record in the parent (a key rollover gone wrong?)",
            ds=ds_records,
            dnskeys=len(key_records),
        )
    sep_keys = dns.rrset.from_rdata_list(name, 300, matching)
    problem = _validate(keys, key_answer, name, sep_keys, timestamp)
    if problem is None and soa_answer is not None and soa_answer.records:
        problem = _validate(_rrset(name, "SOA", soa_answer.records), soa_answer, name, keys, timestamp)
    if problem is not None:
        return DnssecVerdict("broken", problem, ds=ds_records, dnskeys=len(key_records))
    return DnssecVerdict(
        "secure",
        "the DS in the parent matches the zone's key, and the DNSKEY and SOA signatures verify",
        ds=ds_records,
        dnskeys=len(key_records),
    )
