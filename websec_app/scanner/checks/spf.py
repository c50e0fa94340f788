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

from ..records.spf_evaluation import (
    FAMILIES,
    LOOKUP_LIMIT,
    VOID_LOOKUP_LIMIT,
    Lookup,
    SpfEvaluation,
    SpfFailure,
    evaluate_spf_answers,
)
from ..snapshot import DnsAnswer, DnsSnapshot

__all__ = [
    "FAMILIES",
    "LOOKUP_LIMIT",
    "NOT_ASKED",
    "VOID_LOOKUP_LIMIT",
    "SpfEvaluation",
    "SpfFailure",
    "evaluate_spf",
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


def evaluate_spf(domain: str, snapshot: DnsSnapshot) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched."""
    if snapshot.get(domain, "TXT") is None:
        return None
    return evaluate_spf_answers(domain, _answers_of(snapshot))
