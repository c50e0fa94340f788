"""The dns section's CAA findings: the RRset that governs the host's certificates (RFC 8659 3), read as Boulder
reads it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import dns.exception
import dns.rdata
import dns.rdataclass
import dns.rdatatype

from ..findings import Finding
from ..records.caa import MAX_CAA_NAMES, CaaIssue, caa_names, critical_flag_problem, iodef_problem, parse_issue_value
from ..records.dns_text import failed
from ..snapshot import SiteSnapshot
from ._dns_shared import could_not_check, listed_errors
from ._shown import shown, shown_lists


def caa_findings(snapshot: SiteSnapshot, host: str, domain: str, details: dict[str, Any]) -> list[Finding]:
    """RFC 8659 3: the relevant RRset is the first non-empty one climbing from the host up to, not
    including, the root: past the registrable domain, as github.io's CAA covers alice.github.io."""
    names = caa_names(host, domain)
    skipped = len(host.rstrip(".").split(".")) - len(names)  # names below the domain past MAX_CAA_NAMES
    for name in names:
        answer = snapshot.dns.get(name, "CAA")
        if answer is None:
            return []  # not in the snapshot (one taken before these names were asked): unknown, nothing said
        if failed(answer):
            return [could_not_check(answer)]
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
                shown_value = shown(raw.decode("utf-8", "replace"), 200)
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
    reports = "; " + "; ".join(listed_errors(iodef, limit=3)) if iodef else ""
    families = ("caa", "cnames") if alias else ()
    if problems:
        outcome = "dns.caa_invalid" if own else "dns.caa_invalid_inherited"
        note = f"at {place}: {'; '.join(listed_errors(problems))}"
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
