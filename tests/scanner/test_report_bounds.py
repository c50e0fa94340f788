"""What a hostile site sends in bulk (a Set-Cookie flood over a redirect chain, thousands of Server lines, a page
of long distinct URLs) must not make grading quadratic or the report huge: docs/threat-model.md promises bounded
sections.

The floods below are far larger than a site can send in one scan: the code they test was quadratic in them
and would take many minutes here (this file would hang), where linear code takes a fraction of a second.
Nothing here reads a clock: the assertions are on sizes and counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tests.factories import dns_answer, make_certificate, make_dns, make_handshake, make_response, make_snapshot
from tests.fixtures.hostile_pages import LONG_URL_KINDS, long_url_host, long_urls
from websec_app.scanner.checks._shown import MAX_SHOWN
from websec_app.scanner.checks.cookies import check_cookies
from websec_app.scanner.findings import LIST_LIMIT, CheckResult, Finding
from websec_app.scanner.fixes import writers_config
from websec_app.scanner.fixes.actions import CookieAttributes, action_for
from websec_app.scanner.fixes.remedies import remedy_table
from websec_app.scanner.fixes.snippets import render_snippets
from websec_app.scanner.grading import SNIPPET_LIMIT, grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import CorsProbe, FetchChain, HttpResponse

PAGE_URL = "https://www.example.com/"
FLOOD = 200_000


def test_a_finding_on_a_flood_of_cookies_lists_the_first_fifty_and_counts_the_rest() -> None:
    # Given one outcome on 200,000 cookies, each with a note of its own (set by a redirect of the chain)
    names = [f"c{i}" for i in range(FLOOD)]
    findings = tuple(
        Finding("cookie.no_samesite", name, f"{name} (set by the redirect response from {PAGE_URL})", {"cookie": name})
        for name in names
    )

    # When it is graded
    graded = grade([CheckResult("cookies", findings, {})], default_rulebook(), {"final_url": PAGE_URL})

    # Then the finding names the first 50 cookies, says how many more there are, its snippets edit the first 200
    # and its fix_note says the others need the same change
    (finding,) = graded.sections["cookies"]["findings"]
    assert LIST_LIMIT == 50
    assert finding["subjects"] == names[:LIST_LIMIT]
    notes = finding["note"].split("; ")
    assert notes[:LIST_LIMIT] == [f"{name} (set by the redirect response from {PAGE_URL})" for name in names[:50]]
    assert notes[LIST_LIMIT:] == [
        "and 199,950 more subjects like these, not listed",
        "and 199,950 more notes like these, not listed",
    ]
    assert finding["subjects_not_listed"] == 199_950
    assert SNIPPET_LIMIT == 200
    assert finding["fix_snippets"]["nginx"].count("proxy_cookie_flags c") == SNIPPET_LIMIT
    assert "c199|" not in finding["fix_snippets"]["apache"] and "c199)=" in finding["fix_snippets"]["apache"]
    assert finding["fix_note"] == (
        "The snippets edit the first 200 of the 200,000 this is about (those they name): make the same change for "
        "the other 199,800."
    )
    assert len(json.dumps(graded.sections)) < 100_000  # 48 KB, 41 KB of it the snippets naming 200 cookies
    # and the deduction is the outcome's, once
    assert graded.sections["cookies"]["deduction"] == default_rulebook().rule("cookie.no_samesite").deduction


def test_the_same_subject_or_note_again_is_listed_once_and_not_counted_as_more() -> None:
    findings = tuple(Finding("cookie.no_httponly", f"c{i % 60}", f"c{i % 60}: again") for i in range(FLOOD))
    graded = grade([CheckResult("cookies", findings, {})], default_rulebook(), {"final_url": PAGE_URL})
    (finding,) = graded.sections["cookies"]["findings"]
    assert finding["subjects"] == [f"c{i}" for i in range(LIST_LIMIT)]
    assert finding["note"].endswith(
        "; and 10 more subjects like these, not listed; and 10 more notes like these, not listed"
    )


def test_the_cookie_fix_writers_are_linear_in_the_cookies_they_name() -> None:
    # Given 200,000 cookies, all of them also named by a finding about a missing SameSite
    names = tuple(f"c{i}" for i in range(FLOOD))
    remedy = remedy_table().remedy("cookie.no_httponly")
    assert remedy is not None

    # When the action and the nginx snippet are written for them
    action = action_for(remedy, "Add HttpOnly", None, names, names)
    assert isinstance(action, CookieAttributes)
    nginx = writers_config.nginx(CookieAttributes(names, ("HttpOnly", "SameSite=Lax"), False, names))

    # Then each cookie is known to lack SameSite, and its nginx line adds it
    assert action.lacking_samesite == names
    assert nginx.count("samesite=lax;") == FLOOD
    # and names no configuration can hold are left out as quickly (the sentence instead of a snippet)
    unwritable = tuple(f"c{i}$" for i in range(FLOOD))
    snippets = render_snippets(
        "cookie.no_samesite", "Add SameSite=Lax", subjects=unwritable, lacking_samesite=unwritable
    )
    assert snippets is not None and snippets["nginx"].startswith("Not written for nginx")


def cookie_flood(redirects: int, lines: int) -> list[HttpResponse]:
    """The chain of the audit: `redirects` 302s, then the page, each sending `lines` Set-Cookie lines."""
    hops = [
        make_response(
            f"https://example.com/r{hop}",
            302,
            [("Location", f"https://example.com/r{hop + 1}")] + [("Set-Cookie", f"h{hop}_{i}=1") for i in range(lines)],
        )
        for hop in range(redirects)
    ]
    return hops


def evicted_note(count: int, names: list[str]) -> str:
    more = f" and {count - len(names):,} more" if count > len(names) else ""
    return (
        "Chromium keeps at most 180 cookies for a site and evicts the least recently set past that: the cookies of "
        f"{count:,} of these Set-Cookie lines are evicted, so they were not graded: {', '.join(names)}{more}"
    )


def test_a_set_cookie_flood_over_a_redirect_chain_is_graded_on_the_180_cookies_chromium_keeps() -> None:
    # Given ten redirects and the page, each with 4,300 Set-Cookie lines (47,300 in all)
    page = [("Set-Cookie", f"page_{i}=1") for i in range(4_300)]
    snapshot = make_snapshot("https://example.com/r10", headers=page, redirects=cookie_flood(10, 4_300))

    # When the cookies are checked
    result = check_cookies(snapshot)

    # Then the cookies graded are the 180 Chromium keeps, the page's last (past 180 it evicts the 31 least recently
    # set at a time), and the rest are counted, the first evicted named
    assert result.details["count"] == 180 and result.details["evicted"] == 47_120
    listed = result.details["cookies"]
    assert [cookie["name"] for cookie in listed] == [f"page_{i}" for i in range(4_120, 4_170)]
    too_many = [f for f in result.findings if f.outcome == "cookie.too_many"]
    assert [f.note for f in too_many] == [evicted_note(47_120, [f"h0_{i}" for i in range(10)])]
    assert len([f for f in result.findings if f.outcome == "cookie.no_httponly"]) == 180

    # and the graded report's cookies section is 0.17 MB (281.6 MB before ed53f9f): three findings on the 180
    # cookies, most of it their snippets for eight servers, as on a site that sets 180 such cookies
    report = grade_snapshot(snapshot).to_dict()
    assert len(json.dumps(report["cookies"])) < 400_000
    finding = next(f for f in report["cookies"]["findings"] if f["check"] == "cookie.too_many")
    assert finding["deduction"] == 0 and finding["status"] == "warn"


def test_180_cookies_are_all_graded_and_one_more_evicts_the_31_least_recently_set() -> None:
    # Given a redirect with 100 lines and a page with 80: exactly the bound
    snapshot = make_snapshot(
        "https://example.com/r1",
        headers=[("Set-Cookie", f"page_{i}=1") for i in range(80)],
        redirects=cookie_flood(1, 100),
    )
    result = check_cookies(snapshot)
    assert result.details["count"] == 180 and len(result.details["cookies"]) == 50
    assert "cookie.too_many" not in {f.outcome for f in result.findings}

    # and one more cookie on the page makes Chromium evict the redirect's first 31, which are not graded
    one_more = make_snapshot(
        "https://example.com/r1",
        headers=[("Set-Cookie", f"page_{i}=1") for i in range(81)],
        redirects=cookie_flood(1, 100),
    )
    result = check_cookies(one_more)
    assert result.details["count"] == 150
    graded = {f.subject for f in result.findings}
    assert {"page_80", "h0_31"} <= graded and "h0_30" not in graded
    assert [f.note for f in result.findings if f.outcome == "cookie.too_many"] == [
        evicted_note(31, [f"h0_{i}" for i in range(10)])
    ]


def test_a_flood_of_lines_that_store_no_cookie_is_graded_up_to_a_bound() -> None:
    # Given the page setting one cookie 10,000 times, then 10,000 lines it refuses, 10,000 deletions and 10,000
    # lines without a name
    lines = [
        *(f"sid=v{i}" for i in range(10_000)),
        *(f"x{i}=1; Domain=other.example" for i in range(10_000)),
        *(f"d{i}=; Max-Age=0" for i in range(10_000)),
        *(f"nameless{i}" for i in range(10_000)),
    ]
    snapshot = make_snapshot("https://example.com/", headers=[("Set-Cookie", line) for line in lines])

    # When the cookies are checked and graded
    result = check_cookies(snapshot)
    report = grade_snapshot(snapshot).to_dict()

    # Then the cookie is graded as its last line sets it, and the lines replaced are listed 50 and counted
    assert [c["name"] for c in result.details["cookies"]][:1] == ["sid"]
    assert len(result.details["superseded"]) == 50 and result.details["not_listed"] == {"superseded": 9_949}
    # and of the lines that store no cookie, which take no room in the browser's store, the first 180 are graded
    # (the refused ones) and the others counted
    assert result.details["count"] == 1 + 180 and result.details["not_graded"] == 30_000 - 180
    assert [f.note for f in result.findings if f.outcome == "cookie.too_many"] == [
        "29,820 more Set-Cookie lines that store no cookie (malformed, refused by browsers or deleting one) were "
        "not graded: the scan grades the first 180 such lines"
    ]
    assert len(json.dumps(report["cookies"])) < 100_000


# -- the page section ------------------------------------------------------------------------------------------

#: What the page section may take of the stored report (JSON) whatever the page: 18 lists of URLs (each finding's
#: subjects and notes, the details' lists) of at most 4,096 characters each (findings.LIST_BUDGET), the base and
#: the rules' own text.
PAGE_SECTION_BOUND = 100_000
#: The most characters one URL or origin takes in a list, as stored: 2,048 and the count of those cut.
ITEM_BOUND = MAX_SHOWN + len(" … (2,000,000 more characters not shown)") + 5


def stored_length(text: str) -> int:
    """Its characters in the stored report: JSON, where an emoji is a 12-character escape."""
    return len(json.dumps(text)) - 2


def test_a_page_of_long_distinct_urls_in_every_list_makes_a_page_section_of_tens_of_kilobytes() -> None:
    # Given a 2 MiB page of 1,080 URLs of about 4,000 characters as stored (a 1,000-character host of their own,
    # 250 emoji), each in the lists of its kind, in turn: http:// scripts with no integrity or an unreadable one,
    # http:// images and stylesheets, scripts with integrity but no crossorigin or a malformed one, exempt ones
    body = long_urls()
    count = body.count("\U0001f600".encode() * 250)
    of_kind = [len(range(kind, count, len(LONG_URL_KINDS))) for kind in range(len(LONG_URL_KINDS))]
    assert count == 1_080 and len(body) > 2_000_000

    # When the page is graded
    section = grade_snapshot(make_snapshot(PAGE_URL, body=body)).to_dict()["page_analysis"]

    # Then the section is tens of KB as stored: 2.57 MB before, where each of the 18 lists showed 50 URLs, each cut
    # at 2,048 characters counted as the page has them (3,000 as stored: 250 emoji are 3,000 characters of JSON)
    assert len(json.dumps(section)) < PAGE_SECTION_BOUND
    # and each finding names its first origins, page order, and counts the others (subjects_not_listed: the diff
    # does not take its list for whole) and its URLs
    findings = {f["check"]: f for f in section["findings"]}
    origins_of = {
        "page.mixed_active": (0, 1, 3),
        "page.sri_missing_script": (0, 1),
        "page.mixed_passive": (2,),
        "page.sri_missing_stylesheet": (3,),
        "page.sri_no_crossorigin": (4,),
        "page.sri_malformed": (5,),
    }
    for outcome, kinds in origins_of.items():
        finding = findings[outcome]
        scheme = "https" if min(kinds) >= 4 else "http"
        assert finding["subjects"][0].startswith(f"{scheme}://{long_url_host(min(kinds))[:500]}")
        assert len(finding["subjects"]) + finding["subjects_not_listed"] == sum(of_kind[k] for k in kinds)
        assert finding["note"].endswith(
            f"; and {finding['subjects_not_listed']:,} more subjects like these, not listed; and "
            f"{sum(of_kind[k] for k in kinds) - 1:,} more notes like these, not listed"
        )
    # and each list of the details shows its first URLs and says how many more it had
    mixed, sri = section["mixed_content"], section["sri"]
    listed = {
        ("mixed_content", "active"): (mixed, (0, 1, 3)),
        ("mixed_content", "passive"): (mixed, (2,)),
        ("sri", "missing"): (sri, (0, 1, 3)),
        ("sri", "invalid"): (sri, (1,)),
        ("sri", "not_applicable"): (sri, (6,)),
    }
    for (part, name), (details, kinds) in listed.items():
        assert details[name], (part, name)
        assert len(details[name]) + details["not_listed"][name] == sum(of_kind[k] for k in kinds), (part, name)
        assert all(stored_length(url) <= ITEM_BOUND for url in details[name]), (part, name)
    assert section["external_origin_count"] == count - of_kind[6] + 1  # js.stripe.com once
    assert section["external_origins"][0] == {
        "origin": "https://js.stripe.com",
        "resources": of_kind[6],
        "types": ["script"],
        "same_site": False,
    }
    assert all(stored_length(s) <= ITEM_BOUND for f in section["findings"] for s in f["subjects"])


# -- the other sections, at the fetch layer's limits -------------------------------------------------------------
#
# A response head is at most 100 KiB, a scan at most 22 responses (a chain of ten redirects and the page, twice),
# a security.txt or MTA-STS policy 64 KiB, a DNS answer 64 KiB. A byte 0xFF of a header is the character ÿ, and
# every character outside ASCII is a 6-character escape in the stored JSON (an emoji 12): the bounds count that.

HEAD = 100 * 1024
FF = "\xff"
EMOJI = "\U0001f600"


def head_of(header: Callable[[int], tuple[str, str]], room: int = HEAD) -> list[tuple[str, str]]:
    """`header(0)`, `header(1)`, ... as many as a response head of `room` bytes holds."""
    pairs: list[tuple[str, str]] = []
    used = 0
    while True:
        name, value = header(len(pairs))
        used += len(name) + len(value) + 4
        if used > room:
            return pairs
        pairs.append((name, value))


def stored(section: Any) -> int:
    return len(json.dumps(section))


def graded(snapshot: Any) -> dict[str, Any]:
    return grade_snapshot(snapshot).to_dict()


def test_a_head_of_long_header_values_keeps_the_headers_and_isolation_sections_small() -> None:
    # Given a page whose head holds the ten headers those sections grade, 10,000 bytes 0xFF each
    names = ("Content-Security-Policy", "Strict-Transport-Security", "X-Frame-Options", "X-Content-Type-Options")
    names += ("Referrer-Policy", "Permissions-Policy", "X-XSS-Protection", "Cross-Origin-Opener-Policy")
    names += ("Cross-Origin-Embedder-Policy", "Cross-Origin-Resource-Policy")
    report = graded(make_snapshot(PAGE_URL, headers=[(name, FF * 10_000) for name in names]))

    # Then each header's value shows its first 8,192 characters as stored and says how many more there were
    # (585 KB and 554 KB before: each value whole, 60,000 characters of escapes)
    cut = FF * (8_192 // 6) + f" … ({10_000 - 8_192 // 6:,} more characters not shown)"
    assert report["headers"]["X-Frame-Options"]["value"] == cut
    assert report["cross_origin"]["Cross-Origin-Opener-Policy"]["value"] == cut
    # and the sections are at most seven and three such values, with their notes of at most 4,096 (twice: joined in
    # `note`, one by one in `notes`)
    assert stored(report["headers"]) < 140_000
    assert stored(report["cross_origin"]) < 95_000


def test_twenty_two_responses_of_full_heads_keep_the_redirection_section_small() -> None:
    # Given ten redirects and the page, and the http:// form's ten redirects and page, each a head of 100 KiB of
    # headers of 1,000 bytes 0xFF, the redirects to URLs of 1,976 characters
    long_path = "/" + "p" * 1_950  # a target URL is at most 2,048 characters

    def hop(url: str, to: str) -> HttpResponse:
        return make_response(url, 302, [("Location", to), *head_of(lambda i: (f"X-{i}", FF * 1_000), HEAD - 3_000)])

    main = [hop(f"{PAGE_URL}{i}{long_path if i else ''}", f"{PAGE_URL}{i + 1}{long_path}") for i in range(10)]
    upgrade = [
        hop(f"http://www.example.com/{i}{long_path}", f"http://www.example.com/{i + 1}{long_path}") for i in range(10)
    ]
    page = head_of(lambda i: (f"X-{i}", FF * 1_000))
    upgrade.append(make_response(PAGE_URL, 200, page))
    snapshot = make_snapshot(
        f"{PAGE_URL}10{long_path}",
        headers=page,
        redirects=main,
        http_upgrade=FetchChain("http://www.example.com/", tuple(upgrade)),
        tls=make_handshake("www.example.com"),
    )
    section = graded(snapshot)["redirection"]

    # Then each hop shows its URL, status and Location, and its first headers within 8,192 characters as stored,
    # counting the others (13.1 MB before: 100 headers a hop, each value 2,048 characters before its escapes)
    assert len(section["main_chain"]) == len(section["http_chain"]) == 11
    second = section["main_chain"][1]
    assert second["status_code"] == 302 and second["location"] == f"{PAGE_URL}2{long_path}"
    assert second["headers"][0] == ["Location", f"{PAGE_URL}2{long_path}"]
    assert second["headers"][1][0] == "X-0" and second["headers"][1][1].endswith("more characters not shown)")
    assert len(second["headers"]) + second["headers_not_listed"] == len(main[1].headers.items)
    # and the section is 22 hops of at most 8 KB of headers and two URLs of 2 KB
    assert stored(section) < 300_000


def test_cookies_with_names_of_four_kilobytes_keep_the_cookies_section_small() -> None:
    # Given a cookie skipping 1,500 distinct attributes, then 20 cookies named with 3,992 bytes 0xFF
    lines = ["sid=1; " + "; ".join(f"Max-Age=a{i}" for i in range(1_500))]
    lines += [f"{FF * 3_992}{i:08d}=1" for i in range(20)]
    section = graded(make_snapshot(PAGE_URL, headers=[("Set-Cookie", line) for line in lines]))["cookies"]

    # Then every cookie is graded and the details list the first within 32,768 characters, each name cut
    assert section["count"] == 21
    listed = section["cookies"]
    assert listed[0]["name"] == "sid" and listed[0]["ignored_attributes"][-1] == (
        "and 1,450 more attributes browsers skip, not listed"
    )
    assert listed[1]["name"].startswith(FF * 300) and listed[1]["name"].endswith("more characters not shown)")
    # and the findings name their first cookies and count the others
    (no_secure,) = [f for f in section["findings"] if f["check"] == "cookie.no_secure"]
    assert len(no_secure["subjects"]) + no_secure["subjects_not_listed"] == 20
    # and the section stays small (2.43 MB before: 50 names of 24,000 characters as stored in the details, the
    # findings' subjects and fixes)
    assert stored(section) < 100_000


def test_cors_answers_of_full_heads_keep_the_cors_section_small() -> None:
    # Given the page and the four probes' answers each a head of Access-Control-Allow-Origin and -Credentials
    # lines of 2,000 bytes 0xFF
    def answer() -> HttpResponse:
        names = ("Access-Control-Allow-Credentials", "Access-Control-Allow-Origin")
        return make_response(PAGE_URL, 200, head_of(lambda i: (names[i % 2], FF * 2_000)))

    origins = {"foreign": "https://evil.test", "lookalike": "https://www.example.com.evil.test"}
    origins |= {"http": "http://www.example.com", "null": "null"}
    probes = tuple(CorsProbe(kind, origin, answer()) for kind, origin in origins.items())  # type: ignore[arg-type]
    page = head_of(lambda i: ("Access-Control-Allow-Origin", FF * 2_000))
    section = graded(make_snapshot(PAGE_URL, headers=page, cors_probes=probes))["cors"]

    # Then each answer's values are shown cut (3.3 MB before: each joined whole, five times)
    assert section["foreign_origin"]["allow_origin"].startswith(FF * 300)
    assert section["foreign_origin"]["allow_origin"].endswith("more characters not shown)")
    assert stored(section) < 50_000


def test_a_certificate_list_of_a_hundred_kilobytes_keeps_the_tls_section_small() -> None:
    # Given 16 certificates (what OpenSSL's 100 KiB certificate list holds): a leaf naming 1,101 hosts, and
    # subjects and issuers of 250 emoji (3,000 characters of JSON each)
    names = ("www.example.com", *(f"{'a' * 40}{i:04d}.example.com" for i in range(1_100)))
    emoji_name = "CN=" + EMOJI * 250
    leaf = replace(make_certificate(names=names), subject=emoji_name, issuer=emoji_name)
    middle = replace(make_certificate(names=("ca",)), subject=emoji_name, issuer=emoji_name)
    handshake = make_handshake(
        "www.example.com", leaf, chain=(leaf, *(middle,) * 15), trusted=False, untrusted_ca=emoji_name
    )
    section = graded(make_snapshot(PAGE_URL, tls=handshake))["tls"]

    # Then the leaf lists its first names and counts the others, and every name is cut as stored
    san = section["certificate"]["san"]
    assert san[:2] == list(names[:2])
    assert len(san) + section["certificate"]["not_listed"]["san"] == len(names)
    assert len(section["chain"]) == 16
    assert section["chain"][1]["subject"].endswith("more characters not shown)")
    # and the section stays small (184 KB before: 1,101 names, 33 distinguished names of 3,000 characters)
    assert stored(section) < 100_000
    # And the same certificates at the address scanned, when the page is on another host (its certificate's fields and
    # its findings are kept too): 110 KB, the second certificate bounded as the first
    entry = replace(handshake, host="example.com", hostname_matches=False)
    both = graded(make_snapshot(PAGE_URL, tls=handshake, entry_tls=entry))["tls"]
    assert both["entry_certificate"]["not_listed"]["san"] == len(names) - len(both["entry_certificate"]["san"])
    assert stored(both) < 130_000


def test_a_security_txt_of_64_kilobytes_keeps_its_section_small() -> None:
    # Given a security.txt of 64 KiB of fields, each a URL of 40 emoji
    fields = ("Contact", "Canonical", "Encryption", "Policy", "Acknowledgments", "Hiring", "CSAF")
    lines = ["Expires: 2030-01-01T00:00:00Z"]
    while sum(len(line.encode()) + 1 for line in lines) < 64 * 1024 - 300:
        lines.append(f"{fields[len(lines) % len(fields)]}: https://{EMOJI * 40}{len(lines)}")
    url = f"{PAGE_URL}.well-known/security.txt"
    response = make_response(url, 200, [], "\n".join(lines), "text/plain; charset=utf-8")
    section = graded(make_snapshot(PAGE_URL, security_txt=FetchChain(url, (response,))))["security_txt"]

    # Then each field's list shows its first values and counts the others (208 KB before: every value, whole)
    contacts = [line.removeprefix("Contact: ") for line in lines if line.startswith("Contact: ")]
    assert section["contacts"][0] == contacts[0]
    assert len(section["contacts"]) + section["not_listed"]["contacts"] == len(contacts)
    assert stored(section) < 50_000


def txt_record(text: str) -> str:
    """`text` as a TXT record's presentation: strings of 255 bytes, other than printable ASCII as \\DDD."""
    data = text.encode("latin-1")
    strings = (data[start : start + 255] for start in range(0, len(data), 255))
    escaped = ("".join(chr(b) if 32 < b < 127 and b not in (34, 92) else f"\\{b:03d}" for b in s) for s in strings)
    return " ".join(f'"{string}"' for string in escaped)


def test_dns_answers_of_64_kilobytes_keep_the_dns_section_small() -> None:
    # Given answers as large as a DNS message: 4,000 addresses, 1,000 MX and CAA records, an SPF record of 20,000
    # bytes 0xFF, a DMARC record of 900 report addresses and 3,000 unknown tags, ten TLS-RPT records, and an
    # MTA-STS policy listing 900 MX hosts
    host = "www.example.com"
    spf = "v=spf1 " + " ".join(f"ip4:10.0.{i // 256}.{i % 256}" for i in range(2_500)) + " " + FF * 20_000 + " -all"
    rua = ",".join(f"mailto:r{i}@{'x' * 30}.com" for i in range(900))
    dmarc = f"v=DMARC1; p=none; rua={rua}; " + ";".join(f"x{i}={FF * 2}" for i in range(3_000))
    answers = (
        dns_answer(host, "A", *(f"10.0.{i // 256}.{i % 256}" for i in range(4_000))),
        dns_answer(host, "AAAA", *(f"2001:db8::{i:x}" for i in range(3_000))),
        dns_answer("example.com", "TXT", txt_record(spf)),
        dns_answer("_dmarc.example.com", "TXT", txt_record(dmarc)),
        dns_answer("example.com", "MX", *(f"{i} mx{i}.{'m' * 50}.example.com." for i in range(1_000))),
        dns_answer(host, "CAA", *(f'0 issue "{"c" * 50}{i}.com"' for i in range(1_000))),
        dns_answer("_mta-sts.example.com", "TXT", txt_record("v=STSv1; id=1")),
        dns_answer("_smtp._tls.example.com", "TXT", *(txt_record("v=TLSRPTv1; rua=mailto:" + FF * 5_000),) * 10),
    )
    policy_url = "https://mta-sts.example.com/.well-known/mta-sts.txt"
    mx_lines = "".join(f"mx: mx{i}.{'m' * 50}.example.com\n" for i in range(900))
    policy = make_response(
        policy_url, 200, [], f"version: STSv1\nmode: enforce\nmax_age: 86400\n{mx_lines}", "text/plain"
    )
    snapshot = make_snapshot(
        PAGE_URL,
        dns=make_dns(host, *answers),
        mta_sts_policy=FetchChain(policy_url, (policy,)),
        mta_sts_tls=make_handshake("mta-sts.example.com"),
    )
    section = graded(snapshot)["dns"]

    # Then every list shows its first records and counts the others, every record is cut as stored
    assert section["a"][:2] == ["10.0.0.0", "10.0.0.1"]
    assert len(section["a"]) + section["not_listed"]["a"] == 4_000
    assert len(section["mx"]["records"]) + section["mx"]["not_listed"]["records"] == 1_000
    assert len(section["caa"]["issue"]) + section["caa"]["not_listed"]["issue"] == 1_000
    assert len(section["mta_sts"]["policy"]["mx"]) + section["mta_sts"]["policy"]["not_listed"]["mx"] == 900
    assert section["spf"]["record"].startswith("v=spf1 ip4:10.0.0.0 ")
    assert section["spf"]["record"].endswith("more characters not shown)")
    # and the section stays small (1.01 MB before: every record whole)
    assert stored(section) < 60_000


def test_server_lines_of_a_full_head_keep_the_fingerprint_section_small() -> None:
    # Given a head of Server lines each naming a product version and 1,500 bytes 0xFF
    headers = head_of(lambda i: ("Server", f"nginx{i}/1.{i} {FF * 1_500}"))
    section = graded(make_snapshot(PAGE_URL, headers=headers))["server_fingerprint"]

    # Then the disclosures list the first and count the others, each value cut (911 KB before: 50 whole values)
    disclosures = section["disclosures"]
    assert disclosures[0]["product"] == "nginx0" and disclosures[0]["value"].endswith("more characters not shown)")
    assert len(disclosures) + section["not_listed"]["disclosures"] == len(headers)
    assert stored(section) < 20_000


def _listed_and_counted(notes: list[str], listed_prefix: str) -> int:
    """How many notes starting `listed_prefix` are listed, plus the count of the list's "and N more ..." note."""
    [more] = [note for note in notes if note.startswith("and ") and note.endswith("not listed")]
    count = int(more.split()[1].replace(",", ""))
    return sum(note.startswith(listed_prefix) for note in notes) + count


def test_a_checks_own_count_of_the_notes_it_left_out_stays_whole_in_the_report() -> None:
    # Given a <meta> policy naming 10,000 nonces without their quotes (a note each), and 200,000 bare Server names
    # (a product note each): each check lists the first that fit and one "and N more" note, which the finding's
    # other notes push past the 50 notes a finding lists
    sources = " ".join(f"nonce-{i}" for i in range(10_000))
    body = f"""<html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self' {sources}"></head>"""
    csp = graded(make_snapshot(PAGE_URL, body=body))["headers"]["Content-Security-Policy"]
    servers = graded(make_snapshot(PAGE_URL, headers=[("Server", f"p{i}") for i in range(FLOOD)]))
    [products] = servers["server_fingerprint"]["findings"]

    # Then what the report lists and what it counts add up to every one (grading counted the check's own count of
    # 9,952 as one note: "and 2 more notes like these, not listed")
    assert _listed_and_counted(csp["notes"], "script-src has nonce-") == 10_000
    assert _listed_and_counted(products["notes"], "Server: p") == FLOOD
