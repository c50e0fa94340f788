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

from ..records.spf import SpfTerm, redirect_as_include, strict_record, with_qualifier, without_term
from ..records.spf_evaluation import (
    FAMILIES,
    LOOKUP_LIMIT,
    PTR_OF_THE_SENDER,
    VOID_LOOKUP_LIMIT,
    Lookup,
    SpfEvaluation,
    SpfFailure,
    evaluate_spf_answers,
)
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, DnsSnapshot

__all__ = [
    "FAMILIES",
    "LOOKUP_LIMIT",
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


def evaluate_spf(domain: str, snapshot: DnsSnapshot, no_reverse_dns: bool = False) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched. `no_reverse_dns`: for a sender whose address has no PTR
    record (each ptr term a void lookup, `evaluate_spf_answers`)."""
    if snapshot.get(domain, "TXT") is None:
        return None
    return evaluate_spf_answers(domain, _answers_of(snapshot), no_reverse_dns=no_reverse_dns)


#: How many evaluations a fix takes at most: one or two for each term it drops or changes (a record has rarely more
#: than two such terms; one with thousands must not hold the check)
MAX_FIX_EVALUATIONS = 12


@dataclass(frozen=True)
class KeptTerm:
    """A term deciding for `families` that the fix gives "-" instead of dropping: without it their senders would reach
    the terms after it and stop at a permerror (`reason` "invalid", "lookups", "void"), or pass (`reason` "pass": a
    term after it matches every one of them), or (None) reach lookups the scan did not make, so what they give them
    is not known."""

    term: SpfTerm
    families: tuple[str, ...]
    reason: str | None


@dataclass(frozen=True)
class SpfFix:
    domain: str  # where to publish it
    record: str
    kept: tuple[KeptTerm, ...] = ()


def strict_fix(evaluation: SpfEvaluation, snapshot: DnsSnapshot) -> SpfFix:
    """A record whose senders it does not list are refused, for a record whose verdict lets them through (softfail,
    neutral). Each family's end is its own term (RFC 7208 4.6.2: "~ip6:::/0" ends IPv6 senders' evaluation before the
    "~all" that ends IPv4 senders'), so each such term that is not "all" goes and the record is evaluated again,
    until none is left (dropping "~exists:x" can leave "~ip4:0.0.0.0/0" deciding for IPv4 senders), then "all"
    becomes "-all" (`strict_record`). A term whose families would then reach an error the record holds after it (a
    permerror that was not theirs), a term passing every one of them ("?exists:x ip6:::/0"), or lookups the scan did
    not make, is given "-" instead (`SpfFix.kept`): the same senders pass, and the others are refused there rather
    than led into a broken or open record.

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

    def evaluated(candidate: str) -> tuple[SpfEvaluation, set[tuple[str, str]]]:
        """`candidate` published at `fix_domain`, evaluated over the snapshot's answers; the lookups it lacks are
        taken as no answer (the walk goes on as if they changed nothing), and returned."""
        missing: set[tuple[str, str]] = set()
        quoted = candidate.replace("\\", "\\\\").replace('"', '\\"')
        strings = " ".join(f'"{quoted[i : i + 255]}"' for i in range(0, max(len(quoted), 1), 255))
        published = DnsAnswer(fix_domain, "TXT", "NOERROR", (strings,))

        def lookup(name: str, rdtype: str) -> DnsAnswer | None:
            key = (name.rstrip(".").lower(), rdtype.upper())
            if key == (fix_domain, "TXT"):
                return published
            answer = snapshot.get(*key)
            if answer is None:
                missing.add(key)
            return answer

        return evaluate_spf_answers(domain, lookup), missing

    kept: list[KeptTerm] = []
    current, evaluations = text, 1
    now, missing = evaluated(strict_record(current))
    while evaluations < MAX_FIX_EVALUATIONS:
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
                now, missing = evaluated(strict_record(current))
                evaluations += 1
                continue
        if not deciding:
            break
        term = deciding[0][1]
        families = tuple(family for family, t in deciding if t == term)
        trial = without_term(current, term)
        after, after_missing = evaluated(strict_record(trial))
        evaluations += 1
        # the families it would lead into a permerror that was not theirs, or to pass every sender
        broken = [
            (f, "pass" if after.results[f] == "pass" else after.permerrors.get(f))
            for f in FAMILIES
            if after.results.get(f) in ("permerror", "pass") and now.results.get(f) != after.results.get(f)
        ]
        if trial != current and not broken and not _may_break(after, after_missing - missing):
            current, now, missing = trial, after, after_missing
            continue
        refusing = with_qualifier(current, term, "-")
        if refusing == current:  # written in a way neither finds: left as it is
            break
        kept.append(KeptTerm(term, families, broken[0][1] if broken else None))
        current = refusing
        now, missing = evaluated(strict_record(current))
        evaluations += 1
    return SpfFix(fix_domain, strict_record(current), tuple(kept))


def _may_break(evaluation: SpfEvaluation, unasked: set[tuple[str, str]]) -> bool:
    """Whether lookups the scan did not make could make `evaluation` a permerror: a record not read (an include's,
    which may be missing or broken), MX records not read (up to 10 hosts, each a void lookup if it has no address),
    or more void lookups than allowed if each address lookup found nothing."""
    if any(rdtype in ("TXT", "MX") for _, rdtype in unasked):
        return True
    return any(len(names) + len(unasked) > VOID_LOOKUP_LIMIT for names in evaluation.void_names_for.values())
