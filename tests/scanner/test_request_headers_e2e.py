"""`scan --header` (issue 17): a staging site behind basic auth is scanned with the user's header, which goes
to the site's own origin only: never to another host after a redirect, never over plain HTTP, never into the
report or the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Redirect, Request, Response, SiteFactory, html
from websec_app.scanner import scan
from websec_app.scanner.request_headers import BadHeader, OriginHeaders, parse_header_line
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Basic c3RhZ2luZzpzM2NyZXQtcHJldmlldw=="  # staging:s3cret-preview


def _has_secret(request: Request) -> bool:
    return any(name.lower() == "authorization" and value == SECRET for name, value in request.headers)


@pytest.fixture
def staging(site_factory: SiteFactory):
    """A site that answers 401 without the header; with it, its page, whose /away redirects to another host."""
    elsewhere = site_factory(catalog.simple_site(site_factory.unique_host("elsewhere")))

    def guarded(request: Request) -> Response:
        if not _has_secret(request):
            return Response(401, [("WWW-Authenticate", 'Basic realm="staging"')], "login required")
        return html(catalog.page("staging"), headers=[("X-Preview", "yes")])

    site = catalog.simple_site(site_factory.unique_host("staging"))
    site.routes["/"] = guarded
    site.routes["/away"] = Redirect(f"https://{elsewhere.host}/landing")
    return site_factory(site), elsewhere


async def test_the_header_reaches_the_sites_own_origin_only(staging, scan_settings: Settings) -> None:
    site, elsewhere = staging
    # Without it, the staging site answers 401
    assert (await scan(site.url, scan_settings)).status_code == 401

    # With it, the page itself is scanned
    report = await scan(site.url, scan_settings, request_headers=(("Authorization", SECRET),))
    assert report.status_code == 200
    https = [r for r in site.requests if r.scheme == "https"]
    assert https and all(_has_secret(r) for r in https[-3:])
    # never over plain HTTP (the http:// form the scanner checks), never in the report
    assert not any(_has_secret(r) for r in site.requests if r.scheme == "http")
    assert "s3cret" not in json.dumps(report.to_dict()) and SECRET not in json.dumps(report.to_dict())

    # A redirect to another host: the other host never sees it
    moved = await scan(site.url + "away", scan_settings, request_headers=(("Authorization", SECRET),))
    assert moved.final_url.startswith(f"https://{elsewhere.host}/")
    assert elsewhere.requests and not any(_has_secret(r) for r in elsewhere.requests)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("Authorization Basic x", "'Name: value'"),
        ("Bad Name: x", "'Name: value'"),
        ("Host: evil.example", "sets Host itself"),
        ("Content-Length: 5", "sets Content-Length itself"),
        ("X-A: one\r\nX-B: two", "line break"),
    ],
)
def test_a_header_the_scanner_cannot_send_as_given_is_refused(line: str, problem: str) -> None:
    with pytest.raises(BadHeader) as refused:
        parse_header_line(line)
    assert problem in str(refused.value)
    assert "two" not in str(refused.value)  # the message never repeats a value: it may be a secret


def test_the_cli_sends_the_header_and_never_prints_it(staging, scan_env: dict[str, str]) -> None:
    site, _ = staging
    done = subprocess.run(
        [sys.executable, "-m", "websec_app", "scan", site.url, "--header", f"Authorization: {SECRET}", "--text"],
        env={**os.environ, **scan_env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(HTTP 200)" in done.stdout.splitlines()[0]
    assert "s3cret" not in done.stdout + done.stderr and SECRET not in done.stdout + done.stderr

    bad = subprocess.run(
        [sys.executable, "-m", "websec_app", "scan", site.url, "--header", "Host: evil.example"],
        env={**os.environ, **scan_env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert json.loads(bad.stdout) == {"error": "--header: the scanner sets Host itself"}


@pytest.mark.parametrize(
    ("given", "on_the_request", "sent"),
    [
        ("preview=1", None, "preview=1"),
        ("preview=1", "seen=1; theme=dark", "preview=1; seen=1; theme=dark"),
        ("seen=0; preview=1", "seen=1; theme=dark", "seen=0; preview=1; theme=dark"),
        # a site's cookie ending in a no-break or ideographic space (UTF-8 bytes, read as latin-1) goes back whole
        ("preview=1", "who=abc\xa0; x=\xe3\x80\x80", "preview=1; who=abc\xa0; x=\xe3\x80\x80"),
    ],
    ids=["alone", "joined", "the-users-win", "unicode-spaces-kept"],
)
async def test_a_cookie_header_the_user_gives_joins_the_cookies_the_request_carries(
    given: str, on_the_request: str | None, sent: str
) -> None:
    # Given the user's Cookie header for https://staging.test, and a request there carrying the chain's cookies
    origin_headers = OriginHeaders.for_target(parse_target("https://staging.test/"), (("Cookie", given),))
    # (as fetch_one sends it: the bytes of the latin-1 text a header is held as)
    carried = {"Cookie": on_the_request.encode("latin-1")} if on_the_request else {}
    request = httpx.Request("GET", "https://staging.test/", headers=carried)

    # When the request hook runs
    await origin_headers.add_to(request)

    # Then one Cookie header carries both, the user's value winning where both name a cookie, byte for byte
    assert [value for name, value in request.headers.raw if name.lower() == b"cookie"] == [sent.encode("latin-1")]
