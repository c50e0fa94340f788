"""The PDFs: text extracted with pdftotext (poppler) shows what issues 5 and 15 ask for; pdftoppm renders every page.

More of issue 15 (plain words, TLS tables, raw headers, any script) is in test_pdf_readable.py."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.api.fakes import make_report
from tests.fixtures.sites import RunningSite
from tests.pdf_text import pdf_pages as pages
from tests.reports import PRO_ORDER, impact_report
from tests.services.test_pdf_tables import page_words
from websec_app.scanner import SECTIONS, scan, section
from websec_app.services.pdf import render_compliance_pdf, render_scan_pdf, report_filename
from websec_app.services.pdf._layout import MARGIN
from websec_app.services.pdf._wording import item_title
from websec_app.services.pdf.compliance_report import DISCLAIMER
from websec_app.services.pdf.scan_report import _points
from websec_app.settings import Settings

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def flat(data: bytes) -> str:
    return re.sub(r"\s+", " ", " ".join(pages(data)))


def test_the_scan_pdf_shows_name_grade_score_every_section_and_fixes() -> None:
    report = make_report().to_dict(pro=True)

    text = flat(render_scan_pdf(report, "Acme <Corp> & Sons"))

    assert "Prepared for Acme <Corp> & Sons" in text
    assert "Grade C, score 64 / 100" in text
    for entry in SECTIONS:
        assert entry.title in text
    assert "default-src 'self'" in text  # a fix
    assert "Explanation of" in text  # an explanation (the fake report's)


def test_markup_in_the_name_or_a_header_value_prints_as_text() -> None:
    report = make_report().to_dict(pro=True)
    report["headers"]["Strict-Transport-Security"]["value"] = '<font size="80">max-age=1</font>\x00'

    text = flat(render_scan_pdf(report, '<b>x</b><font color="red">y</font> &amp;'))

    assert '<b>x</b><font color="red">y</font> &amp;' in text
    assert '<font size="80">max-age=1</font>' in text


def test_every_page_is_numbered() -> None:
    data = render_scan_pdf(make_report().to_dict(pro=True), "Acme")

    texts = pages(data)

    assert len(texts) >= 2
    for number, text in enumerate(texts, start=1):
        assert f"Page {number} of {len(texts)}" in text


def test_without_a_client_name_the_footer_says_when_it_was_scanned_in_words() -> None:
    texts = pages(render_scan_pdf(make_report().to_dict(pro=True)))

    assert all("Scanned 22 November 2026, 12:00 UTC" in text for text in texts)
    assert not any("2026-11-22T12:00:00Z" in text for text in texts)


def test_the_filename_comes_from_the_domain() -> None:
    assert report_filename("example.com") == "example.com-websec-report.pdf"
    assert report_filename("[2001:db8::1]") == "2001-db8-1-websec-report.pdf"
    assert report_filename("shop.example.com", kind="compliance") == "shop.example.com-websec-compliance.pdf"


def test_the_compliance_pdf_has_cover_summary_frameworks_plan_and_disclaimer() -> None:
    data = render_compliance_pdf(make_report().to_dict(pro=True), now=NOW)

    texts = pages(data)
    text = flat(data)

    assert "Security compliance assessment" in texts[0] and "Report date 22 November 2026, 12:00 UTC" in re.sub(
        r"\s+", " ", texts[0]
    )
    assert "Results by framework" in texts[0]
    assert "1. Assessment summary" in text and "CWE-693 Protection Mechanism Failure" in text
    for framework in ("OWASP Top 10 2021", "PCI DSS v4.0", "GDPR Article 32", "ISO/IEC 27001:2022 Annex A"):
        assert framework in text
    assert "A02:2021 Cryptographic Failures" in text and "4.2.1 Strong cryptography" in text
    assert "Remediation plan" in text and "1. " in text[text.rindex("Remediation plan") :]
    assert "Disclaimer" in text and "not an Approved Scanning Vendor (ASV) scan" in text
    assert DISCLAIMER.split(".")[0] in text
    assert f"Page 1 of {len(texts)}" in texts[0]


def test_a_malformed_report_still_renders_what_it_can() -> None:
    report: dict[str, Any] = {"url": "https://x.test/", "grade": "B", "score": 77, "headers": "garbage", "tls": []}

    assert "Website security report" in pages(render_scan_pdf(report))[0]
    assert "Security compliance assessment" in pages(render_compliance_pdf(report))[0]


@pytest.fixture(scope="module")
def worst_report(worst_site: RunningSite, scan_settings: Settings) -> dict[str, Any]:
    import asyncio

    return asyncio.run(scan(worst_site.url, scan_settings)).to_dict(pro=True, include_fix=True)


def test_a_real_scan_maps_to_cwe_and_requirements(worst_report: dict[str, Any]) -> None:
    text = flat(render_compliance_pdf(worst_report, now=NOW))

    assert "CWE-942 Permissive Cross-domain Policy" in text  # the worst site reflects origins with credentials
    assert "OWASP A01:2021" in text and "PCI DSS 6.2.4" in text
    plan = text[text.index("Remediation plan", text.index("Results by framework")) : text.index("Disclaimer")]
    points = [int(d) for d in re.findall(r"\b\d+\. .*?-(\d+) pts?\b", plan)]
    assert len(points) > 5 and points == sorted(points, reverse=True)


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) is installed by make test")
def test_every_page_renders_to_png(worst_report: dict[str, Any], tmp_path: Path) -> None:
    for name, data in (
        ("scan", render_scan_pdf(worst_report, "Acme GmbH")),
        ("compliance", render_compliance_pdf(worst_report, now=NOW)),
    ):
        path = tmp_path / f"{name}.pdf"
        path.write_bytes(data)
        subprocess.run(["pdftoppm", "-r", "30", "-png", str(path), str(tmp_path / name)], check=True, timeout=60)
        images = sorted(tmp_path.glob(f"{name}-*.png"))
        assert len(images) == len(pages(data))
        assert all(image.stat().st_size > 1000 for image in images)


def _in_order(text: str, names: list[str]) -> bool:
    positions = [text.find(name) for name in names]
    return -1 not in positions and positions == sorted(positions)


def test_the_scan_pdf_opens_with_the_five_fixes_that_gain_most(tmp_path: Path) -> None:
    # Given issue 11's report (CSP -15 warn, HSTS -12 weak, a session cookie -10 bad, ...)
    report = impact_report().to_dict(pro=True)

    # When page one's "Fix these first" table is read
    first = re.sub(r"\s+", " ", pages(render_scan_pdf(report, "Acme"))[0])
    block = first[first.index("Fix these first") :]

    # Then it is the shared ranking's first five, under plain titles, each with the points it costs
    titles = [item_title(name, _item(report, sec, name), header=sec == "headers") for sec, name, _ in PRO_ORDER]
    assert _in_order(block, titles[:5])
    assert titles[5] not in block
    assert re.findall(r"-(\d+) pts?\b", block) == [str(d) for _, _, d in PRO_ORDER[:5]]
    assert "All the problems found cost" not in block  # 58 points in all: fixing any of them raises the score
    # (the fake rule texts quote their ids: "Explanation of cookie.session_no_secure.")
    assert "cookie.session_no_secure (" not in block and "Session cookie sent over plain HTTP" in block


def _item(report: dict[str, Any], section_key: str, name: str) -> dict[str, Any]:
    body = report[section_key]
    if section_key == "headers":
        return body[name]  # type: ignore[no-any-return]
    return next(f for f in body["findings"] if f["check"] == name)  # type: ignore[no-any-return]


def test_the_compliance_plan_goes_by_points_lost() -> None:
    data = render_compliance_pdf(impact_report().to_dict(pro=True), now=NOW)

    text = flat(data)
    plan = text[text.index("Remediation plan", text.index("Results by framework")) : text.index("Disclaimer")]

    points = [int(d) for d in re.findall(r"\b\d+\. .*?-(\d+) pts?\b", plan)]
    assert points and points == sorted(points, reverse=True)
    assert points[:3] == [15, 12, 10]
    # and says so, without promising the fastest rise of a score that may stay at 0 (it is floored)
    assert "Problems by the points they cost: the largest score deduction first" in plan
    assert "raises the score" not in plan


def test_the_scan_pdf_titles_and_orders_its_sections_from_the_section_table() -> None:
    # Given a full report and the free body of the same scan
    report = make_report()

    # When each is printed
    full = flat(render_scan_pdf(report.to_dict(pro=True), "Acme"))
    free = flat(render_scan_pdf(report.to_dict(pro=False), "Acme"))

    # Then each part is numbered under the table's title, in the table's order, with the table's summary,
    # and the free PDF has no part for a Pro-only section
    parts = [f"{n}. {s.title}" for n, s in enumerate(SECTIONS, start=1)]
    assert _in_order(full, parts)
    assert all(s.summary in full for s in SECTIONS)
    shown = [s for s in SECTIONS if not s.pro_only]
    assert _in_order(free, [f"{n}. {s.title}" for n, s in enumerate(shown, start=1)])
    assert not any(s.summary in free for s in SECTIONS if s.pro_only)


def test_fixes_name_their_section_by_its_short_label() -> None:
    first = re.sub(r"\s+", " ", pages(render_scan_pdf(impact_report().to_dict(pro=True), "Acme"))[0])

    block = first[first.index("Fix these first") :]
    assert re.search(rf"Content Security Policy[^()]*\({section('headers').label}\)", block)
    assert re.search(rf"Session cookie sent over plain HTTP \([^)]*\) \({section('cookies').label}\)", block)


#: 85 characters: the running header's host once took two lines there, the rule under it striking the second.
LONG_HOST = f"{'a' * 40}.{'b' * 39}.test"


@pytest.mark.parametrize("render", [render_scan_pdf, render_compliance_pdf])
def test_a_long_host_keeps_the_running_header_on_one_line(render: Any) -> None:
    assert len(LONG_HOST) == 85
    data = render(make_report(f"https://{LONG_HOST}/").to_dict(pro=True))

    for number, words in enumerate(page_words(data), start=1):
        header = [(top, word) for top, word in words if top < MARGIN]  # above the text frame
        assert len({top for top, _ in header}) == 1, (number, header)  # one line
        line = " ".join(word for _, word in header)
        # shortened in the middle: the host's start and its domain are both still there
        assert f": {'a' * 10}" in line and "…" in line and "b.test" in line, line


_WORD_AT = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">([^<]*)</word>')


def _pages_of_words(data: bytes) -> list[list[tuple[float, str]]]:
    """(top, word) of each word of each page, by `pdftotext -bbox`."""
    out = subprocess.run(["pdftotext", "-bbox", "-", "-"], input=data, capture_output=True, check=True, timeout=60)
    pages = out.stdout.decode().split("<page ")[1:]
    return [[(float(y), html.unescape(w)) for _, y, w in _WORD_AT.findall(page)] for page in pages]


def _points_between(data: bytes, start: str, end: str) -> list[int]:
    """The "-N" figures below the first word `start` of the PDF and above the next word `end` on its page."""
    words = next(page for page in _pages_of_words(data) if any(w == start for _, w in page))
    top = next(y for y, w in words if w == start)
    bottom = next(y for y, w in words if w == end and y > top)
    return [int(w) for y, w in words if top < y < bottom and re.fullmatch(r"-\d+", w)]


def test_the_points_chart_shows_every_area_the_summary_table_lists(worst_report: dict[str, Any]) -> None:
    # Given the worst site's full report: ten areas lose points
    data = render_scan_pdf(worst_report, "Acme")

    # When page one's chart ("Points lost, by area") and page two's "Summary by area" table are read
    chart = _points_between(data, "area", "Fix")
    table = _points_between(data, "Summary", "1.")

    # Then the chart has a bar for every area the table says lost points, and the same total
    assert len(chart) == len(table) == 10
    assert sorted(chart) == sorted(table)
    assert sum(chart) == sum(table)


def test_on_a_score_of_0_fix_these_first_says_what_each_costs_not_what_it_gains(worst_report: dict[str, Any]) -> None:
    # Given the worst site: score 0, its problems costing far more than 100 points (the score is floored at 0)
    data = render_scan_pdf(worst_report, "Acme")
    total = -sum(_points_between(data, "Summary", "1."))
    assert worst_report["score"] == 0 and total > 140

    # When page one's "Fix these first" is read
    first = re.sub(r"\s+", " ", pages(data)[0])
    block = first[first.index("Fix these first") :]

    # Then each row says the points it costs (fixing the CORS echo alone, -40, leaves the score at 0), and the
    # table says how much must be fixed before the score moves
    assert "Gain" not in block and not re.search(r"\+\d+ points?", block)
    assert "Points lost" in block and re.findall(r"-(\d+) pts?\b", block)[0] == "40"
    assert (
        f"All the problems found cost {total} points together, more than the 100 a score starts from, so the "
        f"score stays at 0 until fixes take back more than {total - 100} points." in block
    )


def test_a_cookie_set_on_the_http_redirect_says_so_beside_the_pages_own(worst_report: dict[str, Any]) -> None:
    # Given the worst site, whose http:// answer sets the same two cookies as its page (graded since 8841df6)
    set_by = {(c["name"], c["set_by"]) for c in worst_report["cookies"]["cookies"]}
    assert set_by == {(n, u) for n in ("sessionid", "csrftoken") for u in ("https://worst.test/", "http://worst.test/")}

    text = flat(render_scan_pdf(worst_report, "Acme"))

    # Then each cookie is listed twice, the http:// one saying where it came from
    assert text.count("sessionid (session): no protections") == 2
    assert "sessionid (session): no protections (set by http://worst.test/)" in text
    assert "csrftoken (csrf): no protections (set by http://worst.test/)" in text
    assert "(set by https://worst.test/)" not in text  # the final page's own are not marked


def test_the_csp_proposals_advice_is_printed_once_with_its_fix_and_not_as_observed() -> None:
    # Given a Pro report of a site with no CSP: its fix is a policy built from the page, with how to roll it out
    from tests.factories import make_handshake, make_snapshot
    from websec_app.scanner.scan import grade_snapshot

    page = "<!doctype html><html><head><script src='https://cdn.example.net/a.js'></script></head><body></body></html>"
    report = grade_snapshot(make_snapshot(body=page, tls=make_handshake())).to_dict()
    rollout = "Report-Only first, use the site for a week"
    assert rollout in report["headers"]["Content-Security-Policy"]["fix_note"]

    # When the scan PDF and the compliance PDF print it
    for data in (render_scan_pdf(report, "Acme"), render_compliance_pdf(report, now=NOW)):
        text = flat(data)

        # Then the advice is printed once, after "How to fix", and never as what was observed
        assert text.count(rollout) == 1
        assert text.index("How to fix", text.index("Content-Security-Policy")) < text.index(rollout)
        assert "Observed: The proposed policy" not in text and "proposed policy" in text


def test_a_problem_worth_no_points_is_said_to_cost_none() -> None:
    # dns.address_down and csp.bypassable_script_host are shown among the fixes with the points they cost: none
    assert [_points(d) for d in (15, 1, 0)] == ["-15 pts", "-1 pt", "0 pts"]


def test_the_compliance_summary_counts_in_words_that_agree_with_the_numbers() -> None:
    # Given a report with exactly one problem: every other header and finding made good
    body = make_report().to_dict(pro=True)
    kept = False
    for part in (value for value in body.values() if isinstance(value, dict)):
        items = [v for v in part.values() if isinstance(v, dict) and "status" in v]
        items += [f for f in part.get("findings", []) if isinstance(f, dict)]
        for item in items:
            if item.get("status") not in (None, "good") and not kept:
                kept = True
                continue
            item.update(status="good", deduction=0)
    assert kept
    text = flat(render_compliance_pdf(body, now=NOW))
    # Then the summary says "1 problem", not "1 problems"
    summary = re.search(r"The scan made \d+ observations: \d+ controls in place and 1 problem \(", text)
    assert summary is not None, text[text.index("1. Assessment summary") :][:300]


def test_the_certificate_of_the_address_scanned_is_one_worded_row_of_the_tls_part() -> None:
    # Given a report whose page is on www while the address scanned served its own, expired certificate
    body = make_report().to_dict(pro=True)
    body["tls"]["entry_certificate"] = {
        "host": "example.com",
        "subject": "CN=example.com",
        "issuer": "CN=Example CA",
        "not_after": "2026-10-23T12:00:00+00:00",
        "days_to_expiry": -30,
        "san": ["example.com"],
        "sha256_fingerprint": "ab" * 32,
    }
    text = flat(render_scan_pdf(body, "Acme"))
    # Then the TLS part says whose it is and that it expired, in words, not its raw fields
    assert "Certificate of the address scanned" in text
    assert "example.com: expired on 2026-10-23; issued by CN=Example CA; names covered: example.com" in text
    assert "Entry certificate" not in text and "Days until expiry: -30" not in text
