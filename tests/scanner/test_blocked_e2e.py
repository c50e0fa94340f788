"""A site that answers the scanner with a bot challenge or a WAF block page is reported as blocked,
by what and how to let the scanner through, instead of being graded as if the block page were the site.

Each block page below is shaped like the real one (status, the vendor's headers, the telltale text);
see websec_app/scanner/data/block_pages.toml for where each marker comes from.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Response
from websec_app.scanner import scan

HTML = ("Content-Type", "text/html; charset=UTF-8")

BLOCK_PAGES: dict[str, tuple[str, Response]] = {
    "cloudflare-header": (
        "Cloudflare",
        Response(
            403,
            [HTML, ("Server", "cloudflare"), ("cf-mitigated", "challenge"), ("CF-RAY", "8a1b2c3d4e5f6789-AMS")],
            "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
            "<noscript>Enable JavaScript and cookies to continue</noscript></body></html>",
        ),
    ),
    "cloudflare-body": (
        "Cloudflare",
        Response(
            503,
            [HTML, ("Server", "cloudflare")],
            "<html><head><title>Just a moment...</title></head><body>"
            "<script>window._cf_chl_opt={cvId: '3'};</script><div id='cf-chl-widget'></div></body></html>",
        ),
    ),
    "cloudflare-waf": (
        "Cloudflare",
        Response(
            403,
            [HTML, ("Server", "cloudflare")],
            "<title>Attention Required! | Cloudflare</title><h1>Sorry, you have been blocked</h1>",
        ),
    ),
    "akamai": (
        "Akamai",
        Response(
            403,
            [("Server", "AkamaiGHost"), ("Mime-Version", "1.0"), HTML],
            "<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n"
            "You don't have permission to access "
            '"http&#58;&#47;&#47;www&#46;example&#46;com&#47;" on this server.<P>\n'
            "Reference&#32;&#35;18&#46;2d1e1002&#46;1700000000&#46;1a2b3c4d\n</BODY>\n</HTML>\n",
        ),
    ),
    # AWS WAF's CAPTCHA interstitial answers 405 and its Challenge 202, each with x-amzn-waf-action
    # (https://docs.aws.amazon.com/waf/latest/developerguide/waf-captcha-and-challenge-actions.html).
    # Its Block action's default 403 carries no marker of its own: at the CloudFront edge it is the
    # "cloudfront" case below.
    "aws-waf-captcha": (
        "AWS WAF",
        Response(
            405,
            [HTML, ("x-amzn-waf-action", "captcha"), ("Cache-Control", "no-store, max-age=0")],
            "<!DOCTYPE html><html lang='en'><head><title></title>"
            "<script src='https://0a1b2c3d4e5f.edge.sdk.awswaf.com/0a1b2c3d4e5f/6a7b8c9d0e1f/captcha.js'></script>"
            "</head><body><div id='captcha-container'></div>"
            "<script>window.gokuProps = {'key': 'AQIDAHjc', 'iv': 'CgAHhj', 'context': 'abc'};</script></body></html>",
        ),
    ),
    "aws-waf-challenge": (
        "AWS WAF",
        Response(
            202,
            [HTML, ("x-amzn-waf-action", "challenge"), ("Cache-Control", "no-store, max-age=0")],
            "<!DOCTYPE html><html lang='en'><head><title></title>"
            "<script src='https://0a1b2c3d4e5f.edge.sdk.awswaf.com/0a1b2c3d4e5f/6a7b8c9d0e1f/challenge.js'></script>"
            "</head><body><div id='challenge-container'></div>"
            "<script>AwsWafIntegration.checkForceRefresh().then(() => location.reload(true));</script></body></html>",
        ),
    ),
    "cloudfront": (
        "Amazon CloudFront",
        Response(
            403,
            [HTML, ("Server", "CloudFront"), ("X-Cache", "Error from cloudfront"), ("Via", "1.1 abc.cloudfront.net")],
            "<HTML><HEAD><TITLE>ERROR: The request could not be satisfied</TITLE></HEAD><BODY>"
            "<H1>403 ERROR</H1><H2>The request could not be satisfied.</H2>Request blocked.</BODY></HTML>",
        ),
    ),
    "imperva": (
        "Imperva (Incapsula)",
        Response(
            403,
            [HTML, ("X-Iinfo", "9-12345678-0 0NNN RT(1700000000000 0) q(0 -1 -1 -1) r(0 -1)"), ("X-CDN", "Imperva")],
            '<html><head><META NAME="robots" CONTENT="noindex,nofollow"></head><body>'
            '<iframe src="/_Incapsula_Resource?CWUDNSAI=9&xinfo=1" frameborder=0></iframe></body></html>',
        ),
    ),
    "sucuri": (
        "Sucuri",
        Response(
            403,
            [HTML, ("Server", "Sucuri/Cloudproxy"), ("X-Sucuri-ID", "11015")],
            "<title>Sucuri WebSite Firewall - Access Denied</title>",
        ),
    ),
    "datadome": (
        "DataDome",
        Response(
            403,
            [HTML, ("X-DataDome", "protected"), ("X-DD-B", "1")],
            "<html><body><script src='https://ct.captcha-delivery.com/c.js'></script></body></html>",
        ),
    ),
    "perimeterx": (
        "HUMAN (PerimeterX)",
        Response(
            403,
            [HTML],
            "<html><head><title>Access to this page has been denied.</title></head>"
            "<body><div id='px-captcha'></div><script>window._pxAppId='PXabc';</script>"
            "<script src='/abc/captcha/captcha.js?a=c&m=0'></script><!-- _pxCaptcha --></body></html>",
        ),
    ),
    "f5": (
        "F5 BIG-IP",
        Response(
            200,
            [HTML, ("Cache-Control", "no-cache"), ("Connection", "close")],
            "<html><head><title>Request Rejected</title></head><body>The requested URL was rejected. "
            "Please consult with your administrator.<br><br>Your support ID is: 1234567890123456789</body></html>",
        ),
    ),
    "modsecurity": (
        "ModSecurity",
        Response(
            406,
            [HTML],
            "<head><title>Not Acceptable!</title></head><body><h1>Not Acceptable!</h1><p>An appropriate "
            "representation of the requested resource could not be found on this server. This error was "
            "generated by Mod_Security.</p></body></html>",
        ),
    ),
    "vercel": (
        "Vercel",
        Response(
            429,
            [HTML, ("Server", "Vercel"), ("x-vercel-mitigated", "challenge")],
            "<title>Vercel Security Checkpoint</title>",
        ),
    ),
}


def _checks(section: dict[str, Any]) -> list[str]:
    return [f["check"] for f in section["findings"]]


@pytest.mark.parametrize("case", sorted(BLOCK_PAGES))
async def test_given_a_block_page_when_scanned_then_the_report_says_blocked_by_whom_and_how_to_pass(
    site_factory, scan_settings, case: str
) -> None:
    vendor, block = BLOCK_PAGES[case]
    # Given a site whose every page is the vendor's block page (plain HTTP redirects to HTTPS first)
    site = site_factory(
        catalog.simple_site(site_factory.unique_host(f"blocked-{case}"), routes={"/": block}, default=block)
    )
    # When it is scanned
    report = await scan(site.url, scan_settings)
    body = report.to_dict()
    # Then the page analysis says the scan was blocked, by whom, and how to let it through
    page = body["page_analysis"]
    assert _checks(page) == ["scan.blocked"], page
    finding = page["findings"][0]
    assert vendor in finding["note"], finding
    assert str(block.status) in finding["note"]
    assert "allow" in finding["explanation"].lower() and "allow" in (finding["fix"] or "").lower()
    assert page["blocked"]["by"] == vendor
    # And the block page's headers are not graded as the site's: not checked, no deductions
    for name, header in body["headers"].items():
        assert header["status"] == "warn" and header["deduction"] == 0, (name, header)
    for section in ("cookies", "cross_origin", "cors", "server_fingerprint", "security_txt"):
        assert _checks(body[section]) == ["check.error"], (section, body[section])
        assert body[section]["deduction"] == 0
        assert vendor in body[section]["findings"][0]["note"]
    # And the grade cannot vouch for what was never seen: capped, and the cap names the reason
    assert {"outcome": "scan.blocked", "max_grade": "F"} in body["grading"]["caps"]
    assert body["grade"] == "F"
    # While what was really checked (TLS, DNS, the HTTP upgrade) is still graded
    assert body["tls"]["trusted"]
    assert _checks(body["redirection"]) == ["redirect.to_https"]


async def test_given_a_blocked_free_scan_the_explanation_still_says_how_to_let_it_through(
    site_factory, scan_settings
) -> None:
    _, block = BLOCK_PAGES["cloudflare-header"]
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("blocked-free"), routes={"/": block}, default=block)
    )
    body = (await scan(site.url, scan_settings)).to_dict(pro=False, include_fix=False)
    finding = body["page_analysis"]["findings"][0]
    assert finding["check"] == "scan.blocked" and finding["fix"] is None
    assert "allow-list" in finding["explanation"].lower()


async def test_given_a_plain_403_without_markers_then_reported_plainly_not_as_blocked(
    site_factory, scan_settings
) -> None:
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("plain403"), status=403, body="<h1>Forbidden</h1>")
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    assert _checks(body["page_analysis"]).count("scan.error_status") == 1
    assert "scan.blocked" not in _checks(body["page_analysis"])
    assert not any(c["outcome"] == "scan.blocked" for c in body["grading"]["caps"])


async def test_given_markers_on_a_normal_200_page_then_not_blocked(site_factory, scan_settings) -> None:
    # A page that talks about Cloudflare challenges (a blog post) is the site, not a block
    site = site_factory(
        catalog.simple_site(
            site_factory.unique_host("talks-about-cf"),
            headers=[("Server", "cloudflare"), ("CF-RAY", "8a1b2c3d4e5f6789-AMS")],
            body="<title>Why you see 'Just a moment...' and cf-chl</title>",
        )
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    assert "scan.blocked" not in _checks(body["page_analysis"])


#: The site's own pages that carry part of a vendor's marker, but not its block page.
NOT_BLOCK_PAGES: dict[str, Response] = {
    # A help page quoting F5's block message, without the support ID the real page gives (K13459)
    "f5-quoted": Response(
        200,
        [HTML],
        "<html><head><title>BIG-IP error after upgrade - Q&amp;A</title></head><body><h1>Users see: The requested "
        "URL was rejected. Please consult with your administrator.</h1><p>How do I fix this?</p></body></html>",
    ),
    # Akamai's edge error page when the origin fails: a Reference number, but no "Access Denied"
    "akamai-origin-error": Response(
        503,
        [("Server", "AkamaiGHost"), ("Mime-Version", "1.0"), HTML],
        "<HTML><HEAD><TITLE>Error</TITLE></HEAD><BODY>\nAn error occurred while processing your request.<p>\n"
        "Reference&#32;&#35;30&#46;3598c0ba&#46;1521745157&#46;87201fff\n</BODY></HTML>\n",
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_BLOCK_PAGES))
async def test_given_a_page_with_part_of_a_marker_then_it_is_graded_as_the_site(
    site_factory, scan_settings, case: str
) -> None:
    page = NOT_BLOCK_PAGES[case]
    site = site_factory(
        catalog.simple_site(site_factory.unique_host(f"not-blocked-{case}"), routes={"/": page}, default=page)
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    checks = _checks(body["page_analysis"])
    assert "scan.blocked" not in checks and "blocked" not in body["page_analysis"], body["page_analysis"]
    assert not any(c["outcome"] == "scan.blocked" for c in body["grading"]["caps"])
    assert _checks(body["server_fingerprint"]) != ["check.error"]
    # An error status is named plainly, as the site's real answer
    assert checks.count("scan.error_status") == (1 if page.status >= 400 else 0)


async def test_given_the_plain_http_form_is_blocked_then_the_redirect_is_not_graded_as_missing(
    site_factory, scan_settings
) -> None:
    _, block = BLOCK_PAGES["cloudflare-header"]
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("blocked-http"), http=block)  # only plain HTTP is challenged
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    redirection = body["redirection"]
    assert _checks(redirection) == ["check.error"], redirection
    assert "Cloudflare" in redirection["findings"][0]["note"]
    assert redirection["deduction"] == 0
