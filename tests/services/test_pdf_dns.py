"""The scan PDF's DNS details in words a client reads (pdftotext): a null MX, a CAA value naming no CA, a stopped SPF
evaluation, a list the report cut, said as what they mean, where the PDF printed the raw fields ("Records: 0 .",
"Issuewild: ;", "Stopped at: include:...", "Not listed: IPv6 addresses: 350", "P: reject", "Tls rpt").

Given real DNS: a best-practice site scanned through the fixture DNS server (null MX, `0 issuewild ";"`), its SPF
include answered SERVFAIL and 400 IPv6 addresses; and a mail domain's records fetched and checked as a scan does.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from tests.factories import make_snapshot
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer, Faults, inject_faults
from tests.fixtures.sites import SiteFactory
from tests.pdf_text import pdf_pages
from tests.reports import impact_report
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.services.pdf import render_scan_pdf
from websec_app.settings import Settings

#: What the PDF printed before, field names and raw values a client cannot read.
RAW = ("Issuewild", "Issue:", "Iodef", "Records: 0 .", "Stopped at:", "Failed lookups", "Not listed", "Rua:", "Tls rpt")


def dns_part(report: dict[str, Any]) -> str:
    """The DNS section's detail table as pdftotext reads it, whitespace flattened: from its heading to its
    findings."""
    text = re.sub(r"\s+", " ", " ".join(pdf_pages(render_scan_pdf(report, "Acme GmbH"))))
    start = text.index("Domain and email settings (DNS):")
    return text[start : text.index("Finding and fix", start)]


@pytest.fixture
def faults(dns_server: AuthDnsServer, monkeypatch: pytest.MonkeyPatch) -> Faults:
    return inject_faults(dns_server, monkeypatch)


async def test_a_scanned_sites_dns_details_read_as_what_they_mean(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings, faults: Faults
) -> None:
    # Given the best-practice site (null MX; CAA: letsencrypt.org, `0 issuewild ";"`, an iodef), with 400 IPv6
    # addresses and an SPF record including one whose lookup the server answers SERVFAIL
    host = site_factory.unique_host("pdf-dns")
    site = catalog.best_practices(host)
    addresses = tuple((host, "AAAA", f"2001:db8::{n:x}") for n in range(1, 400))
    site_factory(dataclasses.replace(site, dns=(*site.dns, *addresses)))
    dns_server.set(host, "TXT", f'"v=spf1 include:_spf.{host} -all"')
    dns_server.set(f"_spf.{host}", "TXT", '"v=spf1 ip4:192.0.2.0/24 -all"')
    faults[(f"_spf.{host}", "TXT")] = "servfail"
    # When it is scanned and its PDF rendered
    report = (await scan(f"https://{host}/", scan_settings)).to_dict(pro=True, include_fix=True)
    assert report["dns"]["caa"]["issuewild"] == [";"] and report["dns"]["mx"]["records"] == ["0 ."]
    part = dns_part(report)
    # Then each record reads as what it means (the code before: "Records: 0 .; Declares it receives no email: Yes",
    # "Issue: letsencrypt.org; Issuewild: ;;", "Stopped at: include:...; Failed lookups: ... TXT", "Not listed:
    # IPv6 addresses: 350")
    assert "Mail servers none (null MX, RFC 7505): the domain declares it receives no email" in part
    assert "Certificate authorities allowed: letsencrypt.org" in part
    assert "For wildcard certificates: no CA may issue (an empty issuer domain name, RFC 8659 4.2)" in part
    assert f"Problem reports to: mailto:security@{host}" in part
    assert (
        f"Evaluation stopped at include:_spf.{host}: no usable answer for _spf.{host} (TXT), so receivers answer "
        "with a temporary error (temperror, RFC 7208 5)"
    ) in part
    assert "DNS lookups it needs: 1 (receivers allow 10)" in part
    # in numeric order, whatever order the server shuffled them into (it does on each answer, as dnspython's does)
    assert re.search(r"IPv6 addresses ::1, 2001:db8::1, 2001:db8::2, 2001:db8::3, [^…]*, … \(400 in all\)", part)
    assert "Policy: reject (forged mail is refused)" in part
    assert f"_domainkey.{host}: the name does not exist (NXDOMAIN), so no key is published under any selector" in part
    assert "Signed, and the chain of trust from the parent zone verifies" in part
    assert [raw for raw in RAW if raw in part] == []


async def test_a_mail_domains_dns_details_read_as_what_they_mean(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a domain that receives mail, reached at www (a CNAME to it): two MX hosts, an SPF record with a soft fail
    # and a name that does not exist, DMARC quarantine for half the failing mail with a tag receivers ignore, CAA
    # records (82 issue records, one with parameters, and an issuewild listing two CAs in one value), MTA-STS and
    # TLS-RPT records
    domain = "pdf-dns-mail.test"
    dns_server.add(domain, "A", "127.0.0.9")
    dns_server.add(f"www.{domain}", "CNAME", domain)
    dns_server.add(domain, "MX", f"20 mx2.{domain}.", f"10 mx1.{domain}.")
    # each MX host with an IPv6 address too: an empty AAAA answer is a void lookup for IPv6 senders (RFC 7208 4.6.4),
    # and two of them with gone's would be their permerror
    for mx in ("mx1", "mx2"):
        dns_server.add(f"{mx}.{domain}", "A", "127.0.0.9")
        dns_server.add(f"{mx}.{domain}", "AAAA", "2001:db8::9")
    dns_server.add(domain, "TXT", f'"v=spf1 mx a:gone.{domain} ~all"')
    dmarc = f'"v=DMARC1; p=quarantine; pct=50; rua=mailto:a@{domain}; ruf=mailto:f@{domain}; foo=bar"'
    dns_server.add(f"_dmarc.{domain}", "TXT", dmarc)
    cas = [f'0 issue "ca{n}.example"' for n in range(81)]
    dns_server.add(domain, "CAA", '0 issuewild "letsencrypt.org, digicert.com"', '0 issue "x.example; a=b"', *cas)
    dns_server.add(f"_mta-sts.{domain}", "TXT", '"v=STSv1; id=20261122"')
    dns_server.add(f"_smtp._tls.{domain}", "TXT", f'"v=TLSRPTv1; rua=mailto:tls@{domain}"')
    # When its DNS is fetched and checked as a scan does, and the section is rendered in a report's PDF
    snapshot = await fetch_dns(f"www.{domain}", Resolver(scan_settings))
    result = check_dns(make_snapshot(f"https://www.{domain}/", dns=snapshot))
    graded = grade([result], default_rulebook(), {"host": f"www.{domain}", "domain": domain})
    report = impact_report().to_dict(pro=True)
    report["dns"] = graded.sections["dns"]
    assert report["dns"]["caa"]["not_listed"] == {"issue": 32}
    part = dns_part(report)
    # Then
    assert f"Mail servers mx1.{domain} (preference 10), mx2.{domain} (preference 20)" in part
    assert "Mail from servers it does not list: accepted but marked as suspect (~all, soft fail)" in part
    assert f"Lookups of names that do not exist: 1 (receivers allow 2): gone.{domain}" in part
    assert "Policy: quarantine (forged mail goes to spam)" in part
    assert "Applied to: 50% of the mail that fails" in part
    assert f"Aggregate reports to: mailto:a@{domain} Failure reports to: mailto:f@{domain}" in part
    assert "Tags receivers ignore: foo" in part
    assert f"Records read at: www.{domain}, an alias (CNAME) of {domain}: these are its records" in part
    assert re.search(r"Certificate authorities allowed: [^;]*ca\d+\.example, … \(82 records in all\)", part)
    assert (
        "For wildcard certificates: no CA may issue (an empty issuer domain name, RFC 8659 4.2) “letsencrypt.org, "
        "digicert.com” names no CA: 'letsencrypt.org, digicert.com' is a list of names in one record"
    ) in part
    assert "MTA-STS (email encryption policy) Record: v=STSv1; id=20261122" in part
    assert f"TLS-RPT (email encryption reports) Record: v=TLSRPTv1; rua=mailto:tls@{domain}" in part
    assert [raw for raw in RAW if raw in part] == []


async def test_an_spf_verdict_for_one_address_family_says_whose_it_is(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings, faults: Faults
) -> None:
    # Given a record whose `a:` term's A lookup SERVFAILs and whose AAAA finds no name: IPv4 senders stop with
    # temperror, IPv6 senders walk on to -all (RFC 7208 5.3)
    host = site_factory.unique_host("pdf-spf-family")
    site_factory(catalog.best_practices(host))
    dns_server.set(host, "TXT", f'"v=spf1 a:flaky.{host} -all"')
    faults[(f"flaky.{host}", "A")] = "servfail"
    # When it is scanned and its PDF rendered
    report = (await scan(f"https://{host}/", scan_settings)).to_dict(pro=True, include_fix=True)
    part = dns_part(report)
    # Then the verdict and the stop each name the senders they hold for (the PDF said "refused (-all)" and
    # "stopped ... temperror" of all senders alike)
    assert "Mail from servers it does not list (for IPv6 senders): refused (-all)" in part
    assert f"Evaluation stopped at a:flaky.{host} (for IPv4 senders): no usable answer for flaky.{host} (A)" in part


async def test_each_address_familys_spf_result_is_said_when_they_differ(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given two records whose families' senders get different results: every IPv4 sender passes at ip4:0.0.0.0/0
    # and IPv6 senders soft-fail; an include fails every IPv6 sender (who walk on to ~all) and then includes a domain
    # without SPF, a permerror for IPv4 senders alone (RFC 7208 4.6.2, 5.2)
    open_host = site_factory.unique_host("pdf-spf-open4")
    site_factory(catalog.best_practices(open_host))
    dns_server.set(open_host, "TXT", '"v=spf1 ip4:0.0.0.0/0 ~all"')
    broken_host = site_factory.unique_host("pdf-spf-perm4")
    site_factory(catalog.best_practices(broken_host))
    dns_server.set(broken_host, "TXT", f'"v=spf1 include:_spf.{broken_host} ~all"')
    dns_server.set(f"_spf.{broken_host}", "TXT", f'"v=spf1 -ip6:::/0 include:nospf.{broken_host} -all"')
    # When they are scanned and their PDFs rendered
    open_part = dns_part((await scan(f"https://{open_host}/", scan_settings)).to_dict(pro=True, include_fix=True))
    broken_part = dns_part((await scan(f"https://{broken_host}/", scan_settings)).to_dict(pro=True, include_fix=True))
    # Then each says which family gets what (the first printed "~all, soft fail" of every sender; the second nothing
    # of IPv6 senders, and the error as every sender's)
    assert "Mail from servers it does not list (for IPv6 senders): accepted but marked as suspect" in open_part
    assert "Mail from IPv4 servers: all accepted (pass): any of them may send as the domain" in open_part
    assert "Mail from servers it does not list (for IPv6 senders): accepted but marked as suspect" in broken_part
    assert (
        f"Errors (for IPv4 senders): nospf.{broken_host} (named by _spf.{broken_host}) has no SPF record" in broken_part
    )
    assert "Mail from IPv4 servers: permanent error (permerror): receivers ignore SPF for them" in broken_part


async def test_an_spf_verdict_names_the_term_deciding_and_each_familys_count_when_they_differ(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a record whose IPv6 senders are neutral at ?ip6:::/0 before an include of a syntax error (IPv4 senders'
    # permerror), and one of three a terms on names with an A record and no AAAA: void lookups for IPv6 senders
    # alone, the third their permerror (RFC 7208 5.3, 4.6.4)
    neutral_host = site_factory.unique_host("pdf-spf-neutral6")
    site_factory(catalog.best_practices(neutral_host))
    dns_server.set(neutral_host, "TXT", f'"v=spf1 ?ip6:::/0 include:_bad.{neutral_host} -all"')
    dns_server.set(f"_bad.{neutral_host}", "TXT", '"v=spf1 ip4:192.0.2.0/33 -all"')
    void_host = site_factory.unique_host("pdf-spf-void6")
    site_factory(catalog.best_practices(void_host))
    names = [f"mail{n}.{void_host}" for n in (1, 2, 3)]
    for name in names:
        dns_server.set(name, "A", "198.51.100.1")
    dns_server.set(void_host, "TXT", '"v=spf1 ' + " ".join(f"a:{name}" for name in names) + ' -all"')
    # When they are scanned and their PDFs rendered
    neutral_part = dns_part((await scan(f"https://{neutral_host}/", scan_settings)).to_dict(pro=True, include_fix=True))
    void_part = dns_part((await scan(f"https://{void_host}/", scan_settings)).to_dict(pro=True, include_fix=True))
    # Then the first names ?ip6:::/0, where it printed "?all", a term the record does not have
    assert "Mail from servers it does not list (for IPv6 senders): no verdict (?ip6:::/0, neutral)" in neutral_part
    assert "?all" not in neutral_part
    # and the second says IPv4 senders are refused, IPv6 senders' permerror, and whose void lookups they are
    assert "Mail from servers it does not list (for IPv4 senders): refused (-all)" in void_part
    assert "Mail from IPv6 servers: permanent error (permerror)" in void_part
    assert (
        "Lookups that find nothing (a name that does not exist, or has no address of the sender's type): "
        "0 for IPv4 senders, 3 for IPv6 senders (receivers allow 2)"
    ) in void_part
