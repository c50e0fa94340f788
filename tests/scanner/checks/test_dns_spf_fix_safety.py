"""The record the soft-fail/neutral fix suggests never opens or breaks mail: no unlisted sender passes, no sender
gets a permerror or temperror it did not (with or without reverse DNS), and the families it is for end in fail; the
terms the record itself lists after a dropped term take effect, named in the note, only where the scan's answers
show what they match. Where the answers cannot prove that of a term's removal, the fix gives the term "-" instead:
the same lookups and matches, so the same senders pass, and the others are refused there.

Results quoted are pyspf 2.0.14's (the library behind policyd-spf) on the same zones."""

from __future__ import annotations

import asyncio

from tests.factories import make_dns, make_snapshot
from tests.scanner.checks.test_dns_spf_family_limits import DOMAIN, SERVFAIL, Zone, ipv4_only, zone_lookup
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.findings import Finding
from websec_app.scanner.grading import render_template
from websec_app.scanner.records.spf_evaluation import evaluate_spf_answers
from websec_app.scanner.rules import load_rulebook
from websec_app.scanner.snapshot import DnsAnswer


def results(zone: Zone, no_reverse_dns: bool = False) -> dict[str, str | None]:
    return evaluate_spf_answers(DOMAIN, zone_lookup(zone), no_reverse_dns=no_reverse_dns).results


def findings(answers: list[DnsAnswer]) -> dict[str, Finding]:
    snapshot = make_snapshot(f"https://{DOMAIN}/", dns=make_dns(DOMAIN, *answers))
    return {f.outcome: f for f in check_dns(snapshot).findings if f.outcome.startswith("dns.spf")}


def walked(zone: Zone, *also: tuple[str, str]) -> dict[str, Finding]:
    """The SPF findings of a scan that asked what the evaluation reaches, and the lookups `also`."""
    lookup = zone_lookup(zone)
    asked: dict[tuple[str, str], DnsAnswer] = {}

    def recording(name: str, rdtype: str) -> DnsAnswer:
        answer = lookup(name, rdtype)
        asked[(answer.name, rdtype)] = answer
        return answer

    evaluate_spf_answers(DOMAIN, recording)
    return findings([*asked.values(), *(lookup(name, rdtype) for name, rdtype in also)])


class ZoneResolver:
    def __init__(self, zone: Zone) -> None:
        self.lookup = zone_lookup(zone)

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        await asyncio.sleep(0)
        return self.lookup(name, rdtype)


def fetched(zone: Zone) -> dict[str, Finding]:
    """The SPF findings of a scan whose DNS fetch asked `zone` (it asks some lookups ahead of the walk)."""
    snapshot = asyncio.run(fetch_dns(DOMAIN, ZoneResolver(zone), follow_up_seconds=60, budget_seconds=60))
    return findings(list(snapshot.answers))


def record_of(finding: Finding) -> str:
    """The record a finding's fix suggests, its character-strings joined as receivers join them (RFC 7208 3.3)."""
    return finding.fix_vars["spf_strict"].replace('" "', "")


def published(zone: Zone, finding: Finding) -> Zone:
    return {**zone, (finding.fix_vars["domain"], "TXT"): [record_of(finding)]}


# -- 1. a lookup the scan did not make could match: the term is kept as "-" ---------------------------------------


def test_a_fix_never_drops_a_term_whose_senders_reach_lookups_the_scan_did_not_make() -> None:
    # Given ~include:_a passing every sender (so all soft-fail there), then include:_x whose exists: names a host
    # with an A record: the scan's fetch reads _x's record ahead, never the host's A (no sender reaches it)
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~include:_a.example.com include:_x.example.com -all"],
        ("_a.example.com", "TXT"): ["v=spf1 ip4:0.0.0.0/0 ip6:::/0"],
        ("_x.example.com", "TXT"): ["v=spf1 exists:probe.example.com"],
        ("probe.example.com", "A"): ["192.0.2.1"],
    }
    assert results(zone) == {"IPv4": "softfail", "IPv6": "softfail"}
    softfail = fetched(zone)["dns.spf_softfail"]
    # Then dropping ~include:_a would let every sender pass at the exists: (pyspf on that record: pass for all);
    # the fix refuses them at the include instead
    assert results({**zone, (DOMAIN, "TXT"): ["v=spf1 include:_x.example.com -all"]}) == {
        "IPv4": "pass",
        "IPv6": "pass",
    }
    assert record_of(softfail) == "v=spf1 -include:_a.example.com include:_x.example.com -all"
    assert results(published(zone, softfail)) == {"IPv4": "fail", "IPv6": "fail"}
    assert "the scan did not make" in (softfail.note or ""), softfail.note


def test_one_unasked_name_three_terms_look_up_is_three_void_lookups_not_one() -> None:
    # Given ~ip6:::/0 before three a terms on one IPv4-only name: IPv6 senders never ask its AAAA. Without the term
    # they would ask it three times, three void lookups (RFC 7208 4.6.4): pyspf gives them permerror
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 a:v4.example.com a:v4.example.com a:v4.example.com -all"],
        **ipv4_only("v4.example.com"),
    }
    assert results({**zone, (DOMAIN, "TXT"): ["v=spf1 a:v4.example.com a:v4.example.com a:v4.example.com -all"]}) == {
        "IPv4": "fail",
        "IPv6": "permerror",
    }
    softfail = walked(zone)["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 -ip6:::/0 a:v4.example.com a:v4.example.com a:v4.example.com -all"
    assert results(published(zone, softfail)) == {"IPv4": "fail", "IPv6": "fail"}


# -- 3. a ptr term: a void lookup for senders without reverse DNS -------------------------------------------------


def test_a_fix_does_not_lead_senders_without_reverse_dns_into_a_permerror() -> None:
    # Given ~ip6:::/0 before -ptr and two -a terms on names that do not exist. Without the term, an IPv6 sender
    # with reverse DNS makes two void lookups (fail), one without makes three (the PTR query finds nothing too):
    # permerror (pyspf, policyd-spf)
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 -ptr -a:gone1.example.com -a:gone2.example.com -all"]}
    dropped = {**zone, (DOMAIN, "TXT"): ["v=spf1 -ptr -a:gone1.example.com -a:gone2.example.com -all"]}
    assert results(dropped) == {"IPv4": "fail", "IPv6": "fail"}
    assert results(dropped, no_reverse_dns=True)["IPv6"] == "permerror"
    # (the scan knows every answer the dropped record needs: the fix can tell)
    softfail = walked(zone, ("gone1.example.com", "AAAA"), ("gone2.example.com", "AAAA"))["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 -ip6:::/0 -ptr -a:gone1.example.com -a:gone2.example.com -all"
    fixed = published(zone, softfail)
    assert results(fixed) == {"IPv4": "fail", "IPv6": "fail"}
    assert results(fixed, no_reverse_dns=True)["IPv6"] == "fail"
    # kept for the ptr term itself: any ptr term lets a sender pick an error through its own reverse zone
    assert "a ptr term" in (softfail.note or ""), softfail.note


# -- 4. a fix that runs out of evaluations still changes the result -----------------------------------------------


def test_a_fix_that_runs_out_of_evaluations_refuses_at_every_remaining_deciding_term() -> None:
    # Given thirteen ?ip4 terms of prefix length 0, each matching every IPv4 sender: more than the fix evaluates
    terms = " ".join(f"?ip4:{n}.0.0.0/0" for n in range(1, 14))
    zone: Zone = {(DOMAIN, "TXT"): [f"v=spf1 ip4:192.0.2.0/24 {terms} -all"]}
    assert results(zone) == {"IPv4": "neutral", "IPv6": "fail"}
    neutral = walked(zone)["dns.spf_neutral"]
    # Then the fix, published, refuses IPv4 senders all the same
    assert results(published(zone, neutral)) == {"IPv4": "fail", "IPv6": "fail"}, record_of(neutral)
    assert record_of(neutral).startswith("v=spf1 ip4:192.0.2.0/24 "), record_of(neutral)


# -- 5. no temperror behind the term; terms behind it that would take effect are named -----------------------------


def test_a_fix_does_not_lead_senders_into_a_lookup_that_fails() -> None:
    # Given ~ip6:::/0 before a term whose AAAA lookup fails (SERVFAIL): without the term, IPv6 senders would stop
    # there with temperror (RFC 7208 5), and mail from them would be deferred
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 -a:mail.example.com -all"],
        **ipv4_only("mail.example.com"),
        ("mail.example.com", "AAAA"): SERVFAIL,
    }
    assert results({**zone, (DOMAIN, "TXT"): ["v=spf1 -a:mail.example.com -all"]})["IPv6"] == "temperror"
    softfail = walked(zone, ("mail.example.com", "AAAA"))["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 -ip6:::/0 -a:mail.example.com -all"
    assert results(published(zone, softfail)) == {"IPv4": "fail", "IPv6": "fail"}
    assert "temperror" in (softfail.note or ""), softfail.note


def test_a_fix_lets_the_network_the_record_lists_behind_the_term_pass_and_names_it() -> None:
    # Given ~ip6:::/0 before ip6:2001:db8:1::/48: every IPv6 sender soft-fails at the first term, the listed network
    # too. The owner listed the network: the fix drops the term, so mail from it passes and every other IPv6 sender
    # is refused ("-ip6:::/0" would refuse the owner's own network too), and the note names it and the alternative
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 ip6:2001:db8:1::/48 -all"]}
    softfail = walked(zone)["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 ip6:2001:db8:1::/48 -all"
    assert results(published(zone, softfail)) == {"IPv4": "fail", "IPv6": "fail"}
    note = softfail.note or ""
    assert (
        "the fix drops ~ip6:::/0, so mail from the senders listed by 'ip6:2001:db8:1::/48' passes: check that they "
        "are yours, or write -ip6:::/0 instead"
    ) in note, note


# -- terms whose reach the scan's answers do not show: the fix does not drop the term before them ---------------------


def test_a_fix_does_not_lead_senders_into_terms_built_from_their_own_values() -> None:
    # Given ~ip6:::/0 before three exists: terms built from the sender's address: for an unlisted IPv6 sender each
    # finds nothing, three void lookups (pyspf: permerror), which the scan, having no sender, cannot look up
    zone: Zone = {
        (DOMAIN, "TXT"): [
            "v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 exists:%{i}.a.%{d} exists:%{i}.b.%{d} exists:%{i}.c.%{d} -all"
        ]
    }
    assert record_of(walked(zone)["dns.spf_softfail"]).startswith("v=spf1 -ip4:0.0.0.0/0 -ip6:::/0 ")
    # and an include built from the sender's local part (an include of no record for most: permerror, RFC 7208 5.2)
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 include:%{l}._spf.%{d} -all"],
        ("bob._spf.example.com", "TXT"): ["v=spf1 ip6:2001:db8:1::/48 -all"],
    }
    assert "-ip6:::/0" in record_of(walked(zone)["dns.spf_softfail"])


def test_a_fix_does_not_let_a_ptr_term_behind_the_term_take_effect() -> None:
    # ptr:duckdns.org: anyone who sets their address's reverse DNS to a name there, and that name's address, passes
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 ptr:duckdns.org -all"]}
    assert "-ip6:::/0" in record_of(walked(zone)["dns.spf_softfail"])


def test_the_note_quotes_a_bare_term_it_lets_take_effect() -> None:
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 a -all"],
        (DOMAIN, "A"): ["192.0.2.1"],
        (DOMAIN, "AAAA"): ["2001:db8::1"],
    }
    softfail = fetched(zone)["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 a -all"
    assert "so mail from the senders listed by 'a' passes" in (softfail.note or "")


def test_the_note_names_only_terms_of_the_family_the_dropped_term_decides_for_in_the_records_order() -> None:
    # ~exists:h decides for IPv6 senders only (IPv4 ones stop at -ip4:0.0.0.0/0): the ip4 term behind it is not named
    zone: Zone = {
        (DOMAIN, "TXT"): [
            "v=spf1 -ip4:0.0.0.0/0 ~exists:h.example.com ip4:192.0.2.0/24 ip6:2001:db8:1::/48 ip6:2001:db8:1::/48 -all"
        ],
        ("h.example.com", "A"): ["192.0.2.7"],
        ("h.example.com", "AAAA"): ["2001:db8::7"],
    }
    note = walked(zone)["dns.spf_softfail"].note or ""
    assert "so mail from the senders listed by 'ip6:2001:db8:1::/48' passes" in note, note


def test_a_term_behind_that_cannot_match_the_senders_lets_the_fix_drop_it() -> None:
    # ip4: terms match no IPv6 sender, an a term on a name without an AAAA record neither (RFC 7208 5.3)
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 ip4:192.0.2.0/24 a:v4.example.com -all"],
        **ipv4_only("v4.example.com"),
    }
    softfail = walked(zone, ("v4.example.com", "AAAA"))["dns.spf_softfail"]
    assert record_of(softfail) == "v=spf1 ip4:192.0.2.0/24 a:v4.example.com -all"
    assert results(published(zone, softfail)) == {"IPv4": "fail", "IPv6": "fail"}


# -- 6. a fix longer than one character-string --------------------------------------------------------------------


def test_a_fix_longer_than_255_characters_is_written_as_several_character_strings() -> None:
    # A TXT record's character-strings hold 255 octets at most (RFC 1035 3.3); receivers join an SPF record's
    # strings without a space (RFC 7208 3.3)
    networks = " ".join(f"ip4:198.51.{n}.0/24" for n in range(20))
    zone: Zone = {(DOMAIN, "TXT"): [f"v=spf1 {networks} ~all"]}
    softfail = walked(zone)["dns.spf_softfail"]
    record = f"v=spf1 {networks} -all"
    assert len(record) > 255
    rule = load_rulebook().rule("dns.spf_softfail")
    fix = render_template(rule.fix, dict(softfail.fix_vars)) or ""
    assert fix.startswith(f'{DOMAIN} TXT "'), fix
    quoted = fix.removeprefix(f"{DOMAIN} TXT ")
    parts = quoted[1:-1].split('" "')
    assert len(parts) == 2 and all(len(part) <= 255 for part in parts), fix
    assert "".join(parts) == record
    # cut after a space, so no term is split across the strings (a DNS panel's one text box, a person editing it)
    assert parts[0].endswith(" ") and parts[1].startswith("ip4:"), fix
    # a short fix stays one string
    short = walked({(DOMAIN, "TXT"): ["v=spf1 mx ~all"]})["dns.spf_softfail"]
    assert short.fix_vars["spf_strict"] == "v=spf1 mx -all"


def fix_of(zone: Zone) -> str:
    return record_of(fetched(zone)["dns.spf_softfail"])


def test_the_records_an_include_tree_holds_are_read_once_each() -> None:
    # Given r1..r9, each "-ip6:::/0" then 20 includes of the next (IPv6 senders leave each at -ip6:::/0): read once
    # per path, the tree held 20^8 reads (one scan's grading thread for ever; 18 s of CPU with 5 a record)
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 include:r1.example.net ip6:2001:db8:1::/48 -all"]}
    for depth in range(1, 9):
        includes = " ".join([f"include:r{depth + 1}.example.net"] * 20)
        zone[(f"r{depth}.example.net", "TXT")] = [f"v=spf1 -ip6:::/0 {includes}"]
    zone[("r9.example.net", "TXT")] = ["v=spf1 -ip6:::/0 ip4:192.0.2.1"]
    assert fix_of(zone) == "v=spf1 include:r1.example.net ip6:2001:db8:1::/48 -all"


def test_a_fix_does_not_drop_a_term_before_refusing_terms_built_from_the_senders_values() -> None:
    # pyspf on the record without ~ip6:::/0: every IPv6 sender permerror (three void lookups, or an include of no
    # record), where they soft-failed: a "-" term is reached all the same
    zone: Zone = {
        (DOMAIN, "TXT"): [
            "v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 -exists:%{i}.a.example.com -exists:%{i}.b.example.com"
            " -exists:%{i}.c.example.com ip6:2001:db8:1::/48 -all"
        ]
    }
    assert "-ip6:::/0" in fix_of(zone)
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 -include:%{l}._spf.example.com ip6:2001:db8:1::/48 -all"]
    }
    softfail = fetched(zone)["dns.spf_softfail"]
    assert "-ip6:::/0" in record_of(softfail)
    assert "whose matches the scan's answers do not show" in (softfail.note or "")


def test_a_fix_does_not_drop_a_term_before_one_the_sender_avoids_and_a_ptr_term() -> None:
    # ?exists:%{h} would end the IPv6 walk without ~ip6:::/0, but a sender avoids it (it picks its HELO name) and
    # reaches ptr:duckdns.org: pyspf gives 2001:db8:ffff::77 (its PTR attacker.duckdns.org, back to it) pass
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 -ip4:0.0.0.0/0 ~ip6:::/0 ?exists:%{h} ptr:duckdns.org -all"]}
    assert "-ip6:::/0" in fix_of(zone)


def test_a_d_macro_is_the_same_for_every_sender() -> None:
    # include:_spf.%{d} names the same record for every sender: the term before it goes, as before any include
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 ip6:2001:db8:1::/48 include:_spf.%{d} -all"],
        ("_spf.example.com", "TXT"): ["v=spf1 ip6:2001:db8:2::/48 -all"],
    }
    assert fix_of(zone) == "v=spf1 ip6:2001:db8:1::/48 include:_spf.%{d} -all"


def test_the_note_joins_several_terms_with_and() -> None:
    zone: Zone = {(DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 ip6:2001:db8:1::/48 ip6:2001:db8:2::/48 -all"]}
    note = fetched(zone)["dns.spf_softfail"].note or ""
    assert "the senders listed by 'ip6:2001:db8:1::/48' and 'ip6:2001:db8:2::/48' passes" in note, note


def test_a_fix_does_not_drop_a_term_before_a_ptr_term_of_the_domains_own_zone() -> None:
    # the sender's reverse zone answers first: three names that do not exist (pyspf: permerror) or a SERVFAIL
    # (temperror), which a sender of the fix would pick where it soft-failed
    for ptr in ("ptr", "ptr:example.com", "ptr:mail.example.com"):
        zone: Zone = {(DOMAIN, "TXT"): [f"v=spf1 ~ip6:::/0 {ptr} ip6:2001:db8:1::/48 ~all"]}
        assert "-ip6:::/0" in fix_of(zone), (ptr, fix_of(zone))


def test_the_note_on_an_include_the_scan_did_not_read_does_not_blame_the_senders_values() -> None:
    zone: Zone = {
        (DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 include:_spf.example.net ip6:2001:db8:1::/48 ~all"],
        ("_spf.example.net", "TXT"): ["v=spf1 ip4:192.0.2.0/24 -ip4:0.0.0.0/0 -ip6:::/0 include:other.example.net"],
        ("other.example.net", "TXT"): ["v=spf1 ip4:198.51.100.0/24 -all"],
    }
    softfail = fetched(zone)["dns.spf_softfail"]
    assert "-ip6:::/0" in record_of(softfail)
    assert "or a record the scan did not read" in (softfail.note or "")


def test_a_fix_does_not_drop_a_term_after_one_whose_void_lookups_the_sender_makes() -> None:
    # A ptr term before ~ip6:::/0: a sender whose own reverse zone names two hosts without addresses makes two void
    # lookups there, and one more after the dropped term is its third (pyspf: permerror, where it soft-failed); an
    # exists: built from the sender's address before it: a void lookup for every unlisted sender the walk does not see
    for record in (
        "v=spf1 ptr ~ip6:::/0 exists:nx.example.com ~all",
        "v=spf1 exists:%{i}.list.example.com ~ip6:::/0 exists:nx1.example.com exists:nx2.example.com ~all",
    ):
        zone: Zone = {(DOMAIN, "TXT"): [record], ("list.example.com", "TXT"): ["x"]}
        assert "-ip6:::/0" in fix_of(zone), fix_of(zone)
