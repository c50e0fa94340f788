"""The fix a soft-fail or neutral SPF verdict suggests, when the two address families are decided by different terms,
and the limits receivers count that the walk's families left out: each MX record's host, and a ptr term for a
sender without reverse DNS.

Each sender's evaluation ends at the first term that matches it (RFC 7208 4.6.2): `~ip6:::/0` ends IPv6 senders'
before the record's `~all` ends IPv4 senders', so a fix must change both terms. Results quoted are pyspf 2.0.14's
(the library behind policyd-spf) on the same zones."""

from __future__ import annotations

from tests.scanner.checks.test_dns_spf_family_limits import DOMAIN, Zone, checked, dual_stack, ipv4_only, results


def fixed(zone: Zone, outcome: str) -> tuple[str, Zone]:
    """The record the finding's fix suggests, and `zone` with it published where the fix says."""
    found, _ = checked(zone)
    fix = found[outcome].fix_vars
    return fix["spf_strict"], {**zone, (fix["domain"], "TXT"): [fix["spf_strict"]]}


MX_DUAL: Zone = {(DOMAIN, "MX"): ["10 mail.example.com."], **dual_stack("mail.example.com")}


def test_a_softfail_fix_refuses_ipv6_senders_that_a_softfail_term_decides_for_beside_the_all() -> None:
    # Given ~ip6:::/0 deciding for IPv6 senders and ~all for IPv4 ones: both soft-fail, by different terms
    zone = {(DOMAIN, "TXT"): ["v=spf1 mx ~ip6:::/0 ~all"], **MX_DUAL}
    assert results(zone) == {"IPv4": "softfail", "IPv6": "softfail"}

    # Then the note and details.spf.all name each family's term, and the fix, published, refuses both
    found, spf = checked(zone)
    note = found["dns.spf_softfail"].note or ""
    assert "~all" in note and "~ip6:::/0" in note, note
    assert spf["all"] == "~all for IPv4 senders, ~ip6:::/0 for IPv6 senders", spf["all"]
    record, published = fixed(zone, "dns.spf_softfail")
    assert record == "v=spf1 mx -all"
    assert results(published) == {"IPv4": "fail", "IPv6": "fail"}


def test_a_neutral_fix_refuses_ipv6_senders_that_a_neutral_term_decides_for_beside_the_all() -> None:
    zone = {(DOMAIN, "TXT"): ["v=spf1 mx ?ip6:::/0 ?all"], **MX_DUAL}
    assert results(zone) == {"IPv4": "neutral", "IPv6": "neutral"}
    record, published = fixed(zone, "dns.spf_neutral")
    assert record == "v=spf1 mx -all"
    assert results(published) == {"IPv4": "fail", "IPv6": "fail"}


def test_a_fix_drops_each_term_that_decides_once_the_one_before_it_is_gone() -> None:
    # Given ~exists on a name with an A record: every sender soft-fails there (RFC 7208 5.7); without it, IPv4
    # senders would soft-fail at ~ip4:0.0.0.0/0, which the fix must drop too
    zone = {(DOMAIN, "TXT"): ["v=spf1 ~exists:example.com ~ip4:0.0.0.0/0 -all"], **ipv4_only(DOMAIN)}
    assert results(zone) == {"IPv4": "softfail", "IPv6": "softfail"}
    record, published = fixed(zone, "dns.spf_softfail")
    assert record == "v=spf1 -all"
    assert results(published) == {"IPv4": "fail", "IPv6": "fail"}


def test_a_fix_does_not_lead_senders_into_an_error_the_term_it_drops_kept_them_from() -> None:
    # Given ?ip6:::/0 before an include of a broken record: IPv6 senders are neutral, IPv4 ones permerror. Dropping
    # ?ip6:::/0 would make IPv6 senders permerror too (the include's syntax error, RFC 7208 4.6)
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 ?ip6:::/0 include:bad.example.com -all"],
        ("bad.example.com", "TXT"): ["v=spf1 ip4:192.0.2.0/33 -all"],
    }
    found, _ = checked(zone)
    neutral = found["dns.spf_neutral"]
    record, published = fixed(zone, "dns.spf_neutral")
    # Then the fix refuses them there, and the note says why it keeps the term
    assert record == "v=spf1 -ip6:::/0 include:bad.example.com -all"
    assert results(published) == {"IPv4": "permerror", "IPv6": "fail"}
    assert "-ip6:::/0" in (neutral.note or "") and "error" in (neutral.note or ""), neutral.note


def test_a_fix_does_not_lead_senders_into_void_lookups_the_term_it_drops_kept_them_from() -> None:
    # Given ~ip6:::/0 before three a terms on IPv4-only names: IPv6 senders never ask their AAAA; without the term,
    # the three empty AAAA answers would be a permerror for them (4.6.4). pyspf on the dropped record: IPv6 permerror
    names = ("m1.example.com", "m2.example.com", "m3.example.com")
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 " + " ".join(f"a:{n}" for n in names) + " -all"],
        **{k: v for i, n in enumerate(names) for k, v in ipv4_only(n, i + 1).items()},
    }
    assert results(zone) == {"IPv4": "fail", "IPv6": "softfail"}
    record, published = fixed(zone, "dns.spf_softfail")
    assert results(published) == {"IPv4": "fail", "IPv6": "fail"}, record


# -- limits -------------------------------------------------------------------------------------------------------


def test_one_mx_host_at_two_preferences_is_two_void_lookups() -> None:
    # Given mail.example.com at preferences 10 and 20, with no AAAA: an IPv6 sender's mx term asks its AAAA for each
    # MX record (RFC 7208 5.4), two void lookups, and a:gone a third. pyspf: {"IPv4": "fail", "IPv6": "permerror"}
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 mx a:gone.example.com -all"],
        (DOMAIN, "MX"): ["10 mail.example.com.", "20 mail.example.com."],
        **ipv4_only("mail.example.com"),
    }
    assert results(zone) == {"IPv4": "fail", "IPv6": "permerror"}
    found, spf = checked(zone)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}
    assert spf["void_lookups_for"] == {"IPv4": 1, "IPv6": 3}


def test_a_ptr_term_is_said_to_be_a_void_lookup_for_senders_without_reverse_dns() -> None:
    # Given ptr and two a terms on names that do not exist: for a sender whose address has no PTR record, the ptr
    # term's query finds nothing, a void lookup (RFC 7208 4.6.4), the third with the two others. pyspf, for such a
    # sender: permerror
    zone = {(DOMAIN, "TXT"): ["v=spf1 ptr a:gone1.example.com a:gone2.example.com -all"]}
    found, _ = checked(zone)
    note = found["dns.spf_ptr"].note or ""
    assert "void lookup" in note and "reverse DNS" in note, note
    assert "permerror" in note, note
    # and one void lookup besides it is within the limit for them: said, but no permerror
    zone = {(DOMAIN, "TXT"): ["v=spf1 ptr a:gone1.example.com -all"]}
    note = checked(zone)[0]["dns.spf_ptr"].note or ""
    assert "void lookup" in note and "permerror" not in note, note
