"""SPF (RFC 7208): evaluate a domain's policy from the DNS snapshot (records/spf.py parses the records).

The evaluation walks the terms in the order a receiver evaluates them (section 4.6: the record's
syntax first, then each mechanism, an include's record where it stands, redirect= last), as for a
sender that matches none of them: that is the evaluation forged mail gets, and the one a
legitimate sender listed last gets. It counts the DNS-querying terms (section 4.6.4: include, a,
mx, ptr, exists and redirect, at most 10 in the whole evaluation, recursively through include and
redirect), follows include/redirect into the records the fetch layer collected, and applies the
other limits of 4.6.4 that the published records decide: an mx mechanism whose name has more than
10 MX records is a permerror, and so are more than 2 void lookups (terms whose query finds NXDOMAIN
or no records). A lookup that failed (SERVFAIL, REFUSED, a timeout: RCODE other than 0 or 3) is no
void lookup and no empty answer: the evaluation stops at the term that needs it with temperror
(section 5; 5.2 for include, 6.1 for redirect), the term itself counted, unless a permerror came
first (the syntax of a record, the 11th lookup, the third void lookup, an include without a record:
receivers stop there and never ask). ptr's queries depend on the sender and a failure of them is no
match (5.5), so ptr only counts. The fetch layer uses `referenced_domains` and `term_queries`
(records/spf.py) to know which records to collect, and the MX hosts of the mx terms. When it stopped
asking before it had asked them all (the scan's time budget: `DnsSnapshot.cut`), a lookup the
evaluation needs and the snapshot lacks is one that failed (`_CutSnapshot`), never an answer.

Mechanisms after "all" are never tested (RFC 7208 5.1), so they are neither counted nor followed;
their syntax still counts.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ..records.dns_text import failed, txt_of
from ..records.spf import (
    MX_RECORD_LIMIT,
    SpfRecord,
    SpfTerm,
    expand_domain_spec,
    mx_exchanges,
    parse_spf,
    prefix_lengths,
    spf_texts,
    term_target,
)
from ..snapshot import DnsAnswer, DnsSnapshot

__all__ = ["LOOKUP_LIMIT", "MX_RECORD_LIMIT", "VOID_LOOKUP_LIMIT", "SpfEvaluation", "SpfFailure", "evaluate_spf"]

LOOKUP_LIMIT = 10  # RFC 7208 4.6.4
VOID_LOOKUP_LIMIT = 2  # RFC 7208 4.6.4: "SHOULD limit void lookups to two", more is a permerror
_MAX_DEPTH = 12  # past the limit anyway; guards against include loops in what we fetched
_LOOKUP_TERMS = ("include", "a", "mx", "ptr", "exists")
_ALL_RESULTS = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}


@dataclass(frozen=True)
class SpfFailure:
    """Where the evaluation stopped on a failed lookup: the term that needed it, and the lookups that failed."""

    domain: str  # the record holding the term
    term: str  # as written: "include:_spf.example.net", "mx", "redirect=_spf.example.net"
    lookups: tuple[DnsAnswer, ...]


@dataclass
class SpfEvaluation:
    domain: str
    record: str | None = None  # the domain's own record text
    records_found: int = 0
    lookups: int = 0
    errors: list[str] = field(default_factory=list)
    #: includes and redirects we could not look at (not fetched, or named with a macro that depends on the sender)
    unknown: list[str] = field(default_factory=list)
    #: those of `unknown` the evaluation reaches before any permerror: what they hold (a failure, a permerror, a
    #: lookup past the limit) may decide the result
    undecided: list[str] = field(default_factory=list)
    all_qualifier: str | None = None  # of the record that decides ("-" for "-all"); None: no all, or unknown
    all_domain: str | None = None  # where the record that decides is published (through redirect=); None: unknown
    all_record: str | None = None  # the text of that record
    passes_everyone: str | None = None  # what lets every sender pass ("+all", "include:x.example -> +all")
    uses_ptr: bool = False
    macros: bool = False
    counting_stopped: bool = False  # past the limit, includes were not walked further
    limit_errors: list[str] = field(default_factory=list)  # other 4.6.4 permerrors (MX records per mx)
    void_names: list[str] = field(default_factory=list)  # the names of the void lookups, in order
    #: the failed lookups the evaluation stopped at with temperror, before any permerror (nothing after is read)
    failure: SpfFailure | None = None

    @property
    def result_for_others(self) -> str:
        """What a receiver concludes for a host the record does not list (RFC 7208 4.7)."""
        return _ALL_RESULTS.get(self.all_qualifier or "?", "neutral")

    @property
    def all_known(self) -> bool:
        """False when the record that decides could not be read (a redirect target that failed, was
        not fetched or holds macros) or is never reached: a syntax error or a limit passed anywhere
        makes the evaluation a permerror before any "all" is tested (RFC 7208 4.6, 4.6.4), a failed
        lookup a temperror (5). No verdict on "all" then."""
        return self.all_domain is not None and not self.permerror and self.failure is None

    @property
    def permerror(self) -> bool:
        """A syntax error (this record or one it includes) or a limit passed: receivers return permerror, and no
        mechanism's result stands, "+all" and "ip4:0.0.0.0/0" included (RFC 7208 4.6, 4.6.4). The walk stops at a
        failed lookup, so a permerror found is one the evaluation reaches before any failure."""
        return bool(self.errors) or self.over_limit or self.over_void_limit

    @property
    def temperror(self) -> bool:
        """A lookup the evaluation needs failed before any permerror: receivers return temperror (RFC 7208 5)."""
        return self.failure is not None

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


@dataclass(frozen=True)
class _CutSnapshot(DnsSnapshot):
    """A snapshot whose fetch stopped asking early (`cut`: the scan's time budget ran out before the include tree
    was read, say), as the evaluation reads it: a lookup it lacks was never made, so it is a failed one (TIMEOUT,
    `cut` its error), where the evaluation stops with temperror (RFC 7208 5), not an answer: a term evaluated, a
    void lookup, a record not there. Every lookup of the evaluation reads through `get`, so no term type can be
    missed: an include's or redirect's record, an a, mx or exists term's names, an mx term's hosts."""

    def get(self, name: str, rdtype: str) -> DnsAnswer:
        answer = super().get(name, rdtype)
        return answer or DnsAnswer(name.rstrip(".").lower(), rdtype.upper(), "TIMEOUT", error=self.cut)


def _void(answer: DnsAnswer | None) -> bool | None:
    """RFC 7208 4.6.4: a void lookup is NOERROR with no answers, or NXDOMAIN; None when unknown."""
    if answer is None or failed(answer):
        return None
    return answer.rcode == "NXDOMAIN" or not answer.records


def _term_text(term: SpfTerm) -> str:
    if term.modifier:
        return f"{term.name}={term.value}"
    qualifier = "" if term.qualifier == "+" else term.qualifier
    separator = "" if term.value is None or term.value.startswith("/") else ":"
    return f"{qualifier}{term.name}{separator}{term.value or ''}"


def _term_lookups(term: SpfTerm, target: str, snapshot: DnsSnapshot, result: SpfEvaluation) -> list[DnsAnswer]:
    """Count what the a, mx or exists `term` (querying `target`) finds toward the MX-record and void lookup
    limits; returns the lookups of it that failed (none: the term was evaluated, or its answers were not fetched).

    An `a` term asks A for an IPv4 sender and AAAA for an IPv6 one: it is void only when it is void for both
    (NXDOMAIN, or neither type has records), so the count holds for every sender, and a failure of either is a
    temperror for the senders it would be asked for. An mx term asks the MX records, then each MX host's
    addresses (5.4), whose failure is a temperror too (5: 5.4 notes no exception, as 5.5 does for ptr)."""
    if term.name == "exists":
        answer = snapshot.get(target, "A")
        if failed(answer):
            return [answer] if answer is not None else []
        if _void(answer):
            result.void_names.append(target)
        return []
    if term.name == "a":
        four, six = snapshot.get(target, "A"), snapshot.get(target, "AAAA")
        failures = [x for x in (four, six) if x is not None and failed(x)]
        if failures:
            return failures
        # NXDOMAIN is about the name, so it is void for either family (RFC 8020)
        nxdomain = any(x is not None and x.rcode == "NXDOMAIN" for x in (four, six))
        if nxdomain or (_void(four) is True and _void(six) is True):
            result.void_names.append(target)
        return []
    answer = snapshot.get(target, "MX")
    if answer is None:
        return []
    if failed(answer):
        return [answer]
    if _void(answer):
        result.void_names.append(target)
        return []
    if len(answer.records) > MX_RECORD_LIMIT:
        result.limit_errors.append(
            f"the mx mechanism for {target} finds {len(answer.records)} MX records: more than {MX_RECORD_LIMIT} "
            "is a permerror (RFC 7208 4.6.4)"
        )
        return []  # receivers stop before asking the hosts' addresses
    hosts = [snapshot.get(host, rdtype) for host in mx_exchanges(answer.records) for rdtype in ("A", "AAAA")]
    return [x for x in hosts if x is not None and failed(x)]


def _not_read(result: SpfEvaluation, name: str) -> None:
    """The record at `name` could not be read: not fetched, or named with a macro that depends on the sender."""
    result.unknown.append(name)
    if not result.permerror:
        result.undecided.append(name)


def _lookup_failed(
    result: SpfEvaluation, domain: str, term: SpfTerm, lookups: list[DnsAnswer], unread: str | None = None
) -> None:
    """`term` of the record at `domain` needs `lookups`, which failed: the evaluation stops there with temperror
    (RFC 7208 5). After a permerror receivers never get this far: the record `unread` (an include or redirect
    target) is then only one the walk could not read (`unknown`), and the walk goes on to list what else is wrong."""
    if not result.permerror:
        result.failure = SpfFailure(domain, _term_text(term), tuple(lookups))
    elif unread is not None:
        result.unknown.append(unread)


def _passes_everyone(term: SpfTerm) -> str | None:
    """What in `term` matches every sender with a pass ("+all", "ip4:0.0.0.0/0", "ip6:::/0"), if anything; for the
    a, mx and exists terms it takes their answers (`_matches_every_sender`)."""
    if term.qualifier != "+" or term.modifier:
        return None
    if term.name == "all":
        return "+all"
    if term.name in ("ip4", "ip6") and ipaddress.ip_network(term.value or "", strict=False).prefixlen == 0:
        return f"{term.name}:{term.value}"
    return None


def _matches_every_sender(term: SpfTerm, target: str, snapshot: DnsSnapshot) -> str | None:
    """What makes the a, mx or exists `term` (querying `target`, its lookups answered) match every sender of an
    address family, if anything: exists matches whoever sends once its name has an A record (RFC 7208 5.7), and an
    a or mx term with a prefix length of 0 once a name it compares with has an address of that family (5.3, 5.4,
    5.6: the /0 network of any address holds every address), as ip4:0.0.0.0/0 does."""
    if term.name == "exists":
        answer = snapshot.get(target, "A")
        found = answer is not None and not failed(answer) and bool(answer.records)
        return f"exists:{target} -> {target} has an A record (RFC 7208 5.7)" if found else None
    hosts = [target]
    if term.name == "mx":
        answer = snapshot.get(target, "MX")
        if answer is None or failed(answer) or len(answer.records) > MX_RECORD_LIMIT:
            return None
        hosts = mx_exchanges(answer.records)
    section = "5.3" if term.name == "a" else "5.4"
    for (rdtype, family), length in zip((("A", "IPv4"), ("AAAA", "IPv6")), prefix_lengths(term), strict=True):
        if length != 0:
            continue
        for host in hosts:
            answer = snapshot.get(host, rdtype)
            if answer is not None and not failed(answer) and answer.records:
                return f"{_term_text(term)} -> {host} has an {family} address (RFC 7208 {section})"
    return None


@dataclass(frozen=True)
class _Decision:
    """The record whose "all" decides for senders a record does not list: the record itself, or
    the end of its redirect= chain (RFC 7208 6.1: the redirected record's result is the result)."""

    domain: str
    record: str
    all_qualifier: str | None  # None: no "all" and no redirect, so neutral (RFC 7208 4.7)


def _read_record(
    domain: str, snapshot: DnsSnapshot, result: SpfEvaluation, path: tuple[str, ...], top: bool, term: SpfTerm | None
) -> tuple[SpfRecord, str] | None:
    """The record at `domain`, its syntax errors counted; None when it cannot be read (not fetched, failed: the
    walk stops there, no record or several: a permerror for an include or redirect target, RFC 7208 5.2, 6.1)."""
    answer = snapshot.get(domain, "TXT")
    if answer is None:
        _not_read(result, domain)
        return None
    if failed(answer):
        if term is not None:  # the domain's own record failing is the check's own check.error
            _lookup_failed(result, path[-2], term, [answer], unread=domain)
        return None
    texts = spf_texts(txt_of(answer))
    if not texts:
        if not top:
            result.errors.append(f"{domain} (named by {path[-2]}) has no SPF record")
        return None
    if len(texts) > 1:
        if not top:
            result.errors.append(f"{domain} has {len(texts)} SPF records")  # RFC 7208 4.5: permerror
        return None
    record = parse_spf(texts[0])
    if top:
        result.record = texts[0]
    # RFC 7208 4.6: the whole record is parsed before any of its terms is evaluated
    for error in record.errors:
        result.errors.append(error if top else f"{domain}: {error}")
    return record, texts[0]


def _walk(
    domain: str,
    snapshot: DnsSnapshot,
    result: SpfEvaluation,
    path: tuple[str, ...],
    top: bool,
    term: SpfTerm | None = None,
) -> tuple[_Decision | None, str | None]:
    """Evaluate the record at `domain` (reached through `term`, an include or redirect) and the records it
    includes, in order. Returns the record that decides for other senders (None when that cannot be known:
    not fetched, failed, a permerror, past the limits), and what in it lets every sender pass, if anything
    does before a failed lookup ("include:x -> +all")."""
    if len(path) > _MAX_DEPTH or result.lookups > LOOKUP_LIMIT:
        result.counting_stopped = True  # a receiver stops at the limit too; the rest is not counted
        return None, None
    read = _read_record(domain, snapshot, result, path, top, term)
    if read is None:
        return None, None
    record, text = read
    everyone: str | None = None
    for mechanism in record.evaluated_mechanisms():
        everyone = everyone or _passes_everyone(mechanism)
        if mechanism.name not in _LOOKUP_TERMS:
            continue
        result.lookups += 1  # counted when reached, whatever its lookup finds (RFC 7208 4.6.4)
        value = mechanism.value or ""
        if "%" in value:
            result.macros = True
        if mechanism.name == "ptr":
            result.uses_ptr = True  # its queries depend on the sender, and a failure of them is no match (5.5)
            continue
        if mechanism.name == "include":
            target = expand_domain_spec(value, domain, result.domain) if value else None
            if not target:
                continue  # a target with a macro that depends on the sender cannot be fetched ahead
            if target in path:
                result.errors.append(f"{target} includes itself (a loop through {' -> '.join(path)})")
                continue
            _, included_everyone = _walk(target, snapshot, result, (*path, target), False, mechanism)
            # RFC 7208 5.2: an include matches when the included record passes; one that passes every
            # sender makes this term pass every sender too.
            if included_everyone and mechanism.qualifier == "+" and everyone is None:
                everyone = f"include:{target} -> {included_everyone}"
        else:
            target_name = term_target(mechanism, domain, result.domain)
            if target_name is not None:
                failures = _term_lookups(mechanism, target_name, snapshot, result)
                if failures:
                    _lookup_failed(result, domain, mechanism, failures)
                elif mechanism.qualifier == "+" and everyone is None:
                    everyone = _matches_every_sender(mechanism, target_name, snapshot)
        if result.failure is not None:
            return None, everyone  # RFC 7208 5: the evaluation ends here with temperror
    if any(t.modifier and t.value and "%" in t.value for t in record.terms):
        result.macros = True
    all_term = record.all_term  # once: a record of thousands of redirect= searched its terms for each
    redirect_term = record.modifier("redirect") if all_term is None else None  # 6.1: ignored beside "all"
    if redirect_term is None:
        return _Decision(domain, text, all_term.qualifier if all_term else None), everyone
    result.lookups += 1  # RFC 7208 4.6.4: redirect= is evaluated last, once no mechanism matched
    redirect = expand_domain_spec(redirect_term.value or "", domain, result.domain)
    if redirect is None:  # the target depends on the sender: which "all" decides is unknown
        _not_read(result, (redirect_term.value or "").rstrip(".").lower())
        return None, everyone
    if redirect in path:
        result.errors.append(f"{redirect} includes itself (a loop through {' -> '.join(path)})")
        return None, everyone
    # RFC 7208 6.1: the redirected record's result is the result, through any further redirect.
    decision, redirected_everyone = _walk(redirect, snapshot, result, (*path, redirect), False, redirect_term)
    if everyone is None and redirected_everyone:
        everyone = f"redirect={redirect} -> {redirected_everyone}"
    return decision, everyone


def evaluate_spf(domain: str, snapshot: DnsSnapshot) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched."""
    answer = snapshot.get(domain, "TXT")
    if answer is None:
        return None
    if snapshot.cut is not None:  # what the fetch never asked is no answer
        snapshot = _CutSnapshot(snapshot.host, snapshot.answers, snapshot.cut)
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
