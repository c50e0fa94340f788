"""The `dns` section: the web host's name and its registrable domain, graded like internet.nl.

For the host: addresses (IPv6 included), CNAME, and whether it or `www.<domain>` is a CNAME to
a name that does not exist (a subdomain takeover waiting to happen). For the registrable
domain (Public Suffix List, registrable.py): SPF (spf.py), DMARC (records/dmarc.py), DKIM's
`_domainkey` (NXDOMAIN vs NOERROR, RFC 8020; selectors are never guessed), DNSSEC validated
with dns.dnssec (dnssec.py), CAA, MX with null MX (RFC 7505), MTA-STS and TLS-RPT
(records/mta_sts.py, records/tls_rpt.py). A domain that says it handles no mail (null MX, or SPF "v=spf1 -all") needs
no DKIM, MTA-STS or TLS-RPT. A failed lookup is "could not check" (`check.error`), never a
failed scan, and never an answer: a SERVFAIL is not an NXDOMAIN (RFC 1035 4.1.1), so a verdict that
needs it (a CNAME target gone, an MX host without addresses, a report address's consent, DKIM needed
by a domain whose MX lookup failed, SPF's result once a term's lookup failed: temperror, RFC 7208 5) is
not given. Records that were not asked produce no finding
(a lookup the scan asked and did not get in time is recorded as failed: fetch/dns.py). Each finding
names every family of lookups that decided it (`Finding.families`), each failure its own family.
Mail findings are minor: a web site should not fail over its mail configuration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import dns.exception
import dns.rdata
import dns.rdataclass
import dns.rdatatype

from ..findings import CheckResult, Finding
from ..records.caa import MAX_CAA_NAMES, CaaIssue, caa_names, critical_flag_problem, iodef_problem, parse_issue_value
from ..records.dmarc import consent_name, discover, external_report_domains, is_dmarc, parse_dmarc
from ..records.dns_text import failed, txt_of, zone_file_strings
from ..records.mta_sts import (
    MAX_POLICY_BYTES,
    parse_sts_policy,
    sts_near_misses,
    sts_record_problem,
    sts_records,
    uncovered_mx,
)
from ..records.spf import parse_spf
from ..records.spf_evaluation import ADDRESS_TYPE, SpfDecision, SpfRecords
from ..records.spf_evaluation import term_text as spf_term_text
from ..records.tls_rpt import tlsrpt_near_misses, tlsrpt_problem, tlsrpt_records
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, FetchChain, PassedOver, SiteSnapshot
from ..target import ip_literal
from ._shown import listed, shown_lists
from ._shown import shown as shown_text  # `shown` is a local name in several functions here
from .dnssec import validate_zone
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

_MAX_NAMES_LISTED = 10  # in a note: an MX RRset can hold thousands of names
# A 64 KB TXT record of "x " holds 32,000 SPF errors (as many again from each record it includes), a DMARC record
# or an MTA-STS policy thousands: ten included records of them made a 12 MB dns section. Each distinct error is
# listed once, the first ten of them, each cut to 500 characters (an error quotes its term, which can be 64 KB).
_MAX_ERRORS_LISTED = 10
_MAX_ERROR_CHARS = 500


def _listed(errors: Iterable[str], limit: int = _MAX_ERRORS_LISTED) -> list[str]:
    """The distinct `errors` in order, at most `limit`, then how many more there were, not listed."""
    return listed(errors, limit, each=_MAX_ERROR_CHARS)


def _could_not_check(answer: DnsAnswer, *families: str) -> Finding:
    """The failed lookup as a check.error; `families`: the one it leaves unchecked, when not its caller's."""
    note = answer.error or answer.rcode
    return Finding("check.error", subject=f"{answer.name} {answer.rdtype}", note=note, families=families)


# -- MX --------------------------------------------------------------------------------------------


def _mx(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> tuple[list[Finding], bool | None]:
    """Findings, and whether the domain receives mail (None: unknown)."""
    answer = snapshot.dns.get(domain, "MX")
    if answer is None:
        return [], None
    if failed(answer):
        return [_could_not_check(answer)], None
    records = list(answer.records) if answer.exists else []
    null = [r for r in records if r.split()[-1:] == ["."]]
    details["mx"] = {**shown_lists({"records": records}), "null_mx": bool(null)}
    if null and len(records) == 1 and records[0].split()[0] == "0":
        return [Finding("dns.null_mx", note=f"{domain} declares it accepts no mail (RFC 7505)")], False
    if null:
        note = "a null MX must be the only MX record, with preference 0 (RFC 7505 3)"
        return [Finding("dns.null_mx_invalid", note=note)], None
    if not records:
        note = "no MX record: senders fall back to the A/AAAA address of the domain (RFC 5321 5.1)"
        return [Finding("dns.no_mx", note=note)], None
    findings = [Finding("dns.mx_present", note=", ".join(records))]
    for record in records:
        exchange = record.split()[-1].rstrip(".").lower()
        a, aaaa = snapshot.dns.get(exchange, "A"), snapshot.dns.get(exchange, "AAAA")
        if a is None or aaaa is None or a.records or aaaa.records:
            continue  # not asked (past MAX_MX_HOSTS), or the host has an address
        if a.rcode == "NXDOMAIN" or not (failed(a) or failed(aaaa)):  # NXDOMAIN is about the name (RFC 8020)
            why = "does not exist" if a.rcode == "NXDOMAIN" else "has no address"
            note = f"{exchange} {why}"
            findings.append(Finding("dns.mx_unresolvable", subject=exchange, note=note, families=_MX_HOST_FAMILIES))
        else:  # a failed lookup: the host may well have the address it did not tell
            findings += [_could_not_check(answer, "mx_hosts") for answer in (a, aaaa) if failed(answer)]
    return findings, True


# -- SPF -------------------------------------------------------------------------------------------


def _spf(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> tuple[list[Finding], bool]:
    """Findings, and whether the record says no host may send mail ("v=spf1 -all")."""
    answer = snapshot.dns.get(domain, "TXT")
    records = SpfRecords()  # the records decoded and parsed once for all of the check's evaluations
    evaluation = evaluate_spf(domain, snapshot.dns, records=records)
    if answer is None or evaluation is None:
        return [], False
    if failed(answer):
        return [_could_not_check(answer)], False
    failure = evaluation.failure
    details["spf"] = {
        "record": None if evaluation.record is None else shown_text(evaluation.record),
        # the most DNS lookups (void lookups) a sender's evaluation makes, and each family's: receivers count a
        # sender's own (RFC 7208 4.6.4), which differ by family (an a term asks A or AAAA, 5.3)
        "lookups": evaluation.lookups,
        "lookups_for": dict(evaluation.lookups_for),
        # the term that decides for the senders the record does not list (`all_for`): "-all", or one matching every
        # sender of a family before it ("?ip6:::/0")
        "all": _spf_deciding_term(evaluation),
        "errors": _listed(evaluation.errors),
        "not_checked": _listed(evaluation.unknown),
        "void_lookups": evaluation.void_lookups,
        "void": _listed(evaluation.void_names),
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
        note = "; ".join(_listed(evaluation.errors, limit=5)) + only_for("invalid") + unchecked
        findings.append(Finding("dns.spf_invalid", note=note))
    if evaluation.over_limit:
        parts = _listed(evaluation.limit_errors)
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
            named = _series(listed)
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
    names = ", ".join(
        "ptr" if name == PTR_OF_THE_SENDER else name
        for name in evaluation.void_names_for[family][: VOID_LOOKUP_LIMIT + 1]
    )
    senders = "" if len(stopped) == len(FAMILIES) else f" {family}"
    return (
        f"{note}: for such{senders} senders the record is a permerror, {VOID_LOOKUP_LIMIT + 1} void lookups ({names})"
    )


def _spf_void_note(evaluation: SpfEvaluation) -> str:
    """The void lookups of each family whose senders pass the limit: the same names for both, or each its own."""
    stopped = evaluation.stopped_by("void")
    names = {family: ", ".join(dict.fromkeys(evaluation.void_names_for[family])) for family in stopped}
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
    terms = _listed(evaluation.unknown, limit=5)
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


# -- DMARC -----------------------------------------------------------------------------------------


def _dmarc(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    name = f"_dmarc.{domain}"
    answer = snapshot.dns.get(name, "TXT")
    if answer is None:
        return []
    if failed(answer):
        return [_could_not_check(answer)]
    records, discarded = discover(txt_of(answer))
    if not records:
        note = f"no DMARC record at {name}"
        if discarded:
            shown = ", ".join(repr(t.strip()) for t in discarded[:3])
            note += (
                f"; ignored: {shown} (a DMARC record must begin with exactly v=DMARC1, nothing before it, "
                "RFC 7489 6.3, 6.6.3; some receivers are lenient, the standard ones discard it)"
            )
        return [Finding("dns.dmarc_missing", note=note)]
    if len(records) > 1:
        note = f"{len(records)} DMARC records: receivers then apply none (RFC 7489 6.6.3)"
        return [Finding("dns.dmarc_invalid", note=note)]
    record = parse_dmarc(records[0])
    policy = record.policy
    details["dmarc"] = {
        "record": shown_text(records[0]),
        "p": policy,
        "sp": record.subdomain_policy,
        "pct": record.pct,
        "np": record.tags.get("np"),
        "psd": record.tags.get("psd"),
        "t": record.tags.get("t"),
        "ignored_tags": _listed(record.ignored_tags),
        **shown_lists({"rua": [u.uri for u in record.rua], "ruf": [u.uri for u in record.ruf]}),
        "errors": _listed(record.errors),
    }
    findings = []
    if policy is None:
        return [Finding("dns.dmarc_invalid", note="; ".join(_listed(record.errors)) or "no valid policy")]
    if record.errors:
        findings.append(Finding("dns.dmarc_invalid", note="; ".join(_listed(record.errors))))
    if policy == "none":
        findings.append(Finding("dns.dmarc_none", note="p=none only asks for reports: spoofed mail is delivered"))
    elif policy == "quarantine":
        findings.append(Finding("dns.dmarc_enforced", note="p=quarantine: spoofed mail goes to spam"))
    else:
        findings.append(Finding("dns.dmarc_enforced", note="p=reject: spoofed mail is refused"))
    if policy != "none" and record.testing:
        note = "t=y: testing mode, receivers are asked not to apply the policy yet (DMARCbis)"
        findings.append(Finding("dns.dmarc_partial", note=note))
    elif policy != "none" and record.pct < 100:
        findings.append(Finding("dns.dmarc_partial", note=f"pct={record.pct}: the policy applies to {record.pct}%"))
    if policy != "none" and record.subdomain_policy == "none":
        findings.append(Finding("dns.dmarc_subdomains_open", note="sp=none: mail from subdomains is not protected"))
    elif policy != "none" and record.non_existent_policy == "none":
        note = "np=none: mail from subdomains that do not exist is not protected (DMARCbis)"
        findings.append(Finding("dns.dmarc_subdomains_open", note=note))
    problems = [u.problem for u in (*record.rua, *record.ruf) if not u.valid and u.problem]
    for report_domain in external_report_domains(domain, record):
        consent = snapshot.dns.get(consent_name(domain, report_domain), "TXT")
        if consent is None:
            continue  # not asked (past fetch/dns.MAX_REPORT_DOMAINS)
        if failed(consent):  # not an answer: the consent record may be there
            findings.append(_could_not_check(consent, "dmarc_reports"))
        elif not any(is_dmarc(t) for t in txt_of(consent)):
            problems.append(
                f"{report_domain} has not agreed to receive reports for {domain} "
                f"(no {consent_name(domain, report_domain)} record, RFC 7489 7.1)"
            )
    if problems:
        note = "; ".join(_listed(problems))
        findings.append(Finding("dns.dmarc_report_uri", note=note, families=("dmarc", "dmarc_reports")))
    return findings


# -- DKIM ------------------------------------------------------------------------------------------


def _dkim(
    snapshot: SiteSnapshot, domain: str, details: dict[str, Any], no_mail: tuple[str, str] | None, unknown: bool
) -> list[Finding]:
    """`no_mail`: how the domain declares it handles no mail and the family of the lookup that says so (None when
    it does not); `unknown`: a lookup that could have said so (MX, SPF) failed."""
    name = f"_domainkey.{domain}"
    answer = snapshot.dns.get(name, "TXT")
    if answer is None:
        return []
    if failed(answer):
        return [_could_not_check(answer)]
    details["dkim"] = {"name": name, "rcode": answer.rcode}
    if answer.rcode == "NOERROR":
        note = f"{name} exists, so DKIM keys are published below it (selectors cannot be listed)"
        return [Finding("dns.dkim_present", note=note)]
    if no_mail is not None:
        how, family = no_mail
        note = f"{domain} declares it handles no mail ({how})"
        return [Finding("dns.dkim_not_needed", note=note, families=("dkim", family))]
    if unknown:
        return []  # a null MX or "v=spf1 -all" (RFC 7505) may be behind the failure its check.error names
    note = f"{name} does not exist (NXDOMAIN), so no DKIM key is published under any selector (RFC 8020)"
    return [Finding("dns.dkim_missing", note=note, families=("dkim", "mx", "spf"))]


# -- DNSSEC ----------------------------------------------------------------------------------------


def _dnssec(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    verdict = validate_zone(domain, snapshot.dns, snapshot.fetched_at)
    if verdict is None:
        return []
    details["dnssec"] = {"status": verdict.status, "note": shown_text(verdict.note), **shown_lists({"ds": verdict.ds})}
    if verdict.zone:
        details["dnssec"]["zone"] = verdict.zone
        if verdict.status in ("unsigned", "island"):
            return []  # the platform's zone (github.io for alice.github.io): no DS its owner could publish
    outcome = {
        "secure": "dns.dnssec_valid",
        "unsigned": "dns.dnssec_unsigned",
        "island": "dns.dnssec_no_ds",
        "broken": "dns.dnssec_broken",
    }.get(verdict.status)
    if outcome is None:
        return [Finding("check.error", subject="DNSSEC", note=verdict.note)]
    return [Finding(outcome, note=verdict.note, fix_vars={"domain": verdict.zone} if verdict.zone else {})]


# -- CAA -------------------------------------------------------------------------------------------


def _caa(snapshot: SiteSnapshot, host: str, domain: str, details: dict[str, Any]) -> list[Finding]:
    """RFC 8659 3: the relevant RRset is the first non-empty one climbing from the host up to, not
    including, the root: past the registrable domain, as github.io's CAA covers alice.github.io."""
    names = caa_names(host, domain)
    skipped = len(host.rstrip(".").split(".")) - len(names)  # names below the domain past MAX_CAA_NAMES
    for name in names:
        answer = snapshot.dns.get(name, "CAA")
        if answer is None:
            return []  # not in the snapshot (one taken before these names were asked): unknown, nothing said
        if failed(answer):
            return [_could_not_check(answer)]
        if not answer.records:
            continue
        finding = _caa_rrset(snapshot, host, domain, name, answer.records, details)
        if (
            finding.outcome == "dns.caa_present"
            and skipped
            and name.count(".") < names[0].count(".") - names.index(name)
        ):  # found past the gap
            note = f" ({skipped} names between the host and {name} were not asked: at most {MAX_CAA_NAMES} a scan)"
            finding = replace(finding, note=_caa_insert(finding.note or "", note))
        return [finding]
    if skipped:
        return []  # the climb's first non-empty RRset may be at a name that was not asked: unknown
    note = f"no CAA record from {host} up to the top-level domain {names[-1]}"
    return [Finding("dns.caa_missing", note=note, fix_vars={"caa_name": domain})]


def _caa_insert(note: str, addition: str) -> str:
    """`addition` after the note's first clause (the issuers), before what follows it."""
    head, separator, tail = note.partition("; ")
    return head + addition + separator + tail


def _caa_alias(snapshot: SiteSnapshot, host: str, name: str) -> str | None:
    """The name `host` is an alias (CNAME) of, when the RRset was found at `host`: a CAA query follows the
    alias (RFC 8659 3, RFC 1034 4.3.2), so the records are that name's, and none can sit beside a CNAME."""
    if name != host:
        return None  # only the host's CNAME is asked
    cname = snapshot.dns.get(host, "CNAME")
    if cname is None or not cname.exists or not cname.records:
        return None
    return cname.records[0].rstrip(".").lower()


#: RFC 8657's parameters, which bind a CA's authorisation to ACME accounts (3) and validation methods (4): the
#: CA refuses other orders. Other parameters mean what the CA that defines them says (cansignhttpexchanges=yes).
_NARROWING_PARAMETERS = ("accounturi", "validationmethods")


def _named(issues: list[CaaIssue]) -> str:
    """The CAs the records name, each with the RFC 8657 parameters that narrow which orders it may fill, or "none"
    (";", an empty value, values CAs cannot read: RFC 8659 4.2)."""
    named = set()
    for issue in issues:
        if issue.issuer:
            narrowing = [f"{tag}={value}" for tag, value in issue.parameters if tag in _NARROWING_PARAMETERS]
            named.add(f"{issue.issuer} ({'; '.join(narrowing)})" if narrowing else issue.issuer)
    return ", ".join(sorted(named)) or "none"


def _capitalised_issuers(issues: dict[str, list[CaaIssue]]) -> list[str]:
    """CA names written with capitals that no record of the same tag also names in lower case. RFC 8659 says
    nothing of case, and Let's Encrypt's Boulder matches its own name with == (va/caa.go caaDomainMatches), so
    `issue "LetsEncrypt.org"` alone stops it; beside `issue "letsencrypt.org"` it changes nothing."""
    problems = []
    for tag, tag_issues in issues.items():
        named = {issue.issuer for issue in tag_issues if issue.issuer}
        for issuer in sorted(name for name in named if name != name.lower() and name.lower() not in named):
            problems.append(
                f"{tag} {issuer!r} is written with capitals: some CAs compare the name exactly as written "
                f"(Let's Encrypt does), so they refuse; write {issuer.lower()!r}"
            )
    return problems


def _caa_rrset(
    snapshot: SiteSnapshot, host: str, domain: str, name: str, records: tuple[str, ...], details: dict[str, Any]
) -> Finding:
    """The finding on the relevant RRset, found at `name`: what CAs make of it (RFC 8659 4, Baseline
    Requirements 3.2.2.8), and where its owner would fix it."""
    values: dict[str, list[str]] = {}
    issues: dict[str, list[CaaIssue]] = {"issue": [], "issuewild": []}
    problems: list[str] = []
    value_problems = False  # an issue or issuewild value CAs read as naming no CA
    iodef: list[str] = []
    for text in records:
        try:
            rdata = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.CAA, text)
        except dns.exception.DNSException:
            problems.append(f"unreadable record {text!r}")
            continue
        tag = rdata.tag.decode("ascii", "replace").lower()  # type: ignore[attr-defined]  # matched in any case
        raw: bytes = rdata.value  # type: ignore[attr-defined]
        values.setdefault(tag, []).append(raw.decode("utf-8", "replace"))
        flag_problem = critical_flag_problem(rdata.flags, tag)  # type: ignore[attr-defined]
        if flag_problem is not None:
            problems.append(flag_problem)
        if tag in issues:
            issue = parse_issue_value(raw)
            issues[tag].append(issue)
            if issue.problem is not None:
                value_problems = True
                shown_value = shown_text(raw.decode("utf-8", "replace"), 200)
                problems.append(f"{tag} {shown_value!r} names no CA: {issue.problem} (RFC 8659 4.2)")
        elif tag == "iodef":
            iodef += [p for p in (iodef_problem(raw),) if p]
    problems += _capitalised_issuers(issues)
    alias = _caa_alias(snapshot, host, name)
    owner = alias or name  # whose records they are
    own = owner == domain or owner.endswith("." + domain)
    details["caa"] = {
        "name": name,
        **({"alias_of": alias} if alias else {}),
        **shown_lists({tag: values.get(tag, []) for tag in ("issue", "issuewild", "iodef")}),
    }
    place = f"{name} (an alias of {alias}: its records)" if alias else name
    # The fix goes where this RRset is: one at the host hides the domain's, so records added at the domain
    # would change nothing (RFC 8659 3). An RRset above the domain (github.io's for alice.github.io) is not
    # the owner's to edit: records published at their domain come first in the climb and replace it. One read
    # through the host's alias is the alias target's: the owner's to edit when the target is theirs, else the
    # host's own records would come first, which need the CNAME replaced (no record sits beside a CNAME).
    fix_vars = {"caa_name": owner if own else (host if alias else domain), "caa_found": owner}
    fix_note = None
    if alias and not own:
        whose = f"; these are {alias}'s records, set by whoever runs {alias}"
        fix_note = (
            f"{host} is an alias (CNAME) of {alias}, and no other record can sit beside a CNAME (RFC 1034 3.6.2): "
            f"records of its own at {host} need the CNAME replaced by its addresses"
        )
    elif not own:
        whose = (
            f"; these are {name}'s records, above {domain} and set by whoever runs {name}: "
            f"CAA records published at {domain} would be read instead (RFC 8659 3)"
        )
    else:
        whose = ""
    reports = "; " + "; ".join(_listed(iodef, limit=3)) if iodef else ""
    families = ("caa", "cnames") if alias else ()
    if problems:
        outcome = "dns.caa_invalid" if own else "dns.caa_invalid_inherited"
        note = f"at {place}: {'; '.join(_listed(problems))}"
        if value_problems and issues["issue"]:  # authorisations add up (RFC 8659 4.2): who is left
            note += f"; CAs the issue records let issue: {_named(issues['issue'])}"
        return Finding(outcome, note=note + reports + whose, fix_vars=fix_vars, fix_note=fix_note, families=families)
    if not issues["issue"]:
        # RFC 8659 4.2, 4.3: only issue restricts a name that is not a wildcard; an RRset of iodef
        # or issuewild alone still ends the climb, and lets every CA issue for the host.
        tags = ", ".join(sorted(values))
        note = f"at {place}: CAA records ({tags}) but no issue tag, so they do not restrict which CAs may issue"
        if issues["issuewild"]:  # RFC 8659 4.3: they still restrict wildcard certificates
            note += f", but for wildcard certificates: {_named(issues['issuewild'])}"
        return Finding(
            "dns.caa_missing", note=note + reports + whose, fix_vars=fix_vars, fix_note=fix_note, families=families
        )
    if any(i.issuer for i in issues["issue"]):
        note = f"at {place}: issuers {_named(issues['issue'])}"
    else:
        note = f"at {place}: no CA may issue (no issue record names one)"
    if issues["issuewild"]:  # RFC 8659 4.3: for a wildcard certificate they replace the issue records
        note += f"; wildcard certificates: {_named(issues['issuewild'])}"
    return Finding("dns.caa_present", note=note + reports + whose, families=families)


# -- MTA-STS and TLS-RPT ---------------------------------------------------------------------------


def _policy_details(policy: dict[str, Any]) -> dict[str, Any]:
    """The policy as the report shows it (none: {}): a 64 KiB policy file can list thousands of `mx` patterns."""
    if not policy:
        return {}
    fields = {
        key: shown_text(value) if isinstance(value, str) else value for key, value in policy.items() if key != "mx"
    }
    return {**fields, **shown_lists({"mx": policy.get("mx", [])})}


def _policy_problem(snapshot: SiteSnapshot, chain: FetchChain) -> tuple[str | None, str | None, dict[str, Any]]:
    """(what makes senders ignore the policy, why it could not be judged, the policy as shown): at most one of
    the first two is not None."""
    tls = snapshot.mta_sts_tls
    if tls is not None:
        if tls.failure is not None:
            return f"the policy host has no working HTTPS ({tls.failure.message})", None, {}
        leaf = tls.leaf
        dated = leaf is not None and not (leaf.not_before <= snapshot.fetched_at <= leaf.not_after)
        if not tls.trusted or not tls.hostname_matches or dated:
            reason = tls.verify_error or ("the certificate does not name it" if not tls.hostname_matches else "")
            reason = reason or "the certificate is outside its validity period"
            problem = f"the certificate of {tls.host} is not valid ({reason}): senders ignore the policy (RFC 8461 3.3)"
            return problem, None, {}
    first = chain.responses[0] if chain.responses else None
    if first is None:
        why = chain.failure.message if chain.failure else "no response"
        return f"the policy could not be fetched ({why})", None, {}
    if first.is_redirect:
        return "the policy URL redirects, and senders must not follow redirects (RFC 8461 3.3)", None, {}
    if first.status_code != 200:
        return f"the policy URL answers HTTP {first.status_code}", None, {}
    if first.content_type != "text/plain":
        problem = f"the policy is served as {first.content_type or 'no media type'}, not text/plain (RFC 8461 3.2)"
        return problem, None, {}
    if first.body_truncated and len(first.body) >= MAX_POLICY_BYTES:
        # 3.3 lets senders cap the size: mox reads 64 KiB and refuses a longer policy as a syntax error
        problem = f"the policy is larger than {MAX_POLICY_BYTES // 1024} KiB, which senders may refuse (RFC 8461 3.3)"
        return problem, None, {}
    if first.body_truncated:  # cut by the scan's read budget, not by the site: whether senders read it is unknown
        return None, f"the MTA-STS policy was not read whole: {first.body_note}", {}
    policy = parse_sts_policy(first.text())
    shown = {"mode": policy.mode, "max_age": policy.max_age, "mx": policy.mx}
    if policy.errors:
        return "; ".join(_listed(policy.errors)), None, shown
    return None, None, shown


def _mta_sts(snapshot: SiteSnapshot, domain: str, details: dict[str, Any], receives: bool | None) -> list[Finding]:
    """`receives`: whether the MX record says the domain receives mail (None: it does not say, or failed)."""
    answer = snapshot.dns.get(f"_mta-sts.{domain}", "TXT")
    if answer is None or receives is False:
        return []  # not fetched, or a domain that receives no mail needs no MTA-STS
    if failed(answer):
        return [_could_not_check(answer)]
    texts = txt_of(answer)
    records = sts_records(texts)
    if not records and (discarded := sts_near_misses(texts)):
        quoted = ", ".join(repr(shown_text(t, 200)) for t in discarded[:3])
        note = f"_mta-sts.{domain}: {quoted} does not begin with v=STSv1 and ';', so senders discard it (RFC 8461 3.1)"
        return [Finding("dns.mta_sts_invalid", note=note)]
    if not records:
        return [Finding("dns.mta_sts_missing", note=f"no MTA-STS record at _mta-sts.{domain}")] if receives else []
    if len(records) > 1:
        return [Finding("dns.mta_sts_invalid", note=f"{len(records)} MTA-STS records: senders ignore them all")]
    problem = sts_record_problem(records[0])
    if problem is not None:
        return [Finding("dns.mta_sts_invalid", note=f"_mta-sts.{domain}: {problem}")]
    chain = snapshot.mta_sts_policy
    if chain is None:
        # The policy fetch did not finish (the scan's time ran out, or its own lookup of the record
        # failed): nothing is known about the policy, so nothing is deducted.
        details["mta_sts"] = {"record": shown_text(records[0]), "policy": None}
        return [Finding("check.error", subject=f"mta-sts.{domain} policy", note="the MTA-STS policy was not fetched")]
    problem, unknown, shown = _policy_problem(snapshot, chain)
    details["mta_sts"] = {"record": shown_text(records[0]), "policy": _policy_details(shown) or None}
    if unknown is not None:
        return [Finding("check.error", subject=f"mta-sts.{domain} policy", note=unknown)]
    if problem is not None:
        return [Finding("dns.mta_sts_invalid", note=problem)]
    mode = shown.get("mode")
    if mode == "none":
        return [Finding("dns.mta_sts_missing", note="the policy has mode: none (MTA-STS switched off)")]
    mx_answer = snapshot.dns.get(domain, "MX")
    if failed(mx_answer):
        return []  # whether the policy lists every MX host is unknown: the MX lookup's check.error says so
    exchanges = [r.split()[-1].rstrip(".").lower() for r in (mx_answer.records if mx_answer else ())]
    uncovered = uncovered_mx([mx for mx in exchanges if mx], shown.get("mx", []))
    if uncovered:
        listed = ", ".join(uncovered[:_MAX_NAMES_LISTED])
        if len(uncovered) > _MAX_NAMES_LISTED:
            listed += f" and {len(uncovered) - _MAX_NAMES_LISTED} more"
        note = f"the policy does not list {listed}: mail to it would fail under enforce"
        return [Finding("dns.mta_sts_invalid", note=note)]
    if mode == "testing":
        return [Finding("dns.mta_sts_testing", note="mode: testing only reports failures")]
    return [Finding("dns.mta_sts_enforce", note=f"mode: enforce, max_age {shown.get('max_age')}")]


def _tls_rpt(snapshot: SiteSnapshot, domain: str, details: dict[str, Any], receives: bool | None) -> list[Finding]:
    name = f"_smtp._tls.{domain}"
    answer = snapshot.dns.get(name, "TXT")
    if answer is None or receives is False:
        return []
    if failed(answer):
        return [_could_not_check(answer)]
    texts = txt_of(answer)
    records = tlsrpt_records(texts)
    if not records and (discarded := tlsrpt_near_misses(texts)):
        quoted = ", ".join(repr(shown_text(t, 200)) for t in discarded[:3])
        note = f"{name}: {quoted} does not begin with v=TLSRPTv1 and ';', so senders discard it (RFC 8460 3)"
        return [Finding("dns.tlsrpt_invalid", note=note)]
    if not records:
        return [Finding("dns.tlsrpt_missing", note=f"no TLS-RPT record at {name}")] if receives else []
    details["tls_rpt"] = {"record": shown_text(records[0]) if len(records) == 1 else _listed(records)}
    if len(records) > 1:
        note = f"{len(records)} TLS-RPT records at {name}: senders then send no reports (RFC 8460 3)"
        return [Finding("dns.tlsrpt_invalid", note=note)]
    problem = tlsrpt_problem(records[0])
    if problem is not None:
        return [Finding("dns.tlsrpt_invalid", note=problem)]
    return [Finding("dns.tlsrpt_present", note=records[0])]


# -- names: IPv6, dangling CNAMEs ------------------------------------------------------------------


def _dangling(snapshot: SiteSnapshot, names: list[str], details: dict[str, Any]) -> list[Finding]:
    findings = []
    dangling = []
    resolving = []
    for name in names:
        cname = snapshot.dns.get(name, "CNAME")
        if cname is None or not cname.records:
            continue
        target = cname.records[0].rstrip(".").lower()
        a, aaaa = snapshot.dns.get(target, "A"), snapshot.dns.get(target, "AAAA")
        if a is None:
            continue  # not asked
        if a.rcode == "NXDOMAIN":  # NXDOMAIN is about the name: no other type can exist there
            dangling.append(name)
            findings.append(
                Finding(
                    "dns.dangling_cname",
                    subject=name,
                    note=f"{name} is a CNAME to {target}, which does not exist (NXDOMAIN)",
                    fix_vars={"name": name, "target": target},
                )
            )
        elif a.records or (aaaa is not None and aaaa.records):
            resolving.append(f"{name} -> {target}")
        elif failed(a):  # SERVFAIL is no NXDOMAIN (RFC 1035 4.1.1): the target may exist
            findings.append(_could_not_check(a))
    details["dangling_cnames"] = dangling
    if resolving and not dangling:
        findings.append(Finding("dns.cnames_resolve", note="; ".join(resolving)))
    return findings


#: The family of the findings each lookup of the host's own names decides (its failure leaves them unchecked).
_OWN_LOOKUPS = {"A": "addresses", "AAAA": "ipv6", "CNAME": "cnames"}
#: An MX host without addresses: the MX record names it, its A and AAAA lookups ("mx_hosts") say it has none.
_MX_HOST_FAMILIES = ("mx", "mx_hosts")


def _of(family: str, findings: list[Finding], decided_also: tuple[str, ...] = ()) -> list[Finding]:
    """`findings` as one family's, those that name none yet: the report's `families`, by which a diff knows that
    a failed lookup (a check.error naming a family) hid the findings naming it and no others (scanner/diff.py).
    `decided_also`: the other lookups whose answer decides this family's findings (a null MX makes MTA-STS moot);
    a check.error names its own family alone."""
    named = (family, *decided_also)
    return [
        f if f.families else replace(f, families=(family,) if f.outcome == "check.error" else named) for f in findings
    ]


def check_dns(snapshot: SiteSnapshot) -> CheckResult:
    host = snapshot.target.host
    if ip_literal(host) is not None:
        only = Finding("dns.ip_literal", note=f"{host} is an IP address", families=("addresses",))
        return CheckResult("dns", (only,), {"host": host})
    dns_snapshot = snapshot.dns
    domain = registrable_domain(host)
    # A 64 KiB answer holds 4,000 addresses: each list shows its first within findings.LIST_BUDGET characters
    own = {rdtype.lower(): list(dns_snapshot.records(host, rdtype)) for rdtype in ("A", "AAAA", "CNAME")}
    details: dict[str, Any] = {"host": host, **shown_lists(own), "domain": domain}
    addresses = f"{len(own['a'])} IPv4, {len(own['aaaa'])} IPv6 addresses"
    findings = [Finding("dns.resolves", note=addresses, families=("addresses",)), *_addresses_down(snapshot, domain)]
    aaaa = dns_snapshot.get(host, "AAAA")
    if aaaa is not None and not failed(aaaa):
        if aaaa.records:
            findings.append(Finding("dns.ipv6", note=", ".join(aaaa.records), families=("ipv6",)))
        else:
            findings.append(Finding("dns.no_ipv6", note=f"{host} has no AAAA record", families=("ipv6",)))
    findings += _of("cnames", _dangling(snapshot, [host, f"www.{domain}"], details))
    if domain != host or "." in domain:
        mx_findings, receives = _mx(snapshot, domain, details)
        spf_findings, spf_no_senders = _spf(snapshot, domain, details)
        findings += _of("mx", mx_findings) + _of("spf", spf_findings)
        findings += _of("dmarc", _dmarc(snapshot, domain, details))
        no_mail = ("null MX", "mx") if receives is False else (('SPF "v=spf1 -all"', "spf") if spf_no_senders else None)
        unknown = failed(dns_snapshot.get(domain, "MX")) or failed(dns_snapshot.get(domain, "TXT"))
        findings += _of("dkim", _dkim(snapshot, domain, details, no_mail, unknown))
        findings += _of("dnssec", _dnssec(snapshot, domain, details))
        findings += _of("caa", _caa(snapshot, host, domain, details))
        # a domain that receives no mail (null MX) needs neither, and MTA-STS must list each MX host (RFC 8461 4.1)
        findings += _of("mta_sts", _mta_sts(snapshot, domain, details, receives), decided_also=("mx",))
        findings += _of("tls_rpt", _tls_rpt(snapshot, domain, details, receives), decided_also=("mx",))
    # a lookup reported for one family (www's CNAME target may be the domain) is named for its own as well
    reported = {(f.subject, family) for f in findings if f.outcome == "check.error" for family in f.families}
    for answer in dns_snapshot.answers:
        subject, family = f"{answer.name} {answer.rdtype}", _OWN_LOOKUPS.get(answer.rdtype, "")
        if answer.error and (subject, family) not in reported and _is_own(answer, host, domain):
            findings.append(_could_not_check(answer, family))
    return CheckResult("dns", tuple(findings), details)


def _addresses_down(snapshot: SiteSnapshot, domain: str) -> list[Finding]:
    """Each address of the site's host, of the host it redirects to, or of its MTA-STS policy host, that opened none
    of the scan's connections to a port, which went to the next address (fetch/resolve.py Pinner): visitors (or,
    at the policy host, sending mail servers) sent there first wait or fail."""
    hosts = {snapshot.target.host, snapshot.final_target_host, f"mta-sts.{domain}"}
    by_address: dict[tuple[str, str], list[PassedOver]] = {}
    for passed in snapshot.passed_over:
        if passed.host in hosts:
            by_address.setdefault((passed.host, passed.address), []).append(passed)
    findings = []
    for (host, address), passes in by_address.items():
        refused = sorted(p.port for p in passes if not p.timed_out)
        silent = sorted(p.port for p in passes if p.timed_out)
        what = [f"refused connections to {_ports(refused)}"] if refused else []
        what += [f"did not answer on {_ports(silent)} within the connect timeout"] if silent else []
        instead = " and ".join(dict.fromkeys(p.instead for p in passes))
        note = f"{address} ({host}) {' and '.join(what)}; the scan went on at {instead}"
        findings.append(Finding("dns.address_down", subject=address, note=note, families=("addresses",)))
    return findings


def _ports(ports: list[int]) -> str:
    return ("port " if len(ports) == 1 else "ports ") + _series([str(port) for port in ports])


def _series(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


def _is_own(answer: DnsAnswer, host: str, domain: str) -> bool:
    """Failures on the host's and the domain's own names are reported; those on names we only
    followed (an include's domain, an MX host) are reported by the check that followed them."""
    return answer.name in (host, domain, f"www.{domain}") and answer.rdtype in _OWN_LOOKUPS
