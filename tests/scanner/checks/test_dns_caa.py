"""The CAA part of the dns section against RFC 8659 (4.1 flags and tags, 4.2 issue values, 4.3 issuewild, 4.4
iodef), RFC 8657's parameters and what CAs do (Baseline Requirements 3.2.2.8; Let's Encrypt's Boulder), from
hand-made DNS snapshots whose CAA records read as dnspython presents what the resolver received."""

from __future__ import annotations

import dns.rdata
import dns.rdataclass
import dns.rdatatype
import pytest

from tests.factories import dns_answer, make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import CheckResult, Finding
from websec_app.scanner.grading import grade
from websec_app.scanner.records.caa import parse_issue_value
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import DnsAnswer

HOST = "example.com"
WWW = f"www.{HOST}"


def caa(name: str, *records: str) -> DnsAnswer:
    """A CAA answer, each record in the presentation format the resolver stores (dnspython's to_text)."""
    texts = (dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.CAA, r).to_text() for r in records)
    return dns_answer(name, "CAA", *texts)


def check(*answers: DnsAnswer, host: str = HOST) -> CheckResult:
    return check_dns(make_snapshot(f"https://{host}/", dns=make_dns(host, *answers)))


def caa_findings(result: CheckResult) -> list[Finding]:
    return [f for f in result.findings if f.outcome.startswith("dns.caa")]


def only(*records: str) -> Finding:
    """The CAA finding of example.com with `records` (and none at com)."""
    (finding,) = caa_findings(check(caa(HOST, *records), caa("com")))
    return finding


def graded(result: CheckResult, host: str = HOST) -> dict[str, dict]:
    report = grade([result], default_rulebook(), {"host": host, "domain": HOST})
    return {f["check"]: f for f in report.sections["dns"]["findings"] if f["check"].startswith("dns.caa")}


# -- RFC 8659 4.2: an issue value that does not follow the grammar names no CA ---------------------------------


@pytest.mark.parametrize(
    ("value", "issuer", "parameters"),
    [
        ("letsencrypt.org", "letsencrypt.org", ()),
        (" \tletsencrypt.org \t", "letsencrypt.org", ()),
        ("letsencrypt.org;", "letsencrypt.org", ()),
        ("letsencrypt.org; validationmethods=dns-01", "letsencrypt.org", (("validationmethods", "dns-01"),)),
        (
            "letsencrypt.org ; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1 ;"
            " validationmethods=dns-01,http-01",
            "letsencrypt.org",
            (
                ("accounturi", "https://acme-v02.api.letsencrypt.org/acme/acct/1"),
                ("validationmethods", "dns-01,http-01"),
            ),
        ),
        ("ca1.example.net; account=230123", "ca1.example.net", (("account", "230123"),)),
        ("Pki.Goog", "Pki.Goog", ()),
        (";", None, ()),
        ("", None, ()),
        ("  ;  ", None, ()),
    ],
)
def test_issue_values_that_follow_the_grammar(value, issuer, parameters) -> None:
    parsed = parse_issue_value(value.encode())
    assert (parsed.issuer, parsed.parameters, parsed.problem) == (issuer, parameters, None)


@pytest.mark.parametrize(
    "value",
    [
        "%%%%%",  # RFC 8659 4.2's own example
        "letsencrypt.org, digicert.com",  # a list in one record
        "letsencrypt.org digicert.com",
        "https://letsencrypt.org",
        "letsencrypt.org.",
        "-letsencrypt.org",
        "letsencrypt..org",
        "letsencrypt.org; validationmethods=dns-01, http-01",  # a space inside a parameter value
        "letsencrypt.org; validationmethods=dns-01;",  # a ";" after the last parameter
        "letsencrypt.org;; validationmethods=dns-01",
        "letsencrypt.org; validationmethods",
        "letsencrypt.org; validation_methods=dns-01",
        "letsencrypt.org; validationmethods=dns-01,,http-01",  # RFC 8657 4
        "letsencrypt.org; validationmethods=",
        "l\u00e9tsencrypt.org",
    ],
)
def test_issue_values_that_do_not_follow_the_grammar_name_no_ca(value) -> None:
    parsed = parse_issue_value(value.encode())
    assert parsed.issuer is None and parsed.problem


@pytest.mark.parametrize(
    "value",
    [
        "letsencrypt.org; accounturi=",
        "letsencrypt.org; accounturi=acct/123",  # no scheme: a relative reference, no URI
        "letsencrypt.org; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1; "
        "accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1",
        "letsencrypt.org; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1; "
        "accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/2",
    ],
)
def test_an_accounturi_no_account_can_meet_names_no_ca(value) -> None:
    # RFC 8657 3: the value is a URI naming the account; an invalid one, or more than one in a property, is
    # unsatisfiable (Boulder's caaAccountURIMatches refuses each). They were dns.caa_present, "issuers
    # letsencrypt.org", so the owner learnt nothing of renewals Let's Encrypt refuses
    parsed = parse_issue_value(value.encode())
    assert parsed.issuer is None and parsed.problem and "accounturi" in parsed.problem
    finding = only(f'0 issue "{value}"')
    assert finding.outcome == "dns.caa_invalid"
    assert finding.note is not None and finding.note.endswith("(RFC 8659 4.2); CAs the issue records let issue: none")


def test_a_list_of_cas_in_one_issue_record_lets_none_of_them_issue() -> None:
    # RFC 8659 4.2: a value that does not match the grammar "MUST be treated the same as one specifying an empty
    # issuer-domain-name": CAs compare their domain name with the whole value and find no match (Boulder does),
    # so no CA may issue, and renewals fail. It was dns.caa_present, "issuers letsencrypt.org, digicert.com".
    finding = only('0 issue "letsencrypt.org, digicert.com"')
    assert finding.outcome == "dns.caa_invalid"
    assert finding.note == (
        f"at {HOST}: issue 'letsencrypt.org, digicert.com' names no CA: 'letsencrypt.org, digicert.com' is a list "
        "of names in one record (one CA's domain name per record) (RFC 8659 4.2); CAs the issue records let issue: none"
    )


def test_a_malformed_value_beside_a_good_one_is_reported_with_the_cas_still_allowed() -> None:
    # CAA authorisations add up (RFC 8659 4.2): Let's Encrypt may still issue, the CA the broken record meant may not
    finding = only('0 issue "letsencrypt.org"', '0 issue "digicert.com; validationmethods=dns-01, http-01"')
    assert finding.outcome == "dns.caa_invalid"
    assert finding.note is not None and finding.note.endswith("; CAs the issue records let issue: letsencrypt.org")
    assert "validationmethods" in finding.note


def test_a_malformed_issuewild_value_is_invalid_too() -> None:
    assert only('0 issue "letsencrypt.org"', '0 issuewild "https://sectigo.com"').outcome == "dns.caa_invalid"


def test_an_issue_value_with_escaped_characters_is_read_as_the_bytes_they_stand_for() -> None:
    # dnspython presents a quote inside the value as \" and a byte outside ASCII as \DDD: the value is the bytes
    assert caa(HOST, '0 issue "lets\\"encrypt.org"').records == ('0 issue "lets\\"encrypt.org"',)
    assert only('0 issue "lets\\"encrypt.org"').outcome == "dns.caa_invalid"
    assert only('0 issue "l\\195\\169tsencrypt.org"').outcome == "dns.caa_invalid"
    assert only('0 issue "letsencrypt\\.org"').note == f"at {HOST}: issuers letsencrypt.org"


@pytest.mark.parametrize(
    ("records", "note"),
    [
        (['0 issue ";"'], f"at {HOST}: no CA may issue (no issue record names one)"),
        (['0 issue ""'], f"at {HOST}: no CA may issue (no issue record names one)"),
        # additive: an empty issuer beside a CA's name is that CA alone (RFC 8659 4.2)
        (['0 issue ";"', '0 issue "letsencrypt.org"'], f"at {HOST}: issuers letsencrypt.org"),
    ],
)
def test_an_issue_record_naming_no_ca_is_the_strictest_restriction(records, note) -> None:
    finding = only(*records)
    assert (finding.outcome, finding.note) == ("dns.caa_present", note)


@pytest.mark.parametrize(
    ("records", "note"),
    [
        (['0 issue "letsencrypt.org; validationmethods=dns-01"'], "letsencrypt.org (validationmethods=dns-01)"),
        (
            [
                '0 issue "letsencrypt.org; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1"',
                '0 issue "pki.goog"',
            ],
            "letsencrypt.org (accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1), pki.goog",
        ),
    ],
)
def test_an_issuer_is_named_with_the_parameters_that_narrow_what_it_may_do(records, note) -> None:
    # RFC 8657 3, 4: the CA issues only to that account, or after that validation method. Let's Encrypt refuses an
    # http-01 order for the first (Boulder va/caa_test.go present-dns-only.com); the note said "issuers
    # letsencrypt.org", as if any order would do
    finding = only(*records)
    assert (finding.outcome, finding.note) == ("dns.caa_present", f"at {HOST}: issuers {note}")


def test_issuewild_records_alone_still_restrict_wildcard_certificates() -> None:
    # RFC 8659 4.3: issuewild records decide who issues wildcard certificates, with or without issue records; the
    # note said only that the records "do not restrict which CAs may issue" (Boulder's *.unsatisfiable-wildcard.com)
    finding = only('0 issuewild ";"')
    assert (finding.outcome, finding.note) == (
        "dns.caa_missing",
        f"at {HOST}: CAA records (issuewild) but no issue tag, so they do not restrict which CAs may issue, but "
        "for wildcard certificates: none",
    )


# -- RFC 8659 4.1: tags in any case, the critical flag, the other flag bits -------------------------------------


def test_tags_are_matched_in_any_case() -> None:
    finding = only('0 ISSUE "letsencrypt.org"', '0 IssueWild ";"', '0 IODEF "mailto:security@example.com"')
    assert (finding.outcome, finding.note) == (
        "dns.caa_present",
        f"at {HOST}: issuers letsencrypt.org; wildcard certificates: none",
    )


@pytest.mark.parametrize("tag", ["issuevmc", "contactemail", "contactphone", "issuemail"])
def test_the_critical_flag_on_a_tag_cas_need_not_support_stops_those_that_do_not(tag) -> None:
    # RFC 8659 4.1: a CA must refuse on a critical tag it does not support, and the Baseline Requirements
    # (3.2.2.8) oblige CAs to process only issue, issuewild and iodef: Let's Encrypt refuses on a critical issuevmc,
    # contactemail or contactphone. These were dns.caa_present ("known" tags).
    finding = only(f'128 {tag} "x"', '0 issue "letsencrypt.org"')
    assert finding.outcome == "dns.caa_invalid"
    # while on issue, issuewild and iodef, which every CA processes, it stops none
    critical = ['128 Issue "letsencrypt.org"', '128 issuewild ";"', '128 iodef "mailto:security@example.com"']
    assert only(*critical).outcome == "dns.caa_present"
    assert finding.note == (
        f"at {HOST}: critical tag {tag!r}: a CA that does not support it must refuse to issue (RFC 8659 4.1), and CAs "
        "need only support issue, issuewild and iodef (Baseline Requirements 3.2.2.8)"
    )


def test_flags_1_on_an_unknown_tag_stops_lets_encrypt() -> None:
    # RFC 8659 4.1 reserves the other bits and has CAs ignore them, but Boulder treats bit 1 (value 1) as the critical
    # flag on any tag but issue, issuewild, iodef and issuemail: Let's Encrypt refuses. It was dns.caa_present.
    finding = only('1 futuretag "x"', '0 issue "letsencrypt.org"')
    assert finding.outcome == "dns.caa_invalid"
    assert "Let's Encrypt takes it for the critical flag" in (finding.note or "")
    # the note gives the flags as the record has them (it said "flags 1" for every value with bit 1 set)
    assert "flags 9 on tag 'futuretag'" in (only('9 futuretag "x"', '0 issue "letsencrypt.org"').note or "")
    # on the tags it knows, and for the other reserved bits, nothing happens anywhere
    assert only('1 issue "letsencrypt.org"').outcome == "dns.caa_present"
    assert only('1 issuemail "letsencrypt.org"', '0 issue "letsencrypt.org"').outcome == "dns.caa_present"
    assert only('64 futuretag "x"', '0 issue "letsencrypt.org"').outcome == "dns.caa_present"
    assert only('0 futuretag "x"', '0 issue "letsencrypt.org"').outcome == "dns.caa_present"
    assert only('129 futuretag "x"', '0 issue "letsencrypt.org"').note == (
        f"at {HOST}: unknown critical tag 'futuretag': CAs must refuse to issue (RFC 8659 4.1)"
    )


# -- RFC 8659 4.3: issuewild replaces issue for wildcard names only ----------------------------------------------


def test_issuewild_is_listed_for_wildcard_certificates_and_alone_restricts_no_other_name() -> None:
    both = only('0 issue "letsencrypt.org"', '0 issuewild "digicert.com"', '0 issuewild "sectigo.com"')
    assert both.note == f"at {HOST}: issuers letsencrypt.org; wildcard certificates: digicert.com, sectigo.com"
    assert only('0 issuewild "digicert.com"').outcome == "dns.caa_missing"


# -- RFC 8659 4.4: iodef takes a mailto:, http: or https: URL ----------------------------------------------------


@pytest.mark.parametrize("value", ["security@example.com", "ftp://example.com/", "tel:+15551234", "https:/x"])
def test_an_iodef_value_no_ca_can_report_to_is_noted(value) -> None:
    finding = only('0 issue "letsencrypt.org"', f'0 iodef "{value}"')
    assert finding.outcome == "dns.caa_present"  # reports are not issuance: nothing is deducted
    assert finding.note is not None and finding.note.startswith(f"at {HOST}: issuers letsencrypt.org; iodef {value!r}")
    assert "(RFC 8659 4.4)" in finding.note
    # while mailto:, http: and https: URLs are not remarked on
    good = ("mailto:security@example.com", "https://iodef.example.com/", "http://iodef.example.com/report")
    finding = only('0 issue "letsencrypt.org"', *(f'0 iodef "{url}"' for url in good))
    assert finding.note == f"at {HOST}: issuers letsencrypt.org"


# -- RFC 8659 3: a CAA query follows the name's CNAME --------------------------------------------------------------


def test_records_read_through_the_hosts_alias_to_the_domain_are_fixed_at_the_domain() -> None:
    # Given www.example.com, a CNAME to example.com: its CAA query returns example.com's records, so there are none
    # to fix at www.example.com (no record can sit beside a CNAME); the fix named www.example.com
    result = check(
        dns_answer(WWW, "CNAME", f"{HOST}."),
        caa(WWW, '0 iodef "mailto:security@example.com"'),
        caa(HOST, '0 iodef "mailto:security@example.com"'),
        host=WWW,
    )
    finding = graded(result, WWW)["dns.caa_missing"]
    assert finding["fix"].startswith(f'{HOST} CAA 0 issue "letsencrypt.org"')
    assert finding["note"].startswith(f"at {WWW} (an alias of {HOST}: its records): CAA records (iodef)")
    assert result.details["caa"]["alias_of"] == HOST
    assert set(finding["families"]) == {"caa", "cnames"}


def test_records_read_through_the_hosts_alias_to_another_operator_are_theirs() -> None:
    # Given www.example.com, a CNAME to a CDN's name whose CAA RRset has an unknown critical tag
    target = "example.cdn.example.net"
    result = check(
        dns_answer(WWW, "CNAME", f"{target}."),
        caa(WWW, '128 futuretag "x"', '0 issue "digicert.com"'),
        host=WWW,
    )
    finding = graded(result, WWW)["dns.caa_invalid_inherited"]
    # Then they are the CDN's records: the owner can only ask, or replace the alias and publish their own
    assert finding["note"] == (
        f"at {WWW} (an alias of {target}: its records): unknown critical tag 'futuretag': CAs must refuse to issue "
        f"(RFC 8659 4.1); these are {target}'s records, set by whoever runs {target}"
    )
    assert finding["fix"].endswith(f"ask whoever runs {target} to correct its CAA records.")
    assert finding["fix_note"].startswith(f"{WWW} is an alias (CNAME) of {target}")


def test_a_host_without_an_alias_keeps_its_own_records() -> None:
    result = check(dns_answer(WWW, "CNAME"), caa(WWW, '0 issue "letsencrypt.org"'), host=WWW)
    (finding,) = caa_findings(result)
    assert (finding.note, finding.families) == (f"at {WWW}: issuers letsencrypt.org", ("caa",))
    assert "alias_of" not in result.details["caa"]


def test_a_servfail_mid_climb_is_could_not_check() -> None:
    # A failed lookup may hide the relevant RRset: "not checked", whatever the names above hold
    result = check(
        caa(WWW),
        dns_answer(HOST, "CAA", rcode="SERVFAIL"),
        caa("com", '0 issue "letsencrypt.org"'),
        host=WWW,
    )
    assert [(f.outcome, f.subject) for f in result.findings if "caa" in f.families] == [("check.error", f"{HOST} CAA")]
