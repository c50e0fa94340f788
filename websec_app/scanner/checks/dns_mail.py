"""The dns section's mail findings beside SPF: MX with null MX (RFC 7505), DMARC (records/dmarc.py) with its
external report destinations' consent (RFC 7489 7.1), DKIM's `_domainkey` (NXDOMAIN vs NOERROR, RFC 8020;
selectors are never guessed), MTA-STS with its policy (RFC 8461, records/mta_sts.py), held to what the MX hosts
showed (dns_smtp.py), and TLS-RPT (RFC 8460, records/tls_rpt.py). Mail findings are minor: a web site should not
fail over its mail configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..findings import Finding, noted
from ..records.dmarc import consent_name, discover, external_report_domains, is_dmarc, parse_dmarc
from ..records.dns_text import failed, txt_of
from ..records.mta_sts import (
    MAX_POLICY_BYTES,
    parse_sts_policy,
    sts_near_misses,
    sts_record_problem,
    sts_records,
    uncovered_mx,
)
from ..records.tls_rpt import tlsrpt_near_misses, tlsrpt_problem, tlsrpt_records
from ..snapshot import FetchChain, SiteSnapshot
from ._dns_shared import addressless, could_not_check, listed_errors
from ._shown import shown as shown_text  # `shown` is a local name in several functions here
from ._shown import shown_lists
from .dns_smtp import certificate_expiring

_MAX_NAMES_LISTED = 10  # in a note: an MX RRset can hold thousands of names
#: An MX host without addresses: the MX record names it, its A and AAAA lookups ("mx_hosts") say it has none.
_MX_HOST_FAMILIES = ("mx", "mx_hosts")


# -- MX --------------------------------------------------------------------------------------------


def mx_findings(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> tuple[list[Finding], bool | None]:
    """Findings, and whether the domain receives mail (None: unknown)."""
    answer = snapshot.dns.get(domain, "MX")
    if answer is None:
        return [], None
    if failed(answer):
        return [could_not_check(answer)], None
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
        if a is None or aaaa is None or not addressless(snapshot.dns, exchange):
            continue  # not asked (past MAX_MX_HOSTS), or the host has an address
        if a.rcode == "NXDOMAIN" or not (failed(a) or failed(aaaa)):  # NXDOMAIN is about the name (RFC 8020)
            why = "does not exist" if a.rcode == "NXDOMAIN" else "has no address"
            note = f"{exchange} {why}"
            findings.append(Finding("dns.mx_unresolvable", subject=exchange, note=note, families=_MX_HOST_FAMILIES))
        else:  # a failed lookup: the host may well have the address it did not tell
            findings += [could_not_check(answer, "mx_hosts") for answer in (a, aaaa) if failed(answer)]
    return findings, True


# -- DMARC -----------------------------------------------------------------------------------------


def dmarc_findings(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    name = f"_dmarc.{domain}"
    answer = snapshot.dns.get(name, "TXT")
    if answer is None:
        return []
    if failed(answer):
        return [could_not_check(answer)]
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
        "ignored_tags": listed_errors(record.ignored_tags),
        **shown_lists({"rua": [u.uri for u in record.rua], "ruf": [u.uri for u in record.ruf]}),
        "errors": listed_errors(record.errors),
    }
    findings = []
    if policy is None:
        return [noted("dns.dmarc_invalid", listed_errors(record.errors) or ["no valid policy"])]
    if record.errors:
        findings.append(noted("dns.dmarc_invalid", listed_errors(record.errors)))
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
            findings.append(could_not_check(consent, "dmarc_reports"))
        elif not any(is_dmarc(t) for t in txt_of(consent)):
            problems.append(
                f"{report_domain} has not agreed to receive reports for {domain} "
                f"(no {consent_name(domain, report_domain)} record, RFC 7489 7.1)"
            )
    if problems:
        findings.append(noted("dns.dmarc_report_uri", listed_errors(problems), families=("dmarc", "dmarc_reports")))
    return findings


# -- DKIM ------------------------------------------------------------------------------------------


def dkim_findings(
    snapshot: SiteSnapshot, domain: str, details: dict[str, Any], no_mail: tuple[str, str] | None, unknown: bool
) -> list[Finding]:
    """`no_mail`: how the domain declares it handles no mail and the family of the lookup that says so (None when
    it does not); `unknown`: a lookup that could have said so (MX, SPF) failed."""
    name = f"_domainkey.{domain}"
    answer = snapshot.dns.get(name, "TXT")
    if answer is None:
        return []
    if failed(answer):
        return [could_not_check(answer)]
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


# -- MTA-STS and TLS-RPT ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _VersionedTxt:
    """A TXT record a sending server looks up beside MX, read alike: discarded unless it begins with its version and
    ';' (MTA-STS, RFC 8461 3.1; TLS-RPT, RFC 8460 3), and needed only by a domain that receives mail."""

    label: str
    version: str
    rfc: str
    records: Callable[[list[str]], list[str]]  # the records senders read
    near_misses: Callable[[list[str]], list[str]]  # the ones they discard though they look like it
    invalid: str
    missing: str


_MTA_STS = _VersionedTxt(
    label="MTA-STS",
    version="v=STSv1",
    rfc="RFC 8461 3.1",
    records=sts_records,
    near_misses=sts_near_misses,
    invalid="dns.mta_sts_invalid",
    missing="dns.mta_sts_missing",
)
_TLS_RPT = _VersionedTxt(
    label="TLS-RPT",
    version="v=TLSRPTv1",
    rfc="RFC 8460 3",
    records=tlsrpt_records,
    near_misses=tlsrpt_near_misses,
    invalid="dns.tlsrpt_invalid",
    missing="dns.tlsrpt_missing",
)


def _versioned_records(
    snapshot: SiteSnapshot, name: str, kind: _VersionedTxt, receives: bool | None
) -> tuple[list[str], list[Finding] | None]:
    """The records at `name` senders read, and None; or the findings that end the check there: none when it was not
    asked or the domain receives no mail, its failed lookup, records all discarded, or none at all."""
    answer = snapshot.dns.get(name, "TXT")
    if answer is None or receives is False:
        return [], []
    if failed(answer):
        return [], [could_not_check(answer)]
    texts = txt_of(answer)
    records = kind.records(texts)
    if not records and (discarded := kind.near_misses(texts)):
        quoted = ", ".join(repr(shown_text(t, 200)) for t in discarded[:3])
        note = f"{name}: {quoted} does not begin with {kind.version} and ';', so senders discard it ({kind.rfc})"
        return [], [Finding(kind.invalid, note=note)]
    if not records:
        return [], [Finding(kind.missing, note=f"no {kind.label} record at {name}")] if receives else []
    return records, None


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
        return "; ".join(listed_errors(policy.errors)), None, shown
    return None, None, shown


def mta_sts_findings(
    snapshot: SiteSnapshot, domain: str, details: dict[str, Any], receives: bool | None
) -> list[Finding]:
    """`receives`: whether the MX record says the domain receives mail (None: it does not say, or failed)."""
    records, ended = _versioned_records(snapshot, f"_mta-sts.{domain}", _MTA_STS, receives)
    if ended is not None:
        return [_before_enforcing(snapshot, f) if f.outcome == "dns.mta_sts_missing" else f for f in ended]
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
    failing = _failing_mx(snapshot)
    expiring = _policy_host_expiring(snapshot)
    if mode == "testing":
        note = "mode: testing only reports failures"
        return [
            Finding("dns.mta_sts_testing", note=f"{note}; under enforce, {failing}" if failing else note),
            *expiring,
        ]
    if failing:
        return [Finding("dns.mta_sts_mx_failing", note=f"the policy is in enforce mode, and {failing}"), *expiring]
    return [Finding("dns.mta_sts_enforce", note=f"mode: enforce, max_age {shown.get('max_age')}"), *expiring]


def _policy_host_expiring(snapshot: SiteSnapshot) -> list[Finding]:
    """dns.mta_sts_cert_expires_soon when the policy host's certificate expires within two weeks, as an MX host's
    (dns_smtp.certificate_expiring): senders then fetch no policy, and once their copy's max_age runs out they deliver
    without it. Expired, it is dns.mta_sts_invalid already (`_policy_problem`), and this is not asked."""
    tls = snapshot.mta_sts_tls
    if tls is None or tls.failure is not None:
        return []
    note = certificate_expiring(tls, snapshot.fetched_at)
    return (
        []
        if note is None
        else [Finding("dns.mta_sts_cert_expires_soon", note=note, fix_vars={"policy_host": tls.host})]
    )


def _before_enforcing(snapshot: SiteSnapshot, missing: Finding) -> Finding:
    """dns.mta_sts_missing, whose fix publishes a policy in enforce mode, told what the MX hosts would fail under it:
    a policy published as the fix says would stop mail to them."""
    failing = _failing_mx(snapshot, consequence=False)
    if failing is None:
        return missing
    return replace(missing, note=f"{missing.note}; before a policy in enforce mode, mend the MX hosts: {failing}")


def _failing_mx(snapshot: SiteSnapshot, *, consequence: bool = True) -> str | None:
    """What an MTA-STS sender meets at the MX hosts the scan asked and refuses (RFC 8461 4.2): no TLS, or a
    certificate not valid for the host; None when every host asked passes (or none was asked)."""
    failing = []
    for server in snapshot.mail_servers:
        outcome = server.mail_tls
        tls = outcome.handshake
        problem = outcome.said("none") or (tls.refused_by_browsers(snapshot.fetched_at) if tls else None)
        if problem is not None:
            failing.append(problem if tls is None else f"at {server.host}, {problem}")
    if not failing:
        return None
    said = "; ".join(failing)
    return f"{said}: senders that honor MTA-STS do not deliver mail there (RFC 8461 4.2)" if consequence else said


def tls_rpt_findings(
    snapshot: SiteSnapshot, domain: str, details: dict[str, Any], receives: bool | None
) -> list[Finding]:
    name = f"_smtp._tls.{domain}"
    records, ended = _versioned_records(snapshot, name, _TLS_RPT, receives)
    if ended is not None:
        return ended
    details["tls_rpt"] = {"record": shown_text(records[0]) if len(records) == 1 else listed_errors(records)}
    if len(records) > 1:
        note = f"{len(records)} TLS-RPT records at {name}: senders then send no reports (RFC 8460 3)"
        return [Finding("dns.tlsrpt_invalid", note=note)]
    problem = tlsrpt_problem(records[0])
    if problem is not None:
        return [Finding("dns.tlsrpt_invalid", note=problem)]
    return [Finding("dns.tlsrpt_present", note=records[0])]
