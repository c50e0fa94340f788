"""SPF evaluation (RFC 7208 4.6, 5, 6.1): a domain's policy walked term by term as receivers evaluate it, over the
DNS answers a lookup function gives.

The walk follows the order of a receiver's check_host() for a sender that no term names: that is the evaluation
forged mail gets, and the one a legitimate sender listed last gets. A record's syntax first (4.6: a record with a
syntax error is a permerror before any of its terms is evaluated), then each mechanism up to the first "all"
(5.1: those after it are never tested), an include's record where it stands (5.2), redirect= last (6.1). It counts
the DNS-querying terms as they are reached (4.6.4: include, a, mx, ptr, exists and redirect, at most 10, through
every include and redirect), and applies the other limits of 4.6.4 that the records decide: an mx mechanism whose
name has more than 10 MX records, and more than 2 void lookups (NXDOMAIN, or NOERROR with no answer). A receiver
counts the lookups of the sender it evaluates, so each address family's senders have their own counts
(`SpfEvaluation.lookups_for`, `void_names_for`): a term adds to those of the families walking it, and a limit
passed stops that family's senders alone, the other walks on.

It stops where a receiver stops, so nothing after that is counted, read or reported:
- at the first error: a permerror (a syntax error of a record reached, the 11th lookup, the third void lookup, more
  than 10 MX records, an include without a record or a loop: `SpfEvaluation.permerrors` says which for each family)
  or a failed lookup (SERVFAIL, REFUSED, a timeout: RCODE other than 0 or 3), where check_host() returns temperror
  (5; 5.2 for include, 6.1 for redirect). A failed
  lookup is no void lookup, and the term that needs it counts toward the 10. ptr's queries depend on the sender and
  a failure of them is no match (5.5), so ptr only counts; for a sender whose address has no PTR record its query
  finds nothing, a void lookup (4.6.4, as pyspf counts it), which the walk counts when asked to (no_reverse_dns).
- for the senders of an address family, at the first term that matches every one of them (4.6.2: evaluation stops
  at the first match): "all", ip4:0.0.0.0/0 (IPv4), ip6:::/0 (IPv6), a/0 or mx/0 once a name it compares with has
  an address of the family (5.3, 5.4, 5.6), exists on a name with an A record (5.7), an include of a record that
  passes them (5.2). Its qualifier decides for them (`SpfEvaluation.all_term`: "?ip6:::/0" for IPv6 senders, before
  the record's "-all"). A term that matches every IPv4 sender leaves the IPv6 senders
  walking on: an error after it is theirs alone (`stopped_families`), and once no family is left the walk ends.
  So does one in an included record that the other family's senders were matched before (an include's "-ip6:::/0"
  ends it for IPv6 senders, who walk on in the record including it: 5.2). Each family ends with the result a receiver
  gives its senders (`SpfEvaluation.results`): the one an error stopped gets its error, the other its own end.

An `a` term asks A for an IPv4 sender and AAAA for an IPv6 one, and an mx term its hosts' addresses of that family
(5.3, 5.4): each of the families still walking. An empty answer is a void lookup for the senders of its type alone
(a name with A records and no AAAA is one for IPv6 senders; NXDOMAIN is about the name, so one for both, RFC 8020),
and so is each MX record's host's, as pyspf, the library behind policyd-spf, counts them (a host named by two MX
records is asked for each, 5.4: "an address lookup on each MX name returned"); the third stops that family. A
failed lookup of one of its types stops that family's senders alone (`SpfFailure.families`): the others walk on,
and their end is the verdict (`SpfEvaluation.verdict_families`), as a receiver checking them never asks the type
that failed. A family's hosts are read in turn, so its first failed lookup or third void lookup, whichever comes
first, stops it.

A term whose name is built with the sender's own values (7.3: s, l, i, p, v, h) has no answer to read ahead. Most
name a zone of the owner's or of whom it chose ("exists:%{i}._spf.%{d}", "a:%{l}.example.com"): what it finds is up
to them, and it is read as no match, as for a sender it does not list. But when those values supply the labels that
decide which zone answers ("a:%{h}", "include:%{h}", "exists:%{l}.com": `sender_chosen_zone`), the sender picks the
zone, and so whether the term matches it: its HELO name can be a domain of its own that resolves to its address.
Each sender then gets the more lenient of the term's result and what the walk gives without it: a "+" term lets
every sender of the families it applies to pass, there (4.6.2: earlier matches and errors decide first); a "~" or
"?" one lets any sender get softfail or neutral instead of a stricter end (`SpfEvaluation.all_chosen`); a "-" one
any sender walks past. An include or redirect= built with the sender's values in a zone it does not pick
("include:%{l}._spf.%{d}") leads to a record, or to none (a permerror, 5.2, 6.1), that depends on the sender: it is
listed as not checked (`SpfEvaluation.unknown`). Past an include the walk goes on for the senders it does not match;
a redirect decides for every sender still walking, so there the end is not known.

One walk serves both sides of the scan: the dns check evaluates what the DNS fetch collected (checks/spf.py reads
the snapshot through it), and the fetch asks what the walk reads (`spf_lookups_to_ask`, fetch/dns.py), in its
order and within its limits, so the fetch never gives up on a lookup the evaluation reaches before its own
permerror. A missing answer (the lookup function returns None) is one not asked yet: the walk assumes it changes
nothing (no match, no void lookup, an include's record of no DNS term) and goes on, so the fetch can ask ahead what
the evaluation will probably need. The check never gives the walk a missing answer: it reads one as failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from ..snapshot import DnsAnswer
from .dns_text import failed, txt_of
from .spf import (
    MX_RECORD_LIMIT,
    SenderChosenZone,
    SpfRecord,
    SpfTerm,
    expand_domain_spec,
    mx_exchanges,
    parse_spf,
    prefix_lengths,
    sender_chosen_zone,
    spf_texts,
    term_domain_spec,
    term_target,
    uses_sender_macros,
)

__all__ = [
    "ADDRESS_TYPE",
    "FAMILIES",
    "LOOKUP_LIMIT",
    "PTR_OF_THE_SENDER",
    "VOID_LOOKUP_LIMIT",
    "Lookup",
    "SpfDecision",
    "SpfEvaluation",
    "SpfFailure",
    "SpfRecords",
    "evaluate_spf_answers",
    "spf_lookups_to_ask",
    "term_text",
]

LOOKUP_LIMIT = 10  # RFC 7208 4.6.4
#: The void lookup a ptr term makes for a sender without reverse DNS (`evaluate_spf_answers`' no_reverse_dns)
PTR_OF_THE_SENDER = "the PTR record of the sender's address"
VOID_LOOKUP_LIMIT = 2  # RFC 7208 4.6.4: "SHOULD limit void lookups to two", more is a permerror
#: The senders' address families, each of which may walk a record to a different end (a term passing every IPv4
#: sender leaves the IPv6 ones walking on).
FAMILIES = ("IPv4", "IPv6")
#: The address type receivers ask an a or mx term's names for a sender of each family (RFC 7208 5.3, 5.4)
ADDRESS_TYPE = {"IPv4": "A", "IPv6": "AAAA"}
_NETWORK_FAMILY = {"ip4": "IPv4", "ip6": "IPv6"}
_ALL_RESULTS = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}
#: How much a result lets through, for the verdict on the families' results when they differ (neutral most)
_LETS_THROUGH: dict[str | None, int] = {"-": 0, "~": 1, "?": 2, None: 2}
#: RFC 7208 7.3, 11.5: why a macro's value lets the sender pick the zone a name falls in (`sender_chosen_zone`)
_SENDER_CHOOSES = {
    "h": "a sending server chooses its HELO name",
    "l": "a sender chooses the local part of its address",
    "s": "a sender chooses the local part of its address",
    "p": "a sender's validated name is what the reverse (PTR) zone of its address says, which the address's holder "
    "writes",
    "i": "a sender picks the address it sends from, and with it the zone that address names",
}
#: What the sender then names for the term to match it (5.2-5.7, 6.1)
_SENDER_NAMES = {
    "a": "that resolves to its own address",
    "mx": "whose MX host has its own address",
    "exists": "that exists",
    "ptr": "that its own address's validated name is under",
    "include": "whose SPF record passes it",
    "redirect": "whose SPF record passes it",
}

#: The answer to (name, type), None when it was not asked (yet).
Lookup = Callable[[str, str], DnsAnswer | None]


@dataclass(frozen=True)
class SpfFailure:
    """Where the evaluation stopped on a failed lookup: the term that needed it, and the lookups that failed."""

    domain: str  # the record holding the term
    term: str  # as written: "include:_spf.example.net", "mx", "redirect=_spf.example.net"
    lookups: tuple[DnsAnswer, ...]
    #: the families of the senders it stops: those walking whose own lookups failed (an a or mx term asks A for
    #: IPv4 senders and AAAA for IPv6 ones, RFC 7208 5.3, 5.4: a failed AAAA stops no IPv4 sender)
    families: tuple[str, ...] = ("IPv4", "IPv6")


@dataclass
class SpfEvaluation:
    domain: str
    record: str | None = None  # the domain's own record text
    records_found: int = 0
    #: each family's DNS-querying terms reached (the 11th, when its senders pass the limit): a receiver counts a
    #: sender's own (RFC 7208 4.6.4), and the senders of one family can leave an include the others walk through
    lookups_for: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAMILIES, 0))
    errors: list[str] = field(default_factory=list)  # syntax errors of a record reached, an include's none, a loop
    #: the include and redirect= terms reached whose target is built with the sender's values, in a zone it does not
    #: pick ("include:%{l}._spf.%{d}", "(in x's record)" when not the domain's own): what receivers conclude there
    #: depends on the sender. A redirect's target decides for every sender still walking: no verdict on "all" then.
    unknown: list[str] = field(default_factory=list)
    all_qualifier: str | None = None  # of the term that decides ("-" for "-all"); None: no all, or unknown
    all_what: str = ""  # that term as written, or what matches ("-all", "-ip4:0.0.0.0/0", "redirect=x -> ~all")
    #: that term itself, in the record at `all_domain` (the include, for a record that passes through one):
    #: "?ip6:::/0" decides for the IPv6 senders it matches before any "all"; None with none (neutral, RFC 7208 4.7)
    all_term: SpfTerm | None = None
    all_domain: str | None = None  # where the record that decides is published (through redirect=); None: unknown
    all_record: str | None = None  # the text of that record
    #: when a "~" or "?" term whose zone the sender picks gives the result for others (any sender can be matched there,
    #: rather than reach a stricter "all"): what it is, and the term, in the record at `all_domain`
    all_chosen: str | None = None
    all_chosen_term: SpfTerm | None = None
    passes_everyone: str | None = None  # what lets every sender of a family pass ("+all", "include:x -> +all")
    passes_families: tuple[str, ...] = ()  # the families it lets pass, in FAMILIES' order
    #: the families whose senders an error stopped (a temperror or a permerror: each family stops at its first),
    #: in FAMILIES' order: whom the errors concern
    stopped_families: tuple[str, ...] = ()
    #: the families `all_qualifier` is the verdict for: both, or one, when the other's senders get another result
    #: (`results`: an error stopped them alone, a term matched every one of them, their end cannot be known); none
    #: when there is no verdict
    verdict_families: tuple[str, ...] = ("IPv4", "IPv6")
    #: what a receiver concludes for a sender of each family the record does not list (RFC 7208 2.6): "pass",
    #: "fail", "softfail", "neutral", "permerror", "temperror", "none", or None when it depends on the sender
    results: dict[str, str | None] = field(default_factory=dict)
    #: how the walk ends for each family that reaches an end (RFC 7208 4.6.2): the term that decides for its senders
    #: the record does not list, which may differ by family ("~ip6:::/0" for IPv6 senders, "~all" for IPv4 ones)
    decisions: dict[str, SpfDecision] = field(default_factory=dict)
    uses_ptr: bool = False
    macros: bool = False
    limit_errors: list[str] = field(default_factory=list)  # other 4.6.4 permerrors (MX records per mx)
    #: the 11th DNS-querying term of each family whose senders pass the lookup limit there
    over_limit_at_for: dict[str, str] = field(default_factory=dict)
    #: each family's void lookups, the names in order: an a term's and an mx term's hosts' addresses are asked of
    #: the sender's own type (RFC 7208 5.3, 5.4), so a name with A records and no AAAA is void for IPv6 senders alone
    void_names_for: dict[str, list[str]] = field(default_factory=lambda: {family: [] for family in FAMILIES})
    #: the permerror each family's senders stop at: "invalid" (a syntax error, an include of no record or of
    #: several, a loop: `errors`), "lookups" (the 11th DNS-querying term, more than 10 MX records), "void" (the third
    #: void lookup)
    permerrors: dict[str, str] = field(default_factory=dict)
    #: the families a limit stopped while the other family's senders walked on past the same term: their own count
    #: passed it (void lookups of their own address type, or lookups in an include the others left early)
    stopped_on_own_count: tuple[str, ...] = ()
    #: the failed lookups the evaluation stopped at with temperror, the first for each family it stops (nothing
    #: after is read for those families' senders)
    failures: list[SpfFailure] = field(default_factory=list)

    @property
    def failure(self) -> SpfFailure | None:
        """The first failed lookup the evaluation stopped at (for some family), None when none did."""
        return self.failures[0] if self.failures else None

    @property
    def result_for_others(self) -> str:
        """What a receiver concludes for a host the record does not list (RFC 7208 4.7)."""
        return _ALL_RESULTS.get(self.all_qualifier or "?", "neutral")

    @property
    def all_known(self) -> bool:
        """False when no family's senders reach a verdict on "all": the record that decides could not be read (a
        redirect target named with a sender's macro) or is never reached: a syntax error or a limit passed makes the
        evaluation a permerror before any "all" is tested (RFC 7208 4.6, 4.6.4), a failed lookup a temperror (5).
        True for the family an error does not stop (`verdict_families`): one matched before it, or walking past a
        failed lookup of the other's address type alone."""
        return self.all_domain is not None

    @property
    def permerror(self) -> bool:
        """A syntax error (this record or one it includes), an include of no record, a loop or a limit passed:
        receivers return permerror for the senders still walking there (`stopped_families`, `results`), and no
        mechanism's result after it stands for them (RFC 7208 4.6, 4.6.4). The walk stops at the first error, so at
        most one kind is found: the one receivers reach."""
        return bool(self.errors) or self.over_limit or self.over_void_limit

    @property
    def temperror(self) -> bool:
        """A lookup the evaluation needs failed before any permerror: receivers return temperror (RFC 7208 5), for
        the senders of `SpfFailure.families`."""
        return bool(self.failures)

    @property
    def lookups(self) -> int:
        """The most DNS-querying terms the senders of a family reach (`lookups_for`)."""
        return max(self.lookups_for.values(), default=0)

    @property
    def over_limit_at(self) -> str | None:
        """The first 11th DNS-querying term a family's senders reached, where they passed the lookup limit."""
        return next(iter(self.over_limit_at_for.values()), None)

    @property
    def over_limit(self) -> bool:
        """Past a lookup limit of RFC 7208 4.6.4 (10 terms, or 10 MX records for one mx), for the senders of some
        family: permerror."""
        return "lookups" in self.permerrors.values()

    def stopped_by(self, kind: str) -> tuple[str, ...]:
        """The families whose senders stop at a permerror of `kind` ("invalid", "lookups", "void": `permerrors`)."""
        return tuple(family for family in FAMILIES if self.permerrors.get(family) == kind)

    @property
    def void_names(self) -> list[str]:
        """The void lookups of the family that makes the most (`void_names_for`), the names in order."""
        return max(self.void_names_for.values(), key=len, default=[])

    @property
    def void_lookups(self) -> int:
        return len(self.void_names)

    @property
    def over_void_limit(self) -> bool:
        return "void" in self.permerrors.values()


@dataclass(frozen=True)
class SpfDecision:
    """How a record ends for the senders of a family: the first term that matches every one of them, whose
    qualifier decides (RFC 7208 4.6.2), or, when none does and there is no redirect=, neutral (qualifier None, 4.7).
    Through redirect=, the redirected record's end (6.1)."""

    domain: str  # the record holding the term that decides
    record: str  # its text
    qualifier: str | None
    what: str  # what matches, for a pass: "+all", "ip4:0.0.0.0/0", "include:x.example -> +all"
    #: a term whose zone the sender picks matched (`sender_chosen_zone`): the sender chose it, so an include of this
    #: record matching is its choice too, and one with another qualifier than "+" the most lenient end it can get
    chosen: bool = False
    term: SpfTerm | None = None  # the term that decides, in `record`


class _TermMatch(NamedTuple):
    """The families of the senders walking a term matches every one of, what matches them, and those of them whose
    sender chooses to be matched there (the term's zone is the sender's pick) rather than is."""

    families: frozenset[str]
    what: str
    chosen: frozenset[str] = frozenset()


def _lenient(match: SpfDecision, choice: SpfDecision | None) -> SpfDecision:
    """A family's end `match`, or the result `choice` a sender can choose to get earlier when it lets through more."""
    if choice is None or match.qualifier == "+" or _LETS_THROUGH[choice.qualifier] <= _LETS_THROUGH[match.qualifier]:
        return match
    return choice


class SpfRecords:
    """The SPF records of TXT answers, each answer decoded and each record parsed once: a walk reads a record once,
    but a fetch walks the records it has again each round, and a 64 KB record takes up to 0.27 s to read."""

    def __init__(self, parse: Callable[[str], SpfRecord] = parse_spf) -> None:
        self._parse = parse
        self._texts: dict[DnsAnswer, list[str]] = {}
        self._parsed: dict[str, SpfRecord] = {}

    def texts(self, answer: DnsAnswer) -> list[str]:
        """The SPF records among the TXT records of `answer` (RFC 7208 4.5)."""
        if answer not in self._texts:
            self._texts[answer] = spf_texts(txt_of(answer))
        return self._texts[answer]

    def parsed(self, text: str) -> SpfRecord:
        if text not in self._parsed:
            self._parsed[text] = self._parse(text)
        return self._parsed[text]


def term_text(term: SpfTerm) -> str:
    """`term` as a record writes it, "+" left out: "-all", "?ip6:::/0", "a/24", "redirect=_spf.example.net"."""
    if term.modifier:
        return f"{term.name}={term.value}"
    qualifier = "" if term.qualifier == "+" else term.qualifier
    separator = "" if term.value is None or term.value.startswith("/") else ":"
    return f"{qualifier}{term.name}{separator}{term.value or ''}"


def _chosen_what(term: SpfTerm, zone: SenderChosenZone) -> str:
    """What a term whose zone the sender picks lets it do, and why: "a:%{h} (a sending server chooses its HELO name,
    so it can name a domain that resolves to its own address: RFC 7208 7.3, 11.5)"."""
    under = f" under {zone.suffix}" if zone.suffix else ""
    return (
        f"{term_text(term)} ({_SENDER_CHOOSES[zone.letter]}, so it can name a domain{under} "
        f"{_SENDER_NAMES[term.name]}: RFC 7208 7.3, 11.5)"
    )


def _void(answer: DnsAnswer) -> bool:
    """RFC 7208 4.6.4: a void lookup is NOERROR with no answers, or NXDOMAIN (for an answer that did not fail)."""
    return answer.rcode == "NXDOMAIN" or not answer.records


def _every_address(value: str | None) -> bool:
    """An ip4 or ip6 network (parsed, so valid) of prefix length 0: "0.0.0.0/0", "::/0"."""
    _, slash, length = (value or "").rpartition("/")
    return bool(slash) and length == "0"


class _Walk:
    """One evaluation of the record at `result.domain` (the module's docstring says how). `halted` names the families
    an error stopped: a record, and each record including it, walks on with its other families (an include's record
    that failed every IPv6 sender and then stops the IPv4 ones leaves the IPv6 senders walking on in the record
    including it, RFC 7208 5.2). `guessed` is set at the first missing answer (the walk goes on as if it changed
    nothing)."""

    def __init__(self, domain: str, lookup: Lookup, records: SpfRecords, no_reverse_dns: bool = False) -> None:
        self.result = SpfEvaluation(domain)
        self.no_reverse_dns = no_reverse_dns
        self.lookup = lookup
        self.records = records
        self.halted: frozenset[str] = frozenset()
        self.guessed = False

    def run(self) -> None:
        result = self.result
        answer = self.lookup(result.domain, "TXT")
        if answer is None:
            self.guessed = True
            return
        texts = self.records.texts(answer)
        result.records_found = len(texts)
        if len(texts) != 1:  # none, several (RFC 7208 4.5), or the lookup failed: the check says which
            result.results = dict.fromkeys(FAMILIES, "none" if not texts else "permerror")
            result.verdict_families = ()
            return
        matches = self._record(result.domain, (result.domain,), frozenset(FAMILIES), None)
        result.decisions = {family: matches[family] for family in FAMILIES if family in matches}
        failed_families = {family for failure in result.failures for family in failure.families}
        # Each family's own end, as a receiver evaluating one of its senders reaches it: an error stops it alone
        # (the other family matched before it, in this record or one it includes, or walks past a failed lookup of
        # the other's address type, RFC 7208 5.3, 5.4); None when it cannot be known (a redirect named by the sender)
        result.results = {
            family: _ALL_RESULTS[matches[family].qualifier or "?"]
            if family in matches
            else ("temperror" if family in failed_families else "permerror" if family in self.halted else None)
            for family in FAMILIES
        }
        passed = [family for family in FAMILIES if family in matches and matches[family].qualifier == "+"]
        if passed:
            result.passes_everyone = matches[passed[0]].what
            result.passes_families = tuple(passed)
        # The verdict for the others: that of the families not passed wholesale (dns.spf_pass_all says those), the
        # one that lets more through when their ends differ ("-ip4:0.0.0.0/0 ~all": IPv6 senders soft-fail); a
        # family an error stopped, or whose end cannot be known, leaves the other's standing
        others = [matches[f] for f in FAMILIES if f in matches and matches[f].qualifier != "+"]
        if not others and len(passed) < len(FAMILIES):
            result.verdict_families = ()
            return
        decision = max(others, key=lambda m: _LETS_THROUGH[m.qualifier]) if others else matches[FAMILIES[0]]
        # the families given that result, each by its own term (`decisions`): "?ip6:::/0" and no "all" are neutral
        # both (RFC 7208 4.7)
        verdict = _ALL_RESULTS[decision.qualifier or "?"]
        result.verdict_families = tuple(f for f in FAMILIES if f in matches and result.results[f] == verdict)
        result.all_qualifier = decision.qualifier
        result.all_what = decision.what
        result.all_domain, result.all_record, result.all_term = decision.domain, decision.record, decision.term
        if decision.chosen and decision.qualifier != "+":
            result.all_chosen, result.all_chosen_term = decision.what, decision.term

    # -- ending the walk -----------------------------------------------------------------------------------------

    def _stop(self, live: frozenset[str], families: frozenset[str] | None = None, permerror: str | None = None) -> None:
        """An error stops the senders of `families` (all of `live`, the families walking, unless said): each record
        walking ends once none of its own families is, and goes on for the others (the callers drop `halted` from
        theirs). `permerror`: its kind, for `SpfEvaluation.permerrors` (None for a temperror)."""
        stopped = (live if families is None else families) - self.halted
        if permerror is not None:
            self.result.permerrors.update(dict.fromkeys((f for f in FAMILIES if f in stopped), permerror))
        self.halted |= stopped
        self.result.stopped_families = tuple(f for f in FAMILIES if f in self.halted)

    def _limit_passed(self, live: frozenset[str], over: frozenset[str], kind: str) -> None:
        """The senders of `over` pass a limit of RFC 7208 4.6.4 on their own count: they stop there, those of the
        other families of `live` walk on."""
        self._stop(live, over, kind)
        if live - over:
            own = {*self.result.stopped_on_own_count, *over}
            self.result.stopped_on_own_count = tuple(f for f in FAMILIES if f in own)

    def _permerror(self, error: str, live: frozenset[str]) -> None:
        self.result.errors.append(error)
        self._stop(live, permerror="invalid")

    def _failed(
        self,
        domain: str,
        term: SpfTerm,
        lookups: list[DnsAnswer],
        live: frozenset[str],
        families: frozenset[str] | None = None,
    ) -> None:
        """`term` of the record at `domain` needs `lookups`, which failed: temperror (RFC 7208 5) for the senders of
        `families` (all of `live` unless said)."""
        stopped = live if families is None else families
        self.result.failures.append(
            SpfFailure(domain, term_text(term), tuple(lookups), tuple(f for f in FAMILIES if f in stopped))
        )
        self._stop(live, stopped)

    def _void_lookup(self, name: str, live: frozenset[str], families: frozenset[str] | None = None) -> frozenset[str]:
        """A void lookup of `name` for the senders of `families` (all of `live` unless said: the lookup they make,
        RFC 7208 4.6.4); returns those it stops, as their third."""
        void_names = self.result.void_names_for
        for family in live if families is None else families:
            void_names[family].append(name)
        over = frozenset(f for f in (live if families is None else families) if len(void_names[f]) > VOID_LOOKUP_LIMIT)
        if over:
            self._limit_passed(live, over, "void")
        return over

    # -- records -------------------------------------------------------------------------------------------------

    def _read(
        self, domain: str, path: tuple[str, ...], live: frozenset[str], via: SpfTerm | None
    ) -> tuple[SpfRecord, str] | None:
        """The record at `domain` (reached through `via`, an include or redirect; None for the domain's own),
        parsed; None when the walk stops there (a failed lookup, no record, several, a syntax error: RFC 7208 4.5,
        4.6, 5.2, 6.1) or its answer is missing."""
        result = self.result
        answer = self.lookup(domain, "TXT")
        if answer is None:
            self.guessed = True
            return None
        if via is not None and failed(answer):
            self._failed(path[-2], via, [answer], live)
            return None
        texts = self.records.texts(answer)
        if via is not None and not texts:
            self._permerror(f"{domain} (named by {path[-2]}) has no SPF record", live)
            return None
        if via is not None and len(texts) > 1:
            self._permerror(f"{domain} has {len(texts)} SPF records", live)  # RFC 7208 4.5: permerror
            return None
        if len(texts) != 1:  # the domain's own: `run` says why
            return None
        record = self.records.parsed(texts[0])
        if via is None:
            result.record = texts[0]
        if record.errors:  # RFC 7208 4.6: the whole record is parsed before any of its terms is evaluated
            result.errors += record.errors if via is None else [f"{domain}: {error}" for error in record.errors]
            self._stop(live, permerror="invalid")
            return None
        if any(term.modifier and term.value and "%" in term.value for term in record.terms):
            result.macros = True
        return record, texts[0]

    def _record(
        self, domain: str, path: tuple[str, ...], live: frozenset[str], via: SpfTerm | None
    ) -> dict[str, SpfDecision]:
        """Evaluate the record at `domain` for the senders of the `live` families; returns how it ends for each
        family it decides (none that an error stopped, none that cannot be known)."""
        read = self._read(domain, path, live, via)
        if read is None:
            return {}
        record, text = read
        choices: dict[str, SpfDecision] = {}  # a family's most lenient result a sender can choose to get on the way
        decided = self._terms(record, text, domain, path, live, choices)
        return {family: _lenient(match, choices.get(family)) for family, match in decided.items()}

    def _terms(
        self,
        record: SpfRecord,
        text: str,
        domain: str,
        path: tuple[str, ...],
        live: frozenset[str],
        choices: dict[str, SpfDecision],
    ) -> dict[str, SpfDecision]:
        """`_record`'s walk through the terms of `record`, noting in `choices` the results senders can choose."""
        decided: dict[str, SpfDecision] = {}
        for term in record.evaluated_mechanisms():
            matched = self._mechanism(term, domain, path, live)
            live = live - self.halted  # a family an error stopped ends there, the other walks on
            if not live:
                return decided
            if matched is None:
                continue
            families, what, chosen = matched
            families &= live
            if term.qualifier != "+":  # a sender may be matched there or walk on, whichever lets it through more
                choice = SpfDecision(domain, text, term.qualifier, what, True, term)
                choices.update({family: _lenient(choice, choices.get(family)) for family in chosen})
                families -= chosen
            if term.qualifier != "+" and not what.startswith(term.qualifier):
                what = term.qualifier + what  # "-ip4:0.0.0.0/0": what matches, as the record writes it
            decided.update({f: SpfDecision(domain, text, term.qualifier, what, f in chosen, term) for f in families})
            live = live - families
            if not live:  # RFC 7208 4.6.2: every sender matched; an "all" always ends here
                return decided
        redirect_term = record.modifier("redirect")  # no "all" was reached, so there is none (6.1)
        if redirect_term is None:  # RFC 7208 4.7: neutral
            decided.update({family: SpfDecision(domain, text, None, "") for family in live})
            return decided
        live = self._lookup_counted(redirect_term, domain, live)  # 4.6.4: redirect= is evaluated last, once no
        if not live:  # mechanism matched
            return decided
        chosen_target = self._chosen_by_sender(redirect_term, domain, live)
        if chosen_target is not None:  # 6.1: the record the sender names decides: one that passes it
            families, what, _ = chosen_target
            decided.update({f: SpfDecision(domain, text, "+", what, True, redirect_term) for f in families})
            live = live - families
            if not live:
                return decided
        redirect = expand_domain_spec(redirect_term.value or "", domain, self.result.domain)
        if redirect is None:  # built with the sender's values: which record decides, if any, depends on the sender
            if uses_sender_macros(redirect_term.value or ""):
                self.result.unknown.append(self._where(redirect_term, domain))
            return decided
        if redirect in path:
            self._permerror(f"{redirect} includes itself (a loop through {' -> '.join(path)})", live)
            return decided
        # RFC 7208 6.1: the redirected record's result is the result, through any further redirect
        for family, match in self._record(redirect, (*path, redirect), live, redirect_term).items():
            decided[family] = replace(match, what=f"redirect={redirect} -> {match.what}" if match.what else "")
        return decided

    # -- terms ---------------------------------------------------------------------------------------------------

    def _where(self, term: SpfTerm, domain: str) -> str:
        """`term` as written, and the record it is in when not the domain's own."""
        return term_text(term) + ("" if domain == self.result.domain else f" (in {domain}'s record)")

    def _lookup_counted(self, term: SpfTerm, domain: str, live: frozenset[str]) -> frozenset[str]:
        """`term` queries the DNS: one more lookup for the senders of each family of `live` (RFC 7208 4.6.4 counts a
        sender's own: those of one family may have left an include the others walked through). Those past the limit
        stop there; returns the families that walk on."""
        counts = self.result.lookups_for
        for family in live:
            counts[family] += 1
        over = frozenset(family for family in live if counts[family] > LOOKUP_LIMIT)
        if over:
            where = self._where(term, domain)
            self.result.over_limit_at_for.update(dict.fromkeys((f for f in FAMILIES if f in over), where))
            self._limit_passed(live, over, "lookups")
        return live - over

    def _chosen_by_sender(self, term: SpfTerm, domain: str, live: frozenset[str]) -> _TermMatch | None:
        """The families of `live` whose senders pick the zone `term` reads (`sender_chosen_zone`): each can name one
        where it publishes what makes the term match it. None for none."""
        spec = term_domain_spec(term)
        if spec is None or "%" not in spec:
            return None
        zones = [(f, sender_chosen_zone(spec, domain, self.result.domain, f)) for f in FAMILIES if f in live]
        chosen = [(family, zone) for family, zone in zones if zone is not None]
        if not chosen:
            return None
        families = frozenset(family for family, _ in chosen)
        return _TermMatch(families, _chosen_what(term, chosen[0][1]), families)

    def _mechanism(self, term: SpfTerm, domain: str, path: tuple[str, ...], live: frozenset[str]) -> _TermMatch | None:
        """The families of `live` every sender of which `term` matches, or can choose to be matched by, and what
        matches them; None for none."""
        if term.name == "all":
            return _TermMatch(live, "+all" if term.qualifier == "+" else term_text(term))
        if term.name in _NETWORK_FAMILY:
            family = _NETWORK_FAMILY[term.name]
            every = family in live and _every_address(term.value)
            return _TermMatch(frozenset((family,)), f"{term.name}:{term.value}") if every else None
        result = self.result
        live = self._lookup_counted(term, domain, live)  # counted when reached, whatever it finds (RFC 7208 4.6.4)
        if not live:
            return None
        value = term.value or ""
        if "%" in value:
            result.macros = True
        if term.name == "ptr":
            result.uses_ptr = True
        chosen = self._chosen_by_sender(term, domain, live)
        if chosen is not None:
            return chosen
        if term.name == "ptr":
            if self.no_reverse_dns:  # its PTR query finds nothing: a void lookup (4.6.4), as pyspf counts it
                self._void_lookup(PTR_OF_THE_SENDER, live)
            return None  # its queries depend on the sender, and a failure of them is no match (5.5)
        if term.name == "include":
            return self._include(term, domain, path, live)
        target = term_target(term, domain, result.domain)
        if target is None:  # a macro that depends on the sender: no lookup can be made ahead
            return None
        if term.name == "exists":
            return self._exists(term, domain, target, live)
        if term.name == "a":
            return self._a(term, domain, target, live)
        return self._mx(term, domain, target, live)

    def _include(self, term: SpfTerm, domain: str, path: tuple[str, ...], live: frozenset[str]) -> _TermMatch | None:
        target = expand_domain_spec(term.value, domain, self.result.domain) if term.value else None
        if not target:
            # built with the sender's values: the record it reads, or none (a permerror, 5.2), depends on the sender;
            # the walk goes on for the senders it does not match
            if uses_sender_macros(term.value or ""):
                self.result.unknown.append(self._where(term, domain))
            return None
        if target in path:
            self._permerror(f"{target} includes itself (a loop through {' -> '.join(path)})", live)
            return None
        included = self._record(target, (*path, target), live, term)
        # RFC 7208 5.2: an include matches when the included record passes
        passed = [family for family in FAMILIES if family in included and included[family].qualifier == "+"]
        if not passed:  # the families it stopped are `halted`; the others walk on in the including record
            return None
        chosen = frozenset(family for family in passed if included[family].chosen)
        return _TermMatch(frozenset(passed), f"include:{target} -> {included[passed[0]].what}", chosen)

    def _exists(self, term: SpfTerm, domain: str, target: str, live: frozenset[str]) -> _TermMatch | None:
        answer = self.lookup(target, "A")  # whatever the sender's family (RFC 7208 5.7)
        if answer is None:
            self.guessed = True
        elif failed(answer):
            self._failed(domain, term, [answer], live)
        elif _void(answer):
            self._void_lookup(target, live)
        else:  # 5.7: any A record matches, whoever sends
            return _TermMatch(live, f"exists:{target} -> {target} has an A record (RFC 7208 5.7)")
        return None

    def _a(self, term: SpfTerm, domain: str, target: str, live: frozenset[str]) -> _TermMatch | None:
        answers = {family: self.lookup(target, ADDRESS_TYPE[family]) for family in FAMILIES if family in live}
        failures = {family: a for family, a in answers.items() if a is not None and failed(a)}
        if failures:  # temperror for the senders whose own type failed (5.3); the others' answers decide for them
            self._failed(domain, term, list(failures.values()), live, frozenset(failures))
            live = live - self.halted
            if not live:
                return None
            answers = {family: a for family, a in answers.items() if family in live}
        found = {family: a for family, a in answers.items() if a is not None}
        if len(found) < len(answers):
            self.guessed = True
            return None
        # a void lookup for the senders whose own type has no record (4.6.4); NXDOMAIN is about the name, so it is
        # void for either family (RFC 8020)
        nxdomain = any(a.rcode == "NXDOMAIN" for a in found.values())
        void = frozenset(family for family, a in found.items() if nxdomain or _void(a))
        if void:
            self._void_lookup(target, live, void)
            found = {family: a for family, a in found.items() if family not in void}
        lengths = dict(zip(FAMILIES, prefix_lengths(term), strict=True))
        matched = [family for family, a in found.items() if lengths[family] == 0 and a.records]
        if not matched:
            return None
        return _TermMatch(
            frozenset(matched), f"{term_text(term)} -> {target} has an {matched[0]} address (RFC 7208 5.3)"
        )

    def _mx(self, term: SpfTerm, domain: str, target: str, live: frozenset[str]) -> _TermMatch | None:
        answer = self.lookup(target, "MX")
        if answer is None:
            self.guessed = True
            return None
        if failed(answer):
            self._failed(domain, term, [answer], live)
            return None
        if _void(answer):
            self._void_lookup(target, live)
            return None
        if len(answer.records) > MX_RECORD_LIMIT:
            self.result.limit_errors.append(
                f"the mx mechanism for {target} finds {len(answer.records)} MX records: more than {MX_RECORD_LIMIT} "
                "is a permerror (RFC 7208 4.6.4)"
            )
            self._stop(live, permerror="lookups")  # receivers stop before asking the hosts' addresses
            return None
        # 5.4: each MX host's addresses of the sender's family; a failure of one is a temperror too (5)
        hosts = [
            (host, family, self.lookup(host, ADDRESS_TYPE[family]))
            for host in mx_exchanges(answer.records, each_record=True)
            for family in FAMILIES
            if family in live
        ]
        if self.guessed:
            # ahead of an answer not in: the hosts' addresses are asked ahead (a fetch round sooner), and what they
            # say decides nothing until the term is reached for sure
            return None
        # Each family's senders ask their own type of the hosts in turn (5.4): a failed lookup stops them with
        # temperror (5), an empty one is a void lookup of theirs (4.6.4, as pyspf counts them), the third a
        # permerror, whichever they reach first; an answer not in yet leaves the rest of theirs unread
        failing: set[str] = set()
        for family in [f for f in FAMILIES if f in live]:
            for host, _, a in (host for host in hosts if host[1] == family):
                if a is None:
                    break
                if failed(a):
                    failing.add(family)
                    break
                if _void(a) and self._void_lookup(host, live, frozenset((family,))):
                    break
        if failing:  # temperror for the senders whose own type failed; the others' answers decide for them
            failed_lookups = list(dict.fromkeys(a for _, f, a in hosts if f in failing and a is not None and failed(a)))
            self._failed(domain, term, failed_lookups, live, frozenset(failing))
        live = live - self.halted
        if not live:
            return None
        hosts = [(host, family, a) for host, family, a in hosts if family in live]
        if any(a is None for _, _, a in hosts):
            self.guessed = True
            return None
        lengths = dict(zip(FAMILIES, prefix_lengths(term), strict=True))
        matched: dict[str, str] = {}  # each family the term matches every sender of: the first host that makes it
        for host, family, a in hosts:
            if lengths[family] == 0 and a is not None and a.records:
                matched.setdefault(family, host)
        if not matched:
            return None
        family = next(f for f in FAMILIES if f in matched)
        return _TermMatch(
            frozenset(matched), f"{term_text(term)} -> {matched[family]} has an {family} address (RFC 7208 5.4)"
        )


def evaluate_spf_answers(
    domain: str, lookup: Lookup, records: SpfRecords | None = None, no_reverse_dns: bool = False
) -> SpfEvaluation:
    """The evaluation of `domain`'s SPF record over the answers `lookup` gives (see the module's docstring).
    `no_reverse_dns`: for a sender whose address has no PTR record, for which each ptr term reached is a void lookup
    (`PTR_OF_THE_SENDER` in `void_names_for`)."""
    walk = _Walk(domain, lookup, records or SpfRecords(), no_reverse_dns)
    walk.run()
    return walk.result


def spf_lookups_to_ask(
    domain: str, lookup: Lookup, records: SpfRecords | None = None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The (name, type) lookups the evaluation of `domain`'s SPF record reads and `lookup` has no answer to, in the
    evaluation's order: those it needs for sure (the first term whose answers are missing, all of them), and those
    it reads after it if the missing answers change nothing, which a fetch may ask ahead. None of either past the
    evaluation's end: its first error, every family matched, the 11th DNS-querying term."""
    needed: list[tuple[str, str]] = []
    ahead: list[tuple[str, str]] = []

    def noting_the_missing(name: str, rdtype: str) -> DnsAnswer | None:
        answer = lookup(name, rdtype)
        if answer is None:
            (ahead if walk.guessed else needed).append((name.rstrip(".").lower(), rdtype))
        return answer

    walk = _Walk(domain, noting_the_missing, records or SpfRecords())
    walk.run()
    needed = list(dict.fromkeys(needed))
    return needed, [query for query in dict.fromkeys(ahead) if query not in needed]
