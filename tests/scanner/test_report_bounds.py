"""What a hostile site sends in bulk (a Set-Cookie flood over a redirect chain, thousands of Server lines) must
not make grading quadratic or the report huge: docs/threat-model.md promises bounded sections.

The floods below are far larger than a site can send in one scan: the code they test was quadratic in them
and would take many minutes here (this file would hang), where linear code takes a fraction of a second.
Nothing here reads a clock: the assertions are on sizes and counts.
"""

from __future__ import annotations

import json

from websec_app.scanner.findings import CheckResult, Finding
from websec_app.scanner.fixes import writers_config
from websec_app.scanner.fixes.actions import CookieAttributes, action_for
from websec_app.scanner.fixes.remedies import remedy_table
from websec_app.scanner.fixes.snippets import render_snippets
from websec_app.scanner.grading import LIST_LIMIT, grade
from websec_app.scanner.rules import default_rulebook

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

    # Then the finding names the first 50 cookies, says how many more there are, and its snippets edit those 50
    (finding,) = graded.sections["cookies"]["findings"]
    assert LIST_LIMIT == 50
    assert finding["subjects"] == names[:LIST_LIMIT]
    notes = finding["note"].split("; ")
    assert notes[:LIST_LIMIT] == [f"{name} (set by the redirect response from {PAGE_URL})" for name in names[:50]]
    assert notes[LIST_LIMIT:] == [
        "and 199,950 more subjects like these, not listed",
        "and 199,950 more notes like these, not listed",
    ]
    assert finding["fix_snippets"]["nginx"].count("proxy_cookie_flags c") == LIST_LIMIT
    assert len(json.dumps(graded.sections)) < 100_000  # 1.6 KB a cookie listed, most of it the snippets
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
