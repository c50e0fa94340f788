"""SPF (RFC 7208): evaluate a domain's policy from the DNS snapshot.

The evaluation itself, the walk receivers make through the records and its limits, is records/spf_evaluation.py's:
the DNS fetch follows the same walk to know what to ask (fetch/dns.py), in its order and within its limits. This
module reads the snapshot for it, and decides what a lookup the snapshot lacks is: one the evaluation reaches and
the fetch never made (its time budget ran out, `DnsSnapshot.cut`, or whatever else left it unasked), so a failed
one (TIMEOUT), where the evaluation stops with temperror (RFC 7208 5) and the report says "could not check", never
an answer: a term evaluated, a void lookup, a record not there. Every lookup of the evaluation reads through that one
function, so no term type can be missed (an include's or redirect's record, an a, mx or exists term's names, an mx
term's hosts).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records.dns_text import zone_file_strings
from ..records.spf import (
    SpfTerm,
    expand_domain_spec,
    parse_spf,
    redirect_as_include,
    strict_record,
    term_domain_spec,
    with_qualifier,
    without_term,
)
from ..records.spf_evaluation import (
    FAMILIES,
    LOOKUP_LIMIT,
    PTR_OF_THE_SENDER,
    VOID_LOOKUP_LIMIT,
    Lookup,
    SpfEvaluation,
    SpfFailure,
    SpfRecords,
    evaluate_spf_answers,
)
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, DnsSnapshot

__all__ = [
    "FAMILIES",
    "LOOKUP_LIMIT",
    "MAX_FIX_EVALUATIONS",
    "NOT_ASKED",
    "PTR_OF_THE_SENDER",
    "VOID_LOOKUP_LIMIT",
    "KeptTerm",
    "SpfEvaluation",
    "SpfFailure",
    "SpfFix",
    "evaluate_spf",
    "strict_fix",
]

#: Why a lookup the evaluation reaches is missing from a snapshot the fetch did not say was cut.
NOT_ASKED = "not asked by the scan's DNS fetch"


def _answers_of(snapshot: DnsSnapshot) -> Lookup:
    """`snapshot`'s answers, one it lacks being a failed lookup (TIMEOUT), the reason the fetch stopped its error."""
    why = snapshot.cut or NOT_ASKED

    def answer(name: str, rdtype: str) -> DnsAnswer:
        found = snapshot.get(name, rdtype)
        return found or DnsAnswer(name.rstrip(".").lower(), rdtype.upper(), "TIMEOUT", error=why)

    return answer


def evaluate_spf(
    domain: str, snapshot: DnsSnapshot, no_reverse_dns: bool = False, records: SpfRecords | None = None
) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched. `no_reverse_dns`: for a sender whose address has no PTR
    record (each ptr term a void lookup, `evaluate_spf_answers`). `records`: the records decoded and parsed by the
    check's other evaluations (a 64 KB record takes up to 0.27 s to read)."""
    if snapshot.get(domain, "TXT") is None:
        return None
    return evaluate_spf_answers(domain, _answers_of(snapshot), records, no_reverse_dns=no_reverse_dns)


#: How many evaluations a fix takes at most: one to three for each term it drops or changes (a record has rarely more
#: than two such terms; one with thousands must not hold the check). Past it, every term still deciding is given "-".
MAX_FIX_EVALUATIONS = 12

#: The results a fix is for, and may lead a family through on its way to fail (the next term deciding for it, which
#: the fix takes on in turn)
_LOOSE = ("softfail", "neutral")


@dataclass(frozen=True)
class KeptTerm:
    """A term deciding for `families` that the fix gives "-" instead of dropping: "-" changes no lookup and no match,
    so the same senders pass and the others are refused there, where its removal could not be shown to be as safe.
    `reason`: without it some senders would reach the terms after it and stop at a permerror ("invalid", "lookups",
    "void", the kind), "temperror" (a lookup that fails), "pass" (a term after it matches every one of them), or get
    a result that depends on the sender ("sender"); None: they would reach lookups the scan did not make, so what
    those give them is not known; "sender_terms": they would reach terms whose matches depend on the sender (a ptr
    term, a name built from the sender's values), which the scan cannot look up; "budget": the fix ran out of
    evaluations. In `SpfFix.opened`, a term the fix drops that lets the terms `enabled` after it take effect for
    senders it matched ("enables": a network the record lists passes where it soft-failed at the dropped term).
    `no_reverse_dns`: the permerror is that of senders without reverse DNS (a ptr term's void lookup)."""

    term: SpfTerm
    families: tuple[str, ...]
    reason: str | None
    enabled: tuple[SpfTerm, ...] = ()
    no_reverse_dns: bool = False


@dataclass(frozen=True)
class SpfFix:
    domain: str  # where to publish it
    record: str
    kept: tuple[KeptTerm, ...] = ()
    opened: tuple[KeptTerm, ...] = ()  # terms dropped that let terms the record lists after them take effect


def strict_fix(evaluation: SpfEvaluation, snapshot: DnsSnapshot, records: SpfRecords | None = None) -> SpfFix:
    """A record whose senders it does not list are refused, for a record whose verdict lets them through (softfail,
    neutral). Each family's end is its own term (RFC 7208 4.6.2: "~ip6:::/0" ends IPv6 senders' evaluation before the
    "~all" that ends IPv4 senders'), so each such term that is not "all" goes and the record is evaluated again,
    until none is left (dropping "~exists:x" can leave "~ip4:0.0.0.0/0" deciding for IPv4 senders), then "all"
    becomes "-all" (`strict_record`).

    A term goes only when the scan's answers show that its removal lets no unlisted sender pass, adds no permerror
    or temperror for any (with or without reverse DNS), and leaves its families refused or decided by the next term
    the fix takes on (`removal_risk`); the terms the record lists after it then take effect for the senders they
    match (a network written after "~ip6:::/0" passes, as its owner wrote it), and only when the answers show what
    each of them matches (`_reach_shown`): the note names them (`SpfFix.opened`). Otherwise it is given "-"
    (`SpfFix.kept`): that changes no lookup and no match, so the same senders pass and the others are refused there.
    So is every term still deciding when the evaluations run out.

    The fix goes to the record those terms are in: the end of a redirect= chain (6.1) when it is the owner's. Another
    organisation's (redirect=_spf.provider.example), or terms in two records, make it the owner's record with its
    redirect= included instead (`redirect_as_include`): the provider's senders still pass, and its "-all" decides."""
    domain, record = evaluation.domain, evaluation.record or ""
    loose = [d for d in evaluation.decisions.values() if d.qualifier != "+"]
    places = {(d.domain, d.record) for d in loose}
    if len(places) == 1 and registrable_domain(next(iter(places))[0]) == domain:
        ((fix_domain, text),) = places
    else:
        fix_domain, text = domain, redirect_as_include(record)
    evaluations = 0
    known: dict[str, bool] = {}  # `_reach_shown` of each include= or redirect= name read so far
    records = records or SpfRecords()  # each record decoded and parsed once over the fix's evaluations

    def evaluated(candidate: str, no_reverse_dns: bool = False) -> tuple[SpfEvaluation, bool]:
        """`candidate` published at `fix_domain`, evaluated over the snapshot's answers, and whether it reaches a
        lookup the snapshot lacks (taken as no answer: the walk goes on, but what it gives is not known)."""
        nonlocal evaluations
        evaluations += 1
        missing = False
        published = DnsAnswer(fix_domain, "TXT", "NOERROR", (" ".join(zone_file_strings(candidate)),))

        def lookup(name: str, rdtype: str) -> DnsAnswer | None:
            nonlocal missing
            key = (name.rstrip(".").lower(), rdtype.upper())
            if key == (fix_domain, "TXT"):
                return published
            answer = snapshot.get(*key)
            missing = missing or answer is None
            return answer

        return evaluate_spf_answers(domain, lookup, records, no_reverse_dns=no_reverse_dns), missing

    def removal_risk(
        current: str, now: SpfEvaluation, term: SpfTerm, families: tuple[str, ...]
    ) -> tuple[KeptTerm | None, SpfEvaluation, tuple[SpfTerm, ...]]:
        """Why `term` cannot go from `current` (evaluated: `now`), as the KeptTerm giving it "-", None when it can;
        the record without it, evaluated; and the terms after it that would then take effect for senders it matches.
        Those are the record's own listing (a network its owner wrote after "~ip6:::/0"): they pass, as written, where
        "-" would refuse them too; the note names them."""
        trial = without_term(current, term)
        after, missing = evaluated(strict_record(trial))
        if missing or trial == current:  # (not written in a way `without_term` finds: `with_qualifier` neither)
            return KeptTerm(term, families, None), after, ()
        worse = _worse(now, after)
        if worse:
            return KeptTerm(term, families, worse), after, ()
        others = _other_terms(current, term)
        if not all(_reach_shown(other, fix_domain, domain, snapshot, records, known) for other in others):
            # a term built from the sender's values (exists:%{i}.x: a void lookup, or an include of no record, for a
            # sender the scan cannot stand for; "-" or not), a ptr term, or an include the scan did not read: what it
            # gives the senders reaching it after `term` is not in the scan's answers, and one before `term` may
            # already have cost them void lookups the walk does not count (a sender's own reverse zone's names)
            return KeptTerm(term, families, "sender_terms"), after, ()
        # a term the sender picks to be matched by ("~exists:%{h}") it can always avoid: the terms after it already
        # take effect for every sender, and nothing new is let through
        chosen = all(now.decisions[family].chosen for family in families)
        enabled = () if chosen else _enabled_terms(current, term, families, after, fix_domain, domain, snapshot)
        if now.uses_ptr or after.uses_ptr:
            # a sender without reverse DNS makes each ptr term a void lookup (RFC 7208 4.6.4): the terms after `term`
            # may hold more void lookups than such a sender is allowed
            before_n, _ = evaluated(strict_record(current), no_reverse_dns=True)
            after_n, missing = evaluated(strict_record(trial), no_reverse_dns=True)
            worse = None if missing else _worse(before_n, after_n)
            if missing or worse:
                return KeptTerm(term, families, worse, no_reverse_dns=True), after, ()
        return None, after, enabled

    kept: list[KeptTerm] = []
    opened: list[KeptTerm] = []
    current = text
    now, _ = evaluated(strict_record(current))
    while True:
        deciding = [
            (family, d.term)
            for family, d in now.decisions.items()
            if d.domain == fix_domain and d.term is not None and not d.term.modifier and d.term.name != "all"
            if d.qualifier in ("~", "?")
        ]
        if not deciding and fix_domain == domain and current != redirect_as_include(current):
            # what decides for some family is past the redirect= (its record's "?all"): included instead, the
            # owner's "-all" decides for them (RFC 7208 5.2, 6.1)
            elsewhere = [d for d in now.decisions.values() if d.domain != fix_domain and d.qualifier not in ("-", "+")]
            if elsewhere:
                current = redirect_as_include(current)
                now, _ = evaluated(strict_record(current))
                continue
        if not deciding:
            break
        terms = list(dict.fromkeys(term for _, term in deciding))
        if evaluations >= MAX_FIX_EVALUATIONS:
            # out of evaluations: each term still deciding refuses its senders at once, which needs none
            for term in terms:
                families = tuple(family for family, t in deciding if t == term)
                refusing = with_qualifier(current, term, "-")
                if refusing != current:
                    kept.append(KeptTerm(term, families, "budget"))
                    current = refusing
            break
        term = terms[0]
        families = tuple(family for family, t in deciding if t == term)
        risk, after, enabled = removal_risk(current, now, term, families)
        if risk is None:
            if enabled:
                opened.append(KeptTerm(term, families, "enables", enabled))
            current, now = without_term(current, term), after
            continue
        refusing = with_qualifier(current, term, "-")
        if refusing == current:  # written in a way neither finds: left as it is
            break
        kept.append(risk)
        current = refusing
        now, _ = evaluated(strict_record(current))
    return SpfFix(fix_domain, strict_record(current), tuple(kept), tuple(opened))


def _worse(before: SpfEvaluation, after: SpfEvaluation) -> str | None:
    """What a family's senders get from `after` that they did not from `before` (the kind of a permerror, "pass",
    "temperror", "sender": a result that depends on the sender); None when each family keeps its result or, being
    soft-failed or neutral, is refused or decided by another such term."""
    for family in FAMILIES:
        was, now = before.results.get(family), after.results.get(family)
        if now == was or (was in _LOOSE and now in ("fail", *_LOOSE)):
            continue
        if now == "permerror":
            return after.permerrors.get(family, "invalid")
        return now if now in ("pass", "temperror") else "sender"
    return None


def _enabled_terms(
    current: str,
    term: SpfTerm,
    families: tuple[str, ...],
    after: SpfEvaluation,
    fix_domain: str,
    domain: str,
    snapshot: DnsSnapshot,
) -> tuple[SpfTerm, ...]:
    """The terms after `term` in `current` that would take effect for the senders of `families` (those `term`
    decides for) once it is gone, in the record's order: each that is not "-", may match one of them and is not the
    same as a term before it, up to the term deciding for their family without it (which matches every one of them,
    so no term after it is reached). A redirect= reached is one (its record is another's to read)."""
    record = parse_spf(strict_record(current))
    tested = record.evaluated_mechanisms()
    if term not in tested:
        return ()
    behind = [t for t in tested[tested.index(term) + 1 :] if t != term]
    redirect = None if any(t.name == "all" for t in tested) else record.modifier("redirect")
    enabled: set[SpfTerm] = set()
    for family in families:
        if not _may_match(term, family, fix_domain, domain, snapshot):
            continue
        decision = after.decisions.get(family)
        end = decision.term if decision is not None and decision.domain == fix_domain else None
        for other in behind:
            if other == end:
                break
            if other.qualifier != "-" and _may_match(other, family, fix_domain, domain, snapshot):
                enabled.add(other)
        else:
            if redirect is not None:
                enabled.add(redirect)
    # in the record's order, each once: a term the same as one before it matches no sender that one did not
    seen: set[tuple[str, str | None]] = set()
    ordered: list[SpfTerm] = []
    for other in [*behind, *([redirect] if redirect is not None else [])]:
        if other in enabled and (other.name, other.value) not in seen:
            ordered.append(other)
        seen.add((other.name, other.value))
    return tuple(ordered)


#: How deep `_reach_shown` reads include= and redirect= records (RFC 7208 4.6.4 allows 10 lookups in all).
_REACH_DEPTH = 10


def _other_terms(current: str, term: SpfTerm) -> list[SpfTerm]:
    """The terms receivers may test in `current` besides `term`, whatever their qualifier: the mechanisms up to the
    first "all", and a redirect= when there is none. Those after it are what its senders reach once it is gone;
    those before it, what they reached on the way (void lookups of their own making count there too)."""
    record = parse_spf(strict_record(current))
    tested = record.evaluated_mechanisms()
    if term not in tested:
        return []
    redirect = None if any(t.name == "all" for t in tested) else record.modifier("redirect")
    return [*(t for t in tested if t != term), *([redirect] if redirect is not None else [])]


def _reach_shown(
    term: SpfTerm,
    record_domain: str,
    domain: str,
    snapshot: DnsSnapshot,
    records: SpfRecords,
    known: dict[str, bool],
    depth: int = 0,
) -> bool:
    """Whether the scan's answers show which senders `term` (of the record at `record_domain`) matches and what it
    gives them: a network; a name (a, mx, exists) whose macros, if any, are the same for every sender (%{d}, %{o});
    an include or redirect of such a name whose record's terms are all so (`known`: each name read once, a loop
    answering False). Never a ptr term (the sender's own reverse DNS answers first: ptr:duckdns.org lets anyone with
    a name there pass, and any ptr term lets a sender pick a permerror or temperror), nor a term built from the
    sender's values (%{i}, %{l}, %{h} ...)."""
    if term.name in ("ip4", "ip6", "all"):
        return True
    spec = term_domain_spec(term)
    name = expand_domain_spec(spec or record_domain, record_domain, domain)
    if name is None:  # a macro whose value the sender gives (%{i}, %{l}, %{h} ...): only %{d} and %{o} expand
        return False
    if term.name == "ptr":
        # the sender's own reverse zone answers first (RFC 7208 5.5), whatever the term's zone: it can name hosts
        # there (ptr:duckdns.org: a pass), or names that do not exist or fail (a permerror or temperror it picks)
        return False
    if term.name in ("a", "mx", "exists"):
        return True
    if term.name not in ("include", "redirect") or depth >= _REACH_DEPTH:
        return False
    if name in known:
        return known[name]
    known[name] = False  # while it is read: a loop back to it shows nothing
    answer = snapshot.get(name, "TXT")
    texts = records.texts(answer) if answer is not None else []
    if len(texts) == 1:
        record = records.parsed(texts[0])
        redirect = record.modifier("redirect")
        terms = [*record.evaluated_mechanisms(), *([redirect] if redirect is not None else [])]
        known[name] = not record.errors and all(
            _reach_shown(other, name, domain, snapshot, records, known, depth + 1) for other in terms
        )
    return known[name]


def _may_match(term: SpfTerm, family: str, record_domain: str, domain: str, snapshot: DnsSnapshot) -> bool:
    """Whether `term` may match some sender of `family`: an ip4 term no IPv6 sender (RFC 7208 5.6), an a term on a
    name the snapshot has no address of the family for none (5.3); any other term, for all this knows."""
    if term.name in ("ip4", "ip6"):
        return (term.name == "ip4") == (family == FAMILIES[0])
    if term.name == "a":
        name = expand_domain_spec(term_domain_spec(term) or record_domain, record_domain, domain)
        answer = snapshot.get(name, "A" if family == FAMILIES[0] else "AAAA") if name else None
        return answer is None or bool(answer.records)
    return True
