"""Parsing SPF records (RFC 7208), and the names their domain-specs stand for."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.spf import (
    SenderChosenZone,
    expand_domain_spec,
    parse_spf,
    redirect_as_include,
    sender_chosen_zone,
    strict_record,
    without_term,
)


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
        "v=spf1 ip4:192.0.2.0/0 ip4:192.0.2.1/32 ip6:2001:db8::/128 ip6:::ffff:192.0.2.1 a/0//0 -all",
        # RFC 7208 7.1, 12: a domain-spec's labels before the top one may hold any visible character but "%"
        # (the RFC 7208 test suite's a-colon-domain), the prefix lengths are only those at its end
        "v=spf1 a:foo:bar/baz.example.com mx:foo:bar/baz.example.com/24//64 a:-x_y.example.xn--zckzah -all",
        "v=spf1 a:macro%%percent%_%_space%-url-space.example.com exists:%{i}.%{l2r-}.user.%{d2} -all",
        # an unknown modifier's value is a macro-string: any macro letter, c, r and t included, is read
        "v=spf1 moo.cow-far_out=man:dog/cat x=%{c}%{r}%{t} -all exp=explain.%{d}",
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
        ("v=spf1 ip4:192.0.2.0/255.255.255.0 -all", "bad prefix length"),  # RFC 7208 12: no netmask
        ("v=spf1 ip4:192.0.2.0/0.0.0.255 -all", "bad prefix length"),
        ("v=spf1 ip4:192.0.2.0/024 -all", "bad prefix length"),  # no leading zero (RFC 7208 test suite cidr4-032)
        ("v=spf1 ip6:2001:db8::/0128 -all", "bad prefix length"),
        ("v=spf1 ip4:192.0.2.0/33 -all", "bad prefix length"),
        ("v=spf1 ip6:2001:db8::1%eth0 -all", "not an ip6 network"),  # RFC 4291 2.2: no zone
        ("v=spf1 a/024 -all", "bad prefix length"),
        ("v=spf1 mx:example.com//064 -all", "bad prefix length"),
        ("v=spf1 a/２４ -all", "bad prefix length"),  # ASCII digits only
        ("v=spf1 a/24/64 -all", "bad prefix length"),
        ("v=spf1 -all foo=%abc", "malformed macro"),  # RFC 7208 test suite: unknown-modifier-syntax
        # RFC 7208 7.2: c, r and t only in the explanation text, never in a domain-spec, exp='s own included
        ("v=spf1 -all exp=%{r}.example.com", "allowed only in explanation text"),  # exp-only-macro-char
        ("v=spf1 a:%{c}.example.com -all", "allowed only in explanation text"),
        ("v=spf1 redirect=%{t}.example.com", "allowed only in explanation text"),
        ("v=spf1 a:foo.1 -all", "is not a domain name"),  # RFC 7208 7.1: the top label is not all digits
        ("v=spf1 a:foo.example.-com -all", "is not a domain name"),
        ("v=spf1 exists:%{i}.%{d}x -all", "is not a domain name"),  # domain-end: ".toplabel" or a macro
        ("v=spf1 a:mail.example.com\u00a1 -all", "not visible ASCII"),
        ("v=spf1 foo:example.com -all", "unknown mechanism 'foo'"),
        ("v=spf1 redirect=a.example.com redirect=b.example.com", "'redirect' appears more than once"),
        ("v=spf1 include:exa mple -all", "unknown mechanism 'mple'"),
        ("v=spf1 include:%{z}.example.com -all", "malformed macro"),
        ("v=spf1 include:example..com -all", "is not a domain name"),
        ("v=spf1 a: -all", "needs a domain after the colon"),  # RFC 7208 12: a domain-spec follows ":"
        ("v=spf1 a:/24 -all", "needs a domain after the colon"),
        ("v=spf1 mx: -all", "needs a domain after the colon"),
        ("v=spf1 ptr: -all", "needs a domain after the colon"),
    ],
)
def test_invalid_records_are_permerrors_with_a_reason(record, problem) -> None:
    errors = parse_spf(record).errors
    assert any(problem in e for e in errors), errors


def test_strict_record_replaces_the_all_term_and_keeps_modifiers() -> None:
    assert strict_record("v=spf1 mx ~all") == "v=spf1 mx -all"
    assert strict_record("v=spf1 mx") == "v=spf1 mx -all"
    assert strict_record("v=spf1 ?all exp=explain.example.com") == "v=spf1 -all exp=explain.example.com"
    assert strict_record("v=spf1 redirect=_spf.example.com") == "v=spf1 redirect=_spf.example.com"


def test_a_redirect_made_an_include_keeps_the_mechanisms_and_the_other_modifiers() -> None:
    assert redirect_as_include("v=spf1 redirect=_spf.mailer.example") == "v=spf1 include:_spf.mailer.example"
    made = redirect_as_include("v=spf1 ip4:192.0.2.1 Redirect=_spf.mailer.example exp=why.example.com")
    assert made == "v=spf1 ip4:192.0.2.1 include:_spf.mailer.example exp=why.example.com"
    assert strict_record(made) == "v=spf1 ip4:192.0.2.1 include:_spf.mailer.example -all exp=why.example.com"
    assert redirect_as_include("v=spf1 mx ~all") == "v=spf1 mx ~all"


def test_strict_record_drops_the_mechanisms_after_all_instead_of_moving_them_before_it() -> None:
    # RFC 7208 5.1: they are never tested; moving them in front of -all would authorise them
    assert strict_record("v=spf1 mx ~all ip4:192.0.2.1") == "v=spf1 mx -all"
    # with an "all", redirect= is ignored (RFC 7208 6.1), so the "all" can be made strict
    assert strict_record("v=spf1 mx ?all redirect=_spf.example.com") == "v=spf1 mx -all redirect=_spf.example.com"


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        # RFC 7208 7.3: d is the domain of the record, o the domain of the sender's address: the scanned domain
        ("%{d}.d.spf.example.com.", "mail.example.org.d.spf.example.com"),  # the suite's trailing-dot-domain
        ("_spfh.%{d2}", "_spfh.example.org"),  # the rightmost 2 parts
        ("%{dr}.rev.example", "org.example.mail.rev.example"),
        ("%{d2r}.x.example", "example.mail.x.example"),  # reversed, then the rightmost 2
        ("%{o}.senders.example", "example.org.senders.example"),
        ("%{o1-}.x.example", "example.org.x.example"),  # split on "-" only: one part
        ("%{D}.x.example", "mail.example.org.x.example"),  # URL-escaped: a name has nothing to escape
        ("macro%%percent%_%_space%-url-space.example.com", "macro%percent  space%20url-space.example.com"),
        ("In.Example.NET", "in.example.net"),  # no macro: as written
        # the sender's own values are not known ahead (s, l, i, p, v, h), nor is a part count of 0 (7.3: nonzero)
        ("%{i}.x.example", None),
        ("%{l}.%{d}", None),
        ("%{h}", None),
        ("%{d0}.x.example", None),
        ("%{d}..x.example", None),  # an empty label: no name to query
    ],
)
def test_a_domain_spec_is_expanded_with_the_macros_that_are_the_same_for_every_sender(
    spec: str, name: str | None
) -> None:
    assert expand_domain_spec(spec, "mail.example.org", "example.org") == name


def test_an_expanded_name_past_253_characters_loses_labels_on_its_left() -> None:
    # RFC 7208 7.3: "the left side is truncated to fit, by removing successive domain labels"
    long_domain = ".".join(["label" + "x" * 50] * 4) + ".example"  # 231 characters
    name = expand_domain_spec("%{d}.%{d}", long_domain, "example.org")
    assert name == f"example.{long_domain}"  # 463 characters: the first four labels dropped whole, none cut


def test_a_domain_spec_of_thousands_of_macros_is_cut_to_its_last_labels_in_one_pass() -> None:
    # A hostile include tree names a record by 127 one-letter labels, whose %{d} is then 253 characters: 40,000
    # of them (200 KB) expand to 10 MB and 5 million labels. Dropped one at a time from the left (7.3), each drop
    # copied the rest: 0.15 s for 1,000 macros, growing with the square, minutes here (this test would hang).
    domain = "a." * 121 + "example.org"
    spec = "%{d}." * 40_000 + "example.net"
    # 253 characters: the last labels of the last %{d}, whole, before "example.net"
    assert expand_domain_spec(spec, domain, "example.org") == "a." * 115 + "example.org.example.net"


def test_a_record_of_a_million_characters_of_modifiers_is_parsed_in_one_pass() -> None:
    # Each redirect= or exp= searched the terms before it for another: 8,000 x=1 then 4,000 exp= (64 KB, what
    # a TXT record holds) took 0.8 s on the event loop, this record minutes.
    many, repeated = 125_000, 62_500
    record = parse_spf("v=spf1 " + "x=1 " * many + "exp=a.example " * repeated + "-all")

    assert len(record.terms) == many + repeated + 1 and record.all_term is not None
    assert record.errors == ("'exp' appears more than once",) * (repeated - 1)


@pytest.mark.parametrize(
    ("spec", "chosen"),
    [
        # RFC 7208 7.3, 11.5: the HELO name (h), the local part (l; s is l@o), the address's validated name (p) are
        # the sender's to write: as the whole name, after any transformer, the sender picks the zone
        ("%{h}", SenderChosenZone("h", "")),
        ("%{H}", SenderChosenZone("h", "")),  # URL-escaped: a name has nothing to escape
        ("%{h2r}", SenderChosenZone("h", "")),  # "com.evil.x" reversed, the rightmost 2: evil.com
        ("%{p}", SenderChosenZone("p", "")),
        ("%{l1r-}", SenderChosenZone("l", "")),
        ("%{sr}", SenderChosenZone("s", "")),  # reversed: the local part's first parts are rightmost
        # the sender's label directly under a public suffix: a domain it can register (or get from a DNS provider)
        ("%{l}.com", SenderChosenZone("l", "com")),
        ("%{h}x.com", SenderChosenZone("h", "com")),  # "evilx.com": the sender writes the label's start
        ("%{l}.duckdns.org", SenderChosenZone("l", "duckdns.org")),
        ("%{H}.bar", SenderChosenZone("h", "bar")),  # the RFC 7208 test suite's t12
        ("%{ir}.%{v}.arpa", SenderChosenZone("i", "in-addr.arpa")),  # the sender's reverse zone
        ("%{h}.%{s1}", SenderChosenZone("h", "org")),  # s1: the last part of l@o, o's top-level label
        # a registrable domain of fixed text on the right: the owner's zone (or one it chose) answers
        ("%{h}._helo.%{d}", None),
        ("%{i}._spf.%{d}", None),
        ("%{ir}.%{v}._spf.%{d}", None),
        ("%{l}.example.com", None),
        ("%{i}.%{l2r-}.user.%{d2}", None),
        ("%{p}.should.example.com", None),
        # no zone the sender can hold: an address's last label is no top-level name; "@" (of %{s}: l@o) and "_"
        # are in no delegated label; a top-level name the Public Suffix List does not know has no public zone
        ("%{i}", None),
        ("%{s}", None),
        ("%{S}", None),
        ("%{s2}", None),
        ("%{s1}", None),  # the rightmost part of l@o: o's "org"
        ("%{h}_x.com", None),
        ("%{h}.internal", None),
        # no name at all (7.3: a part count of 0; an empty label), or only the same values for every sender
        ("%{h0}", None),
        ("%{h}..com", None),
        ("%{d}.%{o}", None),
        ("%{v}.arpa", None),
    ],
)
def test_a_name_whose_zone_the_sender_picks_is_told_from_one_in_the_owners_zone(
    spec: str, chosen: SenderChosenZone | None
) -> None:
    assert sender_chosen_zone(spec, "mail.example.org", "example.org", "IPv4") == chosen


def test_v_names_the_reverse_zone_of_the_senders_family() -> None:
    ipv6 = sender_chosen_zone("%{ir}.%{v}.arpa", "example.org", "example.org", "IPv6")
    assert ipv6 == SenderChosenZone("i", "ip6.arpa")


def test_without_term_drops_each_word_of_that_term_only() -> None:
    record = "v=spf1 ?a:%{h} a:%{h}.example.net ?A:%{h} ip4:192.0.2.1 -all"
    (term,) = parse_spf("v=spf1 ?a:%{h}").terms
    assert without_term(record, term) == "v=spf1 a:%{h}.example.net ip4:192.0.2.1 -all"
