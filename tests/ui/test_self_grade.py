"""The service grades itself: our scanner, run for real, against the real app that `make run` serves.

Given the app reached the way users reach a deployment, https://<name>/ through a TLS terminator on a loopback
address (tests/fixtures/tls_terminator.py, `edge_for` in conftest.py), port 80 answering a 301 to https and
the name in the fixture DNS,
when the scanner fetches and grades a page (the fixture DNS and test CA configured as in `scan_settings`),
then the grade is A+ and the outcomes that are not good are exactly the ones listed below, each with its
reason: a regression in our own headers, CORS, cookies or pages adds an outcome and fails here.

What is graded is the app. The edge is set up like the best-practice fixture site, since it belongs to the
operator: certificate chain and TLS suites (Mozilla "intermediate"), the 301 on port 80 and the DNS zone
(signed, CAA, null MX, SPF, DMARC: `catalog.best_dns_records`). The report's header objects carry no outcome
IDs, so the outcomes are read from the checks run on the same snapshot the report was graded from.

Two configurations of the same build:
- `deployment` (conftest.py): `WEBSEC_ENV=production`, as compose.yaml runs it. The app sends HSTS itself and
  the terminator adds nothing (asserted). Shared with test_two_processes.py, so no extra server starts here.
- the session's `app`: `WEBSEC_ENV=development`, the `make run` default: also A+, see
  `test_in_development_the_app_grades_a_plus_too`. Over plain HTTP it sends no HSTS (correct:
  browsers ignore HSTS over http, RFC 6797 §8.1), and nothing under `make run` turns `X-Forwarded-Proto` into
  the ASGI scope's scheme (granian is not wrapped with proxy headers; `api_routes/security_headers.py` reads
  `scope["scheme"]`), which the first test shows. So this edge adds the app's own production value,
  `security_headers.HSTS`, to responses without one, as an nginx edge with `add_header` would.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from api_routes.middleware.security_headers import HSTS
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SiteFactory
from websec_app.scanner.fetch import fetch_snapshot
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import grade_snapshot, run_checks
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

from .conftest import App, Deployment, Edge, edge_for, upstream_of

#: The trade-offs documented in api_routes/security_headers.py, on the UI's pages.
PAGE_TRADE_OFFS = {
    "coep.missing",  # COEP require-corp would block Razorpay's cross-origin checkout iframe
    "coop.allow_popups",  # Razorpay's netbanking/UPI popups need their opener
    "csp.unsafe_inline_style",  # Emotion and Radix insert <style> elements and style= attributes, nonce-less
}

#: Path -> the exact outcomes that are not good, in production.
EXPECTED_IN_PRODUCTION = {
    "/": PAGE_TRADE_OFFS,
    # Swagger UI's page is not the UI: no popups to allow (COOP same-origin), but the same two style and COEP
    # trade-offs (Swagger UI sets style= attributes; the page keeps COEP off like every HTML page).
    "/docs": {"coep.missing", "csp.unsafe_inline_style"},
    "/api/health": set(),  # JSON: the closed API header set
}


@dataclass(frozen=True)
class SelfGrade:
    score: int
    grade: str
    not_good: set[str]  # outcome IDs whose status is not "good"
    caps: tuple[dict[str, str], ...]


async def _self_grade(url: str, settings: Settings) -> SelfGrade:
    snapshot = await fetch_snapshot(parse_target(url), settings)
    report = grade_snapshot(snapshot)
    book = default_rulebook()
    outcomes = {finding.outcome for result in run_checks(snapshot) for finding in result.findings}
    return SelfGrade(
        report.score, report.grade, {o for o in outcomes if book.rule(o).status != "good"}, tuple(report.caps)
    )


@pytest.fixture(scope="module")
def development_edge(app: App, site_factory: SiteFactory, pki: Pki) -> Iterator[Edge]:
    """https://websec-dev-N.test/ in front of the session's (development) app, adding HSTS (module docstring)."""
    with edge_for(site_factory, pki, site_factory.unique_host("websec-dev"), upstream_of(app), add_hsts=HSTS) as edge:
        yield edge


@pytest.mark.parametrize("path", list(EXPECTED_IN_PRODUCTION))
async def test_in_production_the_service_grades_itself_a_plus(
    deployment: Deployment, scan_settings: Settings, path: str
) -> None:
    terminator = deployment.edge.terminator
    seen = len(terminator.exchanges)

    result = await _self_grade(deployment.edge.url(path), scan_settings)

    assert (result.grade, result.not_good) == ("A+", EXPECTED_IN_PRODUCTION[path]), result
    assert result.caps == ()
    exchanges = terminator.exchanges[seen:]
    assert any(e.target == path and e.status == 200 for e in exchanges), exchanges
    assert not any(e.hsts_added for e in exchanges), "in production the app sends HSTS itself"


def test_the_development_app_does_not_take_https_from_x_forwarded_proto(app: App) -> None:
    """Why the development edge adds HSTS: told "https" by a header, the app still sends none."""
    response = httpx.get(app.path("/api/health"), headers={"X-Forwarded-Proto": "https"}, timeout=10)

    assert response.status_code == 200
    assert "strict-transport-security" not in response.headers


async def test_in_development_the_app_grades_a_plus_too(development_edge: Edge, scan_settings: Settings) -> None:
    """The `make run` default answers no CORS at all (rxconfig.py: `cors_allowed_origins=[]` outside production).

    It used to keep Reflex's "*", which answers any Origin, `null` included, with that origin and
    `Access-Control-Allow-Credentials: true`: graded critical twice (-40 each) and capped, F. Its security.txt
    names no Canonical: WEBSEC_BASE_URL is the app's plain-HTTP address here, and RFC 9116 2.5.2 wants https (it
    named it, which was a canonical_mismatch, and a security_txt.lint once the scanner read URIs as the RFC does).
    """
    seen = len(development_edge.terminator.exchanges)

    result = await _self_grade(development_edge.url("/"), scan_settings)

    assert (result.grade, result.not_good) == ("A+", PAGE_TRADE_OFFS), result
    assert result.caps == ()
    assert any(e.hsts_added for e in development_edge.terminator.exchanges[seen:])
