"""The lookups the SPF evaluation reads, in its order (records/spf_evaluation.py): what the DNS fetch asks, those
needed for sure and those it may ask ahead, and none past where receivers stop (RFC 7208 4.6, 4.6.2, 4.6.4)."""

from __future__ import annotations

from tests.factories import dns_answer
from websec_app.scanner.records.spf_evaluation import Lookup, spf_lookups_to_ask
from websec_app.scanner.snapshot import DnsAnswer


def answers(*found: DnsAnswer) -> Lookup:
    """The answers in `found`; None (not asked yet) for any other lookup."""
    table = {(a.name, a.rdtype): a for a in found}
    return lambda name, rdtype: table.get((name.rstrip(".").lower(), rdtype))


def txt(name: str, value: str) -> DnsAnswer:
    return dns_answer(name, "TXT", f'"{value}"')


def test_includes_and_the_redirect_are_asked_but_those_named_by_the_sender() -> None:
    record = (
        "v=spf1 include:A.example.net include:%{d}.macro.example include:%{l}.user.example exists:x.example"
        " redirect=r.example"
    )
    needed, ahead = spf_lookups_to_ask("example.com", answers(txt("example.com", record)))
    # %{d} is the record's own domain, the same for every sender (RFC 7208 7.3); %{l}, the sender's local part, is
    # not. The first include is needed for sure; what follows only if its record changes nothing.
    assert needed == [("a.example.net", "TXT")]
    assert ahead == [("example.com.macro.example", "TXT"), ("x.example", "A"), ("r.example", "TXT")]
    # "all" matches every sender first: redirect= is never evaluated (6.1)
    assert spf_lookups_to_ask("example.com", answers(txt("example.com", "v=spf1 redirect=r.example -all"))) == ([], [])


def test_an_a_or_mx_term_asks_its_domain_spec_up_to_the_trailing_prefix_lengths() -> None:
    record = "v=spf1 a:foo:bar/baz.example.com/24//64 mx:x/y.example.net -all"
    needed, ahead = spf_lookups_to_ask("example.com", answers(txt("example.com", record)))
    assert needed == [("foo:bar/baz.example.com", "A"), ("foo:bar/baz.example.com", "AAAA")]
    assert ahead == [("x/y.example.net", "MX")]


def test_what_lies_after_all_is_not_asked() -> None:
    record = "v=spf1 include:a.example.net -all include:b.example.net a:c.example.net mx"
    assert spf_lookups_to_ask("example.com", answers(txt("example.com", record))) == ([("a.example.net", "TXT")], [])


def test_the_lookups_are_named_as_the_evaluation_reads_them() -> None:
    record = "v=spf1 a mx:mail.example.net/24 a:web.example.net exists:%{i}.x.example ptr include:i.example -all"
    needed, ahead = spf_lookups_to_ask("Example.COM", answers(txt("example.com", record)))
    assert needed == [("example.com", "A"), ("example.com", "AAAA")]
    assert ahead == [
        ("mail.example.net", "MX"),
        ("web.example.net", "A"),
        ("web.example.net", "AAAA"),
        ("i.example", "TXT"),
    ]


def test_the_targets_of_terms_with_domain_macros_are_asked() -> None:
    # %{d} is the domain of the record the term is in, %{o} the sender's: the scanned domain (RFC 7208 7.3)
    included = "v=spf1 a:%{d} mx:mx.%{o} exists:%{d2}.check.example include:_spf.%{d2} -all"
    lookup = answers(txt("example.org", "v=spf1 include:inc.example.net -all"), txt("inc.example.net", included))
    needed, ahead = spf_lookups_to_ask("example.org", lookup)
    assert needed == [("inc.example.net", "A"), ("inc.example.net", "AAAA")]
    assert ahead == [("mx.example.org", "MX"), ("example.net.check.example", "A"), ("_spf.example.net", "TXT")]


def test_an_mx_terms_hosts_are_asked_ahead_and_needed_once_it_is_reached_for_sure() -> None:
    mx = dns_answer("relay.example.net", "MX", "20 b.example.net.", "10 a.example.net.")
    hosts = [(h, t) for h in ("a.example.net", "b.example.net") for t in ("A", "AAAA")]
    # ahead of an include not read yet, the hosts are asked ahead, by preference; once it is read, they are needed
    record = txt("example.com", "v=spf1 include:i.example.net mx:relay.example.net -all")
    assert spf_lookups_to_ask("example.com", answers(record, mx)) == ([("i.example.net", "TXT")], hosts)
    needed, ahead = spf_lookups_to_ask("example.com", answers(record, mx, txt("i.example.net", "v=spf1 -all")))
    assert needed == [(h, t) for h in ("a.example.net", "b.example.net") for t in ("A", "AAAA")] and ahead == []


def test_nothing_is_asked_past_where_receivers_stop() -> None:
    # every sender passes at exists (RFC 7208 4.6.2), and the 11th lookup is a permerror before its query (4.6.4)
    ok = dns_answer("ok.example.net", "A", "127.0.0.2")
    passing = txt("example.com", "v=spf1 exists:ok.example.net a:later.example.net -all")
    assert spf_lookups_to_ask("example.com", answers(passing, ok)) == ([], [])
    eleven = txt("example.com", "v=spf1 " + "a:x.example.net " * 10 + "a:eleventh.example.net -all")
    found = [dns_answer("x.example.net", "A", "192.0.2.1"), dns_answer("x.example.net", "AAAA")]
    assert spf_lookups_to_ask("example.com", answers(eleven, *found)) == ([], [])


def test_after_every_ipv4_sender_passes_only_what_ipv6_senders_need_is_asked() -> None:
    # ip4:0.0.0.0/0 decides for the IPv4 senders: an a term after it asks AAAA alone, as receivers do for IPv6 (5.3)
    record = txt("example.com", "v=spf1 ip4:0.0.0.0/0 a:web.example.net mx:relay.example.net -all")
    mx = dns_answer("relay.example.net", "MX", "10 out.example.net.")
    assert spf_lookups_to_ask("example.com", answers(record)) == (
        [("web.example.net", "AAAA")],
        [("relay.example.net", "MX")],
    )
    web = dns_answer("web.example.net", "AAAA", "2001:db8::1")
    assert spf_lookups_to_ask("example.com", answers(record, mx, web)) == ([("out.example.net", "AAAA")], [])


def test_nothing_is_asked_past_a_term_whose_zone_the_sender_picks() -> None:
    # a:%{h}: every sender can name a HELO domain of its own resolving to its address: receivers stop there for it
    # (RFC 7208 4.6.2, 7.3), so nothing after it is read; a "-" one, every sender walks past
    record = txt("example.com", "v=spf1 a:%{h} include:later.example.net -all")
    assert spf_lookups_to_ask("example.com", answers(record)) == ([], [])
    walked_past = txt("example.com", "v=spf1 -a:%{h} include:later.example.net -all")
    assert spf_lookups_to_ask("example.com", answers(walked_past)) == ([("later.example.net", "TXT")], [])
