"""Stories for the CORS check: what the probes with a foreign, a look-alike, an `http://` and a `null` Origin
got back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pytest

from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.cors import check_cors
from websec_app.scanner.fetch.cors_origins import cors_probe_origins
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.grading import Graded, grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import CorsProbe, Failure
from websec_app.scanner.target import parse_target

PROBE = "https://websec-cors-probe.invalid"
LOOKALIKE = "https://example.com.websecprobeexample.com"
HTTP = "http://example.com"
CONTEXT = {"host": "example.com", "domain": "example.com", "origin": "https://example.com"}
REFUSED = Failure("unreachable", "connection refused: nothing accepts connections on that port")


Headers = Sequence[tuple[str, str]]


def cors_of(
    foreign: Headers | None = (),
    null: Headers | None = (),
    page: Headers = (),
    *,
    lookalike: Headers | None = (),
    http: Headers | None = (),
    http_port_80: Headers | None = (),
    url: str = "https://example.com/",
) -> CheckResult:
    """The check over a snapshot of `url` whose probes (those the fetch sends for it) answered with these
    headers (None: the probe got no answer)."""
    answers = {"foreign": foreign, "lookalike": lookalike, "http": http, "http_port_80": http_port_80, "null": null}
    probes = []
    for kind, origin in cors_probe_origins(parse_target(url)):
        headers = answers[kind]
        response = None if headers is None else make_response(url, headers=list(headers))
        probes.append(CorsProbe(kind, origin, response, None if headers is not None else REFUSED))
    return check_cors(make_snapshot(url, headers=list(page), cors_probes=tuple(probes)))


def outcomes(result: CheckResult) -> set[str]:
    return {f.outcome for f in result.findings}


def graded(result: CheckResult) -> Graded:
    return grade([result], default_rulebook(), CONTEXT)


def test_a_site_without_cors_headers_is_not_exposed() -> None:
    result = cors_of()
    assert outcomes(result) == {"cors.not_exposed"}
    assert graded(result).sections["cors"]["deduction"] == 0


def test_a_public_wildcard_without_credentials_is_not_a_vulnerability() -> None:
    # Given an open API answering every origin with `*`
    result = cors_of(foreign=[("Access-Control-Allow-Origin", "*")], null=[("Access-Control-Allow-Origin", "*")])
    # Then it is reported as public access, good, with no deduction
    assert outcomes(result) == {"cors.public"}
    section = graded(result).sections["cors"]
    assert section["status"] == "good" and section["deduction"] == 0


def test_a_wildcard_with_credentials_is_a_misconfiguration_browsers_reject() -> None:
    headers = [("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(foreign=headers)
    assert outcomes(result) == {"cors.wildcard_credentials"}
    assert graded(result).sections["cors"]["status"] == "warn"


def test_an_echoed_foreign_origin_with_credentials_is_critical_and_caps_the_grade() -> None:
    # Given a server that reflects any Origin and allows cookies
    headers = [
        ("Access-Control-Allow-Origin", PROBE),
        ("Access-Control-Allow-Credentials", "true"),
        ("Vary", "Origin"),
    ]
    result = cors_of(foreign=headers)
    # When graded
    report = graded(result)
    # Then it is bad and critical, and the whole site can get at most a C
    assert outcomes(result) == {"cors.origin_reflected_credentials"}
    finding = report.sections["cors"]["findings"][0]
    assert finding["status"] == "bad" and finding["severity"] == "critical" and finding["cwe"] == "CWE-942"
    assert report.grade == "C" and report.score <= 69
    assert report.caps == ({"outcome": "cors.origin_reflected_credentials", "max_grade": "C"},)


def echoing(origin: str) -> list[tuple[str, str]]:
    return [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")]


def test_echoing_null_too_is_the_same_misconfiguration_and_costs_no_more() -> None:
    # Given two servers echoing every Origin with credentials, one of them `null` too
    everything = cors_of(foreign=echoing(PROBE), null=echoing("null"))
    all_but_null = cors_of(foreign=echoing(PROBE), null=())

    # Then both lose the same points: the null echo is a note on the reflection, not a second deduction
    assert outcomes(everything) == outcomes(all_but_null) == {"cors.origin_reflected_credentials"}
    assert graded(everything).score == graded(all_but_null).score == 60
    assert graded(everything).sections["cors"]["deduction"] == 40
    [finding] = graded(everything).sections["cors"]["findings"]
    assert "Origin: null was echoed" in finding["note"]


def test_a_null_echo_with_credentials_stands_beside_a_reflection_without() -> None:
    # Given a server that echoes other origins without credentials, but `null` with them
    result = cors_of(foreign=[("Access-Control-Allow-Origin", PROBE), ("Vary", "Origin")], null=echoing("null"))
    # Then the worse null echo is not hidden in the milder finding
    assert outcomes(result) == {"cors.origin_reflected", "cors.null_credentials"}


def test_an_echoed_origin_without_credentials_is_a_warning() -> None:
    result = cors_of(foreign=[("Access-Control-Allow-Origin", PROBE), ("Vary", "Accept-Encoding, Origin")])
    assert outcomes(result) == {"cors.origin_reflected"}


def test_credentials_must_be_exactly_lowercase_true_for_browsers() -> None:
    # Given a reflected origin with `True` (browsers compare the value byte for byte)
    headers = [("Access-Control-Allow-Origin", PROBE), ("Access-Control-Allow-Credentials", "True"), ("Vary", "Origin")]
    result = cors_of(foreign=headers)
    # Then credentialed reads are not possible: only the reflection is reported, with the reason
    assert outcomes(result) == {"cors.origin_reflected"}
    assert "not exactly 'true'" in (result.findings[0].note or "")


def test_the_null_origin_with_credentials_is_critical() -> None:
    headers = [("Access-Control-Allow-Origin", "null"), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(null=[*headers, ("Vary", "Origin")])
    report = graded(result)
    assert outcomes(result) == {"cors.null_credentials"}
    assert report.grade == "C"


def test_the_null_origin_without_credentials_is_a_warning() -> None:
    result = cors_of(null=[("Access-Control-Allow-Origin", "null"), ("Vary", "Origin")])
    assert outcomes(result) == {"cors.null_allowed"}


def test_an_echoed_origin_without_vary_origin_gets_a_minor_note() -> None:
    # Given a reflected origin and no Vary: Origin
    result = cors_of(foreign=[("Access-Control-Allow-Origin", PROBE)])
    # Then shared caches could mix origins up: a minor finding besides the reflection
    assert outcomes(result) == {"cors.origin_reflected", "cors.vary_missing"}
    vary = next(f for f in graded(result).sections["cors"]["findings"] if f["check"] == "cors.vary_missing")
    assert vary["severity"] == "minor"


def test_a_fixed_allowlist_does_not_grant_the_probe_anything() -> None:
    headers = [("Access-Control-Allow-Origin", "https://app.example.com"), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(foreign=headers, null=headers)
    assert outcomes(result) == {"cors.allowlist"}
    assert graded(result).sections["cors"]["deduction"] == 0


def test_an_origin_echoed_with_a_trailing_slash_does_not_match_for_browsers() -> None:
    headers = [("Access-Control-Allow-Origin", PROBE + "/"), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(foreign=headers)
    assert outcomes(result) == {"cors.allowlist"}


@pytest.mark.parametrize("space", ["\xa0", "\x85"])
def test_an_origin_echoed_with_a_space_browsers_do_not_trim_grants_nothing(space: str) -> None:
    # Given the probe's origin echoed with a trailing no-break space (U+00A0) or NEL (U+0085): Fetch trims
    # only spaces and tabs, so the value is not the origin and Chromium blocks the read
    headers = [("Access-Control-Allow-Origin", PROBE + space), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(foreign=headers, null=headers)

    # Then nothing is exposed: the echo is noted as altered, and no points are taken
    assert outcomes(result) == {"cors.allowlist"}
    assert "echoed altered" in (result.findings[0].note or "")
    assert graded(result).sections["cors"]["deduction"] == 0


def test_credentials_followed_by_a_no_break_space_are_not_allowed() -> None:
    headers = [("Access-Control-Allow-Origin", PROBE), ("Access-Control-Allow-Credentials", "true\xa0")]
    result = cors_of(foreign=[*headers, ("Vary", "Origin")])
    assert outcomes(result) == {"cors.origin_reflected"}


def test_several_allow_origin_values_are_invalid() -> None:
    result = cors_of(foreign=[("Access-Control-Allow-Origin", f"{PROBE}, https://example.com")])
    assert outcomes(result) == {"cors.invalid"}
    twice = cors_of(foreign=[("Access-Control-Allow-Origin", PROBE), ("Access-Control-Allow-Origin", PROBE)])
    assert outcomes(twice) == {"cors.invalid"}


def test_a_wildcard_on_the_page_itself_is_seen_even_when_the_probes_saw_nothing() -> None:
    result = cors_of(page=[("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Credentials", "true")])
    assert outcomes(result) == {"cors.wildcard_credentials"}


def test_when_the_probes_failed_the_section_says_so_without_grading() -> None:
    result = cors_of(foreign=None, null=None)
    assert outcomes(result) == {"check.error"}
    assert graded(result).sections["cors"]["deduction"] == 0


def test_a_site_is_not_called_unexposed_when_the_foreign_origin_got_no_answer() -> None:
    # Given a foreign-origin probe that failed (refused, garbage, timeout) and a null probe without CORS headers
    result = cors_of(foreign=None, null=())

    # Then the section says it could not check that origin, and grants no "not exposed"
    assert outcomes(result) == {"check.error"}
    [error] = result.findings
    assert error.subject == f"Origin: {PROBE}" and "got no answer" in (error.note or "")
    section = graded(result).sections["cors"]
    assert section["status"] == "warn" and section["deduction"] == 0


def test_what_the_answered_probe_saw_is_kept_beside_the_unanswered_one() -> None:
    null = [("Access-Control-Allow-Origin", "null"), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")]
    result = cors_of(foreign=None, null=null)
    assert outcomes(result) == {"check.error", "cors.null_credentials"}
    assert graded(result).grade == "C"


def test_a_wildcard_on_the_page_is_seen_when_every_probe_failed() -> None:
    result = cors_of(foreign=None, null=None, page=[("Access-Control-Allow-Origin", "*")])
    assert outcomes(result) == {"check.error", "cors.public"}


def test_details_record_what_each_probe_saw() -> None:
    headers = [("Access-Control-Allow-Origin", PROBE), ("Access-Control-Allow-Credentials", "true")]
    result = cors_of(foreign=headers)
    assert result.details["foreign_origin"] == {
        "origin_sent": PROBE,
        "status_code": 200,
        "allow_origin": PROBE,
        "allow_credentials": "true",
        "vary_origin": False,
    }
    assert result.details["lookalike_origin"]["origin_sent"] == LOOKALIKE
    assert result.details["http_origin"]["origin_sent"] == HTTP
    assert result.details["null_origin"]["allow_origin"] is None
    assert result.details["no_origin"]["origin_sent"] is None


def test_details_say_why_a_probe_got_no_answer() -> None:
    result = cors_of(lookalike=None)
    assert result.details["lookalike_origin"] == {"origin_sent": LOOKALIKE, "error": REFUSED.message}
    assert REFUSED.message in (result.findings[0].note or "")


def test_a_snapshot_without_probes_is_not_checked() -> None:
    result = check_cors(make_snapshot())
    assert outcomes(result) == {"check.error"}


def test_grading_turns_the_cors_result_into_json() -> None:
    result = cors_of(
        foreign=[("Access-Control-Allow-Origin", PROBE), ("Access-Control-Allow-Credentials", "true")],
        null=[("Access-Control-Allow-Origin", "null")],
    )
    body = json.loads(json.dumps(graded(result).sections["cors"]))
    assert body["status"] == "bad"
    assert {f["check"] for f in body["findings"]} == {"cors.origin_reflected_credentials", "cors.vary_missing"}
    assert body["foreign_origin"]["allow_credentials"] == "true"


# -- origins a broken check lets through: look-alike names, the site's own http:// origin ----------------------


def test_an_echoed_look_alike_with_credentials_is_as_critical_as_any_reflection() -> None:
    # Given a server whose check accepts names starting or ending like its own (the foreign probe gets nothing)
    result = cors_of(lookalike=echoing(LOOKALIKE))

    # Then anyone registering such a name reads logged-in responses: critical, 40 points, a C at best
    assert outcomes(result) == {"cors.lookalike_credentials"}
    report = graded(result)
    assert report.sections["cors"]["deduction"] == 40 and report.grade == "C"
    [finding] = report.sections["cors"]["findings"]
    assert finding["severity"] == "critical" and LOOKALIKE in finding["note"]


def test_an_echoed_look_alike_without_credentials_is_a_warning() -> None:
    result = cors_of(lookalike=[("Access-Control-Allow-Origin", LOOKALIKE), ("Vary", "Origin")])
    assert outcomes(result) == {"cors.lookalike_allowed"}
    assert graded(result).sections["cors"]["deduction"] == 2


def test_the_sites_own_http_origin_with_credentials_is_bad_but_less_than_any_website() -> None:
    # Given an https site that also trusts http://example.com with credentials
    result = cors_of(http=echoing(HTTP))

    # Then a network attacker forging that origin reads it: bad, 20 points, a B at best
    assert outcomes(result) == {"cors.http_origin_credentials"}
    report = graded(result)
    finding = report.sections["cors"]["findings"][0]
    assert finding["status"] == "bad" and finding["deduction"] == 20
    assert report.grade == "B" and report.caps == ({"outcome": "cors.http_origin_credentials", "max_grade": "B"},)


def test_the_sites_own_http_origin_without_credentials_grants_nothing_worth_points() -> None:
    result = cors_of(http=[("Access-Control-Allow-Origin", HTTP), ("Vary", "Origin")])
    assert outcomes(result) == {"cors.allowlist"}
    assert graded(result).sections["cors"]["deduction"] == 0


def test_a_fixed_http_origin_with_credentials_on_an_https_page_is_the_http_origin_finding() -> None:
    # Given a fixed `Access-Control-Allow-Origin: http://example.com` with credentials, whatever the Origin
    fixed = [("Access-Control-Allow-Origin", HTTP), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")]
    result = cors_of(foreign=fixed, lookalike=fixed, http=fixed, null=fixed, page=fixed)

    # Then it is one finding naming the origin, not an allowlist
    assert outcomes(result) == {"cors.http_origin_credentials"}
    [finding] = graded(result).sections["cors"]["findings"]
    assert finding["subjects"] == [HTTP] and finding["deduction"] == 20
    # and the same on the page alone, when no probe got CORS headers
    assert outcomes(cors_of(page=fixed)) == {"cors.http_origin_credentials"}


def test_a_fixed_http_origin_is_an_allowlist_on_a_cleartext_page_or_for_loopback() -> None:
    fixed = [("Access-Control-Allow-Origin", HTTP), ("Access-Control-Allow-Credentials", "true")]
    assert outcomes(cors_of(foreign=fixed, url="http://example.com/")) == {"cors.allowlist"}
    for local in ("http://localhost:3000", "http://app.localhost", "http://127.0.0.1:8080", "http://[::1]"):
        loopback = [("Access-Control-Allow-Origin", local), ("Access-Control-Allow-Credentials", "true")]
        assert outcomes(cors_of(foreign=loopback)) == {"cors.allowlist"}, local


def test_an_http_page_sends_no_http_origin_probe() -> None:
    result = cors_of(url="http://example.com/")
    assert "http_origin" not in result.details and outcomes(result) == {"cors.not_exposed"}


def test_a_server_echoing_every_origin_is_one_reflection_whatever_it_was_sent() -> None:
    # Given a server echoing every Origin with credentials, the look-alike, http:// and null ones included
    result = cors_of(foreign=echoing(PROBE), lookalike=echoing(LOOKALIKE), http=echoing(HTTP), null=echoing("null"))

    # Then it is the one arbitrary reflection, whose notes name the other echoes, each a note of its own (joined
    # into one with "; ", the first note's own "; " made it one run-on list)
    assert outcomes(result) == {"cors.origin_reflected_credentials"}
    cors = graded(result).sections["cors"]
    assert cors["deduction"] == 40
    _, *others = result.findings[0].notes
    assert others == [
        f"Origin: {origin} was echoed with Access-Control-Allow-Credentials: true as well"
        for origin in (LOOKALIKE, HTTP, "null")
    ]
    assert cors["findings"][0]["notes"][1:] == others


def test_a_substring_check_accepting_the_look_alike_and_http_is_one_look_alike_finding() -> None:
    # Given `"example.com" in origin`: the look-alike and the http:// origin pass, the foreign one does not
    result = cors_of(lookalike=echoing(LOOKALIKE), http=echoing(HTTP))
    assert outcomes(result) == {"cors.lookalike_credentials"}
    assert graded(result).sections["cors"]["deduction"] == 40


def test_a_null_echo_beside_an_http_origin_is_not_hidden_in_the_milder_finding() -> None:
    result = cors_of(http=echoing(HTTP), null=echoing("null"))
    assert outcomes(result) == {"cors.http_origin_credentials", "cors.null_credentials"}


def test_a_probe_answered_with_a_redirect_is_not_an_answer_about_the_page() -> None:
    # Given a page answered with 200, and a look-alike probe a gate answered with a redirect (no CORS headers)
    url = "https://example.com/"
    gate = make_response(url, 302, headers=[("Location", "https://example.com/consent")])
    probes = [
        CorsProbe(kind, origin, gate if kind == "lookalike" else make_response(url))
        for kind, origin in cors_probe_origins(parse_target(url))
    ]
    result = check_cors(make_snapshot(url, cors_probes=tuple(probes)))

    # Then that origin is unchecked (never "not exposed"), and the note says where the probe was sent
    assert outcomes(result) == {"check.error"}
    [error] = result.findings
    assert error.subject == f"Origin: {LOOKALIKE}"
    assert "answered with a redirect to 'https://example.com/consent'" in (error.note or "")
    assert result.details["lookalike_origin"]["status_code"] == 302


def test_a_probe_redirected_as_the_page_itself_was_is_judged_as_usual() -> None:
    # Given a chain that ended on a redirect (the redirect limit), and probes redirected the same way
    url = "https://example.com/"
    loop = make_response(url, 302, headers=[("Location", url)])
    probes = [CorsProbe(kind, origin, loop) for kind, origin in cors_probe_origins(parse_target(url))]
    snapshot = make_snapshot(url, cors_probes=tuple(probes))
    snapshot = replace(snapshot, main=replace(snapshot.main, responses=(loop,)))

    # Then the probes' answers are the page's own: nothing is exposed
    assert outcomes(check_cors(snapshot)) == {"cors.not_exposed"}


# -- the cookies that went with a probe: what a browser sends from its origin (fetch/http.py ChainCookies) --------


def echoed_with_cookies(sent: tuple[str, ...], withheld: tuple[str, ...]) -> CheckResult:
    """The foreign and null probes echoed with credentials, each request having carried `sent` and not `withheld`."""
    url = "https://example.com/"
    probes = tuple(
        CorsProbe(kind, origin, make_response(url, headers=echoing(origin)), cookies=sent, cookies_withheld=withheld)
        for kind, origin in (("foreign", PROBE), ("null", "null"))
    )
    return check_cors(make_snapshot(url, cors_probes=probes))


def test_a_credentialed_echo_names_the_session_cookie_that_reached_it() -> None:
    # Given probes that carried the site's SameSite=None session cookie and another one
    result = echoed_with_cookies(("sessionid", "lang"), ("csrftoken",))

    # Then the finding says so, once (the folded null echo does not repeat it), and the details list both sides
    [finding] = result.findings
    assert finding.outcome == "cors.origin_reflected_credentials"
    note = finding.note or ""
    assert "carried the cookies browsers send from that origin: sessionid, lang" in note
    assert "(the session cookie sessionid among them)" in note and note.count("carried") == 1
    assert result.details["foreign_origin"]["cookies_sent"] == ["sessionid", "lang"]
    assert result.details["null_origin"]["cookies_withheld"] == ["csrftoken"]


def test_a_credentialed_echo_read_without_the_sites_cookies_says_so_and_keeps_its_grade() -> None:
    # Given probes that carried none of the site's cookies (all SameSite Lax, Strict or unset)
    result = echoed_with_cookies((), ("sessionid",))

    # Then the echo with credentials is still critical (a signed-in visitor's cookies may well go across sites),
    # and its note says the page was read without the site's cookies
    assert outcomes(result) == {"cors.origin_reflected_credentials"}
    assert "carried none of the site's cookies (sessionid: SameSite Lax" in (result.findings[0].note or "")
    assert graded(result).sections["cors"]["deduction"] == 40


def test_a_cookie_without_a_name_is_named_as_such_in_the_note() -> None:
    # Given probes that carried a cookie set by a line without a name ("Set-Cookie: abc", sent back as "abc")
    result = echoed_with_cookies(("", "lang"), ("",))

    # Then the note says what it is, not an empty name (", lang"); the details keep the name as it is: empty
    note = result.findings[0].note or ""
    assert "send from that origin: (a cookie without a name), lang" in note
    assert result.details["foreign_origin"]["cookies_sent"] == ["", "lang"]
    withheld_only = echoed_with_cookies((), ("",))
    assert "carried none of the site's cookies ((a cookie without a name): SameSite" in (
        withheld_only.findings[0].note or ""
    )


def test_a_site_without_cookies_gets_no_cookie_note_nor_details() -> None:
    result = echoed_with_cookies((), ())
    assert "cookie" not in (result.findings[0].note or "")
    assert "cookies_sent" not in result.details["foreign_origin"]


# -- a page on another port than 443: its host and port over http, and the host's port 80 ----------------------

ON_8443 = "https://example.com:8443/"


def test_an_echo_of_the_pages_own_host_and_port_over_http_is_the_http_origin_finding() -> None:
    # Given a site on 8443 comparing the Origin's host and port with its Host header, whatever the scheme
    result = cors_of(http=echoing("http://example.com:8443"), url=ON_8443)

    # Then it trusts a cleartext origin anyone on the network path can forge: bad, a B at best
    assert outcomes(result) == {"cors.http_origin_credentials"}
    assert result.findings[0].subject == "Origin: http://example.com:8443"
    assert result.details["http_origin"]["origin_sent"] == "http://example.com:8443"
    assert graded(result).grade == "B"


def test_an_echo_of_the_hosts_port_80_origin_is_the_same_finding_and_both_are_one() -> None:
    only_port_80 = cors_of(http_port_80=echoing("http://example.com"), url=ON_8443)
    both = cors_of(http=echoing("http://example.com:8443"), http_port_80=echoing("http://example.com"), url=ON_8443)

    assert outcomes(only_port_80) == outcomes(both) == {"cors.http_origin_credentials"}
    assert only_port_80.details["http_port_80_origin"]["allow_origin"] == "http://example.com"
    # (a check of the host name alone lets both through: one finding, the second echo a note on it; its subject
    # is the port 80 origin, as when only that one was asked, so an unchanged site's diff shows no change)
    [finding] = both.findings
    assert finding.subject == "Origin: http://example.com"
    assert finding.more_notes == (
        "Origin: http://example.com:8443 was echoed with Access-Control-Allow-Credentials: true as well",
    )
    assert graded(both).sections["cors"]["deduction"] == graded(only_port_80).sections["cors"]["deduction"] == 20


def test_the_hosts_port_80_origin_without_credentials_grants_nothing_worth_points() -> None:
    result = cors_of(
        http_port_80=[("Access-Control-Allow-Origin", "http://example.com"), ("Vary", "Origin")], url=ON_8443
    )
    assert outcomes(result) == {"cors.allowlist"}


def test_a_cookie_named_in_utf8_is_named_by_its_characters() -> None:
    # Given probes that carried a cookie a site named in UTF-8 (the jar holds the latin-1 text of its bytes)
    name = "Jürgen".encode().decode("latin-1")
    result = echoed_with_cookies((name, "lang"), ())

    # Then the note and the details name it as DevTools does
    assert "send from that origin: Jürgen, lang" in (result.findings[0].note or "")
    assert result.details["foreign_origin"]["cookies_sent"] == ["Jürgen", "lang"]
