"""DNSSEC for one zone, validated with dnspython's `dns.dnssec` instead of trusting a flag.

"A DS exists" proves nothing; a validating resolver (RFC 4035 5) accepts the zone only when
- a DS in the parent matches one of the zone's DNSKEYs (digest and key tag, RFC 4034 5.1.4): only DS
  records of algorithms and digests validators support count (none left: the zone is unsigned to them,
  RFC 4035 5.2), and of those only the strongest digest type present (RFC 4509 3),
- that key's RRSIG over the DNSKEY RRset verifies and is within its validity window,
- and the zone's data is signed by its DNSKEYs (we verify the SOA RRset).
The parent's own signature over the DS (and so on up to the root) is not validated here. A domain
with no zone of its own (alice.github.io) is judged by the zone holding it (github.io). A failed lookup
(a SERVFAIL, a timeout: not NXDOMAIN or NODATA, RFC 1035 4.1.1) of the DS, the DNSKEY, or the SOA that says
whether the domain is a zone and carries the signature over its data, gives no verdict ("unknown"): an SOA
that failed is not "unsigned".
The signature checks are capped as validating resolvers cap them since KeyTrap (CVE-2023-50387):
a zone that pairs hundreds of signatures with hundreds of keys sharing one key tag would otherwise
cost a minute of CPU to grade; past the cap, resolvers answer SERVFAIL and so the zone is broken.
Pure: the records and RRSIGs come from the snapshot, "now" is the scan's start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from ...wording import counted
from ..records.dns_text import enclosing_zone_names, failed
from ..snapshot import DnsAnswer, DnsSnapshot

if TYPE_CHECKING:
    from dns.rdtypes.ANY.DNSKEY import DNSKEY

#: KeyTrap limits (CVE-2023-50387), of the size Unbound 1.19.1 and systemd-resolved chose: the signatures
#: tried over one RRset, the keys tried for one signature (keys sharing its key tag and algorithm), the
#: DS records compared with the keys, and the signature verifications for the whole zone.
MAX_SIGNATURES_PER_RRSET = 8
MAX_KEYS_PER_TAG = 4
MAX_DS_RECORDS = 8
MAX_VERIFICATIONS = 16

#: What validating resolvers check (RFC 8624 3.1, 3.3, as dnspython implements it): RSAMD5 (1), DSA (3) and
#: DSA-NSEC3-SHA1 (6) MUST NOT be validated, ECC-GOST (12) and GOST R 34.11-94 digests (3) are not implemented
#: by dnspython nor by most resolvers, and an unknown or private number cannot be.
VALIDATED_ALGORITHMS = frozenset({5, 7, 8, 10, 13, 14, 15, 16})
VALIDATED_DIGESTS = frozenset({1, 2, 4})  # SHA-1, SHA-256, SHA-384
#: RSASHA1 (5) and RSASHA1-NSEC3-SHA1 (7): still validated, NOT RECOMMENDED for signing (RFC 8624 3.1).
SHA1_ALGORITHMS = frozenset({5, 7})

TOO_MUCH_WORK = "too many signatures or colliding keys; validating resolvers answer SERVFAIL"

_KeyIndex = dict[tuple[int, int], list["DNSKEY"]]


@dataclass(frozen=True)
class DnssecVerdict:
    status: str  # "secure" | "unsigned" | "island" | "broken" | "unknown"
    note: str
    ds: tuple[str, ...] = ()
    dnskeys: int = 0
    zone: str = ""  # the zone judged, when the domain is a name inside another's (github.io for alice.github.io)


class _Budget:
    """The signature verifications left for the zone."""

    def __init__(self) -> None:
        self.left = MAX_VERIFICATIONS


def _rrset(name: dns.name.Name, rdtype: str, records: tuple[str, ...]) -> dns.rrset.RRset:
    return dns.rrset.from_text_list(name, 300, dns.rdataclass.IN, rdtype, list(records))


def _unsupported(ds_set: dns.rrset.RRset) -> str:
    """`algorithm DSA (3)`, `digest type GOST (3)`: what the DS records name that no validator accepts."""
    from dns.dnssectypes import Algorithm, DSDigest

    found = []
    for ds in ds_set:
        if ds.algorithm not in VALIDATED_ALGORITHMS:
            found.append(f"algorithm {Algorithm.to_text(ds.algorithm)} ({ds.algorithm})")
        else:
            found.append(f"digest type {DSDigest.to_text(ds.digest_type)} ({ds.digest_type})")
    return " and ".join(dict.fromkeys(found))


def _key_index(keys: dns.rrset.RRset) -> _KeyIndex:
    """The keys by (algorithm, key tag), each tag computed once (RFC 4034 B)."""
    import dns.dnssec

    index: _KeyIndex = {}
    for key in keys:
        index.setdefault((key.algorithm, dns.dnssec.key_id(key)), []).append(key)
    return index


def _candidates(index: _KeyIndex, algorithm: int, key_tag: int) -> tuple[list[DNSKEY], bool]:
    """The keys a DS or a signature may name, at most MAX_KEYS_PER_TAG; and whether some were left out."""
    found = index.get((algorithm, key_tag), [])
    return found[:MAX_KEYS_PER_TAG], len(found) > MAX_KEYS_PER_TAG


def _validate(
    rrset: dns.rrset.RRset,
    answer: DnsAnswer,
    name: dns.name.Name,
    keys: _KeyIndex,
    now: float,
    budget: _Budget,
) -> str | None:
    """None when a signature over `rrset` verifies with one of `keys`; otherwise why not. Each signature
    is tried with the keys its key tag names, within the caps: never every signature with every key."""
    import dns.dnssec  # already loaded by validate_zone

    if not answer.signatures:
        return f"the {answer.rdtype} records carry no signature"
    try:
        signatures = _rrset(name, "RRSIG", answer.signatures)
    except dns.exception.DNSException as exc:
        return f"the {answer.rdtype} signatures cannot be read ({exc})"
    tried, capped = 0, False
    for rrsig in signatures:
        if rrsig.signer != name or rrsig.type_covered != rrset.rdtype:
            continue
        candidates, left_out = _candidates(keys, rrsig.algorithm, rrsig.key_tag)
        capped = capped or left_out
        if not candidates:
            continue
        if tried == MAX_SIGNATURES_PER_RRSET or budget.left < len(candidates):
            capped = True
            break
        tried += 1
        budget.left -= len(candidates)
        try:
            dns.dnssec.validate_rrsig(rrset, rrsig, {name: dns.rrset.from_rdata_list(name, 300, candidates)}, now=now)
            return None
        except (dns.exception.ValidationFailure, dns.exception.UnsupportedAlgorithm):
            continue
        except dns.exception.DNSException as exc:
            return f"the {answer.rdtype} signatures cannot be read ({exc})"
    if capped:
        return f"the signatures over the {answer.rdtype} records were not all checked: {TOO_MUCH_WORK}"
    why = _why(signatures, now) or "no RRSIGs validated"
    return f"the signature over the {answer.rdtype} records does not verify ({why})"


def _why(signatures: dns.rrset.RRset, now: float) -> str | None:
    """dnspython says only "no RRSIGs validated"; the validity window (RFC 4034 3.1.5) is the usual cause."""
    windows = [(rrsig.inception, rrsig.expiration) for rrsig in signatures]
    if windows and all(expiration < now for _, expiration in windows):
        latest = datetime.fromtimestamp(max(e for _, e in windows), UTC)
        return f"the signatures expired on {latest:%Y-%m-%d %H:%M} UTC: the zone is no longer being re-signed"
    if windows and all(inception > now for inception, _ in windows):
        return "the signatures are not valid yet (a signer clock ahead of time)"
    return None


def _query_failed(answer: DnsAnswer) -> str:
    return f"the {answer.rdtype} query failed ({answer.error or answer.rcode})"


def _in_enclosing_zone(domain: str, snapshot: DnsSnapshot, now: datetime) -> DnssecVerdict | None:
    """The verdict on the zone holding `domain`, a name with no zone of its own (its SOA query answered with no
    record: alice.github.io is in github.io's zone, signed or not by GitHub). None when that zone was not found
    among the names asked: nothing is said then, rather than advice to publish a DS the name cannot have."""
    for name in enclosing_zone_names(domain):
        soa = snapshot.get(name, "SOA")
        if soa is not None and failed(soa):  # not an answer: the zone may be here, signed or not
            return DnssecVerdict("unknown", f"the SOA query for {name} failed ({soa.error or soa.rcode})")
        if soa is None or not soa.exists:
            return None
        if soa.records:
            verdict = validate_zone(name, snapshot, now)
            if verdict is None:
                return None
            note = f"{domain} is a name in the {name} zone, not a zone of its own: {verdict.note}"
            return replace(verdict, note=note, zone=name)
    return None


def validate_zone(domain: str, snapshot: DnsSnapshot, now: datetime) -> DnssecVerdict | None:
    """None when the DS/DNSKEY records were not fetched."""
    ds_answer, key_answer, soa_answer = (snapshot.get(domain, t) for t in ("DS", "DNSKEY", "SOA"))
    if ds_answer is None or key_answer is None:
        return None
    for answer in (ds_answer, key_answer):
        if failed(answer):
            return DnssecVerdict("unknown", _query_failed(answer))
    ds_records, key_records = ds_answer.records, key_answer.records
    if not ds_records and not key_records and soa_answer is not None and failed(soa_answer):
        # Not an answer (RFC 1035 4.1.1): the SOA says whether the domain is a zone of its own, unsigned, or a
        # name in another's zone, judged by that zone (signed, or not the owner's to sign).
        note = f"{_query_failed(soa_answer)}: whether {domain} is an unsigned zone or a name in another zone is unknown"
        return DnssecVerdict("unknown", note)
    if not ds_records and not key_records and soa_answer is not None and soa_answer.exists and not soa_answer.records:
        return _in_enclosing_zone(domain, snapshot, now)
    if not ds_records and not key_records:
        return DnssecVerdict("unsigned", "no DS record in the parent zone and no DNSKEY")
    if not ds_records:
        return DnssecVerdict(
            "island",
            "the zone publishes DNSKEYs but the parent has no DS record, so no resolver can validate it",
            dnskeys=len(key_records),
        )
    name = dns.name.from_text(domain)
    try:
        ds_set = _rrset(name, "DS", ds_records)
    except dns.exception.DNSException as exc:
        return DnssecVerdict("unknown", f"the DS records cannot be read ({exc})", ds=ds_records)
    usable = [ds for ds in ds_set if ds.algorithm in VALIDATED_ALGORITHMS and ds.digest_type in VALIDATED_DIGESTS]
    if not usable:
        # RFC 4035 5.2, RFC 6840 5.2: with no supported algorithm and digest in the DS set there is no
        # authentication path, and a validator treats the zone as unsigned, as if it had no DS at all.
        return DnssecVerdict(
            "unsigned",
            f"the DS records name only {_unsupported(ds_set)}, which validating resolvers no longer support"
            " (RFC 8624 3): they treat the zone as unsigned",
            ds=ds_records,
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
    from dns.dnssec import make_ds

    timestamp = now.timestamp()
    try:
        keys = _rrset(name, "DNSKEY", key_records)
    except dns.exception.DNSException as exc:
        return DnssecVerdict("unknown", f"the DNSKEY records cannot be read ({exc})", ds=ds_records)
    # Only the strongest digest type in the set counts (RFC 4509 3; Unbound's val_favorite_ds_algo): a
    # matching SHA-1 DS beside a SHA-256 DS that matches nothing is a downgrade, not a valid chain.
    strongest = max(ds.digest_type for ds in usable)
    usable = [ds for ds in usable if ds.digest_type == strongest]
    index = _key_index(keys)
    matching: list[DNSKEY] = []
    capped = len(usable) > MAX_DS_RECORDS
    for ds in usable[:MAX_DS_RECORDS]:
        candidates, left_out = _candidates(index, ds.algorithm, ds.key_tag)
        capped = capped or left_out
        for key in candidates:
            if make_ds(name, key, ds.digest_type, validating=True) == ds and key not in matching:
                matching.append(key)
    if not matching:
        if capped:
            return DnssecVerdict("broken", f"the DS records were not all checked: {TOO_MUCH_WORK}", ds=ds_records)
        return DnssecVerdict(
            "broken",
            "no DNSKEY of the zone matches the DS record in the parent (a key rollover gone wrong?)",
            ds=ds_records,
            dnskeys=len(key_records),
        )
    budget = _Budget()
    problem = _validate(
        keys, key_answer, name, _key_index(dns.rrset.from_rdata_list(name, 300, matching)), timestamp, budget
    )
    if problem is None and soa_answer is not None and soa_answer.records:
        problem = _validate(_rrset(name, "SOA", soa_answer.records), soa_answer, name, index, timestamp, budget)
    if problem is not None:
        return DnssecVerdict("broken", problem, ds=ds_records, dnskeys=len(key_records))
    if soa_answer is not None and failed(soa_answer):  # the zone's data may carry no valid signature
        note = f"{_query_failed(soa_answer)}, so the zone's signature over its data could not be checked"
        return DnssecVerdict("unknown", note, ds=ds_records, dnskeys=len(key_records))
    note = "the DS in the parent matches the zone's key, and the DNSKEY and SOA signatures verify"
    return DnssecVerdict(
        "secure",
        "; ".join([note, *_retiring(matching, strongest), *_nsec3(snapshot.get(domain, "NSEC3PARAM"))]),
        ds=ds_records,
        dnskeys=len(key_records),
    )


def signed_by_zone(answer: DnsAnswer, zone: str, snapshot: DnsSnapshot, now: datetime) -> str | None:
    """None when a signature by one of `zone`'s keys over `answer`'s records verifies; otherwise why not. The zone
    itself is validated apart (validate_zone): this says only that the records are the zone's, as signed."""
    keys_answer = snapshot.get(zone, "DNSKEY")
    if keys_answer is None or not keys_answer.records:
        return f"{zone} publishes no DNSKEY to check their signature with"
    zone_name = dns.name.from_text(zone)
    try:
        keys = _rrset(zone_name, "DNSKEY", keys_answer.records)
        rrset = _rrset(dns.name.from_text(answer.name), answer.rdtype, answer.records)
    except dns.exception.DNSException as exc:
        return f"the {answer.rdtype} records cannot be read ({exc})"
    return _validate(rrset, answer, zone_name, _key_index(keys), now.timestamp(), _Budget())


def _nsec3(answer: DnsAnswer | None) -> list[str]:
    """RFC 9276 3.1: NSEC3 with 0 extra iterations (a MUST) and no salt (a SHOULD); both only cost resolvers work,
    and past a limit validators may treat the zone's denials of existence as insecure (3.2)."""
    if answer is None or not answer.exists:
        return []
    found = []
    for text in answer.records[:1]:
        try:
            param = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.NSEC3PARAM, text)
        except dns.exception.DNSException:
            continue
        iterations, salt = param.iterations, param.salt  # type: ignore[attr-defined]
        if iterations or salt:
            extra = [counted(iterations, "extra iteration")] if iterations else []
            extra += [f"a salt of {counted(len(salt), 'byte')}"] if salt else []
            found.append(
                f"NSEC3 uses {' and '.join(extra)}: RFC 9276 3.1 asks for 0 iterations and no salt (NSEC3PARAM "
                "1 0 0 -), which protect nothing and cost resolvers work; past a limit they may treat the zone's "
                "answers that a name does not exist as insecure"
            )
    return found


def _retiring(keys: list[DNSKEY], digest_type: int) -> list[str]:
    """What a valid chain relies on that RFC 8624 3 retires: SHA-1 signing algorithms and SHA-1 DS digests."""
    from dns.dnssectypes import Algorithm

    found = []
    if all(key.algorithm in SHA1_ALGORITHMS for key in keys):
        names = ", ".join(f"{Algorithm.to_text(a)} (algorithm {a})" for a in sorted({k.algorithm for k in keys}))
        found.append(
            f"but the zone is signed with {names}, a SHA-1 algorithm RFC 8624 3.1 no longer recommends for signing: "
            "re-sign it with ECDSAP256SHA256 (algorithm 13) and publish the new key's DS"
        )
    if digest_type == 1:
        found.append(
            "the DS in the parent uses only SHA-1 (digest type 1), which RFC 8624 3.3 says must not be created: "
            "publish a SHA-256 (digest type 2) DS instead"
        )
    return found
