"""Values a hostile site can send that once made a check raise: a URL Python cannot split, a port out of
range, a number past int()'s 4300 digits. Each check now reads them as browsers do (a URL that does not parse
loads nothing; a huge max-age is huge), so nothing comes back as check.crashed, whose grade cap would
otherwise punish the site for a fault of ours (scan.run_checks)."""

from __future__ import annotations

import pytest

from tests.factories import make_response, make_snapshot
from websec_app.scanner.report import ScanReport
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import FetchChain

HSTS_GOOD = ("Strict-Transport-Security", "max-age=63072000; includeSubDomains")


def graded(body: str = "", headers: tuple[tuple[str, str], ...] = (), **overrides: object) -> ScanReport:
    return grade_snapshot(make_snapshot(headers=headers, body=body, **overrides))


def crashed(report: ScanReport) -> list[str]:
    return [cap["outcome"] for cap in report.caps if cap["outcome"] == "check.crashed"]


def outcomes(report: ScanReport, section: str) -> set[str]:
    return {finding["check"] for finding in report.sections[section]["findings"]}


@pytest.mark.parametrize(
    "tag",
    [
        '<img src="http://[oops/x.png">',  # an unclosed IPv6 bracket: urlsplit raises
        '<script src="https://cdn.example.net:99999/a.js"></script>',  # a port out of range
        '<script src="https://cdn.example.net:-1/a.js"></script>',
        '<link rel=stylesheet href="https://cdn.example.net:abc/a.css">',
        '<base href="http://[oops/">',
        '<base href="https://elsewhere.example.net:99999/">',
    ],
)
def test_a_url_browsers_cannot_parse_loads_nothing_and_crashes_nothing(tag: str) -> None:
    page = f"<html><head>{tag}</head><body><img src='/ok.png'></body></html>"

    report = graded(page)

    assert crashed(report) == []
    assert "page.mixed_active" not in outcomes(report, "page_analysis")
    assert report.sections["headers"]["Content-Security-Policy"]["status"] == "missing"  # graded, with its fix
    assert report.sections["headers"]["Content-Security-Policy"]["fix"]


def test_an_hsts_max_age_past_ints_digit_limit_is_read_as_huge() -> None:
    report = graded(headers=(("Strict-Transport-Security", "max-age=" + "9" * 5000 + "; includeSubDomains"),))

    assert crashed(report) == []
    assert report.sections["headers"]["Strict-Transport-Security"]["status"] == "good"


def test_leading_zeros_do_not_make_an_hsts_max_age_huge() -> None:
    report = graded(headers=(("Strict-Transport-Security", "max-age=" + "0" * 5000 + "60; includeSubDomains"),))

    assert report.sections["headers"]["Strict-Transport-Security"]["status"] == "weak"  # 60 s: hsts.short_max_age


@pytest.mark.parametrize(
    "fields",
    [
        "Contact: https://[oops/report\nContact: mailto:security@example.com\n",
        "Contact: mailto:security@example.com\nCanonical: https://[oops/.well-known/security.txt\n",
        "Contact: mailto:security@example.com\nCanonical: https://example.com:99999/.well-known/security.txt\n",
    ],
)
def test_a_security_txt_url_that_does_not_parse_is_a_fault_of_the_file_not_a_crash(fields: str) -> None:
    url = "https://example.com/.well-known/security.txt"
    body = fields + "Expires: 2099-01-01T00:00:00Z\n"
    chain = FetchChain(url, (make_response(url, 200, body=body, content_type="text/plain; charset=utf-8"),))

    report = graded(headers=(HSTS_GOOD,), security_txt=chain)

    assert crashed(report) == []
    assert outcomes(report, "security_txt") & {"security_txt.lint", "security_txt.canonical_mismatch"}
