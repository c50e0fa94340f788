"""DANE for the web server (RFC 6698, RFC 7671): TLSA records at _<port>._tcp.<host> name the certificate (or its key,
or the CA that issues it) a client must meet at the host's HTTPS port. Browsers do not read them, but clients that
validate DANE do, and internet.nl and Hardenize grade them: records that name another certificate than the one served
have every such client refuse the connection. They count only when DNSSEC proves them (an unsigned zone's are ignored,
as are records whose parameters no RFC defines).

The way they break is a certificate renewed with a new key before the records are updated: certbot makes a new key
at every renewal unless told --reuse-key. Nothing is said of a host without TLSA records. The records are held to the
handshake with the host scanned (`SiteSnapshot.entry_tls` when the page is on another host), by records/dane.py
`web_dane_match`. Pure: the records and the handshake come from the snapshot."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..findings import Finding
from ..records.dane import WebChain, dane_name, parse_tlsa, spki_sha256, web_dane_match
from ..records.dns_text import failed
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, SiteSnapshot, TlsHandshake
from ._dns_shared import could_not_check
from ._shown import listed
from .dns_dane import ZoneProblem, tlsa_state


def _web_chain(tls: TlsHandshake, now: datetime) -> WebChain:
    leaf = tls.chain[0]
    return WebChain(
        sent=tuple(certificate.der for certificate in tls.chain),
        verified=tuple(certificate.der for certificate in tls.verified_path) if tls.trusted else (),
        anchor=tls.anchor if tls.trusted else None,
        names_host=tls.hostname_matches,
        current=leaf.dated_problem(now) is None,
    )


def _fix(name: str, host: str, key: str | None) -> str:
    if key is None:
        return f"Remove the TLSA records at {name}, or publish one that names the certificate {host} serves."
    return (
        f"Publish this TLSA record beside the old ones, for the key {host} presents now:\n"
        f"`{name}. IN TLSA 3 1 1 {key}`\n"
        "Once the old records' TTL has passed, remove those that name a key the server no longer uses. So that the "
        "next renewal keeps the key, and the record, renew with the same key (certbot: --reuse-key), or publish the "
        "next key's record before the certificate changes."
    )


def _matched(tls: TlsHandshake, name: str, answer: DnsAnswer, now: datetime) -> Finding:
    records = [record for text in answer.records if (record := parse_tlsa(text)) is not None]
    usable = [record for record in records if record.usable_on_the_web]
    if not usable:
        note = f"none of the TLSA records at {name} is usable (parameters no RFC defines): clients ignore them"
        return Finding("tls.dane_ignored", note=note, fix_vars={"dane_web_fix": _fix(name, tls.host, None)})
    matched = web_dane_match(usable, _web_chain(tls, now))
    if matched is None:
        key = spki_sha256(tls.chain[0].der)
        presented = f"its key's SHA-256 {key[:16]}..." if key is not None else "a key this scan cannot read"
        note = f"the certificate {tls.host} presents ({presented}) matches none of the TLSA records at {name}"
        refused = tls.refused_by_browsers(now)
        if refused is not None and any(record.usage in (0, 1) for record in usable):  # PKIX-TA, PKIX-EE
            note += f" (its PKIX-TA and PKIX-EE records hold only for a certificate browsers accept: {refused})"
        return Finding("tls.dane_mismatch", note=note, fix_vars={"dane_web_fix": _fix(name, tls.host, key)})
    note = f"{name}: {matched.shown} matches the certificate presented, and DNSSEC proves the records"
    if len(usable) == 1 and matched.usage in (1, 3):  # a record for this key alone: internet.nl's rollover advice
        note += (
            "; it is the only usable record: publish the next key's (or a 2 1 1 record for the issuing CA) before "
            "the key changes, or DANE clients refuse the server when it does (RFC 7671 8.1)"
        )
    return Finding("tls.dane_valid", note=note)


def web_dane_findings(snapshot: SiteSnapshot, details: dict[str, Any]) -> list[Finding]:
    """tls.dane_valid, tls.dane_mismatch, tls.dane_ignored, or nothing for a host without TLSA records (or an IP
    address, or a handshake that failed: the section says so already)."""
    host = snapshot.target.host
    tls = snapshot.entry_tls if snapshot.entry_tls is not None else snapshot.tls
    if tls is None or tls.host != host or tls.failure is not None or not tls.chain:
        return []
    name = dane_name(host, tls.port)
    answer = snapshot.dns.get(name, "TLSA")
    if answer is None or (not failed(answer) and not answer.records):
        return []
    if failed(answer):
        return [could_not_check(answer)]
    now, zones, domain = snapshot.fetched_at, dict[str, ZoneProblem](), registrable_domain(host)
    state = tlsa_state(host, answer, domain, snapshot.dns, now, zones, tls.port)
    details["tlsa"] = {"name": name, "records": listed(answer.records, 10, each=200), "dnssec": state.state}
    if state.state == "unknown":
        return [Finding("check.error", subject=f"DANE (TLSA) of {host}", note=state.why)]
    if state.state == "unproven":
        note = f"{state.why}: clients ignore them"
        return [Finding("tls.dane_ignored", note=note, fix_vars={"dane_web_fix": _unproven_fix(name, domain)})]
    finding = _matched(tls, name, answer, now)
    if finding.outcome in ("tls.dane_valid", "tls.dane_mismatch"):  # records none of which is usable match nothing
        details["tlsa"]["matches"] = finding.outcome == "tls.dane_valid"
    return [finding]


def _unproven_fix(name: str, domain: str) -> str:
    return (
        f"Sign the zone of {domain} with DNSSEC (at your DNS provider, and the DS record at your registrar), so that "
        f"clients can trust the TLSA records at {name}; or remove them."
    )
