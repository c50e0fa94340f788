"""A site that sets more cookies than Chromium keeps is graded on the cookies Chromium keeps.

Given one fixture site answering each case's path with that case's Set-Cookie lines (a redirect chain when the
case has several responses), when headless Chromium (Debian's 156, through Playwright) loads each case in a fresh
browser context, then the cookies it stores (CDP Network.getAllCookies) are exactly the cookies the check grades
for the same lines: the names of its findings on stored cookies (the cases give each cookie a name of its own).

The cases are the review's (200 and 181 cookies; 180 Secure cookies and a session cookie without Secure after
them; a session cookie set bare, 180 cookies, then set again with every protection), then what decides which
cookie Chromium evicts past 180 (net/cookies/cookie_monster.cc): least recently set first, Priority and Secure
in its six rounds, Domain and host-only cookies counted together, partitioned cookies apart with their own
bounds, a cookie set again becoming the most recent, a deletion making room, a redirect's cookies; then mixes
of all of it drawn from fixed seeds. The site's names end in .com: Chromium counts cookies by registrable
domain, and knows none under .test.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.factories import make_response, make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from tests.scanner.browser import chromium_for_site
from websec_app.scanner.checks.cookies import check_cookies
from websec_app.scanner.findings import CheckResult

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: A case: the Set-Cookie lines of each response of the chain, the last one the page. {domain} stands for the
#: site's registrable name; pages are loaded from www.{domain}.
Case = list[list[str]]

#: Findings on cookies the browser does not store.
NOT_STORED = {"cookie.rejected", "cookie.prefix_violation", "cookie.malformed", "cookie.too_many", "cookie.none"}


def numbered(prefix: str, count: int, attributes: str = "", start: int = 0) -> list[str]:
    return [f"{prefix}{i:03d}=v; Path=/{attributes}" for i in range(start, start + count)]


CASES: dict[str, Case] = {
    # The review's probe: the first 31 go, in one purge down to 150, then 19 more are added
    "two_hundred": [numbered("c", 200)],
    "one_over": [numbered("c", 181)],
    # Review A: the session cookie without Secure is the one Chromium evicts (the Secure ones are spared)...
    "secure_then_bare_session": [[*numbered("c", 180, "; Secure"), "sessionid=abc; Path=/"]],
    # ...but after cookies without Secure, or of low priority, it is kept, and the 31 oldest go
    "bare_then_bare_session": [[*numbered("c", 180), "sessionid=abc; Path=/"]],
    "low_priority_then_bare_session": [
        [*numbered("c", 180, "; Secure; HttpOnly; SameSite=Lax; Priority=Low"), "sessionid=abc; Path=/"]
    ],
    # Review B: the bare session cookie is evicted; the one set last, with every protection, is kept
    "session_set_again_after_180": [
        [
            "sessionid=old; Path=/",
            *numbered("c", 180, "; Secure"),
            "sessionid=new; Path=/; Secure; HttpOnly; SameSite=Lax",
        ]
    ],
    # Priority: Low goes before High however recent; Low with Secure before Medium without (round 2, then 3)
    "high_then_low": [[*numbered("h", 100, "; Priority=High"), *numbered("l", 81, "; priority=LOW")]],
    "low_secure_then_medium": [[*numbered("l", 60, "; Secure; Priority=Low"), *numbered("m", 121)]],
    "unknown_priority_is_medium": [[*numbered("h", 90, "; Priority=High"), *numbered("u", 91, "; Priority=urgent")]],
    # Secure cookies are spared while there are others of their priority to evict
    "every_third_secure": [[f"m{i:03d}=v; Path=/" + ("; Secure" if i % 3 == 0 else "") for i in range(181)]],
    # Host-only and Domain cookies share the site's 180, least recently set first
    "host_then_domain": [[*numbered("h", 100), *numbered("d", 81, "; Domain={domain}")]],
    # Partitioned cookies are kept apart: at most 180, and 10,240 bytes of names and values
    "partitioned": [[*numbered("p", 200, "; Secure; Partitioned"), *numbered("c", 10)]],
    "partitioned_bytes": [[f"p{i:03d}={'x' * 100}; Path=/; Secure; Partitioned" for i in range(120)]],
    # A cookie set again is the most recent; a deletion makes room
    "set_again": [[*numbered("c", 180), "c000=w; Path=/", "c180=v; Path=/"]],
    "deleted": [[*numbered("c", 180), "c100=; Path=/; Max-Age=0", "c180=v; Path=/", "c181=v; Path=/"]],
    # Over a redirect: the redirect's cookies are the oldest; one the page sets again is kept as the page sets it
    "redirect": [numbered("a", 100), [*numbered("b", 100), "a000=w; Path=/"]],
    # ...and a redirect's cookie the page set again goes when the page's does
    "redirect_set_again_then_pushed": [numbered("c", 100), [*numbered("c", 180, "; Secure"), *numbered("d", 31)]],
    # ...unless the page is another site's, which has 180 of its own (CROSS_SITE)
    "to_another_site": [numbered("a", 150), numbered("b", 150)],
}
#: The cases whose page is on the other site, www.{other}: the redirect before it is on www.{domain}.
CROSS_SITE = ("to_another_site",)


def drawn(seed: int) -> Case:
    """A chain of one to three responses setting some 300 cookies of every kind: Secure or not, each Priority,
    host-only or Domain, two paths, partitioned, set again (in the same response or a later one), deleted in the
    response that set it, and lines Chromium refuses or cannot read."""
    draw = random.Random(seed)
    scope: dict[str, str] = {}  # a name's Domain, Path and Partitioned, fixed so that a name is one cookie
    first_set: dict[str, int] = {}  # the response that first set a name
    chain: Case = []
    responses = draw.randint(1, 3)
    for response in range(responses):
        lines: list[str] = []
        for _ in range(draw.randint(320, 520) // responses):
            roll = draw.random()
            if roll < 0.03:
                lines.append("no-equals-sign")
                continue
            if roll < 0.06:
                lines.append(f"x{draw.randrange(10**6)}=v; Domain=other.example")  # refused: not the site's
                continue
            if roll < 0.08 and (mine := sorted(n for n, r in first_set.items() if r == response)):
                name = draw.choice(mine)
                lines.append(f"{name}=; {scope[name]}; Secure; Max-Age=0")  # Secure: a partitioned one needs it
                continue
            if roll < 0.2 and first_set:
                name = draw.choice(sorted(first_set))
            else:
                name = f"k{len(scope):03d}"
                scope[name] = "; ".join(
                    filter(
                        None,
                        [
                            draw.choice(["Path=/", "Path=/app"]),
                            "Domain={domain}" if draw.random() < 0.3 else "",
                            "Partitioned" if draw.random() < 0.1 else "",
                        ],
                    )
                )
                first_set[name] = response
            secure = "Partitioned" in scope[name] or draw.random() < 0.5
            priority = draw.choice(["", "; Priority=Low", "; Priority=Medium", "; Priority=High", "; Priority=x"])
            value = "v" * draw.randint(1, 120)
            lines.append(f"{name}={value}; {scope[name]}{'; Secure' if secure else ''}{priority}")
        chain.append(lines)
    return chain


SEEDS = (1, 2, 3, 4, 5, 6)
CASES.update({f"drawn_{seed}": drawn(seed) for seed in SEEDS})


def case_lines(case: Case, domain: str) -> Case:
    return [[line.replace("{domain}", domain) for line in lines] for lines in case]


def case_urls(name: str, hops: int, www: str, other_www: str) -> list[str]:
    """https://www.{domain}/<name>/0, /1 ... the last one on www.{other} for a CROSS_SITE case."""
    urls = [f"https://{www}/{name}/{hop}" for hop in range(hops)]
    if name in CROSS_SITE:
        urls[-1] = f"https://{other_www}/{name}/{hops - 1}"
    return urls


def chain_responses(urls: Sequence[str], lines: Sequence[Sequence[str]]) -> dict[str, Response]:
    """Each URL's path answers with its lines, redirecting to the next URL, the last one the page."""
    routes = {}
    for hop, (url, hop_lines) in enumerate(zip(urls, lines, strict=True)):
        cookies = [("Set-Cookie", line) for line in hop_lines]
        if hop + 1 < len(lines):
            routes[urlsplit(url).path] = Response(302, [("Location", urls[hop + 1]), *cookies], "")
        else:
            routes[urlsplit(url).path] = Response(200, [("Content-Type", "text/html"), *cookies], "ok")
    return routes


def checked(urls: Sequence[str], lines: Sequence[Sequence[str]]) -> CheckResult:
    """The cookies check of the same chain."""
    redirects = [
        make_response(url, 302, [("Location", next_url), *(("Set-Cookie", line) for line in hop_lines)])
        for url, next_url, hop_lines in zip(urls, urls[1:], lines, strict=False)
    ]
    return check_cookies(
        make_snapshot(urls[-1], headers=[("Set-Cookie", line) for line in lines[-1]], redirects=redirects)
    )


def graded(result: CheckResult) -> list[str]:
    """The names of the cookies the check grades as stored."""
    return sorted({f.subject for f in result.findings if f.outcome not in NOT_STORED and f.subject is not None})


def stored_by(browser: Any, url: str) -> list[str]:
    """The names of the cookies a fresh Chromium context keeps after loading `url`, but for one without a name:
    Chromium stores a line without a name (6265bis 5.6: an empty name, the text as its value), which takes a
    place in its store as the check counts it, and the check reports the line as malformed."""
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.goto(url)
        cookies = context.new_cdp_session(tab).send("Network.getAllCookies")["cookies"]
    finally:
        context.close()
    return sorted(cookie["name"] for cookie in cookies if cookie["name"])


def test_chromium_keeps_exactly_the_cookies_the_check_grades(site_factory: SiteFactory, pki: Pki) -> None:
    domain = site_factory.unique_host("cookie-jar").removesuffix(".test") + ".com"
    other = site_factory.unique_host("cookie-jar-other").removesuffix(".test") + ".com"
    chains = {name: case_lines(case, domain) for name, case in CASES.items()}
    urls = {name: case_urls(name, len(lines), f"www.{domain}", f"www.{other}") for name, lines in chains.items()}
    routes = {path: route for name in chains for path, route in chain_responses(urls[name], chains[name]).items()}
    names = (domain, f"www.{domain}", f"www.{other}")
    site = site_factory(Site(names=names, routes=routes, tls=TlsConfig(cert="service")))
    try:
        with chromium_for_site(site, pki) as browser:
            seen = {name: stored_by(browser, urls[name][0]) for name in chains}
    finally:
        site.stop()

    results = {name: checked(urls[name], lines) for name, lines in chains.items()}
    assert seen == {name: graded(result) for name, result in results.items()}
    # and what Chromium kept is what the review and cookie_monster.cc say, so the comparison is not of two empties
    assert seen["two_hundred"] == [f"c{i:03d}" for i in range(31, 200)]
    assert seen["one_over"] == [f"c{i:03d}" for i in range(31, 181)]
    assert seen["secure_then_bare_session"] == [f"c{i:03d}" for i in range(30, 180)]
    assert seen["bare_then_bare_session"] == [*(f"c{i:03d}" for i in range(31, 180)), "sessionid"]
    assert seen["low_priority_then_bare_session"] == seen["bare_then_bare_session"]
    assert seen["session_set_again_after_180"] == [*(f"c{i:03d}" for i in range(30, 180)), "sessionid"]
    assert seen["high_then_low"] == [*(f"h{i:03d}" for i in range(100)), *(f"l{i:03d}" for i in range(31, 81))]
    assert seen["low_secure_then_medium"] == [
        *(f"l{i:03d}" for i in range(30, 60)),
        *(f"m{i:03d}" for i in range(1, 121)),
    ]
    assert len(seen["partitioned"]) == 190 and len(seen["partitioned_bytes"]) == 98
    assert len(seen["to_another_site"]) == 300
    assert all(results[f"drawn_{seed}"].details["evicted"] for seed in SEEDS)  # every mix overflows the store
