"""DANE for the domain's mail (RFC 7672): TLSA records at _25._tcp.<MX host>, which senders that validate DNSSEC
(Postfix, Exim, Microsoft 365's Exchange Online) use to require TLS with the certificate they name, so that no one
on the path can strip TLS from mail to the domain. They count only when DNSSEC proves them: the TLSA RRset signed
by a secure zone, and the MX RRset too (a forged MX sends mail to a host of the attacker's choosing, with no TLSA at
all); and they protect delivery only when every MX host has them (a sender falls back to a host without, and an
attacker can make the others unreachable).

Nothing is said of a domain without TLSA records: DANE is optional, and MTA-STS (dns_mail.py) is the other way to
the same protection. Records DNSSEC proves are held to the certificate each MX host presents after STARTTLS
(fetch/smtp.py, records/dane.py `dane_match`): one that matches none of them, or a host without working STARTTLS, has
every DANE sender hold its mail (RFC 7672 2.2) and bounce it days later. A host the scan could not ask leaves the
match unchecked, and the section's not-checked list says so. A TLSA name that is an alias (CNAME), or a zone this
scan did not fetch, is "could not check", never a verdict. Pure: the records come from the snapshot."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..findings import Finding, noted
from ..records.dane import Tlsa, dane_match, dane_name, dane_zone, parse_tlsa, spki_sha256
from ..records.dns_text import failed
from ..snapshot import DnsAnswer, DnsSnapshot, MailServer, SiteSnapshot
from ._dns_shared import could_not_check, series
from .dnssec import signed_by_zone, validate_zone

#: Said when an MX host with DNSSEC-valid TLSA records was not asked for its certificate.
NOT_CHECKED = "whether the TLSA records match the certificate of {hosts}, which the scan could not ask ({why})"


#: (state, why) of what a zone proves: None when it is DNSSEC-secure.
ZoneProblem = tuple[str, str] | None


def _zone_problem(zone: str, dns: DnsSnapshot, now: datetime, cache: dict[str, ZoneProblem]) -> ZoneProblem:
    """None when `zone` validates (validate_zone); else ("unproven", why) when its records prove nothing to a
    validating resolver, or ("unknown", why) when this scan cannot tell. Each zone judged once."""
    if zone not in cache:
        verdict = validate_zone(zone, dns, now)
        if verdict is None:
            cache[zone] = ("unknown", f"the DNSSEC records of {zone} were not fetched")
        elif verdict.zone and verdict.zone != zone:
            cache[zone] = ("unknown", f"{zone} is no zone of its own, and this scan validates a host's zone only")
        elif verdict.status == "unknown":
            cache[zone] = ("unknown", f"whether the {zone} zone is signed is unknown ({verdict.note})")
        elif verdict.status != "secure":
            cache[zone] = ("unproven", f"the {zone} zone is not DNSSEC-secure ({verdict.note})")
        else:
            cache[zone] = None
    return cache[zone]


@dataclass(frozen=True)
class TlsaState:
    """What one host's TLSA records (or the MX records) prove: `state` "secure", "none", "unproven" (senders
    ignore them, or cannot use them), "unknown" (this scan cannot tell) or "failed" (their lookup); `why` in words;
    `zone_problem` when what is wrong is the zone that signs them (one sentence for all it holds)."""

    state: str
    why: str = ""
    zone_problem: str | None = None


def tlsa_state(
    exchange: str,
    answer: DnsAnswer,
    domain: str,
    dns: DnsSnapshot,
    now: datetime,
    zones: dict[str, ZoneProblem],
    port: int = 25,
) -> TlsaState:
    """What `answer`, the TLSA lookup of one host (an MX host's; the web host's at its HTTPS `port`), proves."""
    name = dane_name(exchange, port)
    if failed(answer):
        return TlsaState("failed", f"the TLSA lookup of {name} failed ({answer.error or answer.rcode})")
    if not answer.records:
        return TlsaState("none", f"{exchange} has no TLSA records")
    alias = dns.get(name, "CNAME")
    if alias is not None and alias.records:
        return TlsaState("unknown", f"{name} is an alias ({alias.records[0]}), whose zone this scan does not validate")
    zone = dane_zone(exchange, domain, answer, port)
    problem = _zone_problem(zone, dns, now, zones)
    if problem is not None:
        state, why = problem
        return TlsaState(state, f"the TLSA records of {exchange} prove nothing: {why}", why)
    unsigned = signed_by_zone(answer, zone, dns, now)
    if unsigned is not None:
        return TlsaState("unproven", f"the TLSA records of {exchange} do not validate: {unsigned}")
    return TlsaState("secure")


def _mx_state(domain: str, dns: DnsSnapshot, now: datetime, zones: dict[str, ZoneProblem]) -> TlsaState:
    """Whether the MX RRset is DNSSEC-valid (a forged MX would lead senders elsewhere)."""
    problem = _zone_problem(domain, dns, now, zones)
    if problem is not None:
        return TlsaState(problem[0], f"the MX records prove nothing: {problem[1]}", problem[1])
    mx = dns.get(domain, "MX")
    if mx is None:
        return TlsaState("unknown", "the MX records were not fetched")
    unsigned = signed_by_zone(mx, domain, dns, now)
    return (
        TlsaState("secure")
        if unsigned is None
        else TlsaState("unproven", f"the MX records do not validate: {unsigned}")
    )


def _problems(states: dict[str, TlsaState], mx: TlsaState) -> list[str]:
    """What keeps DANE from covering the domain's mail, a zone's problem said once for all it holds ("the MX records
    and the TLSA records of mx.example.com prove nothing: the example.com zone is not DNSSEC-secure ...")."""
    by_zone: dict[str, list[str]] = {}
    others = []
    for subject, state in (("the MX records", mx), *((f"the TLSA records of {e}", s) for e, s in states.items())):
        if state.state == "secure":
            continue
        if state.zone_problem is not None:
            by_zone.setdefault(state.zone_problem, []).append(subject)
        else:
            others.append(state.why)
    return others + [f"{series(subjects)} prove nothing: {why}" for why, subjects in by_zone.items()]


@dataclass(frozen=True)
class _Match:
    """What one MX host's certificate says to its DNSSEC-valid TLSA records: `matched` the record that authenticates
    it; else `problem` (DANE senders hold its mail), or `unknown` (not asked, or no record usable); `key` the hex
    SHA-256 of the key it presents, for the fix."""

    matched: Tlsa | None = None
    problem: str | None = None
    unknown: str | None = None
    key: str | None = None


def _match(exchange: str, answer: DnsAnswer, server: MailServer | None, now: datetime) -> _Match:
    if server is None:
        return _Match(unknown="this scanner asks no mail server: WEBSEC_SMTP_PORT is 0")
    outcome = server.mail_tls
    if outcome.state == "none":
        return _Match(problem=f"{outcome.what}, and its TLSA records require TLS")
    tls = outcome.handshake
    if tls is None or not tls.chain:
        return _Match(unknown=outcome.said("unknown") or "it sent no certificate")
    records = [record for text in answer.records if (record := parse_tlsa(text)) is not None]
    if not any(record.usable for record in records):
        return _Match(unknown=f"none of the TLSA records of {exchange} is usable for SMTP (RFC 7672 3.1.3)")
    chain = tuple(certificate.der for certificate in tls.chain)
    current = tls.chain[0].dated_problem(now) is None
    matched = dane_match(records, chain, tls.hostname_matches, current)
    key = spki_sha256(chain[0])
    if matched is not None:
        return _Match(matched=matched, key=key)
    presented = f"its key's SHA-256 {key[:16]}..." if key is not None else "a key this scan cannot read"
    said = f"the certificate {exchange} presents ({presented}) matches none of its TLSA records"
    return _Match(problem=said, key=key)


def _usable_count(answer: DnsAnswer) -> int:
    return sum(1 for text in answer.records if (record := parse_tlsa(text)) is not None and record.usable)


def _matched_findings(
    states: dict[str, TlsaState], tlsa: dict[str, DnsAnswer], snapshot: SiteSnapshot, details: dict[str, Any]
) -> tuple[list[Finding], list[str]]:
    """dns.dane_mismatch for the hosts whose DNSSEC-valid records their server fails (with the record to publish for
    the key it presents), and what dns.dane_valid says of those that matched (which record, "mx.example.com: 3 1 1",
    and a host with one record to roll over from); what could not be held to its server goes to the section's
    not-checked list."""
    servers = {server.host: server for server in snapshot.mail_servers}
    matches = {
        e: _match(e, tlsa[e], servers.get(e), snapshot.fetched_at) for e, s in states.items() if s.state == "secure"
    }
    unknown = {e: m.unknown for e, m in matches.items() if m.unknown is not None}
    if unknown:
        why = "; ".join(dict.fromkeys(unknown.values()))
        details["dane"]["not_checked"] = [NOT_CHECKED.format(hosts=series(list(unknown)), why=why)]
    matched = [
        f"{e}: {m.matched.usage} {m.matched.selector} {m.matched.matching}" for e, m in matches.items() if m.matched
    ]
    single = [e for e, m in matches.items() if m.matched and _usable_count(tlsa[e]) == 1]
    said = "the certificates presented match" if len(matched) > 1 else "the certificate presented matches"
    held = [f"{said} them ({', '.join(matched)})"] if matched else []
    if single:  # internet.nl's rollover advice
        held.append(
            f"{series(single)} {'has' if len(single) == 1 else 'have'} one usable TLSA record: publish the next key's "
            "(or a 2 1 1 record for the issuing CA) before the key changes, or mail stops when it does (RFC 7671 8.1)"
        )
    failing = {e: m for e, m in matches.items() if m.problem is not None}
    if not failing:
        return [], held
    problems = [m.problem for m in failing.values() if m.problem]
    keyed = next(((e, m.key) for e, m in failing.items() if m.key is not None), None)
    if keyed is None:
        fix = "Make STARTTLS work at every MX host that has TLSA records (or remove their TLSA records first)."
    else:
        name = dane_name(keyed[0])
        fix = (
            f"Publish this TLSA record beside the old ones, for the key {keyed[0]} presents now:\n"
            f"`{name}. IN TLSA 3 1 1 {keyed[1]}`\n"
            "Once the old records' TTL has passed, remove those that name a key the server no longer uses. If the "
            "certificate changed by mistake, put back the one the records name instead."
        )
    return [noted("dns.dane_mismatch", problems, fix_vars={"dane_fix": fix})], held


def dane_findings(snapshot: SiteSnapshot, domain: str, details: dict[str, Any], receives: bool | None) -> list[Finding]:
    """dns.dane_valid, dns.dane_incomplete, dns.dane_mismatch, or nothing for a domain with no TLSA records (or no
    mail)."""
    mx = snapshot.dns.get(domain, "MX")
    if receives is not True or mx is None or failed(mx):
        return []
    exchanges = list(dict.fromkeys(r.split()[-1].rstrip(".").lower() for r in mx.records if r.split()[-1] != "."))
    tlsa = {e: a for e in exchanges if (a := snapshot.dns.get(dane_name(e), "TLSA")) is not None}  # those asked
    if not any(answer.records for answer in tlsa.values()):
        return []  # no DANE (or not asked): nothing to say
    now, zones = snapshot.fetched_at, dict[str, ZoneProblem]()
    states = {e: tlsa_state(e, answer, domain, snapshot.dns, now, zones) for e, answer in tlsa.items()}
    details["dane"] = {"mx_hosts": {e: s.state for e, s in states.items()}, "not_checked": []}
    lookups = [tlsa[e] for e, s in states.items() if s.state == "failed"]
    unknown = [s.why for s in states.values() if s.state == "unknown"]
    if len(tlsa) < len(exchanges):
        unknown.append(f"the TLSA records of {len(exchanges) - len(tlsa)} more MX host(s) were not looked up")
    mx_state = _mx_state(domain, snapshot.dns, now, zones)
    if mx_state.state == "unknown":
        unknown.append(mx_state.why)
    mismatched, held = _matched_findings(states, tlsa, snapshot, details)
    if lookups or unknown:
        found = [could_not_check(a) for a in lookups]
        return mismatched + found + ([noted("check.error", unknown, subject="DANE (TLSA)")] if unknown else [])
    problems = _problems(states, mx_state)
    if problems:
        return [*mismatched, noted("dns.dane_incomplete", problems)]
    if mismatched:
        return mismatched
    hosts = ", ".join(states)
    note = f"TLSA records for {hosts}, and the MX records, DNSSEC-valid"
    note += "".join(f"; {item}" for item in held)
    return [Finding("dns.dane_valid", note=note)]
