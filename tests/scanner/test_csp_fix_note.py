"""The CSP proposal's notes (what the proposed policy allows, how to roll it out) are the fix's `fix_note`: shown and
stripped with the fix. A free report (no fix, no snippets) says only what was found on the site; the Pro report
and every renderer of its fix give the advice once, beside the fix."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.factories import make_handshake, make_snapshot
from websec_app.cli.scan_cmd import render_text
from websec_app.report_formats import render_junit, render_markdown, render_sarif
from websec_app.report_formats.markdown import escape
from websec_app.scanner.report import ScanReport
from websec_app.scanner.scan import grade_snapshot

CSP = "Content-Security-Policy"
PAGE = (
    "<!doctype html><html><head><script src='https://cdn.example.net/app.js'></script><script>start()</script>"
    "</head><body><a href='#' onclick='go()'>go</a></body></html>"
)
#: Words only the proposal's notes use: its rollout advice, the proposal itself, its snippets.
PROPOSAL_WORDS = ("Report-Only first", "proposed policy", "snippets", "Roll the policy out", "the policy blocks")
ROLLOUT = "Report-Only first, use the site for a week"
ENFORCE = "The proposed policy is the site's own Report-Only policy"

#: site -> (the CSP headers it sends, what the finding's note says was found, the advice its fix comes with)
SITES: dict[str, tuple[list[tuple[str, str]], str | None, str]] = {
    "no CSP": ([], None, ROLLOUT),
    "a weak CSP": ([(CSP, "script-src *; object-src 'none'")], "scripts may load from *", ROLLOUT),
    "a repaired CSP": (
        [(CSP, "script-src 'self' 'unsafe-eval'; object-src 'none'; base-uri 'none'")],
        "'unsafe-eval'",
        ROLLOUT,
    ),
    "only Report-Only": (
        [("Content-Security-Policy-Report-Only", "default-src 'self'; script-src 'self'")],
        "only reports violations",
        ENFORCE,
    ),
}


def _report(site: str) -> ScanReport:
    headers, _, _ = SITES[site]
    # a sound TLS handshake, so the CSP fix is among the five the text report writes out
    return grade_snapshot(make_snapshot("https://example.com/", body=PAGE, headers=headers, tls=make_handshake()))


def _free(report: ScanReport) -> dict[str, Any]:
    return report.to_dict(pro=False, include_fix=False)


def _texts(node: object) -> list[str]:
    """Every string value of a JSON body (not its keys: `fix_snippets` is a key of every free body)."""
    if isinstance(node, dict):
        return [text for value in node.values() for text in _texts(value)]
    if isinstance(node, list):
        return [text for item in node for text in _texts(item)]
    return [node] if isinstance(node, str) else []


@pytest.mark.parametrize("site", SITES)
def test_a_free_report_says_what_was_found_and_nothing_of_the_proposal(site: str) -> None:
    # Given a site with no CSP, a weak one, one the proposal repairs, or only a Report-Only one
    _, found, _ = SITES[site]
    report = _report(site)

    # When the free body is built (no fixes)
    free = _free(report)

    # Then no word of the proposal's notes is anywhere in it, and its CSP note says what was found
    texts = _texts(free)
    assert [(word, text) for word in PROPOSAL_WORDS for text in texts if word in text] == []
    csp = free["headers"][CSP]
    assert csp["fix"] is None and csp["fix_snippets"] is None and csp["fix_note"] is None
    if found is None:
        assert csp["note"] is None
    else:
        assert found in csp["note"]


@pytest.mark.parametrize("site", SITES)
def test_the_pro_report_gives_the_advice_once_beside_the_fix(site: str) -> None:
    _, found, advice = SITES[site]
    pro = _report(site).to_dict()

    csp = pro["headers"][CSP]
    assert csp["fix"] and advice in csp["fix_note"]
    assert json.dumps(pro).count(advice) == 1  # in the fix's note, not again in the finding's note
    assert not any(word in (csp["note"] or "") for word in PROPOSAL_WORDS), csp["note"]
    if found is not None:
        assert found in csp["note"]
    # whole sentences, each ended, beside a fix that is still the header value alone
    assert csp["fix_note"].endswith(".") and ".." not in csp["fix_note"]
    assert not any(word in csp["fix"] for word in PROPOSAL_WORDS)
    # a free body with full=1 carries the fix, so its note too
    assert _report(site).to_dict(pro=False, include_fix=True)["headers"][CSP]["fix_note"] == csp["fix_note"]


def test_every_fix_carrier_has_a_fix_note_null_where_its_fix_is() -> None:
    body = _report("no CSP").to_dict()
    carriers = [h for h in body["headers"].values()] + [
        f for section in body.values() if isinstance(section, dict) for f in section.get("findings") or []
    ]
    for item in carriers:
        assert "fix_note" in item, item
        if item["fix"] is None:
            assert item["fix_note"] is None, item
    assert [h for h, item in body["headers"].items() if item["fix_note"]] == [CSP]


@pytest.mark.parametrize("site", SITES)
def test_the_text_report_prints_the_advice_once_with_the_fix_and_the_free_one_none(site: str) -> None:
    _, _, advice = SITES[site]
    report = _report(site)

    pro, free = render_text(report), render_text(report, free=True)

    assert pro.count(advice) == 1
    snippets = pro.split("How to fix them in", 1)[1]
    [csp_fix] = [fix for fix in re.split(r"\n  \d+\. ", snippets) if fix.startswith(CSP)]
    assert advice in csp_fix  # under the CSP fix, beside its snippet
    assert [word for word in PROPOSAL_WORDS if word in free] == []


@pytest.mark.parametrize("site", SITES)
def test_ci_formats_give_the_advice_once_with_the_fix_and_none_without_it(site: str) -> None:
    _, _, advice = SITES[site]
    report = _report(site)
    pro, free = report.to_dict(), _free(report)

    sarif = json.loads(render_sarif(pro))
    [csp] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == f"headers/{CSP}"]
    assert csp["message"]["text"].count(advice) == 1
    assert render_sarif(pro).count(advice) == 1  # the rule's help has the fix line alone
    assert render_junit(pro).count(advice) == 1
    assert render_markdown(pro).count(escape(advice)) == 1
    for rendered in (render_sarif(free), render_junit(free), render_markdown(free)):
        assert [word for word in PROPOSAL_WORDS if word in rendered] == []
