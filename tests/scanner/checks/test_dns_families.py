"""The dns section names the family of each finding (checks/dns.py: the lookup that decides it), and each
failed lookup (`check.error`) the family it left unchecked: the report's `families`, which the diff reads
(scanner/diff.py) instead of parsing the check's subjects or guessing from outcome ids."""

from __future__ import annotations

from typing import Any

from tests.factories import dns_answer, make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import CheckResult, Finding
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook

HOST = "example.com"


def findings(*answers: Any, host: str = HOST) -> dict[str, list[str] | None]:
    """The graded dns section's findings: outcome id -> families."""
    snapshot = make_snapshot(f"https://{host}/", dns=make_dns(host, *answers))
    graded = grade([check_dns(snapshot)], default_rulebook(), {"host": host, "domain": HOST})
    return {f["check"]: f["families"] for f in graded.sections["dns"]["findings"]}


def test_each_dns_finding_names_the_lookup_that_decides_it() -> None:
    found = findings(
        dns_answer(HOST, "A", "192.0.2.1"),
        dns_answer(HOST, "AAAA", rcode="NOERROR"),
        dns_answer(HOST, "MX", "0 ."),
        dns_answer(HOST, "TXT", '"v=spf1 -all"'),
        dns_answer(f"_dmarc.{HOST}", "TXT", rcode="NXDOMAIN"),
        dns_answer(f"_domainkey.{HOST}", "TXT", rcode="NXDOMAIN"),
        dns_answer(HOST, "CAA", rcode="NOERROR"),
        dns_answer("com", "CAA", rcode="NOERROR"),
    )
    # outcome ids whose first word is not their family (dns.null_mx, dns.no_ipv6) name it all the same
    assert found == {
        "dns.resolves": ["addresses"],
        "dns.no_ipv6": ["ipv6"],
        "dns.null_mx": ["mx"],
        "dns.spf_strict": ["spf"],
        "dns.dmarc_missing": ["dmarc"],
        "dns.dkim_not_needed": ["dkim", "mx"],  # the null MX says DKIM is not needed
        "dns.caa_missing": ["caa"],
    }
    assert findings(host="192.0.2.7") == {"dns.ip_literal": ["addresses"]}


def test_a_failed_lookup_names_the_family_it_left_unchecked() -> None:
    # Given the SPF record read but its include not, and www's CNAME lookup failed beside the host's
    found = findings(
        dns_answer(HOST, "TXT", '"v=spf1 ptr include:_spf.other.net -all"'),
        dns_answer("_spf.other.net", "TXT", rcode="SERVFAIL"),
        dns_answer(HOST, "CNAME", "web.host.example."),
        dns_answer("web.host.example", "A", "192.0.2.1"),
        dns_answer(f"www.{HOST}", "CNAME", rcode="SERVFAIL"),
        dns_answer(f"_dmarc.{HOST}", "TXT", rcode="SERVFAIL"),
    )
    # Then the one check.error (grading merges them) names SPF, DMARC and the CNAMEs, whatever its subjects
    # say, beside the findings those families still hold
    assert sorted(found["check.error"] or []) == ["cnames", "dmarc", "spf"]
    assert found["dns.spf_ptr"] == ["spf"] and found["dns.cnames_resolve"] == ["cnames"]


def test_a_failure_in_a_section_without_families_names_none() -> None:
    # a check.error elsewhere may have hidden any finding of its section: it names no family (null)
    result = CheckResult("tls", (Finding("check.error", subject="TLS handshake", note="timed out"),))
    graded = grade([result], default_rulebook(), {"host": HOST, "domain": HOST})
    assert [f["families"] for f in graded.sections["tls"]["findings"]] == [None]


def test_a_failed_lookup_of_the_zone_holding_a_platform_name_is_a_dnssec_failure_not_silence() -> None:
    # Given alice.github.io, a name with no zone of its own, whose follow-up SOA lookup of github.io SERVFAILs
    own = [dns_answer("alice.github.io", rdtype) for rdtype in ("SOA", "DS", "DNSKEY")]
    found = findings(*own, dns_answer("github.io", "SOA", rcode="SERVFAIL"), host="alice.github.io")
    # Then DNSSEC could not be checked (its zone may be signed, or broken), said for the dnssec family
    assert found["check.error"] == ["dnssec"]
