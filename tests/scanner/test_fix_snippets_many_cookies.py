"""A finding lists 50 of its cookies (grading.LIST_LIMIT), but its fix snippets are pasted as they are: they edit
every cookie the finding is about, up to grading.SNIPPET_LIMIT names within SNIPPET_NAME_BUDGET characters, and
the fix_note says which are left out past that. nginx's proxy_cookie_flags, Apache's and Caddy's edits and IIS's
rules change only the cookies they name, so a snippet naming 50 of 60 leaves 10 without Secure."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tests.factories import make_snapshot
from websec_app.scanner.fixes import SERVERS
from websec_app.scanner.grading import SNIPPET_NAME_BUDGET
from websec_app.scanner.scan import grade_snapshot

URL = "https://example.com/"


def findings_of(set_cookies: Sequence[str]) -> dict[str, dict[str, Any]]:
    report = grade_snapshot(make_snapshot(URL, headers=[("Set-Cookie", line) for line in set_cookies])).to_dict()
    return {f["check"]: f for f in report["cookies"]["findings"]}


def test_the_snippets_of_sixty_session_cookies_without_secure_edit_all_sixty() -> None:
    # Given a page setting 60 session cookies without Secure (the finding lists 50 of them)
    names = [f"sessionid{i}" for i in range(60)]
    finding = findings_of([f"{name}=v; Path=/; HttpOnly; SameSite=Lax" for name in names])["cookie.session_no_secure"]
    assert len(finding["subjects"]) == 50 and finding["subjects_not_listed"] == 10

    # Then every server's snippet names the 60th too (before: sessionid0 to sessionid49, silently)
    for server in SERVERS:
        assert "sessionid59" in finding["fix_snippets"][server], server
    assert finding["fix_snippets"]["nginx"].count("proxy_cookie_flags sessionid") == 60
    # and nothing is said to be left out
    assert finding["fix_note"] is None


def test_the_nginx_line_of_a_cookie_past_the_fifty_listed_adds_the_samesite_it_lacks() -> None:
    # 60 cookies lacking Secure and SameSite: nginx applies only the first line matching a cookie, so the
    # no_secure finding's line for each of them must carry samesite= too (grading hands the writer the cookies
    # the no_samesite finding is about, not the 50 it lists)
    findings = findings_of([f"c{i}=v; Path=/" for i in range(60)])
    nginx = findings["cookie.no_secure"]["fix_snippets"]["nginx"]
    assert "proxy_cookie_flags c59 secure samesite=lax;" in nginx
    assert nginx.count("samesite=lax;") == 60


def test_apache_caddy_and_iis_edit_a_findings_cookies_with_one_edit_per_attribute() -> None:
    # 2 KB of configuration a cookie would make the fix of 180 cookies 380 KB a finding: one pattern names them
    finding = findings_of([f"c{i}=v; Path=/; Secure; SameSite=Lax" for i in range(180)])["cookie.no_httponly"]
    alternation = "(?:" + "|".join(f"c{i}" for i in range(180)) + ")="
    apache, caddy, iis = (finding["fix_snippets"][server] for server in ("apache", "caddy", "iis"))
    edits = [line for line in apache.splitlines() if line.startswith("Header ")]
    assert len(edits) == 6 and all(alternation in line for line in edits)  # 3 attributes, 2 tables each
    assert caddy.count(alternation) == 6  # each attribute appended, then taken back where the cookie had it
    assert iis.count("<rule ") == 3 and iis.count(f'pattern="^{alternation}.*$"') == 3


def test_a_finding_whose_cookie_names_exceed_the_budget_says_which_its_snippets_leave_out() -> None:
    # Given 180 cookies with 125-character names (a hostile site: 1.4 MB of snippets if each were named)
    names = ["n" * 120 + f"{i:05d}" for i in range(180)]
    findings = findings_of([f"{name}=1" for name in names])
    finding = findings["cookie.no_httponly"]

    # Then the snippets name as many as the budget holds, the first 65, and the fix_note says so
    named = SNIPPET_NAME_BUDGET // 125
    assert named == 65
    for server in SERVERS:
        text = finding["fix_snippets"][server]
        assert names[named - 1] in text and names[named] not in text, server
    assert finding["fix_note"] == (
        "The snippets edit the first 65 of the 180 this is about (those they name): make the same change for the "
        "other 115."
    )
    # and the cookies section stays under the 0.66 MB the 50 listed cookies' snippets made before
    assert len(json.dumps({"findings": list(findings.values())})) < 600_000


def test_a_findings_snippets_that_name_no_cookie_say_nothing_of_the_ones_left_out() -> None:
    # A plain-HTTP page: a fix about Secure is a sentence saying to serve HTTPS first, naming no cookie
    names = ["n" * 120 + f"{i:05d}" for i in range(100)]
    report = grade_snapshot(
        make_snapshot("http://example.com/", headers=[("Set-Cookie", f"{name}=1; HttpOnly") for name in names])
    ).to_dict()
    (finding,) = [f for f in report["cookies"]["findings"] if f["check"] == "cookie.no_secure"]
    assert re.match(r"Not yet: this page is served over plain HTTP", finding["fix_snippets"]["nginx"])
    assert finding["fix_note"] is None
