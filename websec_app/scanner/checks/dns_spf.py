"""The dns section's SPF findings: the domain's record evaluated as receivers evaluate it (spf.py), for each sender
family, with a fix that keeps the senders it passes (RFC 7208)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ..findings import Finding
from ..records.dns_text import failed, zone_file_strings
from ..records.spf import parse_spf
from ..records.spf_evaluation import ADDRESS_TYPE, SpfDecision, SpfRecords
from ..records.spf_evaluation import term_text as spf_term_text
from ..snapshot import SiteSnapshot
from ._dns_shared import could_not_check, listed_errors, series
from ._shown import shown
from .spf import (
    FAMILIES,
    LOOKUP_LIMIT,
    MAX_FIX_EVALUATIONS,
    PTR_OF_THE_SENDER,
    VOID_LOOKUP_LIMIT,
    SpfEvaluation,
    SpfFailure,
    SpfFix,
    evaluate_spf,
    strict_fix,
)


def spf_findings(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> tuple[list[Finding], bool]:
    """Findings, and whether the record says no host may send mail ("v=spf1 -all")."""
    answer = snapshot.dns.get(domain, "TXT")
    records = SpfRecords()  # the records decoded and parsed once for all of the check's evaluations
    evaluation = evaluate_spf(domain, snapshot.dns, records=records)
    if answer is None or evaluation is None:
        return [], False
    if failed(answer):
        return [could_not_check(answer)], False
    failure = evaluation.failure
    details["spf"] = {
        "record": None if evaluation.record is None else shown(evaluation.record),
        # the most DNS lookups (void lookups) a sender's evaluation makes, and each family's: receivers count a
        # sender's own (RFC 7208 4.6.4), which differ by family (an a term asks A or AAAA, 5.3)
        "lookups": evaluation.lookups,
        "lookups_for": dict(evaluation.lookups_for),
        # the term that decides for the senders the record does not list (`all_for`): "-all", or one matching every
        # sender of a family before it ("?ip6:::/0")
        "all": _spf_deciding_term(evaluation),
        "errors": listed_errors(evaluation.errors),
        "not_checked": listed_errors(evaluation.unknown),
        "void_lookups": evaluation.void_lookups,
        "void": listed_errors(evaluation.void_names),
        "void_lookups_for": {family: len(names) for family, names in evaluation.void_names_for.items()},
        # the term whose failed lookups stopped the evaluation with temperror (RFC 7208 5), and those lookups
        "stopped_at": failure.term if failure else None,
        "failed_lookups": [f"{a.name} {a.rdtype}" for a in failure.lookups] if failure else [],
        # whose senders each applies to, when a failed lookup stopped one address family only (RFC 7208 5.3, 5.4)
        "stopped_for": list(failure.families) if failure else [],
        "all_for": list(evaluation.verdict_families),
        # each family's own result (RFC 7208 2.6), which differ when an error or a term matching every sender of
        # one family ends the evaluation for its senders alone
        "results": dict(evaluation.results),
    }
    if evaluation.records_found == 0:
        return [Finding("dns.spf_missing", note=f"{domain} publishes no SPF record")], False
    if evaluation.records_found > 1:
        note = f"{evaluation.records_found} SPF records: receivers treat this as an error (RFC 7208 4.5)"
        return [Finding("dns.spf_multiple", note=note)], False
    record = evaluation.record or ""
    # "v=spf1 -all": the only mechanism a receiver tests is -all (any case, RFC 7208 4.6.1)
    tested = parse_spf(record).evaluated_mechanisms()
    no_senders = [(t.qualifier, t.name) for t in tested] == [("-", "all")]
    findings = []
    # The evaluation stops at its first error, as receivers do (RFC 7208 4.6, 4.6.4, 5): one of the temperror, the
    # syntax, the lookup-limit and the void-lookup findings below at most for each family's senders, those still
    # walking there (one family, when a term before it matched every sender of the other, or its own count passed a
    # limit).
    unchecked = _spf_not_checked(evaluation)

    # each permerror below stops the senders of the families it names (each family stops once, at its first error:
    # one family's count of lookups or void lookups can pass a limit the other's does not)
    def only_for(kind: str) -> str:
        return _spf_senders(evaluation, evaluation.stopped_by(kind), kind=kind)

    for failed_term in evaluation.failures:
        # RFC 7208 5: receivers stop at this term with temperror. What it and the terms after it decide (the result
        # for other senders, a limit or syntax error further on) is not known: not a finding, and not "fixed".
        where = "" if failed_term.domain == domain else f" (in {failed_term.domain}'s record)"
        for_whom = _spf_senders(evaluation, failed_term.families, failed_term)
        findings += [
            Finding(
                "check.error",
                subject=f"{answer.name} {answer.rdtype}",
                note=f"{answer.error or answer.rcode}: SPF's evaluation stops at {failed_term.term}{where} with "
                f"temperror (RFC 7208 5){for_whom}, so what receivers conclude "
                f"{'for them ' if for_whom else ''}is not known",
            )
            for answer in failed_term.lookups
        ]
    if evaluation.errors:
        note = "; ".join(listed_errors(evaluation.errors, limit=5)) + only_for("invalid") + unchecked
        findings.append(Finding("dns.spf_invalid", note=note))
    if evaluation.over_limit:
        parts = listed_errors(evaluation.limit_errors)
        at = evaluation.over_limit_at_for
        if at:
            terms = set(at.values())
            where = (
                next(iter(terms))
                if len(terms) == 1
                else ", ".join(f"{term} for {family} senders" for family, term in at.items())
            )
            parts.insert(
                0,
                f"more than {LOOKUP_LIMIT} DNS lookups: receivers stop at the {LOOKUP_LIMIT + 1}th, {where} "
                "(RFC 7208 4.6.4)",
            )
        findings.append(Finding("dns.spf_too_many_lookups", note="; ".join(parts) + only_for("lookups") + unchecked))
    if evaluation.over_void_limit:
        findings.append(Finding("dns.spf_void_lookups", note=_spf_void_note(evaluation) + only_for("void") + unchecked))
    if evaluation.uses_ptr:
        note = "the ptr mechanism is slow and unreliable (RFC 7208 5.5)" + _spf_ptr_void_note(snapshot, domain, records)
        findings.append(Finding("dns.spf_ptr", note=note))
    qualifier = evaluation.all_qualifier

    def fixed() -> tuple[dict[str, str], str]:
        # the fix changes each family's deciding term (`strict_fix`), evaluated again over the snapshot's answers
        fix = strict_fix(evaluation, snapshot.dns, records)
        # the rule's template quotes it: a record past 255 octets is written as several character-strings
        return {"domain": fix.domain, "spf_strict": " ".join(zone_file_strings(fix.record))[1:-1]}, _spf_kept_note(fix)

    all_domain = evaluation.all_domain or domain
    where = f" (in {all_domain}'s record, through redirect=)" if all_domain != domain else ""
    if len(evaluation.verdict_families) == 1 and not evaluation.passes_everyone:
        # the other family's senders get another result: said beside, and by its own finding when it is an error
        (family,) = evaluation.verdict_families
        (other,) = (f for f in FAMILIES if f != family)
        where += f" (for {family} senders; {other} senders' result {_SPF_OTHER_RESULT[evaluation.results[other]]})"
    if evaluation.passes_everyone:
        # Reached before any error (RFC 7208 4.6.2: evaluation stops at the first match); including a record that
        # passes everyone passes everyone too (5.2). An error after it concerns the other family's senders alone.
        opener = evaluation.passes_everyone
        senders = (
            "server" if len(evaluation.passes_families) == len(FAMILIES) else f"{evaluation.passes_families[0]} server"
        )
        note = f"+all lets every {senders} on the internet pass"
        if opener != "+all":
            note = f"{opener}: every {senders} on the internet passes" + (
                " (RFC 7208 5.2)" if "include:" in opener else ""
            )
        findings.append(Finding("dns.spf_pass_all", note=note + _spf_verdict_beside(evaluation) + unchecked))
    elif not evaluation.all_known:
        # the record that decides could not be read, or is never reached: a temperror or a permerror above says why,
        # and a fix republishing the record with "-all" would still be one; or its name is built with the sender's
        # values (details.spf.not_checked), so which record decides, if any, depends on the sender: no verdict
        pass
    elif evaluation.all_chosen is not None:
        # a "~" or "?" term any sender can be matched by (its zone is the sender's pick) ends evaluation for it there
        outcome, result = ("dns.spf_softfail", "soft-fail") if qualifier == "~" else ("dns.spf_neutral", "are neutral")
        note = f"{evaluation.all_chosen}: any server on the internet can be matched there, so other senders {result}"
        fix_vars, kept = fixed()
        findings.append(Finding(outcome, note=note + where + kept + unchecked, fix_vars=fix_vars))
    elif qualifier in (None, "?"):
        term = _spf_deciding_term(evaluation)
        note = f"{term}: neutral" if term else "no 'all' mechanism: other senders are neutral (RFC 7208 4.7)"
        fix_vars, kept = fixed()
        findings.append(Finding("dns.spf_neutral", note=note + where + kept + unchecked, fix_vars=fix_vars))
    elif qualifier == "~":
        note = f"{_spf_deciding_term(evaluation)}: other senders only soft-fail{where}"
        fix_vars, kept = fixed()
        findings.append(Finding("dns.spf_softfail", note=note + kept + unchecked, fix_vars=fix_vars))
    else:
        findings.append(Finding("dns.spf_strict", note=record + where + unchecked))
    return findings, no_senders and not evaluation.errors


#: What the other family's senders get, beside a verdict given for one family (`SpfEvaluation.results`)
_SPF_OTHER_RESULT: dict[str | None, str] = {
    "temperror": "is not known: a lookup failed",
    "permerror": "is permerror, the error reported beside this",
    "fail": "is fail: they are refused",
    "softfail": "is softfail",
    "neutral": "is neutral",
    None: "depends on the sender, which names the record that decides",
}
#: What the verdict on the other senders lets them do, for a record that passes every sender of one family
_SPF_VERDICT_WORDS = {"-": "are refused", "~": "soft-fail", "?": "are neutral", None: "are neutral"}


def _spf_deciding_term(evaluation: SpfEvaluation) -> str | None:
    """The term that decides for the senders the record does not list (those of `verdict_families`), as its record
    writes it: "-all", "+all", "?ip6:::/0" (matching every IPv6 sender before any "all", RFC 7208 4.6.2),
    "include:_spf.example.net" (a record that passes every sender); each family's when they differ ("~all for IPv4
    senders, ~ip6:::/0 for IPv6 senders", a family with a term first); None with none (neutral, 4.7)."""
    terms = {
        family: _spf_term_of(evaluation.decisions[family])
        for family in evaluation.verdict_families
        if family in evaluation.decisions
    }
    named = sorted(terms.items(), key=lambda item: item[1] is None)
    if not named or named[0][1] is None:
        return None
    if len(set(terms.values())) == 1:
        return named[0][1]
    return ", ".join(f"{term or _NO_ALL} for {family} senders" for family, term in named)


_NO_ALL = "no 'all'"


def _spf_term_of(decision: SpfDecision) -> str | None:
    term = decision.term
    if term is None or decision.qualifier is None:
        return None
    if term.name == "all":
        return f"{term.qualifier}all"
    return spf_term_text(term)


#: Why the terms after a term the fix keeps would stop its senders (`SpfEvaluation.permerrors`' kinds)
_SPF_PERMERROR_WORDS = {
    "invalid": "a syntax error, or an include of no record",
    "lookups": f"more than {LOOKUP_LIMIT} DNS lookups",
    "void": f"more than {VOID_LOOKUP_LIMIT} void lookups",
}


def _spf_kept_note(fix: SpfFix) -> str:
    """What the note says of each term the fix drops that lets terms after it take effect, and of each it gives "-"
    rather than drops, and why."""
    parts = []
    for dropped in fix.opened:
        written = spf_term_text(dropped.term)
        listed = [f"'{spf_term_text(term)}'" for term in dropped.enabled]
        if len(listed) > _SPF_ENABLED_SHOWN:
            named = ", ".join(listed[:_SPF_ENABLED_SHOWN]) + f" and {len(listed) - _SPF_ENABLED_SHOWN} more"
        else:
            named = series(listed)
        several = len(listed) > 1
        if all(term.qualifier == "+" for term in dropped.enabled):
            then = f"mail from the senders listed by {named} passes"
        else:
            then = (
                f"{named} {'decide' if several else 'decides'} for the senders {'they list' if several else 'it lists'}"
            )
        refusing = spf_term_text(replace(dropped.term, qualifier="-"))
        parts.append(f"; the fix drops {written}, so {then}: check that they are yours, or write {refusing} instead")
    for kept in fix.kept:
        senders = " and ".join(kept.families)
        written = spf_term_text(kept.term)
        refusing = spf_term_text(replace(kept.term, qualifier="-"))
        keeps = f"; the fix keeps {written} as {refusing} rather than dropping it: "
        if kept.reason == "budget":
            parts.append(f"{keeps}the fix evaluates a record {MAX_FIX_EVALUATIONS} times at most")
            continue
        without = " without reverse DNS" if kept.no_reverse_dns else ""
        if kept.reason == "pass":
            why = "and pass there, every one of them"
        elif kept.reason == "temperror":
            why = "and stop there with temperror (a lookup that fails)"
        elif kept.reason == "sender":
            why = "and get a result that depends on the sender"
        elif kept.reason == "sender_terms":
            why = (
                "whose matches the scan's answers do not show (a ptr term, a name built from the sender's values, or "
                "a record the scan did not read)"
            )
        elif kept.reason:
            why = f"and stop there with permerror ({_SPF_PERMERROR_WORDS.get(kept.reason, kept.reason)})"
        else:
            why = "whose lookups the scan did not make, so what they give them is not known"
        parts.append(f"{keeps}{senders} senders{without} would reach the terms after it {why}")
    return "".join(parts)


#: How many of the terms a dropped term would let take effect the note names
_SPF_ENABLED_SHOWN = 5


def _spf_ptr_void_note(snapshot: SiteSnapshot, domain: str, records: SpfRecords) -> str:
    """For a record with a ptr term: a sender whose address has no PTR record makes its query find nothing, a void
    lookup (RFC 7208 4.6.4; pyspf, policyd-spf's library, counts it), and whether that makes a permerror for such
    senders (the record's other void lookups, counted by a walk as theirs)."""
    note = (
        "; for a sender without reverse DNS (no PTR record for its address), the ptr term's query finds nothing, "
        "a void lookup receivers count (RFC 7208 4.6.4)"
    )
    evaluation = evaluate_spf(domain, snapshot.dns, no_reverse_dns=True, records=records)
    if evaluation is None:
        return note
    stopped = [
        family
        for family in evaluation.stopped_by("void")
        if PTR_OF_THE_SENDER in evaluation.void_names_for[family][: VOID_LOOKUP_LIMIT + 1]
    ]
    if not stopped:
        return note
    (family, *_) = stopped
    names = _void_names(evaluation.void_names_for[family][: VOID_LOOKUP_LIMIT + 1])
    senders = "" if len(stopped) == len(FAMILIES) else f" {family}"
    return (
        f"{note}: for such{senders} senders the record is a permerror, {VOID_LOOKUP_LIMIT + 1} void lookups ({names})"
    )


def _void_names(names: list[str]) -> str:
    """The names of void lookups, each once and in order, with how many lookups found nothing there when more than
    one did (an a and an mx term of one record ask one name twice: "spf.example.com twice", not the name twice,
    or once beside a count of two); the sender's PTR query as "ptr"."""
    times = {1: "", 2: " twice"}
    return ", ".join(
        ("ptr" if name == PTR_OF_THE_SENDER else name) + times.get(count, f" {count} times")
        for name, count in Counter(names).items()
    )


def _spf_void_note(evaluation: SpfEvaluation) -> str:
    """The void lookups of each family whose senders pass the limit: the same names for both, or each its own."""
    stopped = evaluation.stopped_by("void")
    names = {family: _void_names(evaluation.void_names_for[family]) for family in stopped}
    counts = {family: len(evaluation.void_names_for[family]) for family in stopped}
    if len(set(names.values())) == 1:
        (family, *_) = stopped
        what = f"{counts[family]} void lookups (names that do not exist or have no such record: {names[family]})"
    else:
        what = "void lookups (names that do not exist or have no such record): " + "; ".join(
            f"{counts[family]} for {family} senders ({names[family]})" for family in stopped
        )
    return f"{what}; receivers allow {VOID_LOOKUP_LIMIT} (RFC 7208 4.6.4)"


def _spf_verdict_beside(evaluation: SpfEvaluation) -> str:
    """For a record that passes every sender of one family (dns.spf_pass_all), what the other family's senders it
    does not list get, when they reach a verdict: "; IPv6 senders soft-fail (~all)". It is no finding of its own: the
    record is open, and its fix decides for every sender."""
    if len(evaluation.passes_families) == len(FAMILIES) or not evaluation.all_known:
        return ""
    (family,) = evaluation.verdict_families
    what = evaluation.all_what or "no 'all' mechanism, RFC 7208 4.7"
    return f"; {family} senders {_SPF_VERDICT_WORDS[evaluation.all_qualifier]} ({what})"


def _spf_not_checked(evaluation: SpfEvaluation) -> str:
    """For a record whose evaluation reaches an include or redirect= named with the sender's own values in a zone it
    does not pick: "; not checked, ...: include:%{l}._spf.example.com". Not a failure of the scan: what receivers
    conclude there depends on each sender (the record its values name, or none: a permerror, RFC 7208 5.2, 6.1)."""
    if not evaluation.unknown:
        return ""
    terms = listed_errors(evaluation.unknown, limit=5)
    names = "its name is" if len(terms) == 1 else "their names are"
    return (
        f"; not checked, as {names} built from the sender's own values (RFC 7208 7.3), so what receivers conclude "
        f"where {'it is' if len(terms) == 1 else 'they are'} reached depends on the sender: {', '.join(terms)}"
    )


def _spf_senders(
    evaluation: SpfEvaluation, stopped: tuple[str, ...], failure: SpfFailure | None = None, kind: str | None = None
) -> str:
    """For an error that stops one family's senders (`stopped`), whose it is and, when known, why not the other's:
    a term before it matched every sender of the other (" (for IPv6 senders: every IPv4 sender is matched before
    it)"), the error is a failed lookup of the family's own address type (RFC 7208 5.3, 5.4), or the other's senders
    stopped before it at a failed lookup of theirs; for a limit (`kind` "void" or "lookups") their own count passed
    while the other's walked on: void lookups of their own address type, or lookups the other's senders never
    made."""
    if len(stopped) != 1:
        return ""
    (family,) = stopped
    (other,) = (f for f in FAMILIES if f != family)
    if failure is None and family in evaluation.stopped_on_own_count:
        if kind == "void":
            own_type, other_type = ADDRESS_TYPE[family], ADDRESS_TYPE[other]
            return f" (for {family} senders: receivers ask {own_type} for them, {other_type} for {other} senders)"
        if kind == "lookups":
            return f" (for {family} senders: {other} senders make fewer lookups, leaving an include before its end)"
    # a permerror stops every family walking (RFC 7208 4.6, 4.6.4), so one the other's senders never reached is after
    # a term matching every one of them, their result
    matched = evaluation.results.get(other) in ("pass", "fail", "softfail", "neutral")
    if other in evaluation.passes_families or (failure is None and matched):
        return f" (for {family} senders: every {other} sender is matched before it)"
    own_type = ADDRESS_TYPE[family]
    if failure is not None and all(answer.rdtype == own_type for answer in failure.lookups):
        other_type = ADDRESS_TYPE[other]
        return f" (for {family} senders: receivers ask {own_type} for them, {other_type} for {other} senders)"
    earlier = evaluation.failures if failure is None else evaluation.failures[: evaluation.failures.index(failure)]
    if any(other in failed_term.families for failed_term in earlier):
        return f" (for {family} senders: {other} senders stop before it, at a failed lookup)"
    return f" (for {family} senders)"
