"""SPF (RFC 7208): the parser, and the recursive lookup count over records in a DNS snapshot."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer, make_dns
from websec_app.scanner.checks.spf import evaluate_spf, parse_spf, referenced_domains, strict_record


def txt(name: str, *values: str, rcode: str = "NOERROR"):
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values), rcode=rcode)


@pytest.mark.parametrize(
    "record",
    [
        "v=spf1 -all",
        "v=spf1 mx a ip4:192.0.2.0/24 ip6:2001:db8::/32 include:_spf.example.net ~all",
        "v=spf1 a:mail.example.com/28 mx//64 a/24//64 ?all",
        "v=spf1 exists:%{i}._spf.%{d} -all",
        "v=spf1 redirect=_spf.example.com",
        "v=spf1  include:a.example.org   -all",  # several spaces between terms are allowed
        "v=spf1 ptr:example.com unknown-mod=whatever -all",
    ],
)
def test_valid_records_parse_without_errors(record) -> None:
    assert parse_spf(record).errors == ()


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("v=spf1 include -all", "'include' needs a domain"),
        ("v=spf1 ip4:300.1.1.1 -all", "not an ip4 network"),
        ("v=spf1 ip6:192.0.2.1 -all", "not an ip6 network"),
        ("v=spf1 all:example.com", "'all' takes no argument"),
        ("v=spf1 mx/99 -all", "bad prefix length"),
        ("v=spf1 foo:example.com -all", "unknown mechanism 'foo'"),
        ("v=spf1 redirect=a.example.com redirect=b.example.com", "'redirect' appears more than once"),
        ("v=spf1 include:exa mple -all", "unknown mechanism 'mple'"),
        ("v=spf1 include:%{z}.example.com -all", "malformed macro"),
        ("v=spf1 include:example..com -all", "is not a domain name"),
    ],
)
def test_invalid_records_are_permerrors_with_a_reason(record, problem) -> None:
    errors = parse_spf(record).errors
    assert any(problem in e for e in errors), errors


def test_referenced_domains_are_includes_and_the_redirect_without_macros() -> None:
    record = parse_spf("v=spf1 include:A.example.net include:%{d}.macro.example exists:x.example redirect=r.example")
    assert referenced_domains(record) == ["a.example.net", "r.example"]
    assert referenced_domains(parse_spf("v=spf1 redirect=r.example -all")) == []  # all overrides redirect


def test_strict_record_replaces_the_all_term_and_keeps_modifiers() -> None:
    assert strict_record("v=spf1 mx ~all") == "v=spf1 mx -all"
    assert strict_record("v=spf1 mx") == "v=spf1 mx -all"
    assert strict_record("v=spf1 ?all exp=explain.example.com") == "v=spf1 -all exp=explain.example.com"
    assert strict_record("v=spf1 redirect=_spf.example.com") == "v=spf1 redirect=_spf.example.com"


def test_lookups_are_counted_through_nested_includes() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 mx include:a.example.net -all"),
        txt("a.example.net", "v=spf1 a include:b.example.net ~all"),
        txt("b.example.net", "v=spf1 ip4:192.0.2.1 exists:%{i}.x.example.net -all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None
    assert (result.lookups, result.all_qualifier, result.errors, result.macros) == (5, "-", [], True)


def test_more_than_ten_lookups_is_over_the_limit() -> None:
    includes = " ".join(f"include:i{n}.example.net" for n in range(6))
    answers = [txt("example.com", f"v=spf1 {includes} -all")]
    answers += [txt(f"i{n}.example.net", "v=spf1 a mx -all") for n in range(6)]
    result = evaluate_spf("example.com", make_dns("example.com", *answers))
    # Counting stops past the limit, as a receiver's evaluation does.
    assert result is not None and result.over_limit and result.counting_stopped and result.lookups > 10


def test_an_include_without_spf_and_an_include_loop_are_errors() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 include:nospf.example.net include:loop.example.net -all"),
        txt("nospf.example.net", "google-site-verification=abc"),
        txt("loop.example.net", "v=spf1 include:example.com -all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None
    assert any("nospf.example.net" in e and "no SPF record" in e for e in result.errors)
    assert any("includes itself" in e for e in result.errors)


def test_a_redirect_takes_the_all_of_the_record_it_points_to() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 redirect=_spf.example.com"),
        txt("_spf.example.com", "v=spf1 ip4:192.0.2.0/24 ~all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and (result.lookups, result.all_qualifier) == (1, "~")


def test_includes_that_were_not_fetched_are_listed_as_unknown() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 include:a.example.net include:b.example.net -all"),
        txt("a.example.net", "v=spf1 -all", rcode="SERVFAIL"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.unknown == ["a.example.net", "b.example.net"]


def test_a_txt_string_split_in_two_is_joined_without_a_space() -> None:
    dns = make_dns("example.com", dns_answer("example.com", "TXT", '"v=spf1 ip4:192.0.2.1 " "-all"'))
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.record == "v=spf1 ip4:192.0.2.1 -all" and result.all_qualifier == "-"


def test_v_spf10_is_not_an_spf_record() -> None:
    dns = make_dns("example.com", txt("example.com", "v=spf10 -all"), txt("other.example", "v=spf1"))
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.records_found == 0
