"""SPF (RFC 7208): the parser, and the recursive lookup count over records in a DNS snapshot."""

from __future__ import annotations

import pytest

from tests.factories import dns_answer, make_dns
from websec_app.scanner.checks.spf import NOT_ASKED, evaluate_spf
from websec_app.scanner.snapshot import DnsAnswer


def txt(name: str, *values: str, rcode: str = "NOERROR"):
    """A TXT answer; a value longer than a character-string (255 octets) is split into several."""
    split = [[v[i : i + 250] for i in range(0, len(v), 250)] or [""] for v in values]
    return dns_answer(name, "TXT", *(" ".join(f'"{c}"' for c in chunks) for chunks in split), rcode=rcode)


def test_lookups_are_counted_through_nested_includes() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 mx include:a.example.net -all"),
        dns_answer("example.com", "MX", "10 mail.example.com."),
        *addresses("mail.example.com", a=("192.0.2.25",)),
        txt("a.example.net", "v=spf1 a include:b.example.net ~all"),
        *addresses("a.example.net", a=("192.0.2.26",)),
        txt("b.example.net", "v=spf1 ip4:192.0.2.1 exists:%{i}.x.example.net -all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None
    assert (result.lookups, result.all_qualifier, result.errors, result.macros) == (5, "-", [], True)


def test_more_than_ten_lookups_is_over_the_limit() -> None:
    includes = " ".join(f"include:i{n}.example.net" for n in range(6))
    answers = [txt("example.com", f"v=spf1 {includes} -all")]
    for n in range(6):
        name = f"i{n}.example.net"
        answers += [
            txt(name, "v=spf1 a mx -all"),
            dns_answer(name, "MX", f"10 {name}."),
            *addresses(name, a=("192.0.2.1",)),
        ]
    result = evaluate_spf("example.com", make_dns("example.com", *answers))
    # The evaluation stops at the 11th DNS-querying term, as a receiver's does: i3's a (RFC 7208 4.6.4)
    assert result is not None and result.over_limit and result.lookups == 11
    assert result.over_limit_at == "a (in i3.example.net's record)"


@pytest.mark.parametrize(
    ("first", "error"),
    [
        ("include:nospf.example.net", "nospf.example.net (named by example.com) has no SPF record"),
        ("", "includes itself"),
    ],
)
def test_an_include_without_spf_and_an_include_loop_are_errors(first: str, error: str) -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", f"v=spf1 {first} include:loop.example.net -all"),
        txt("nospf.example.net", "google-site-verification=abc"),
        txt("loop.example.net", "v=spf1 include:example.com -all"),
    )
    result = evaluate_spf("example.com", dns)
    # Then the first is the error receivers stop at (RFC 7208 5.2): the loop after an include of no record is not
    # reached
    assert result is not None and len(result.errors) == 1 and error in result.errors[0]


def test_a_redirect_takes_the_all_of_the_record_it_points_to() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 redirect=_spf.example.com"),
        txt("_spf.example.com", "v=spf1 ip4:192.0.2.0/24 ~all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and (result.lookups, result.all_qualifier) == (1, "~")


def test_a_chain_of_redirects_takes_the_all_of_the_last_record() -> None:
    # RFC 7208 6.1: the redirected record's result is the result, recursively
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 redirect=a.example.net"),
        txt("a.example.net", "v=spf1 redirect=b.example.net"),
        txt("b.example.net", "v=spf1 ip4:192.0.2.1 -all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and (result.lookups, result.all_qualifier, result.all_domain) == (2, "-", "b.example.net")


def test_a_redirect_target_that_failed_or_depends_on_the_sender_leaves_the_all_unknown() -> None:
    failed = make_dns(
        "example.com",
        txt("example.com", "v=spf1 redirect=_spf.example.com"),
        txt("_spf.example.com", rcode="SERVFAIL"),
    )
    macro = make_dns("example.com", txt("example.com", "v=spf1 redirect=%{l}._spf.example.com"))
    result = evaluate_spf("example.com", macro)
    assert result is not None and not result.all_known and result.unknown == ["redirect=%{l}._spf.example.com"]
    # RFC 7208 6.1: the redirect's check_host() is the result, so its failed lookup is a temperror
    result = evaluate_spf("example.com", failed)
    assert result is not None and not result.all_known and result.unknown == [] and result.temperror
    assert result.failure is not None and result.failure.term == "redirect=_spf.example.com"


def test_a_redirect_or_include_named_with_the_domain_macros_is_followed() -> None:
    # RFC 7208 7.3: %{d} is the domain of the record being evaluated, %{o} the sender's: the scanned domain, through
    # includes too; both are the same for every sender (the RFC 7208 test suite's trailing-dot-domain)
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 redirect=%{d}.d.spf.example.com."),
        txt("example.com.d.spf.example.com", "v=spf1 include:o.spf.example.com. ~all"),
        txt("o.spf.example.com", "v=spf1 include:%{o}.senders.%{d2} exists:%{d}.x.example -all"),
        txt("example.com.senders.example.com", "v=spf1 ip4:192.0.2.1 -all"),
        dns_answer("o.spf.example.com.x.example", "A"),
    )
    result = evaluate_spf("example.com", dns)
    # Then the record that decides is read: ~all (it was "not checked", the redirect's name taken for the sender's)
    assert result is not None and result.unknown == [] and result.all_known
    assert (result.all_qualifier, result.all_domain) == ("~", "example.com.d.spf.example.com")
    assert (result.lookups, result.void_names) == (4, ["o.spf.example.com.x.example"])


def test_the_all_of_a_record_that_is_a_permerror_is_never_reached() -> None:
    # RFC 7208 4.6: a syntax error anywhere ends the evaluation before any term is evaluated, "all" included
    dns = make_dns("example.com", txt("example.com", "v=spf1 a:gone.example.net ip4:192.0.2.0/33 ~all"))
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.errors and not result.all_known
    assert (result.all_qualifier, result.lookups, result.failure) == (None, 0, None)


@pytest.mark.parametrize(
    ("top", "included", "everyone"),
    [
        ("v=spf1 include:evil.example.net -all", "v=spf1 +all", "include:evil.example.net -> +all"),
        (
            "v=spf1 include:evil.example.net -all",
            "v=spf1 ip4:0.0.0.0/0 -all",
            "include:evil.example.net -> ip4:0.0.0.0/0",
        ),
        ("v=spf1 include:evil.example.net -all", "v=spf1 ip6:::/0", "include:evil.example.net -> ip6:::/0"),
        (
            "v=spf1 include:evil.example.net -all",
            "v=spf1 redirect=open.example.net",
            "include:evil.example.net -> redirect=open.example.net -> +all",
        ),
        ("v=spf1 ip4:0.0.0.0/0 -all", "v=spf1 -all", "ip4:0.0.0.0/0"),
        ("v=spf1 include:evil.example.net -all", "v=spf1 ~all", None),  # softfail is no match for include
        ("v=spf1 include:evil.example.net -all", "v=spf1 -all +all", None),  # +all is never tested
        ("v=spf1 -include:evil.example.net -all", "v=spf1 +all", None),  # a match that fails
        ("v=spf1 include:evil.example.net -all", "v=spf1 ip4:192.0.2.0/24 -all", None),
    ],
)
def test_a_record_including_one_that_passes_every_sender_passes_every_sender(top, included, everyone) -> None:
    # RFC 7208 5.2: include matches when the included record's result is pass
    dns = make_dns(
        "example.com",
        txt("example.com", top),
        txt("evil.example.net", included),
        txt("open.example.net", "v=spf1 +all"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.passes_everyone == everyone


def addresses(name: str, *, a: tuple[str, ...] = (), aaaa: tuple[str, ...] = ()) -> list[DnsAnswer]:
    return [dns_answer(name, "A", *a), dns_answer(name, "AAAA", *aaaa)]


@pytest.mark.parametrize(
    ("record", "answers", "everyone"),
    [
        # RFC 7208 5.3, 5.6: the /0 network of any address the name has holds every address of that family
        (
            "v=spf1 a/0 -all",
            addresses("example.com", a=("192.0.2.1",)),
            "a/0 -> example.com has an IPv4 address (RFC 7208 5.3)",
        ),
        (
            "v=spf1 a:web.example.net//0 -all",
            addresses("web.example.net", aaaa=("2001:db8::1",)),
            "a:web.example.net//0 -> web.example.net has an IPv6 address (RFC 7208 5.3)",
        ),
        ("v=spf1 a//0 -all", addresses("example.com", a=("192.0.2.1",)), None),  # no AAAA: IPv4 is /32
        ("v=spf1 a/0 -all", addresses("example.com"), None),  # no address to compare with
        ("v=spf1 a/1 -all", addresses("example.com", a=("192.0.2.1",)), None),
        ("v=spf1 -a/0 -all", addresses("example.com", a=("192.0.2.1",)), None),  # a match that fails
        # 5.4: the same through each MX host's addresses
        (
            "v=spf1 mx/0 -all",
            [dns_answer("example.com", "MX", "10 mail.example.com."), *addresses("mail.example.com", a=("192.0.2.1",))],
            "mx/0 -> mail.example.com has an IPv4 address (RFC 7208 5.4)",
        ),
        (
            "v=spf1 mx/0 -all",
            [dns_answer("example.com", "MX", "10 mail.example.com."), *addresses("mail.example.com")],
            None,
        ),
        # 5.7: exists matches whoever sends once its name has an A record
        (
            "v=spf1 exists:ok.example.net -all",
            [dns_answer("ok.example.net", "A", "127.0.0.2")],
            "exists:ok.example.net -> ok.example.net has an A record (RFC 7208 5.7)",
        ),
        ("v=spf1 exists:ok.example.net -all", [dns_answer("ok.example.net", "A")], None),  # AAAA is never asked
        ("v=spf1 exists:%{i}.ok.example.net -all", [dns_answer("ok.example.net", "A", "127.0.0.2")], None),
        # an included record's bare a is the included domain's (5.3)
        (
            "v=spf1 include:evil.example.net -all",
            [txt("evil.example.net", "v=spf1 a/0 -all"), *addresses("evil.example.net", a=("192.0.2.1",))],
            "include:evil.example.net -> a/0 -> evil.example.net has an IPv4 address (RFC 7208 5.3)",
        ),
    ],
)
def test_an_a_mx_or_exists_term_that_matches_every_sender_passes_every_sender(
    record: str, answers: list[DnsAnswer], everyone: str | None
) -> None:
    # Given a term that, with what its lookups found, matches any sender's address (of a family)
    result = evaluate_spf("example.com", make_dns("example.com", txt("example.com", record), *answers))
    # Then it lets every such sender pass, as ip4:0.0.0.0/0 does (the RFC 7208 test suite's a-cidr4-0, exists-ip4)
    assert result is not None and result.passes_everyone == everyone and not result.permerror


def test_an_include_whose_record_was_not_fetched_is_not_checked() -> None:
    # Given a snapshot the fetch did not say was cut, lacking the record of an include the evaluation reaches
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 include:a.example.net include:b.example.net -all"),
        txt("a.example.net", "v=spf1 -all"),
    )
    result = evaluate_spf("example.com", dns)
    # Then the lookup nobody made is a failed one, where the evaluation stops (RFC 7208 5.2), not a record unread
    # beside a verdict on "-all"
    assert result is not None and result.failure is not None and not result.all_known
    assert result.failure.term == "include:b.example.net"
    assert [(a.name, a.rdtype, a.rcode, a.error) for a in result.failure.lookups] == [
        ("b.example.net", "TXT", "TIMEOUT", NOT_ASKED)
    ]


def test_a_txt_string_split_in_two_is_joined_without_a_space() -> None:
    dns = make_dns("example.com", dns_answer("example.com", "TXT", '"v=spf1 ip4:192.0.2.1 " "-all"'))
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.record == "v=spf1 ip4:192.0.2.1 -all" and result.all_qualifier == "-"


def test_v_spf10_is_not_an_spf_record() -> None:
    dns = make_dns("example.com", txt("example.com", "v=spf10 -all"), txt("other.example", "v=spf1"))
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.records_found == 0


# -- RFC 7208 4.6.4 processing limits beyond the 10 terms: MX records per mx, void lookups ---------


def mx(name: str, count: int) -> DnsAnswer:
    return dns_answer(name, "MX", *(f"{n} mx{n}.{name}." for n in range(count)))


def test_an_mx_mechanism_whose_name_has_more_than_ten_mx_records_is_a_permerror() -> None:
    # RFC 7208 4.6.4: the evaluation of an mx mechanism must not query more than 10 address
    # records, one per MX record; past that the mx mechanism "MUST produce a permerror" (and 5.4)
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 mx:mail.example.net -all"),
        mx("mail.example.net", 11),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and result.over_limit
    assert any("mail.example.net" in e and "11 MX records" in e for e in result.limit_errors)


def test_a_bare_mx_uses_the_domain_of_the_record_even_inside_an_include() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 include:mailer.example.net -all"),
        txt("mailer.example.net", "v=spf1 mx -all"),
        mx("mailer.example.net", 12),
        mx("example.com", 1),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None and [e for e in result.limit_errors if "mailer.example.net" in e]


def test_ten_mx_records_are_within_the_limit() -> None:
    dns = make_dns("example.com", txt("example.com", "v=spf1 mx -all"), mx("example.com", 10))
    result = evaluate_spf("example.com", dns)
    assert result is not None and not result.over_limit and result.limit_errors == []


def test_more_than_two_void_lookups_is_a_permerror() -> None:
    # RFC 7208 4.6.4: terms whose lookup is NOERROR without answers or NXDOMAIN are "void
    # lookups"; receivers allow two, the third is a permerror
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 a:gone1.example.com mx:gone2.example.com include:mailer.example.net -all"),
        dns_answer("gone1.example.com", "A", rcode="NXDOMAIN"),
        dns_answer("gone1.example.com", "AAAA", rcode="NXDOMAIN"),
        dns_answer("gone2.example.com", "MX"),  # NOERROR, no data
        txt("mailer.example.net", "v=spf1 exists:gone3.example.net -all"),
        dns_answer("gone3.example.net", "A", rcode="NXDOMAIN"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None
    assert result.void_lookups == 3 and result.over_void_limit
    assert result.void_names == ["gone1.example.com", "gone2.example.com", "gone3.example.net"]


def test_a_name_with_only_aaaa_is_a_void_lookup_for_ipv4_senders_alone() -> None:
    # an IPv4 sender's a term asks A (RFC 7208 5.3): six's empty A answer is its third void lookup (4.6.4), a
    # permerror; an IPv6 sender's asks AAAA, finds one, and makes two, which receivers allow (pyspf 2.0.14 agrees)
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 a:gone1.example.com a:gone2.example.com a:six.example.com -all"),
        dns_answer("gone1.example.com", "A", rcode="NXDOMAIN"),
        dns_answer("gone1.example.com", "AAAA", rcode="NXDOMAIN"),
        dns_answer("gone2.example.com", "A"),
        dns_answer("gone2.example.com", "AAAA"),
        dns_answer("six.example.com", "A"),
        dns_answer("six.example.com", "AAAA", "2001:db8::25"),
    )
    result = evaluate_spf("example.com", dns)
    assert result is not None
    assert result.void_names_for == {
        "IPv4": ["gone1.example.com", "gone2.example.com", "six.example.com"],
        "IPv6": ["gone1.example.com", "gone2.example.com"],
    }
    assert result.results == {"IPv4": "permerror", "IPv6": "fail"}


def test_terms_with_macros_or_answers_not_fetched_are_not_counted_as_void() -> None:
    dns = make_dns(
        "example.com",
        txt("example.com", "v=spf1 exists:%{i}.bl.example.com a:unasked.example.com mx:x.example.com -all"),
        dns_answer("x.example.com", "MX", rcode="SERVFAIL"),
    )
    result = evaluate_spf("example.com", dns)
    # the a term's answers were never asked: the evaluation stops there, as at a failed lookup
    assert result is not None and result.void_lookups == 0
    assert result.failure is not None and result.failure.term == "a:unasked.example.com"


# -- RFC 7208 5.1: mechanisms after "all" are never tested -----------------------------------------


def test_mechanisms_after_all_are_neither_counted_nor_followed_nor_void() -> None:
    includes = " ".join(f"include:i{n}.example.net" for n in range(11))
    gone = " ".join(f"a:gone{n}.example.com" for n in range(3))
    answers = [txt("example.com", f"v=spf1 ip4:192.0.2.1 -all {includes} {gone}")]
    answers += [txt(f"i{n}.example.net", "v=spf1 -all") for n in range(11)]
    answers += [dns_answer(f"gone{n}.example.com", t, rcode="NXDOMAIN") for n in range(3) for t in ("A", "AAAA")]
    result = evaluate_spf("example.com", make_dns("example.com", *answers))
    assert result is not None
    assert (result.lookups, result.void_lookups, result.over_limit, result.errors) == (0, 0, False, [])
    assert result.all_qualifier == "-"


def test_a_syntax_error_after_all_is_still_a_permerror() -> None:
    # RFC 7208 4.6: the whole record is parsed before any term is evaluated
    result = evaluate_spf("example.com", make_dns("example.com", txt("example.com", "v=spf1 -all ip4:999.1.1.1")))
    assert result is not None and result.errors


def test_a_record_of_a_million_characters_of_redirects_is_evaluated_in_one_pass() -> None:
    # Each redirect= searched the whole record for its "all" (redirect is ignored beside one, RFC 7208 6.1):
    # 8,000 x=1 and 2,500 redirect= (64 KB, what a TXT record holds) took 0.7 s to grade, this record minutes.
    many, redirects = 125_000, 40_000
    record = "v=spf1 " + "x=1 " * many + "redirect=a.example " * redirects + "-all"

    result = evaluate_spf("example.com", make_dns("example.com", txt("example.com", record)))

    # a permerror before any term is evaluated (RFC 7208 4.6): no "all" tested
    assert result is not None and (result.lookups, result.all_qualifier) == (0, None)
    assert result.errors == ["'redirect' appears more than once"] * (redirects - 1)
