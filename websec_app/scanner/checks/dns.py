"""The `dns` section: what the host's name resolves to.

The records come from the snapshot (fetch/dns.py); a failed query is reported as
"could not check", never as a failed scan.
"""

from __future__ import annotations

from typing import Any

from ..findings import CheckResult, Finding
from ..snapshot import SiteSnapshot
from ..target import ip_literal


def check_dns(snapshot: SiteSnapshot) -> CheckResult:
    host = snapshot.target.host
    if ip_literal(host) is not None:
        return CheckResult("dns", (Finding("dns.ip_literal", note=f"{host} is an IP address"),), {"host": host})
    dns = snapshot.dns
    details: dict[str, Any] = {
        "host": host,
        "a": list(dns.records(host, "A")),
        "aaaa": list(dns.records(host, "AAAA")),
        "cname": list(dns.records(host, "CNAME")),
    }
    failed = [a for a in dns.answers if a.error]
    findings = [Finding("dns.resolves", note=f"{len(details['a'])} IPv4, {len(details['aaaa'])} IPv6 addresses")]
    for answer in failed:
        findings.append(Finding("check.error", subject=f"{answer.name} {answer.rdtype}", note=answer.error))
    return CheckResult("dns", tuple(findings), details)
