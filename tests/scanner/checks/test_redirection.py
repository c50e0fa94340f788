"""HTTP -> HTTPS redirection, judged from the http:// form of the host."""

from dataclasses import replace
from datetime import UTC, datetime

from tests.factories import make_certificate, make_handshake, make_response, make_snapshot
from websec_app.scanner.checks.redirection import check_redirection
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import Failure, FetchChain, SiteSnapshot, TlsHandshake
from websec_app.scanner.target import parse_target


def chain(*responses, failure=None) -> FetchChain:
    return FetchChain("http://example.com/", tuple(responses), failure)


def redirect(url: str, to: str, status: int = 301):
    return make_response(url, status, {"Location": to}, content_type=None)


def outcomes(upgrade: FetchChain) -> list[str]:
    return [f.outcome for f in check_redirection(make_snapshot(http_upgrade=upgrade)).findings]


def test_given_a_301_to_https_on_the_same_host_then_good() -> None:
    upgrade = chain(redirect("http://example.com/", "https://example.com/"), make_response("https://example.com/"))
    assert outcomes(upgrade) == ["redirect.to_https"]


def test_given_http_serving_the_page_then_redirect_is_missing() -> None:
    assert outcomes(chain(make_response("http://example.com/"))) == ["redirect.missing"]


def test_given_a_first_hop_to_another_host_then_off_host() -> None:
    upgrade = chain(
        redirect("http://example.com/", "https://www.example.com/"), make_response("https://www.example.com/")
    )
    assert outcomes(upgrade) == ["redirect.off_host"]


def test_given_a_first_hop_over_http_then_first_hop_http() -> None:
    upgrade = chain(
        redirect("http://example.com/", "http://www.example.com/"),
        redirect("http://www.example.com/", "https://www.example.com/"),
        make_response("https://www.example.com/"),
    )
    assert outcomes(upgrade) == ["redirect.first_hop_http"]


def test_given_a_redirect_status_with_an_empty_location_then_missing() -> None:
    # Browsers show such a response's body: plain HTTP serves a page, it does not redirect
    upgrade = chain(make_response("http://example.com/", 301, {"Location": ""}))
    [finding] = check_redirection(make_snapshot(http_upgrade=upgrade)).findings
    assert finding.outcome == "redirect.missing" and "answered 301 without redirecting" in (finding.note or "")


def test_given_redirects_ending_on_http_then_missing() -> None:
    upgrade = chain(redirect("http://example.com/", "/home"), make_response("http://example.com/home"))
    assert outcomes(upgrade) == ["redirect.missing"]


def test_given_a_loop_after_reaching_https_then_broken_not_good() -> None:
    # http:// -> https:// on the same host, which then redirects to itself until the limit: no page is ever served
    loop = redirect("https://example.com/", "https://example.com/")
    upgrade = chain(
        redirect("http://example.com/", "https://example.com/"),
        *[loop] * 10,
        failure=Failure("too_many_redirects", "more than 10 redirects (or a redirect loop)"),
    )
    [finding] = check_redirection(make_snapshot(http_upgrade=upgrade)).findings
    assert (finding.outcome, finding.note) == ("redirect.broken", "more than 10 redirects (or a redirect loop)")


def test_given_a_refused_hop_after_reaching_https_then_broken() -> None:
    upgrade = chain(
        redirect("http://example.com/", "https://example.com/"),
        redirect("https://example.com/", "https://gone.example.com/"),
        failure=Failure("unreachable", "connection refused: nothing accepts connections on that port"),
    )
    assert outcomes(upgrade) == ["redirect.broken"]


def test_given_nothing_on_port_80_then_nothing_to_redirect() -> None:
    refused = chain(failure=Failure("unreachable", "connection failed: [Errno 111] Connection refused"))
    assert outcomes(refused) == ["redirect.http_not_served"]


def test_given_a_temporary_redirect_then_good_with_a_note() -> None:
    upgrade = chain(redirect("http://example.com/", "https://example.com/", 302), make_response("https://example.com/"))
    finding = check_redirection(make_snapshot(http_upgrade=upgrade)).findings[0]
    assert finding.outcome == "redirect.to_https" and "302" in (finding.note or "")


def test_a_header_value_past_the_shown_length_says_it_was_cut() -> None:
    # The UI and PDF show these "as the server sent them": a cut value must say so
    long_csp = "default-src 'self' " + "https://a.example.com " * 120
    details = check_redirection(make_snapshot(headers=[("Content-Security-Policy", long_csp), ("X-A", "b")])).details

    [[_, _, shown_csp], [_, _, shown_short]] = [
        [hop["url"], *header]
        for hop in details["main_chain"]
        for header in hop["headers"]
        if header[0] in ("Content-Security-Policy", "X-A")
    ]
    assert shown_csp.startswith(long_csp[:2048]) and shown_csp.endswith(
        f"({len(long_csp) - 2048:,} more characters not shown)"
    )
    assert shown_short == "b"


# --- the host scanned sends HSTS before leaving for another (hstspreload.org: response.no_header) --------------

HSTS = ("Strict-Transport-Security", "max-age=63072000; includeSubDomains")


def scanned(url: str, *hops, final_url: str, final_headers=(HSTS,)):
    """The findings of a scan of `url`, whose main chain is `hops` then a page at `final_url` sending
    `final_headers`; its http:// form on port 80 redirects to `url` (for an http:// URL, it is the main chain)."""
    plain = make_snapshot(final_url, headers=list(final_headers), redirects=hops)
    main = plain.main
    upgrade = main if url.startswith("http://") else chain(redirect("http://example.com/", url), *main.responses)
    return check_redirection(replace(plain, http_upgrade=upgrade))


def hop(url: str, to: str, *headers: tuple[str, str]):
    return make_response(url, 301, {"Location": to, **dict(headers)}, content_type=None)


def test_a_host_that_redirects_to_www_without_hsts_is_told_its_own_name_is_unprotected() -> None:
    # Given https://example.com/ redirecting to https://www.example.com/, whose page sends HSTS (the headers section
    # grades that page, and found nothing wrong: the report said 100)
    result = scanned(
        "https://example.com/",
        hop("https://example.com/", "https://www.example.com/"),
        final_url="https://www.example.com/",
    )
    # Then the redirection section says example.com itself never gets a policy, and where to add it
    [finding] = [f for f in result.findings if f.outcome == "redirect.host_without_hsts"]
    assert finding.note == (
        "https://example.com/ redirects on to https://www.example.com/ without a Strict-Transport-Security header: "
        "browsers keep HSTS for www.example.com, never for example.com"
    )
    assert finding.fix_note is not None and "where example.com is served" in finding.fix_note
    assert [f.outcome for f in result.findings] == ["redirect.to_https", "redirect.host_without_hsts"]


def test_a_redirect_to_www_that_sends_hsts_itself_is_fine() -> None:
    result = scanned(
        "https://example.com/",
        hop("https://example.com/", "https://www.example.com/", HSTS),
        final_url="https://www.example.com/",
    )
    assert [f.outcome for f in result.findings] == ["redirect.to_https"]


def test_a_policy_browsers_drop_on_the_redirect_is_no_policy() -> None:
    # max-age=0 removes the host; a repeated max-age makes Chromium ignore the header
    for value, why in (
        ("max-age=0", "max-age=0, which removes the host"),
        ("max-age=1; max-age=2", "a Strict-Transport-Security header browsers ignore"),
    ):
        result = scanned(
            "https://example.com/",
            hop("https://example.com/", "https://www.example.com/", ("Strict-Transport-Security", value)),
            final_url="https://www.example.com/",
        )
        [finding] = [f for f in result.findings if f.outcome == "redirect.host_without_hsts"]
        assert why in (finding.note or "")


def test_www_redirecting_to_a_domain_whose_policy_covers_subdomains_is_fine() -> None:
    # Given www.example.com redirecting to example.com: once a visitor has been there, example.com's includeSubDomains
    # covers www.example.com; without includeSubDomains nothing ever does
    www = hop("https://www.example.com/", "https://example.com/")
    covered = scanned("https://www.example.com/", www, final_url="https://example.com/")
    assert "redirect.host_without_hsts" not in [f.outcome for f in covered.findings]
    alone = scanned(
        "https://www.example.com/",
        www,
        final_url="https://example.com/",
        final_headers=[("Strict-Transport-Security", "max-age=63072000")],
    )
    assert "redirect.host_without_hsts" in [f.outcome for f in alone.findings]


def test_without_hsts_on_either_host_the_note_claims_none_for_the_page() -> None:
    result = scanned(
        "https://example.com/",
        hop("https://example.com/", "https://www.example.com/"),
        final_url="https://www.example.com/",
        final_headers=(),
    )
    [finding] = [f for f in result.findings if f.outcome == "redirect.host_without_hsts"]
    assert finding.note is not None and finding.note.endswith(
        "without a Strict-Transport-Security header: browsers never keep HSTS for example.com"
    )


def test_an_http_url_is_judged_on_the_https_redirect_of_its_own_host() -> None:
    # Given http://example.com/ -> https://example.com/ (no HSTS) -> https://www.example.com/
    result = scanned(
        "http://example.com/",
        hop("http://example.com/", "https://example.com/"),
        hop("https://example.com/", "https://www.example.com/"),
        final_url="https://www.example.com/",
    )
    assert [f.outcome for f in result.findings] == ["redirect.to_https", "redirect.host_without_hsts"]
    # And a first hop straight to the other host is redirect.off_host alone: example.com is never reached over HTTPS
    direct = scanned(
        "http://example.com/",
        hop("http://example.com/", "https://www.example.com/"),
        final_url="https://www.example.com/",
    )
    assert [f.outcome for f in direct.findings] == ["redirect.off_host"]


def test_a_page_on_the_host_scanned_is_graded_by_the_headers_section_alone() -> None:
    result = scanned(
        "https://example.com/",
        hop("https://example.com/", "https://example.com/home"),
        final_url="https://example.com/home",
        final_headers=(),
    )
    assert [f.outcome for f in result.findings] == ["redirect.to_https"]


def test_the_fixes_name_the_host_scanned_not_the_page_it_ends_on() -> None:
    # Given http://example.com/ going to http://www.example.com/ first, then to HTTPS there
    www = make_snapshot("https://www.example.com/")
    upgrade = chain(
        redirect("http://example.com/", "http://www.example.com/"),
        redirect("http://www.example.com/", "https://www.example.com/"),
        make_response("https://www.example.com/"),
    )
    snapshot = replace(www, target=parse_target("https://example.com/"), http_upgrade=upgrade)
    [first_hop] = grade_snapshot(snapshot).to_dict()["redirection"]["findings"]
    # Then the fix is to redirect example.com's http:// to its own https:// first (it named www.example.com, whose
    # pages the report's other fixes are about)
    assert first_hop["check"] == "redirect.first_hop_http"
    assert (
        first_hop["fix"]
        == "Redirect http://example.com/ straight to https://example.com/ first, then to any other host."
    )


# -- www under a policy that includes subdomains (redirect.www_without_https) ---------------------------------


def _apex(www_tls: TlsHandshake | None, *, page_tls: TlsHandshake | None = None) -> SiteSnapshot:
    """example.com's page, served with HSTS includeSubDomains, and what www.example.com's port 443 did."""
    upgrade = chain(redirect("http://example.com/", "https://example.com/"), make_response("https://example.com/"))
    return make_snapshot(
        "https://example.com/",
        headers={"Strict-Transport-Security": "max-age=63072000; includeSubDomains; preload"},
        http_upgrade=upgrade,
        tls=page_tls or make_handshake("example.com"),
        www_tls=www_tls,
    )


REFUSED = Failure("unreachable", "connection refused on port 443")


def test_a_www_that_refuses_https_under_the_policy_is_reported_with_no_points() -> None:
    report = grade_snapshot(_apex(make_handshake("www.example.com", failure=REFUSED, chain=()))).to_dict()
    [www] = [f for f in report["redirection"]["findings"] if f["check"] == "redirect.www_without_https"]
    assert www["note"] == (
        "www.example.com answers no HTTPS (connection refused on port 443): the HSTS policy of example.com includes "
        "subdomains, so a browser that keeps it opens www.example.com over HTTPS only, and stops at that error"
    )
    assert (www["deduction"], www["subjects"], report["redirection"]["deduction"]) == (0, ["www.example.com"], 0)
    assert www["fix"].startswith("Serve https://www.example.com/ with a certificate that covers www.example.com")
    # and the preload note no longer tells the site to submit the domain, which hstspreload.org would refuse
    assert report["headers"]["Strict-Transport-Security"]["note"] == (
        "preload is requested, but hstspreload.org refuses the domain while www.example.com answers no HTTPS "
        "(connection refused on port 443): once preloaded, no browser could open www.example.com"
    )


def test_a_www_served_with_the_domain_s_certificate_alone_is_named_with_what_it_covers() -> None:
    apex_only = make_certificate(names=("example.com",))
    [finding] = [
        f
        for f in check_redirection(_apex(make_handshake("www.example.com", apex_only))).findings
        if f.outcome == "redirect.www_without_https"
    ]
    assert (finding.note or "").startswith(
        "www.example.com is served with a certificate browsers refuse (the certificate names example.com, not "
        "www.example.com):"
    )


def test_a_www_that_works_or_was_not_asked_is_not_reported() -> None:
    for www_tls in (make_handshake("www.example.com"), None):
        assert "redirect.www_without_https" not in [f.outcome for f in check_redirection(_apex(www_tls)).findings]
    # and the preload note stands as it was
    note = grade_snapshot(_apex(None)).to_dict()["headers"]["Strict-Transport-Security"]["note"]
    assert note == "preload is requested; submit the domain at hstspreload.org to be built into browsers"


def test_a_page_whose_own_certificate_is_refused_sets_no_policy_to_send_browsers_to_www() -> None:
    # RFC 6797 §8.1: browsers keep no policy from a response with a certificate error (hsts.ignored_tls_error)
    expired = make_certificate(names=("example.com",), not_after=datetime(2020, 1, 1, tzinfo=UTC))
    snapshot = _apex(
        make_handshake("www.example.com", failure=REFUSED, chain=()), page_tls=make_handshake("example.com", expired)
    )
    assert "redirect.www_without_https" not in [f.outcome for f in check_redirection(snapshot).findings]
