"""SPF (RFC 7208): evaluate a domain's policy from the DNS snapshot (records/spf.py parses the records).

The evaluation counts the DNS-querying terms as a receiver would (section 4.6.4: include,
a, mx, ptr, exists and redirect, at most 10 in the whole evaluation, recursively through
include and redirect), and follows include/redirect into the records the fetch layer
collected. It also applies the other limits of 4.6.4 that the published records decide:
an mx mechanism whose name has more than 10 MX records is a permerror, and so are more than
2 void lookups (terms whose query finds NXDOMAIN or no records). The fetch layer uses
`referenced_domains` and `term_queries` (records/spf.py) to know which records to collect.

Every term is evaluated, as for a sender that matches none of them: that is the evaluation
forged mail gets, and the one a legitimate sender listed last gets. Mechanisms after "all" are
never tested (RFC 7208 5.1), so they are neither counted nor followed; their syntax still counts.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ..records.dns_text import failed, txt_of
from ..records.spf import SpfRecord, parse_spf, spf_texts, term_target
from ..snapshot import DnsAnswer, DnsSnapshot

LOOKUP_LIMIT = 10  # RFC 7208 4.6.4
VOID_LOOKUP_LIMIT = 2  # RFC 7208 4.6.4: "SHOULD limit void lookups to two", more is a permerror
MX_RECORD_LIMIT = 10  # RFC 7208 4.6.4 and 5.4: more MX records than this make the mx mechanism a permerror
_MAX_DEPTH = 12  # past the limit anyway; guards against include loops in what we fetched
_LOOKUP_TERMS = ("include", "a", "mx", "ptr", "exists", "redirect")
_ALL_RESULTS = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}


@dataclass
class SpfEvaluation:
    domain: str
    record: str | None = None  # the domain's own record text
    records_found: int = 0
    lookups: int = 0
    errors: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # includes we could not look at (failed, not fetched)
    all_qualifier: str | None = None  # of the record that decides ("-" for "-all"); None: no all, or unknown
    all_domain: str | None = None  # where the record that decides is published (through redirect=); None: unknown
    all_record: str | None = None  # the text of that record
    passes_everyone: str | None = None  # what lets every sender pass ("+all", "include:x.example -> +all")
    uses_ptr: bool = False
    macros: bool = False
    counting_stopped: bool = False  # past the limit, includes were not walked further
    limit_errors: list[str] = field(default_factory=list)  # other 4.6.4 permerrors (MX records per mx)
    void_names: list[str] = field(default_factory=list)  # the names of the void lookups, in order

    @property
    def result_for_others(self) -> str:
        """What a receiver concludes for a host the record does not list (RFC 7208 4.7)."""
        return _ALL_RESULTS.get(self.all_qualifier or "?", "neutral")

    @property
    def all_known(self) -> bool:
        """False when the record that decides could not be read (a redirect target that failed, was
        not fetched or holds macros) or is never reached: a syntax error or a limit passed anywhere
        makes the evaluation a permerror before any "all" is tested (RFC 7208 4.6, 4.6.4). No
        verdict on "all" then."""
        return self.all_domain is not None and not self.permerror

    @property
    def permerror(self) -> bool:
        """A syntax error (this record or one it includes) or a limit passed: receivers return permerror, and no
        mechanism's result stands, "+all" and "ip4:0.0.0.0/0" included (RFC 7208 4.6, 4.6.4)."""
        return bool(self.errors) or self.over_limit or self.over_void_limit

    @property
    def over_limit(self) -> bool:
        """Past a lookup limit of RFC 7208 4.6.4 (10 terms, or 10 MX records for one mx): permerror."""
        return self.lookups > LOOKUP_LIMIT or bool(self.limit_errors)

    @property
    def void_lookups(self) -> int:
        return len(self.void_names)

    @property
    def over_void_limit(self) -> bool:
        return self.void_lookups > VOID_LOOKUP_LIMIT


def _void(answer: DnsAnswer | None) -> bool | None:
    """RFC 7208 4.6.4: a void lookup is NOERROR with no answers, or NXDOMAIN; None when unknown."""
    if answer is None or failed(answer):
        return None
    return answer.rcode == "NXDOMAIN" or not answer.records


def _apply_term_limits(record: SpfRecord, domain: str, snapshot: DnsSnapshot, result: SpfEvaluation) -> None:
    """MX records per mx mechanism and void lookups, from the answers the fetch layer collected.

    An `a` term asks A for an IPv4 sender and AAAA for an IPv6 one; it is counted void only when
    it is void for both (NXDOMAIN, or neither type has records), so the count holds for every
    sender. Terms whose answers were not fetched or failed are not counted."""
    for term in record.evaluated_mechanisms():
        if term.name not in ("a", "mx", "exists"):
            continue
        target = term_target(term, domain)
        if target is None:
            continue
        if term.name == "mx":
            answer = snapshot.get(target, "MX")
            void = _void(answer)
            count = len(answer.records) if answer is not None and not void else 0
            if count > MX_RECORD_LIMIT:
                result.limit_errors.append(
                    f"the mx mechanism for {target} finds {count} MX records: more than {MX_RECORD_LIMIT} "
                    "is a permerror (RFC 7208 4.6.4)"
                )
        elif term.name == "exists":
            void = _void(snapshot.get(target, "A"))
        else:
            four, six = snapshot.get(target, "A"), snapshot.get(target, "AAAA")
            # NXDOMAIN is about the name, so it is void for either family (RFC 8020)
            nxdomain = any(x is not None and x.rcode == "NXDOMAIN" for x in (four, six))
            void = nxdomain or (_void(four) is True and _void(six) is True)
        if void:
            result.void_names.append(target)


@dataclass(frozen=True)
class _Decision:
    """The record whose "all" decides for senders a record does not list: the record itself, or
    the end of its redirect= chain (RFC 7208 6.1: the redirected record's result is the result)."""

    domain: str
    record: str
    all_qualifier: str | None  # None: no "all" and no redirect, so neutral (RFC 7208 4.7)


def _passes_everyone(record: SpfRecord) -> str | None:
    """The tested term that matches every sender with a pass ("+all", "ip4:0.0.0.0/0", "ip6:::/0"), if any."""
    for term in record.evaluated_mechanisms():
        if term.qualifier != "+":
            continue
        if term.name == "all":
            return "+all"
        if term.name in ("ip4", "ip6") and ipaddress.ip_network(term.value or "", strict=False).prefixlen == 0:
            return f"{term.name}:{term.value}"
    return None


def _walk(
    domain: str, snapshot: DnsSnapshot, result: SpfEvaluation, path: tuple[str, ...], top: bool
) -> tuple[_Decision | None, str | None]:
    """Count and check the record at `domain` and the records it includes. Returns the record that
    decides for other senders (None when that cannot be known: not fetched, failed, a permerror,
    past the limits), and what in it lets every sender pass, if anything does ("include:x -> +all")."""
    if len(path) > _MAX_DEPTH or result.lookups > LOOKUP_LIMIT:
        result.counting_stopped = True  # a receiver stops at the limit too; the rest is not counted
        return None, None
    answer = snapshot.get(domain, "TXT")
    if answer is None or failed(answer):
        result.unknown.append(domain)
        return None, None
    texts = spf_texts(txt_of(answer))
    if not texts:
        if not top:
            # RFC 7208 5.2, 6.1: include or redirect to a domain without an SPF record is a permerror.
            result.errors.append(f"{domain} (named by {path[-2]}) has no SPF record")
        return None, None
    if len(texts) > 1:
        if not top:
            result.errors.append(f"{domain} has {len(texts)} SPF records")  # RFC 7208 4.5: permerror
        return None, None
    record = parse_spf(texts[0])
    if top:
        result.record = texts[0]
    for error in record.errors:
        result.errors.append(error if top else f"{domain}: {error}")
    all_term = record.all_term  # once: a record of thousands of redirect= searched its terms for each
    for term in (*record.evaluated_mechanisms(), *(t for t in record.terms if t.modifier)):
        if term.name in _LOOKUP_TERMS and (not term.modifier or term.name == "redirect"):
            if term.name == "redirect" and all_term is not None:
                continue
            result.lookups += 1
        if term.name == "ptr" and not term.modifier:
            result.uses_ptr = True
        if term.value and "%" in term.value:
            result.macros = True
    _apply_term_limits(record, domain, snapshot, result)
    everyone = _passes_everyone(record)
    for term in record.evaluated_mechanisms():
        target = (term.value or "").rstrip(".").lower()
        if term.name != "include" or not target or "%" in target:
            continue  # a target with macros depends on the sender and cannot be fetched ahead
        if target in path:
            result.errors.append(f"{target} includes itself (a loop through {' -> '.join(path)})")
            continue
        _, included_everyone = _walk(target, snapshot, result, (*path, target), top=False)
        # RFC 7208 5.2: an include matches when the included record passes; one that passes every
        # sender makes this term pass every sender too.
        if included_everyone and term.qualifier == "+" and everyone is None:
            everyone = f"include:{target} -> {included_everyone}"
    redirect = (record.redirect or "").rstrip(".").lower()
    if not redirect:
        return _Decision(domain, texts[0], all_term.qualifier if all_term else None), everyone
    if "%" in redirect:
        result.unknown.append(redirect)  # the target depends on the sender: which "all" decides is unknown
        return None, everyone
    if redirect in path:
        result.errors.append(f"{redirect} includes itself (a loop through {' -> '.join(path)})")
        return None, everyone
    # RFC 7208 6.1: the redirected record's result is the result, through any further redirect.
    decision, redirected_everyone = _walk(redirect, snapshot, result, (*path, redirect), top=False)
    if everyone is None and redirected_everyone:
        everyone = f"redirect={redirect} -> {redirected_everyone}"
    return decision, everyone


def evaluate_spf(domain: str, snapshot: DnsSnapshot) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched."""
    answer = snapshot.get(domain, "TXT")
    if answer is None:
        return None
    result = SpfEvaluation(domain)
    texts = spf_texts(txt_of(answer))
    result.records_found = len(texts)
    if len(texts) != 1:
        return result
    decision, result.passes_everyone = _walk(domain, snapshot, result, (domain,), top=True)
    if decision is not None:
        result.all_qualifier = decision.all_qualifier
        result.all_domain, result.all_record = decision.domain, decision.record
    return result
