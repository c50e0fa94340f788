"""SPF terms named with the sender's own values (RFC 7208 7.3: its HELO name, local part, address, validated name).

When those values supply the labels that pick the zone answering for the name ("a:%{h}", "include:%{h}",
"exists:%{l}.com"), the sender picks that zone, and with it whether the term matches it (11.5): its HELO name can be a
domain of its own that resolves to its address. A "+" term then lets every sender pass where the walk reaches it; a
"~" or "?" one lets any sender get that result; a "-" one any sender walks past. A name whose zone is the owner's
("exists:%{i}._spf.%{d}") is read as no match, as for a sender it does not list. An include or redirect= named with
the sender's values in a zone it does not pick leads to a record that depends on the sender: not checked, and said
so, with no check.error (the scan did not fail) and no verdict made up for it."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer, make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import Finding
from websec_app.scanner.snapshot import DnsAnswer

DOMAIN = "example.com"
HELO = "a sending server chooses its HELO name"


def txt(name: str, *values: str) -> DnsAnswer:
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values))


def spf_findings(record: str, *answers: DnsAnswer) -> list[Finding]:
    """The dns check's SPF findings (and its check.errors naming spf) for `record` and the answers of its terms."""
    snapshot = make_snapshot(f"https://{DOMAIN}/", dns=make_dns(DOMAIN, txt(DOMAIN, record), *answers))
    found = check_dns(snapshot).findings
    return [f for f in found if f.outcome.startswith("dns.spf") or (f.outcome == "check.error" and "spf" in f.families)]


def only(findings: list[Finding]) -> Finding:
    (finding,) = findings
    return finding


# -- a term whose zone the sender picks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ("v=spf1 a:%{h} -all", f"a:%{{h}} ({HELO}, so it can name a domain that resolves to its own address"),
        ("v=spf1 mx:%{h} -all", f"mx:%{{h}} ({HELO}, so it can name a domain whose MX host has its own address"),
        ("v=spf1 exists:%{h} -all", f"exists:%{{h}} ({HELO}, so it can name a domain that exists"),
        ("v=spf1 include:%{h} -all", f"include:%{{h}} ({HELO}, so it can name a domain whose SPF record passes it"),
        ("v=spf1 redirect=%{h}", f"redirect=%{{h}} ({HELO}, so it can name a domain whose SPF record passes it"),
        ("v=spf1 +a:%{H2r}/24 -all", f"a:%{{H2r}}/24 ({HELO}, so it can name a domain"),  # "com.evil.x": evil.com
        ("v=spf1 a:%{p} -all", "a:%{p} (a sender's validated name is what the reverse (PTR) zone of its address says"),
        (
            "v=spf1 a:%{l}.com -all",
            "a:%{l}.com (a sender chooses the local part of its address, so it can name a "
            "domain under com that resolves to its own address",
        ),
        ("v=spf1 exists:%{ir}.%{v}.arpa -all", "exists:%{ir}.%{v}.arpa (a sender picks the address it sends from"),
    ],
)
def test_a_term_whose_zone_the_sender_picks_lets_every_server_pass(record: str, why: str) -> None:
    # Given a term whose name's rightmost labels come from the sender's own values: receivers expand the macro with
    # what the sending server says (RFC 7208 7.3), so it names a zone of its own, where the term matches it
    finding = only(spf_findings(record))
    # Then every server on the internet can pass, as with +all (it was dns.spf_strict: the term was skipped)
    assert finding.outcome == "dns.spf_pass_all"
    assert (finding.note or "").startswith(why)
    assert "RFC 7208 7.3, 11.5): every server on the internet passes" in (finding.note or "")


def test_a_record_including_one_with_such_a_term_lets_every_server_pass() -> None:
    finding = only(spf_findings("v=spf1 include:_spf.example.net -all", txt("_spf.example.net", "v=spf1 a:%{h} -all")))
    assert finding.outcome == "dns.spf_pass_all"
    assert (finding.note or "").startswith(f"include:_spf.example.net -> a:%{{h}} ({HELO}")


@pytest.mark.parametrize(
    "record",
    [
        # the owner's zone answers: the sender's values only pick a name in it (common and legitimate)
        "v=spf1 exists:%{i}._spf.%{d} -all",
        "v=spf1 a:%{l}.example.com -all",
        "v=spf1 exists:%{h}._helo.%{d} -all",
        "v=spf1 exists:%{ir}.%{v}._spf.%{d} -all",
        # "-": a sender is never made to match a term it can keep from matching it, and walks past it
        "v=spf1 -a:%{h} -all",
        "v=spf1 -include:%{h} -all",
    ],
)
def test_a_term_in_the_owners_zone_or_one_the_sender_walks_past_leaves_the_all(record: str) -> None:
    finding = only(spf_findings(record))
    assert (finding.outcome, finding.note) == ("dns.spf_strict", record)


def test_a_minus_include_of_a_record_the_sender_can_pass_is_walked_past() -> None:
    # the include matches (fail) only for a sender that chooses to be matched by its a:%{h}: the others reach +all
    findings = spf_findings("v=spf1 -include:_spf.example.net +all", txt("_spf.example.net", "v=spf1 a:%{h} -all"))
    assert [(f.outcome, f.note) for f in findings] == [
        ("dns.spf_pass_all", "+all lets every server on the internet pass")
    ]


@pytest.mark.parametrize(
    ("record", "outcome", "result"),
    [
        ("v=spf1 ?a:%{h} -all", "dns.spf_neutral", "are neutral"),
        ("v=spf1 ~exists:%{h} ip4:192.0.2.1 -all", "dns.spf_softfail", "soft-fail"),
        ("v=spf1 ~include:%{h} ?all", "dns.spf_neutral", "?all"),  # ?all lets through more: it decides
    ],
)
def test_a_softfail_or_neutral_term_the_sender_picks_gives_any_sender_that_result(
    record: str, outcome: str, result: str
) -> None:
    finding = only(spf_findings(record))
    # Then any server can get that result instead of a stricter "all" (it was dns.spf_strict for the first two)
    assert finding.outcome == outcome
    if result.startswith("?"):
        assert finding.note == "?all: neutral"
        return
    assert (finding.note or "").endswith(f"any server on the internet can be matched there, so other senders {result}")
    # and the fix drops the term, so "-all" decides
    assert finding.fix_vars["spf_strict"] == "v=spf1 " + " ".join(w for w in record.split()[1:] if "%" not in w)


def test_earlier_terms_and_errors_decide_first() -> None:
    # RFC 7208 4.6.2, 4.6.4: the third void lookup ends the evaluation before a:%{h} is reached
    gone = [dns_answer(f"gone{n}.example.com", t, rcode="NXDOMAIN") for n in (1, 2, 3) for t in ("A", "AAAA")]
    voids = "v=spf1 a:gone1.example.com a:gone2.example.com a:gone3.example.com a:%{h} -all"
    assert [f.outcome for f in spf_findings(voids, *gone)] == ["dns.spf_void_lookups"]
    # every IPv4 sender fails at -ip4:0.0.0.0/0: a:%{h} is the IPv6 senders' alone
    finding = only(spf_findings("v=spf1 -ip4:0.0.0.0/0 a:%{h} -all"))
    assert finding.outcome == "dns.spf_pass_all"
    # and the note says what IPv4 senders get (the record's verdict for them, no finding of its own)
    assert (finding.note or "").endswith(
        "every IPv6 server on the internet passes; IPv4 senders are refused (-ip4:0.0.0.0/0)"
    )


# -- an include or redirect= named with the sender's values in a zone it does not pick ------------------------


def test_an_include_named_with_the_senders_values_is_listed_not_checked_beside_the_verdict() -> None:
    # Given an include whose record depends on the sender (its local part), in the owner's zone
    snapshot = make_snapshot(
        f"https://{DOMAIN}/", dns=make_dns(DOMAIN, txt(DOMAIN, "v=spf1 include:%{l}._spf.%{d} -all"))
    )
    result = check_dns(snapshot)
    findings = [f for f in result.findings if f.outcome.startswith(("dns.spf", "check."))]
    # Then the senders it does not match reach -all, and the note says what was not checked: no check.error
    finding = only(findings)
    assert finding.outcome == "dns.spf_strict"
    assert (finding.note or "").startswith("v=spf1 include:%{l}._spf.%{d} -all; not checked, as its name is built")
    assert (finding.note or "").endswith("depends on the sender: include:%{l}._spf.%{d}")
    assert result.details["spf"]["not_checked"] == ["include:%{l}._spf.%{d}"]


def test_a_redirect_named_with_the_senders_values_gives_no_verdict_and_no_error() -> None:
    # Given a redirect= whose record depends on the sender: it decides for every sender the terms before it miss
    snapshot = make_snapshot(
        f"https://{DOMAIN}/", dns=make_dns(DOMAIN, txt(DOMAIN, "v=spf1 ip4:192.0.2.1 redirect=%{l}._spf.%{d}"))
    )
    result = check_dns(snapshot)
    # Then no verdict on "all" is made up, and no check.error says the scan failed (it was "SPF includes")
    assert [f for f in result.findings if f.outcome.startswith(("dns.spf", "check."))] == []
    assert result.details["spf"]["not_checked"] == ["redirect=%{l}._spf.%{d}"]
    # beside a verdict of the other family, the note says what is left unchecked
    finding = only(spf_findings("v=spf1 ip4:0.0.0.0/0 redirect=%{l}._spf.%{d}"))
    assert finding.outcome == "dns.spf_pass_all"
    assert (finding.note or "").startswith("ip4:0.0.0.0/0: every IPv4 server on the internet passes; not checked")
