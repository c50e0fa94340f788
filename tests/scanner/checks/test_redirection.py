"""HTTP -> HTTPS redirection, judged from the http:// form of the host."""

from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.redirection import check_redirection
from websec_app.scanner.snapshot import Failure, FetchChain


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
