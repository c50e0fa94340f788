"""The `dns` section: the web host's name and its registrable domain, graded like internet.nl.

For the host: addresses (IPv6 included), an address that took no connection, CNAME, and whether it or `www.<domain>`
is a CNAME to a name that does not exist (a subdomain takeover waiting to happen). For the registrable domain
(Public Suffix List, registrable.py): its name servers (a domain that no longer exists; one that does not serve the
zone: dns_delegation.py), SPF (dns_spf.py), DNSSEC validated with dns.dnssec (dnssec.py), CAA
(dns_caa.py), and the mail records: MX, DMARC, DKIM, MTA-STS and TLS-RPT (dns_mail.py), DANE (dns_dane.py), and the
MX hosts' STARTTLS (dns_smtp.py). A domain that says it handles no mail (null MX, or SPF "v=spf1 -all") needs no
DKIM, MTA-STS or TLS-RPT. A failed lookup is "could not check" (`check.error`), never a failed scan, and never an
answer: a SERVFAIL is not an NXDOMAIN (RFC 1035 4.1.1), so a verdict that needs it (a CNAME target gone, an MX host
without addresses, a report address's consent, DKIM needed by a domain whose MX lookup failed, SPF's result once a
term's lookup failed: temperror, RFC 7208 5) is not given. Records that were not asked produce no finding (a lookup
the scan asked and did not get in time is recorded as failed: fetch/dns.py). Each finding names every family of
lookups that decided it (`Finding.families`), each failure its own family. Mail findings are minor: a web site
should not fail over its mail configuration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..findings import CheckResult, Finding, noted
from ..records.dns_text import failed, nameserver_domains, nameserver_hosts
from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, PassedOver, SiteSnapshot
from ..target import ip_literal
from ._dns_shared import could_not_check, series
from ._shown import listed, shown, shown_lists
from .dns_caa import caa_findings
from .dns_dane import dane_findings
from .dns_delegation import delegation_findings
from .dns_mail import dkim_findings, dmarc_findings, mta_sts_findings, mx_findings, tls_rpt_findings
from .dns_smtp import starttls_findings
from .dns_spf import spf_findings
from .dnssec import validate_zone

# -- DNSSEC ----------------------------------------------------------------------------------------


def _dnssec(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    verdict = validate_zone(domain, snapshot.dns, snapshot.fetched_at)
    if verdict is None:
        return []
    details["dnssec"] = {"status": verdict.status, "note": shown(verdict.note), **shown_lists({"ds": verdict.ds})}
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
            findings.append(could_not_check(a))
    details["dangling_cnames"] = dangling
    if resolving and not dangling:
        findings.append(noted("dns.cnames_resolve", resolving))
    return findings


def _dangling_nameservers(snapshot: SiteSnapshot, domain: str, details: dict[str, Any]) -> list[Finding]:
    """dns.dangling_ns for each name server of the domain whose own domain does not exist (NXDOMAIN for its SOA, RFC
    8020): anyone may register it, run that name server, and answer for the whole zone. Only the domains the fetch
    asked (fetch/dns.py `nameserver_domains`): a failed lookup is "could not check", never a verdict."""
    answer = snapshot.dns.get(domain, "NS")
    if answer is None:
        return []
    if failed(answer):
        return [could_not_check(answer)]
    hosts = nameserver_hosts(answer)
    details["nameservers"] = listed(hosts, 10, each=253)
    findings = []
    for owner in nameserver_domains(domain, answer):
        soa = snapshot.dns.get(owner, "SOA")
        if soa is None:
            continue  # not asked: the follow-ups' deadline
        if failed(soa):
            findings.append(could_not_check(soa))
        elif soa.rcode == "NXDOMAIN":
            served = [host for host in hosts if host == owner or host.endswith("." + owner)]
            note = f"{series(served)} {'is' if len(served) == 1 else 'are'} under {owner}, which does not exist"
            fix_vars = {"nameservers": ", ".join(served), "nameserver_domain": owner}
            findings.append(Finding("dns.dangling_ns", subject=owner, note=note, fix_vars=fix_vars))
    return findings


#: What a missing MTA-STS policy leaves open when DANE covers the domain's mail.
_UNDER_DANE = (
    "DANE already protects mail from the senders that validate DNSSEC (Postfix, Exim, Microsoft 365); MTA-STS "
    "adds those that do not (Gmail among them)"
)

#: The family of the findings each lookup of the host's own names decides (its failure leaves them unchecked).
_OWN_LOOKUPS = {"A": "addresses", "AAAA": "ipv6", "CNAME": "cnames"}


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
        of_mx, receives = mx_findings(snapshot, domain, details)
        of_spf, spf_no_senders = spf_findings(snapshot, domain, details)
        findings += _of("mx", of_mx) + _of("spf", of_spf)
        findings += _of("dmarc", dmarc_findings(snapshot, domain, details))
        no_mail = ("null MX", "mx") if receives is False else (('SPF "v=spf1 -all"', "spf") if spf_no_senders else None)
        unknown = failed(dns_snapshot.get(domain, "MX")) or failed(dns_snapshot.get(domain, "TXT"))
        findings += _of("dkim", dkim_findings(snapshot, domain, details, no_mail, unknown))
        findings += _of("dnssec", _dnssec(snapshot, domain, details))
        findings += _of("ns", _dangling_nameservers(snapshot, domain, details))
        findings += _of("delegation", delegation_findings(snapshot, domain, details))
        findings += _of("caa", caa_findings(snapshot, host, domain, details))
        # a domain that receives no mail (null MX) needs neither, and MTA-STS must list each MX host (RFC 8461 4.1)
        of_dane = dane_findings(snapshot, domain, details, receives)
        of_mta_sts = mta_sts_findings(snapshot, domain, details, receives)
        if any(f.outcome == "dns.dane_valid" for f in of_dane):
            of_mta_sts = [
                replace(f, note=f"{f.note}; {_UNDER_DANE}") if f.outcome == "dns.mta_sts_missing" else f
                for f in of_mta_sts
            ]
        findings += _of("mta_sts", of_mta_sts, decided_also=("mx",))
        findings += _of("dane", of_dane, decided_also=("mx",))
        findings += _of("starttls", starttls_findings(snapshot, details, receives), decided_also=("mx",))
        findings += _of("tls_rpt", tls_rpt_findings(snapshot, domain, details, receives), decided_also=("mx",))
    # a lookup reported for one family (www's CNAME target may be the domain) is named for its own as well
    reported = {(f.subject, family) for f in findings if f.outcome == "check.error" for family in f.families}
    for answer in dns_snapshot.answers:
        subject, family = f"{answer.name} {answer.rdtype}", _OWN_LOOKUPS.get(answer.rdtype, "")
        if answer.error and (subject, family) not in reported and _is_own(answer, host, domain):
            findings.append(could_not_check(answer, family))
    # The fixes name the records of the host scanned and its domain, which these lookups read, not the final page's
    # (oldbrand.example redirecting to newbrand.example was told to publish newbrand's DMARC record)
    return CheckResult("dns", tuple(findings), details, fix_context={"host": host, "domain": domain})


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
        note = f"{address} ({host}) {' and '.join(what)}, and the scan went on at {instead}"
        findings.append(Finding("dns.address_down", subject=address, note=note, families=("addresses",)))
    return findings


def _ports(ports: list[int]) -> str:
    return ("port " if len(ports) == 1 else "ports ") + series([str(port) for port in ports])


def _is_own(answer: DnsAnswer, host: str, domain: str) -> bool:
    """Failures on the host's and the domain's own names are reported; those on names we only
    followed (an include's domain, an MX host) are reported by the check that followed them."""
    return answer.name in (host, domain, f"www.{domain}") and answer.rdtype in _OWN_LOOKUPS
