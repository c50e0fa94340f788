"""SPF's limits counted for each sender address family, and the verdict one family gets beside the other's error.

Receivers evaluate a record for one sender, so for one address family (RFC 7208 4.6.4 counts a sender's own
lookups): an `a` term asks A for an IPv4 sender and AAAA for an IPv6 one (5.3), and an mx term its hosts'
addresses of that family (5.4), so a name without an AAAA record is a void lookup for IPv6 senders alone; the terms
of an include that one family's senders leave early (`-ip6:::/0`, 5.2) are looked up for the other's alone. pyspf
2.0.14, the library behind policyd-spf, gives the results quoted, run on the same zones. And the verdict given for
one family names the term that decides for it, with a fix that changes it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.factories import make_dns, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.checks.spf import evaluate_spf
from websec_app.scanner.fetch.dns import MAX_SPF_LOOKUPS_AHEAD, fetch_dns
from websec_app.scanner.findings import Finding
from websec_app.scanner.records.spf_evaluation import evaluate_spf_answers
from websec_app.scanner.snapshot import DnsAnswer

DOMAIN = "example.com"
Zone = dict[tuple[str, str], list[str]]


SERVFAIL = ["SERVFAIL"]  # a zone's value for a name whose server fails


def zone_lookup(zone: Zone) -> Callable[[str, str], DnsAnswer]:
    names = {name for name, _ in zone}

    def lookup(name: str, rdtype: str) -> DnsAnswer:
        name = name.rstrip(".").lower()
        records = zone.get((name, rdtype))
        if records is None:
            return DnsAnswer(name, rdtype, "NOERROR" if name in names else "NXDOMAIN")
        if records == SERVFAIL:
            return DnsAnswer(name, rdtype, "SERVFAIL", error="SERVFAIL from the resolver")
        shown = tuple(_strings(r) for r in records) if rdtype == "TXT" else tuple(records)
        return DnsAnswer(name, rdtype, "NOERROR", shown)

    return lookup


def _strings(text: str) -> str:
    """A TXT record as its character-strings of 255 octets at most (RFC 1035 3.3)."""
    return " ".join(f'"{text[i : i + 255]}"' for i in range(0, max(len(text), 1), 255))


def results(zone: Zone) -> dict[str, str | None]:
    return evaluate_spf_answers(DOMAIN, zone_lookup(zone)).results


def checked(zone: Zone) -> tuple[dict[str, Finding], dict[str, object]]:
    """The SPF findings (outcome -> finding) and details.spf of a scan of `zone`, as the fetch would ask it."""
    asked: dict[tuple[str, str], DnsAnswer] = {}
    lookup = zone_lookup(zone)

    def recording(name: str, rdtype: str) -> DnsAnswer:
        answer = lookup(name, rdtype)
        asked[(answer.name, rdtype)] = answer
        return answer

    evaluate_spf_answers(DOMAIN, recording)
    snapshot = make_snapshot(f"https://{DOMAIN}/", dns=make_dns(DOMAIN, *asked.values()))
    result = check_dns(snapshot)
    findings = {f.outcome: f for f in result.findings if f.outcome.startswith("dns.spf")}
    return findings, result.details["spf"]


def ipv4_only(name: str, last: int = 9) -> Zone:
    return {(name, "A"): [f"198.51.100.{last}"]}


def dual_stack(name: str) -> Zone:
    return {(name, "A"): ["198.51.100.9"], (name, "AAAA"): ["2001:db8::9"]}


# -- void lookups, for each family --------------------------------------------------------------------------------


def test_a_terms_on_ipv4_only_names_are_void_lookups_for_ipv6_senders_alone() -> None:
    # Given three a terms on names with an A record and no AAAA: an IPv6 sender's a asks AAAA (RFC 7208 5.3), and
    # each empty answer is a void lookup (4.6.4). pyspf: {"IPv4": "fail", "IPv6": "permerror"}
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 a a:mail1.example.com a:mail2.example.com -all"],
        **ipv4_only(DOMAIN, 1),
        **ipv4_only("mail1.example.com", 2),
        **ipv4_only("mail2.example.com", 3),
    }
    assert results(zone) == {"IPv4": "fail", "IPv6": "permerror"}

    # Then the void-lookup permerror is IPv6 senders', and IPv4 senders are refused
    found, spf = checked(zone)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}
    void = found["dns.spf_void_lookups"].note or ""
    assert "(for IPv6 senders: receivers ask AAAA for them, A for IPv4 senders)" in void, void
    assert "example.com, mail1.example.com, mail2.example.com" in void
    assert "(for IPv4 senders; IPv6 senders' result is permerror" in (found["dns.spf_strict"].note or "")
    assert spf["void_lookups"] == 3 and spf["void_lookups_for"] == {"IPv4": 0, "IPv6": 3}
    assert spf["results"] == {"IPv4": "fail", "IPv6": "permerror"}


def test_mx_hosts_without_an_aaaa_record_are_void_lookups_for_ipv6_senders() -> None:
    # Given "mx a" on IPv4-only infrastructure: each MX host's empty AAAA answer is a void lookup for IPv6 senders,
    # as is the domain's own. pyspf: {"IPv4": "fail", "IPv6": "permerror"}
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 mx a ip4:198.51.100.1 -all"],
        (DOMAIN, "MX"): ["10 mx1.example.com.", "20 mx2.example.com."],
        **ipv4_only(DOMAIN),
        **ipv4_only("mx1.example.com", 2),
        **ipv4_only("mx2.example.com", 3),
    }
    assert results(zone) == {"IPv4": "fail", "IPv6": "permerror"}
    found, _ = checked(zone)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}


def test_one_name_asked_twice_is_named_once_with_how_often() -> None:
    # Given "a mx" on an included name that has neither record, and a third void lookup: an a and an mx term of one
    # record ask one name twice (RFC 7208 4.6.4 counts each). pyspf: permerror for both families
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 include:spf.example.net a:gone.example.com -all"],
        ("spf.example.net", "TXT"): ["v=spf1 a mx ~all"],
    }
    found, spf = checked(zone)
    assert spf["void_lookups"] == 3
    # Then the note names it once, with how often, not twice (nor once beside a count of three)
    note = found["dns.spf_void_lookups"].note or ""
    assert "spf.example.net twice, gone.example.com)" in note, note


def test_two_void_lookups_of_one_family_are_within_the_limit() -> None:
    # Given two a terms on IPv4-only names: two void lookups for IPv6 senders, which receivers allow
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 a a:mail1.example.com -all"],
        **ipv4_only(DOMAIN),
        **ipv4_only("mail1.example.com"),
    }
    assert results(zone) == {"IPv4": "fail", "IPv6": "fail"}
    found, spf = checked(zone)
    assert set(found) == {"dns.spf_strict"}
    assert spf["void_lookups_for"] == {"IPv4": 0, "IPv6": 2}


def test_void_lookups_an_include_makes_for_ipv4_senders_only_are_not_ipv6_senders() -> None:
    # IPv6 senders leave the include at -ip6:::/0 (no match, RFC 7208 5.2) and walk on with one void lookup, IPv4
    # senders make three. pyspf: {"IPv4": "permerror", "IPv6": "fail"}
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 include:inc.example.com a:gone1.example.com -all"],
        ("inc.example.com", "TXT"): ["v=spf1 -ip6:::/0 a:gone2.example.com a:gone3.example.com -all"],
    }
    assert results(zone) == {"IPv4": "permerror", "IPv6": "fail"}
    found, _ = checked(zone)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}
    assert "(for IPv4 senders" in (found["dns.spf_void_lookups"].note or "")


# -- the 10-lookup limit, for each family -------------------------------------------------------------------------


def test_lookups_an_include_makes_for_ipv4_senders_only_are_not_ipv6_senders() -> None:
    # IPv6 senders leave the include at -ip6:::/0: they reach 3 DNS terms, IPv4 senders 11.
    # pyspf: {"IPv4": "permerror", "IPv6": "fail"}
    inc = "v=spf1 -ip6:::/0 " + " ".join(f"a:x{i}.example.com" for i in range(8)) + " -all"
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 include:inc.example.com a:p1.example.com a:p2.example.com -all"],
        ("inc.example.com", "TXT"): [inc],
        **{k: v for i in range(8) for k, v in dual_stack(f"x{i}.example.com").items()},
        **dual_stack("p1.example.com"),
        **dual_stack("p2.example.com"),
    }
    assert results(zone) == {"IPv4": "permerror", "IPv6": "fail"}

    # Then the 11th lookup is IPv4 senders' (at a:p2), and IPv6 senders are refused
    found, spf = checked(zone)
    assert set(found) == {"dns.spf_too_many_lookups", "dns.spf_strict"}
    limit = found["dns.spf_too_many_lookups"].note or ""
    assert "the 11th, a:p2.example.com" in limit and "(for IPv4 senders" in limit, limit
    assert spf["lookups"] == 11 and spf["lookups_for"] == {"IPv4": 11, "IPv6": 3}


def test_an_ipv6_sender_past_the_limit_stops_alone_and_ipv4_senders_keep_their_verdict() -> None:
    # Given an include IPv4 senders leave at -ip4:0.0.0.0/0 and IPv6 senders walk through 10 lookups in, then an a
    # term in the including record: the 11th lookup of IPv6 senders, the 2nd of IPv4 ones
    inc = "v=spf1 -ip4:0.0.0.0/0 " + " ".join(f"a:x{i}.example.com" for i in range(9)) + " -all"
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 include:inc.example.com a:p1.example.com ~all"],
        ("inc.example.com", "TXT"): [inc],
        **{k: v for i in range(9) for k, v in dual_stack(f"x{i}.example.com").items()},
        **dual_stack("p1.example.com"),
    }
    assert results(zone) == {"IPv4": "softfail", "IPv6": "permerror"}
    found, _ = checked(zone)
    assert set(found) == {"dns.spf_too_many_lookups", "dns.spf_softfail"}


# -- the verdict beside another family's error: the term that decides, and a fix that changes it ------------------


def test_the_ipv6_verdict_beside_a_permerror_names_the_term_that_decides_and_a_fix_that_changes_it() -> None:
    # IPv6 senders are neutral at ?ip6:::/0 (RFC 7208 4.6.2), not at an "?all" the record does not have
    zone = {
        (DOMAIN, "TXT"): ["v=spf1 ?ip6:::/0 include:bad.example.com -all"],
        ("bad.example.com", "TXT"): ["v=spf1 ip4:192.0.2.0/33 -all"],
    }
    found, spf = checked(zone)
    neutral = found["dns.spf_neutral"]
    assert "?all" not in (neutral.note or ""), neutral.note
    assert (neutral.note or "").startswith("?ip6:::/0: neutral"), neutral.note
    # the fix refuses them at that term: dropping it would lead them into the include's error (a permerror), which
    # is its own finding's to fix
    assert neutral.fix_vars["spf_strict"] == "v=spf1 -ip6:::/0 include:bad.example.com -all", neutral.fix_vars
    assert (spf["all"], spf["all_for"]) == ("?ip6:::/0", ["IPv6"])


def test_a_softfail_term_for_every_ipv6_sender_is_named_and_its_fix_refuses_them() -> None:
    # Given ~ip6:::/0 before -all: IPv6 senders soft-fail there, IPv4 senders are refused
    zone = {(DOMAIN, "TXT"): ["v=spf1 ~ip6:::/0 -all"]}
    assert results(zone) == {"IPv4": "fail", "IPv6": "softfail"}
    found, spf = checked(zone)
    softfail = found["dns.spf_softfail"]
    assert (softfail.note or "").startswith("~ip6:::/0: other senders only soft-fail (for IPv6 senders;"), softfail.note
    assert softfail.fix_vars["spf_strict"] == "v=spf1 -all"
    assert (spf["all"], spf["all_for"]) == ("~ip6:::/0", ["IPv6"])
    # and the fix, published, refuses every sender
    assert results({(DOMAIN, "TXT"): [softfail.fix_vars["spf_strict"]]}) == {"IPv4": "fail", "IPv6": "fail"}


# -- common records keep their verdicts ---------------------------------------------------------------------------


GOOGLE: Zone = {
    (DOMAIN, "TXT"): ["v=spf1 include:_spf.google.com ~all"],
    ("_spf.google.com", "TXT"): [
        "v=spf1 include:_netblocks.google.com include:_netblocks2.google.com include:_netblocks3.google.com ~all"
    ],
    ("_netblocks.google.com", "TXT"): ["v=spf1 ip4:35.190.247.0/24 ip4:64.233.160.0/19 ~all"],
    ("_netblocks2.google.com", "TXT"): ["v=spf1 ip6:2001:4860:4000::/36 ip6:2404:6800:4000::/36 ~all"],
    ("_netblocks3.google.com", "TXT"): ["v=spf1 ip4:172.217.0.0/19 ~all"],
}
MICROSOFT: Zone = {
    (DOMAIN, "TXT"): ["v=spf1 include:spf.protection.outlook.com -all"],
    ("spf.protection.outlook.com", "TXT"): [
        "v=spf1 ip4:40.92.0.0/15 ip4:52.100.0.0/15 ip6:2a01:111:f400::/48 include:spfd.protection.outlook.com -all"
    ],
    ("spfd.protection.outlook.com", "TXT"): ["v=spf1 ip4:51.4.72.0/24 ip6:2a01:111:f400::/48 -all"],
}
REDIRECT: Zone = {
    (DOMAIN, "TXT"): ["v=spf1 redirect=_spf.example.com"],
    ("_spf.example.com", "TXT"): ["v=spf1 ip4:198.51.100.0/24 mx:example.net -all"],
    ("example.net", "MX"): ["10 mx.example.net."],
    **ipv4_only("mx.example.net"),
}
EXISTS: Zone = {
    (DOMAIN, "TXT"): ["v=spf1 exists:%{i}._spf.example.com include:_spf.google.com -all"],
    ("_spf.google.com", "TXT"): ["v=spf1 ip4:35.190.247.0/24 ~all"],
}
# a chain of eight includes, the last with an mx term: nine DNS lookups for each family
DEEP: Zone = {
    (DOMAIN, "TXT"): ["v=spf1 include:c1.example.com -all"],
    **{
        (f"c{n}.example.com", "TXT"): [f"v=spf1 ip4:192.0.2.{n} include:c{n + 1}.example.com ~all"] for n in range(1, 8)
    },
    ("c8.example.com", "TXT"): ["v=spf1 ip4:192.0.2.8 mx:mail.example.com ~all"],
    ("mail.example.com", "MX"): ["10 mail.example.com."],
    **dual_stack("mail.example.com"),
}


def test_common_records_keep_their_verdicts() -> None:
    # pyspf gives each of these the same result for both families
    assert results(GOOGLE) == {"IPv4": "softfail", "IPv6": "softfail"}
    assert results(MICROSOFT) == {"IPv4": "fail", "IPv6": "fail"}
    assert results(REDIRECT) == {"IPv4": "fail", "IPv6": "fail"}
    assert results(EXISTS) == {"IPv4": "fail", "IPv6": "fail"}
    assert results(DEEP) == {"IPv4": "fail", "IPv6": "fail"}
    assert set(checked(GOOGLE)[0]) == {"dns.spf_softfail"}
    assert checked(GOOGLE)[1]["all"] == "~all"
    for zone in (MICROSOFT, REDIRECT, EXISTS, DEEP):
        assert set(checked(zone)[0]) == {"dns.spf_strict"}
    assert checked(REDIRECT)[1]["all"] == "-all"


# -- the lookups a hostile tree makes the scan ask stay bounded ---------------------------------------------------


class ZoneResolver:
    def __init__(self, zone: Zone) -> None:
        self.lookup = zone_lookup(zone)
        self.asked: list[tuple[str, str]] = []

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        self.asked.append((name.rstrip(".").lower(), rdtype))
        await asyncio.sleep(0)
        return self.lookup(name, rdtype)


async def test_a_tree_each_family_walks_its_own_way_is_fetched_whole_within_the_lookup_bound() -> None:
    # Given an include IPv6 senders leave at -ip6:::/0 with nine mx terms of ten hosts each that IPv4 senders walk,
    # and nine more in the including record that IPv6 senders walk: each family's ten DNS lookups (RFC 7208 4.6.4),
    # 37 rounds of lookups at least, where one walk for both made 22
    def mx_terms(prefix: str) -> str:
        return " ".join(f"mx:{prefix}{i}.example.net" for i in range(9))

    zone: Zone = {
        (DOMAIN, "TXT"): [f"v=spf1 include:inc.example.com {mx_terms('p')} -all"],
        ("inc.example.com", "TXT"): [f"v=spf1 -ip6:::/0 {mx_terms('q')} -all"],
    }
    for prefix in "pq":
        for i in range(9):
            zone[(f"{prefix}{i}.example.net", "MX")] = [f"10 h{prefix}{i}-{k}.example.net." for k in range(10)]
            for k in range(10):
                zone.update(dual_stack(f"h{prefix}{i}-{k}.example.net"))
    resolver = ZoneResolver(zone)
    snapshot = await fetch_dns(DOMAIN, resolver, follow_up_seconds=60, budget_seconds=60)

    # Then every lookup each family's evaluation reaches is asked: IPv4 senders pass their 10th lookup in the
    # including record (a permerror), IPv6 senders are refused; nothing is read as not asked
    evaluation = evaluate_spf(DOMAIN, snapshot)
    assert evaluation is not None
    assert evaluation.results == {"IPv4": "permerror", "IPv6": "fail"}
    assert not evaluation.failures
    # and no more than RFC 7208 4.6.4 lets receivers ask for both families (210), and those asked ahead
    spf_names = [q for q in resolver.asked if q[0].endswith(".example.net") or q[0] == "inc.example.com"]
    assert len(spf_names) == len(set(spf_names))
    assert len(spf_names) <= 210 + MAX_SPF_LOOKUPS_AHEAD
