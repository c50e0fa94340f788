"""Stories for the CSP built from a page (issue 15): fixes/csp_proposal.py and the header's fix."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.findings import Finding
from websec_app.scanner.fixes.csp_proposal import (
    MAX_HASHES,
    MAX_LENGTH,
    MAX_ORIGINS,
    MAX_SITE_POLICY_LENGTH,
    MAX_STYLE_ATTRIBUTE_HASHES,
    CspProposal,
    Repairs,
    propose_policy,
    repair_policy,
)
from websec_app.scanner.records.csp import parse_policy
from websec_app.scanner.records.html import HtmlPage, parse_page

PAGE_URL = "https://www.example.com/shop/"


def page_of(body: str, url: str = PAGE_URL) -> HtmlPage:
    final = make_snapshot(url, body=body.encode()).final
    assert final is not None
    return parse_page(final)


def propose(body: str, url: str = PAGE_URL, keep: list[tuple[str, tuple[str, ...]]] | None = None) -> CspProposal:
    return propose_policy(page_of(body, url), url, keep or [])


def directives(policy: str) -> dict[str, list[str]]:
    parsed = parse_policy(policy)
    assert not parsed.warnings, parsed.warnings  # every proposal is a policy browsers read without complaint
    return {name: list(sources) for name, sources in parsed.directives}


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def html(head: str = "", body: str = "") -> str:
    return f"<!doctype html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


# --- inline scripts and styles ---------------------------------------------------------------------


def test_inline_scripts_are_allowed_by_the_hash_browsers_compute() -> None:
    # Given inline scripts with non-ASCII text and one with CR LF line ends
    first = "window.greeting = 'héllo ✓ 🎉';"
    second = "\n  var a = 1;\n  var b = '</div>';\n"
    page = html(f"<script>{first}</script>", f"<script>{second.replace(chr(10), chr(13) + chr(10))}</script>")

    # When a policy is proposed
    proposal = propose(page)

    # Then script-src holds the SHA-256 of each script's UTF-8 text (CR LF read as LF, as the HTML parser does)
    assert proposal.derived
    assert directives(proposal.policy)["script-src"] == ["'self'", sha256(first), sha256(second)]


def test_data_blocks_external_and_inert_scripts_need_no_hash() -> None:
    body = (
        '<script type="application/ld+json">{"@type": "Product"}</script>'
        '<script type="text/template"><p>{{name}}</p></script>'
        '<script src="/app.js">ignored();</script>'
        "<script></script>"
        "<template><script>inTemplate()</script></template>"
        '<script type="importmap">{"imports": {}}</script>'
        '<script type="module">import "/m.js";</script>'
        # a JavaScript type with parameters is a data block, as page analysis reads it (records/html.script_type)
        '<script type="text/javascript; charset=utf-8">neverRuns()</script>'
        '<script type=" SpeculationRules ">{"prefetch": []}</script>'
    )

    policy = directives(propose(html(body=body)).policy)

    # import maps, speculation rules and module scripts are checked against script-src; the others never run
    assert policy["script-src"] == [
        "'self'",
        sha256('{"imports": {}}'),
        sha256('import "/m.js";'),
        sha256('{"prefetch": []}'),
    ]


def test_inline_styles_and_style_attributes_get_hashes_event_handlers_do_not() -> None:
    style = "p { color: teal }"
    body = '<p style="margin: 0" onclick="go()">x</p><p style="margin: 0">y</p><a href="javascript:go()">z</a>'

    proposal = propose(html(f"<style>{style}</style>", body))
    policy = directives(proposal.policy)

    assert policy["style-src"] == ["'self'", sha256(style)]
    assert policy["style-src-attr"] == ["'unsafe-hashes'", sha256("margin: 0")]
    assert "'unsafe-hashes'" not in policy["script-src"] and "'unsafe-inline'" not in policy["script-src"]
    notes = " ".join(proposal.notes)
    assert "2 inline event handlers" in notes and "addEventListener" in notes


def test_the_attributes_of_an_element_browsers_never_build_need_nothing() -> None:
    # Given a form opened inside another and a frame in the body: browsers ignore both start tags (HTML §13.2.6.4.7)
    body = '<form action="/a"><form action="/b" onsubmit="go()" style="color:red"></form><frame onload="go()">'

    proposal = propose(html(body=body))

    # Then the policy allows no style attribute, and the owner is told of no inline handler: the code before
    # added 'unsafe-hashes' and told of 2 inline event handlers that are nowhere in the document
    assert "style-src-attr" not in directives(proposal.policy)
    assert "inline event handler" not in " ".join(proposal.notes)


def test_many_distinct_style_attributes_fall_back_to_unsafe_inline_for_attributes_only() -> None:
    body = "".join(f'<p style="margin: {i}px">x</p>' for i in range(MAX_STYLE_ATTRIBUTE_HASHES + 1))

    proposal = propose(html(body=body))

    assert directives(proposal.policy)["style-src-attr"] == ["'unsafe-inline'"]
    assert "too many distinct ones to hash" in " ".join(proposal.notes)


# --- origins ----------------------------------------------------------------------------------------


def test_each_directive_lists_the_origins_the_page_loads_from() -> None:
    head = (
        '<link rel="stylesheet" href="/site.css">'
        '<link rel="stylesheet" href="https://cdn.example.net/lib.css">'
        '<script src="https://www.example.com/same-origin-absolute.js"></script>'
        '<script src="//code.example.org/a.js"></script>'
        '<script src="http://legacy.example.org:8443/b.js"></script>'
        '<link rel="icon" href="https://static.example.com/favicon.ico">'
        '<link rel="manifest" href="https://static.example.com/app.webmanifest">'
        '<link rel="preload" as="fetch" href="https://api.example.com/data.json" crossorigin>'
        '<link rel="preload" as="font" href="https://fonts.example.com/f.woff2" crossorigin>'
    )
    body = (
        '<img src="https://img.example.com/a.png" srcset="/b.png 2x, https://img2.example.com/c.png 3x">'
        '<img src="data:image/png;base64,iVBORw0KGgo=">'
        '<video src="https://media.example.com/v.mp4" poster="/poster.jpg"></video>'
        '<iframe src="https://www.youtube-nocookie.com/embed/x"></iframe>'
        '<form action="https://pay.example.com/checkout" method="post"></form>'
        "<noscript><img src='https://tracker.example.com/p.gif'></noscript>"
    )

    policy = directives(propose(html(head, body)).policy)

    assert policy == {
        "default-src": ["'self'"],
        "script-src": ["'self'", "https://code.example.org", "https://legacy.example.org:8443"],
        "style-src": ["'self'", "https://cdn.example.net"],
        "img-src": [
            "'self'",
            "https://static.example.com",
            "https://img.example.com",
            "https://img2.example.com",
            "data:",
            "https://cdn.example.net",
        ],
        "font-src": ["'self'", "https://fonts.example.com", "https://cdn.example.net"],
        "connect-src": ["'self'", "https://api.example.com"],
        "media-src": ["'self'", "https://media.example.com"],
        "frame-src": ["'self'", "https://www.youtube-nocookie.com"],
        "manifest-src": ["'self'", "https://static.example.com"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'", "https://pay.example.com"],
        "frame-ancestors": ["'self'"],
        "upgrade-insecure-requests": [],
    }


def test_a_page_loading_only_from_itself_gets_the_short_policy() -> None:
    head = '<link rel="stylesheet" href="/s.css"><script src="/app.js"></script>'
    proposal = propose(html(head, '<img src="/logo.png"><form action="/search"></form>'))

    # fonts of a same-origin stylesheet are covered by default-src 'self'
    assert proposal.policy == (
        "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "frame-ancestors 'self'; upgrade-insecure-requests"
    )
    assert any("Report-Only" in note for note in proposal.notes)


def test_an_http_page_keeps_http_origins_and_gets_no_upgrade() -> None:
    url = "http://plain.example.com/"
    proposal = propose(html('<script src="http://cdn.example.com/a.js"></script>'), url)

    policy = directives(proposal.policy)
    assert policy["script-src"] == ["'self'", "http://cdn.example.com"]
    assert "upgrade-insecure-requests" not in policy


def test_inline_css_urls_fonts_imports_and_a_foreign_base() -> None:
    style = (
        "@import url('https://styles.example.com/x.css');"
        "@font-face { font-family: F; src: url(https://fonts.example.com/f.woff2) format('woff2'); }"
        'body { background: url("https://img.example.com/bg.png") }'
    )
    head = f'<base href="https://assets.example.com/v2/"><style>{style}</style><script src="app.js"></script>'

    proposal = propose(html(head))
    policy = directives(proposal.policy)

    assert policy["style-src"] == ["'self'", "https://styles.example.com", sha256(style)]
    assert policy["font-src"] == ["'self'", "https://fonts.example.com", "https://styles.example.com"]
    assert policy["img-src"] == ["'self'", "https://img.example.com", "https://styles.example.com"]
    # relative URLs resolve against <base href>, and base-uri must allow that base
    assert policy["script-src"] == ["'self'", "https://assets.example.com"]
    assert policy["base-uri"] == ["'self'", "https://assets.example.com"]
    # and the notes say why, and what to drop once the <base> goes, as page.base_foreign's fix advises
    assert FOREIGN_BASE_NOTE.format("https://assets.example.com") in proposal.notes


FOREIGN_BASE_NOTE = (
    "The base-uri directive allows {0} because the page's <base href> points there and its relative URLs load from "
    "there: if that origin is not the site's own, remove the <base> element (the page analysis flags it) and {0} "
    "from base-uri"
)


def test_a_base_on_the_pages_own_origin_is_self_and_needs_no_note() -> None:
    proposal = propose(html('<base href="/shop/v2/"><script src="app.js"></script>'))

    assert directives(proposal.policy)["base-uri"] == ["'self'"]
    assert not any(note.startswith("The base-uri directive allows") for note in proposal.notes)


def test_what_precedes_the_base_is_allowed_from_the_pages_url_as_page_analysis_resolves_it() -> None:
    # Given a script and a stylesheet before a <base> on another origin, and an image after it
    head = (
        '<script src="/app.js"></script><link rel="stylesheet" href="/site.css">'
        '<link rel="stylesheet" href="//styles.example.net/a.css">'
        '<base href="http://cdn.other.net/"><link rel="stylesheet" href="//fonts.example.net/b.css">'
    )
    page = html(head, '<img src="logo.png"><form action="/post"></form>')

    policy = directives(propose(page).policy)

    # Then the script and stylesheet fetched before the base come from the page's origin (HTML §4.2.3; Chromium:
    # tests/scanner/test_base_browser.py), and a scheme-relative one takes the page's scheme; what follows the
    # base, and the form's action (resolved when submitted), take the base
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'", "https://styles.example.net", "https://fonts.example.net"]
    assert policy["font-src"] == ["'self'", "https://styles.example.net", "https://fonts.example.net"]
    assert policy["img-src"] == [
        "'self'",
        "https://cdn.other.net",
        "https://styles.example.net",
        "https://fonts.example.net",
    ]
    assert policy["form-action"] == ["'self'", "https://cdn.other.net"]
    assert policy["base-uri"] == ["'self'", "https://cdn.other.net"]


def test_data_scripts_and_unwritable_hosts_are_left_out_with_a_note() -> None:
    body = (
        '<script src="data:text/javascript,alert(1)"></script>'
        '<script src="https://evil.example;script-src *"></script>'
        '<img src="https://[2001:db8::1]/a.png">'
    )

    proposal = propose(html(body=body))

    policy = directives(proposal.policy)
    assert policy["script-src"] == ["'self'"] and "img-src" not in policy
    assert all(";" not in source and "*" not in source for sources in policy.values() for source in sources)
    notes = " ".join(proposal.notes)
    assert "data: URLs under script-src" in notes and "cannot be written in a CSP" in notes


def test_the_sites_reporting_and_frame_ancestors_are_kept() -> None:
    keep = [
        ("script-src", ("*",)),
        ("report-uri", ("https://report.example.com/csp",)),
        ("frame-ancestors", ("https://partner.example.com",)),
    ]

    policy = directives(propose(html(), keep=keep).policy)

    assert policy["report-uri"] == ["https://report.example.com/csp"]
    assert policy["frame-ancestors"] == ["https://partner.example.com"]
    assert policy["script-src"] == ["'self'"]


# --- bounds -------------------------------------------------------------------------------------------


def test_too_many_origins_fall_back_to_the_generic_policy() -> None:
    body = "".join(f'<img src="https://i{i}.example.com/a.png">' for i in range(MAX_ORIGINS + 5))

    proposal = propose(html(body=body))

    assert not proposal.derived
    assert proposal.policy.startswith("default-src 'self'; script-src 'self'; object-src 'none'")
    assert "img content from more than" in proposal.notes[0] and "nonce" in proposal.notes[0]


def test_too_many_inline_scripts_fall_back_to_the_generic_policy() -> None:
    body = "".join(f"<script>var x{i} = {i};</script>" for i in range(MAX_HASHES + 1))

    proposal = propose(html(body=body))

    assert not proposal.derived and "sha256" not in proposal.policy
    assert f"more than {MAX_HASHES} distinct inline scripts" in proposal.notes[0]


def test_a_hostile_page_gets_a_bounded_policy() -> None:
    # 50,000 resources from 50,000 origins, 10,000 inline scripts, 10,000 style attributes
    body = "".join(
        f'<script src="https://h{i}.example.com/a.js"></script><script>v{i}()</script><b style="top:{i}px">'
        for i in range(10_000)
    )

    proposal = propose(html(body=body))

    assert not proposal.derived and len(proposal.policy) < MAX_LENGTH


def test_a_policy_past_the_length_bound_falls_back_to_the_generic_policy() -> None:
    # Just under each cap at once, with long host names
    host = "a" * 60 + "{}." + "b" * 60 + ".example.com"
    origins = "".join(f'<img src="https://{host.format(i)}/x.png">' for i in range(MAX_ORIGINS))
    scripts = "".join(f"<script>s{i}()</script>" for i in range(MAX_HASHES))
    styles = "".join(f"<style>.c{i}{{}}</style>" for i in range(MAX_HASHES))

    proposal = propose(html(body=origins + scripts + styles))

    assert len(proposal.policy) <= MAX_LENGTH
    assert not proposal.derived  # 20 origins of 140 characters plus 40 hashes pass 4 KiB: the generic one
    assert "characters" in proposal.notes[0]


# --- what the scanner makes of its own proposal ----------------------------------------------------


def test_the_scanner_grades_its_own_proposal_good() -> None:
    page = html(
        '<script src="https://cdn.example.net/a.js"></script><script>boot()</script><style>p{}</style>',
        '<p style="color: red">x</p>',
    )
    body = page.encode()
    [finding] = [f for f in check_headers(make_snapshot(PAGE_URL, body=body)).findings if f.subject.startswith("C")]
    proposal = finding.fix_vars["csp_proposal"]

    assert finding.outcome == "csp.missing" and sha256("boot()") in proposal
    assert "Content-Security-Policy-Report-Only" in (finding.fix_note or "") and finding.note is None
    enforced = make_snapshot(PAGE_URL, body=body, headers=[("Content-Security-Policy", proposal)])
    outcomes = [f.outcome for f in check_headers(enforced).findings if f.subject == "Content-Security-Policy"]
    assert outcomes == ["csp.good"]


def test_a_policy_that_restricts_scripts_is_repaired_not_replaced() -> None:
    value = (
        "script-src 'nonce-abc123' 'strict-dynamic' 'unsafe-eval' http://cdn.example.com; "
        "style-src 'self' 'unsafe-inline'"
    )
    page = page_of(html("<style>h1{}</style>", '<h1 style="top:0">x</h1>'))

    proposal = repair_policy(
        parse_policy(value),
        page,
        PAGE_URL,
        Repairs(insecure_scripts=True, unsafe_eval=True, objects_open=True, base_open=True, inline_style=True),
    )

    assert proposal.policy == (
        "script-src 'nonce-abc123' 'strict-dynamic' https://cdn.example.com; "
        f"style-src 'self' {sha256('h1{}')}; style-src-attr 'unsafe-hashes' {sha256('top:0')}; "
        "object-src 'none'; base-uri 'self'"
    )
    assert proposal.notes[0] == (
        "The proposed policy is the site's current one, changed: script sources over https://; 'unsafe-eval' "
        "removed (move eval() and new Function() code into plain functions); object-src 'none'; base-uri 'self'; "
        "inline styles allowed by hash instead of 'unsafe-inline'"
    )


def test_a_repair_derives_object_src_and_base_uri_from_the_page_as_a_proposal_does() -> None:
    # Given a page with <base href> and an <object> on another origin (Chromium: test_csp_proposal_browser.py)
    page = page_of(
        html(
            '<base href="https://static.example/assets/"><script src="app.js"></script>',
            '<object data="https://static.example/doc.pdf"></object><embed src="/movie.swf">',
        )
    )
    proposal = repair_policy(
        parse_policy("script-src 'self' https://static.example"),
        page,
        PAGE_URL,
        Repairs(objects_open=True, base_open=True),
    )
    # Then what the page embeds and its base stay allowed; a page with neither gets 'none' and 'self'
    assert directives(proposal.policy)["object-src"] == ["https://static.example"]
    assert directives(proposal.policy)["base-uri"] == ["'self'", "https://static.example"]
    assert FOREIGN_BASE_NOTE.format("https://static.example") in proposal.notes
    plain = repair_policy(
        parse_policy("script-src 'self'"), page_of(html()), PAGE_URL, Repairs(True, False, True, True)
    )
    assert plain.policy == "script-src 'self'; object-src 'none'; base-uri 'self'"
    assert not any(note.startswith("The base-uri directive allows") for note in plain.notes)


def test_the_header_fix_uses_the_repaired_policy_when_only_minor_problems_remain() -> None:
    value = "default-src 'self'; script-src 'self' 'unsafe-eval'; object-src 'none'; base-uri 'self'; report-uri /r"
    snapshot = make_snapshot(PAGE_URL, body=html().encode(), headers=[("Content-Security-Policy", value)])

    [finding] = [f for f in check_headers(snapshot).findings if f.subject == "Content-Security-Policy"]

    assert finding.outcome == "csp.unsafe_eval"
    assert finding.fix_vars["csp_proposal"] == (
        "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; report-uri /r"
    )


def test_a_policy_of_a_hundred_thousand_directives_is_repaired_in_one_pass() -> None:
    # Given a policy that restricts scripts and allows eval, then 130,000 directives browsers ignore: 1 MB, as a
    # <meta> policy can be
    value = "script-src 'self' 'unsafe-eval'; " + "".join(f"x{i};" for i in range(130_000))

    # When it is repaired: each directive was looked up from the first, which took minutes (this test would hang)
    proposal = repair_policy(parse_policy(value, delivery="meta"), None, PAGE_URL, Repairs(unsafe_eval=True))

    # Then the repair is made
    assert "'unsafe-eval'" not in proposal.policy
    assert any("'unsafe-eval' removed" in note for note in proposal.notes)


def csp_finding(snapshot_body: str, headers: list[tuple[str, str]] | None = None) -> Finding:
    snapshot = make_snapshot(PAGE_URL, body=snapshot_body.encode(), headers=headers or [])
    return next(f for f in check_headers(snapshot).findings if f.subject == "Content-Security-Policy")


def test_a_site_policy_too_long_to_repeat_gets_the_generic_policy_and_the_changes_to_make_in_it() -> None:
    # Given a <meta> policy of 1.8 MB: 70,000 http:// script sources, to be made https://
    sources = " ".join(f"http://s{i}.example.net" for i in range(70_000))
    page = html(f'<meta http-equiv="Content-Security-Policy" content="script-src {sources}; object-src \'none\'">')

    # When the headers are checked
    finding = csp_finding(page)

    # Then the fix is the generic policy, not the site's repaired (1.9 MB, written a dozen times in the report),
    # and its note says why and what to change in the site's policy to keep it
    assert finding.outcome == "csp.insecure_source"
    proposal = finding.fix_vars["csp_proposal"]
    assert proposal.startswith("default-src 'self'; script-src 'self'; ") and len(proposal) < MAX_LENGTH
    assert (finding.fix_note or "").startswith(
        "This is a generic strict policy: the site's policy repaired would take 1,"
    )
    assert f"of {MAX_SITE_POLICY_LENGTH:,} for a policy it repeats. To keep the site's policy instead, make these " in (
        finding.fix_note or ""
    )
    assert "changes in it: script sources over https://; base-uri 'self'." in (finding.fix_note or "")


def test_a_report_only_policy_too_long_to_repeat_is_not_proposed_whole() -> None:
    # Given only a Content-Security-Policy-Report-Only header of 64 KB
    sources = " ".join(f"https://s{i}.example.net" for i in range(2_500))
    finding = csp_finding(html(), [("Content-Security-Policy-Report-Only", f"script-src 'self' {sources}")])

    # Then its fix is the generic policy, with a note saying the site's is too long to repeat
    assert finding.outcome == "csp.report_only_only"
    assert len(finding.fix_vars["csp_proposal"]) < MAX_LENGTH
    assert (finding.fix_note or "").startswith(
        "This is a generic strict policy: the site's Report-Only policy would take 63,907 characters"
    )


def test_a_host_longer_than_a_dns_name_is_left_out_of_a_repair() -> None:
    # Given a policy without base-uri and a page whose <base href> names a 1 MB host (labels of 60 characters)
    host = ("a" * 60 + ".") * 16_000 + "com"
    page = html(
        f'<meta http-equiv="Content-Security-Policy" content="script-src \'self\'"><base href="https://{host}/">'
    )

    # When the headers are checked
    finding = csp_finding(page)

    # Then the repaired base-uri leaves the host out (no name past 253 characters resolves): it was copied into
    # the fix, its snippets and the note, a 21 MB headers section
    assert finding.fix_vars["csp_proposal"] == "script-src 'self'; object-src 'none'; base-uri 'self'"
    assert len(finding.fix_note or "") < 2_000


def test_a_huge_inline_stylesheet_is_read_in_one_pass() -> None:
    # 20,000 @font-face rules and 20,000 url()s in one <style>: a check of every url() against every
    # @font-face would take minutes (this test would hang); one pass takes milliseconds
    rules = "".join(f"@font-face{{src:url(/f{i}.woff)}}.c{i}{{background:url(/b{i}.png)}}" for i in range(20_000))

    policy = directives(propose(html(f"<style>{rules}</style>")).policy)

    assert policy["style-src"] == ["'self'", sha256(rules)] and "font-src" not in policy


def test_repairing_inline_styles_keeps_many_style_attributes_working() -> None:
    body = "".join(f'<p style="margin: {i}px">x</p>' for i in range(MAX_STYLE_ATTRIBUTE_HASHES + 1))

    proposal = repair_policy(
        parse_policy("default-src 'self'; style-src 'self' 'unsafe-inline'"),
        page_of(html(body=body)),
        PAGE_URL,
        Repairs(inline_style=True),
    )

    assert proposal.policy == "default-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'"


def test_scripts_after_the_end_of_html_are_hashed_and_a_script_writing_it_keeps_its_hash() -> None:
    # Given a script whose text holds "</body></html>" and an inline script after the real </html>
    writer = 'document.write("</body></html>");'
    late = "window.late = 1;"
    page = html(body=f"<script>{writer}</script>") + f"\n<script>{late}</script>"

    # Then both are allowed by the hash of their exact text (browsers run the one after </html> "in body")
    assert directives(propose(page).policy)["script-src"] == ["'self'", sha256(writer), sha256(late)]


# --- what the site wrote, copied into server configuration (issue 15) -------------------------------

#: Apache expands ${NAME} and Caddy {$NAME} (environment variables) in the configuration the fix is pasted in.
HOSTILE = "https://evil.example/r?u=${APACHE_SECRET}&h={$SECRETVAR:x}"


def _csp_proposal(headers: list[tuple[str, str]]) -> tuple[str, str, str]:
    """(outcome, proposed policy, the proposal's note: the fix's, never the finding's) of a site sending `headers`."""
    snapshot = make_snapshot(PAGE_URL, body=html("<script>a=1</script>").encode(), headers=headers)
    result = check_headers(snapshot)
    [finding, *_] = [f for f in result.findings if f.subject == "Content-Security-Policy"]
    found = finding.note or ""
    assert not any(words in found for words in ("left out", "relies on a nonce", "proposed policy")), found
    return finding.outcome, finding.fix_vars["csp_proposal"], finding.fix_note or ""


def test_site_values_with_configuration_syntax_are_left_out_of_every_proposal_with_a_note() -> None:
    cases = [
        # a policy that does not restrict scripts: a derived proposal keeping the site's report-uri, report-to
        ("Content-Security-Policy", f"script-src *; report-uri {HOSTILE} /ok; report-to {{$G}} ok", "csp.broad"),
        # one that does: the site's own, repaired (base-uri missing)
        ("Content-Security-Policy", f"script-src 'self'; object-src 'none'; report-uri {HOSTILE} /ok", "csp.no_base"),
        # only a Report-Only policy: the site's own, to enforce
        (
            "Content-Security-Policy-Report-Only",
            f"default-src 'self'; img-src 'self' %{{X}}e; report-uri {HOSTILE}",
            "",
        ),
    ]
    for header, value, outcome in cases:
        found, policy, note = _csp_proposal([(header, value)])
        assert found.startswith(outcome or "csp.report_only_only"), found
        assert not set(policy) & set("${}%\\"), policy
        assert "left out: characters ($, braces, %, quotes, backslashes)" in note, note
        if header == "Content-Security-Policy":
            assert "report-uri /ok" in policy, policy  # the writable one is kept
        else:
            assert "report-uri" not in policy and "img-src 'self'" in policy, policy


def test_writable_sources_are_csp_source_expressions_and_url_characters() -> None:
    from websec_app.scanner.fixes.csp_proposal import writable_source

    good = ["'self'", "'nonce-ab+/c='", "'sha256-AbC+/=='", "*.example.com:*", "https://a.example/r?x=1&y=[2]",
            "data:", "/csp-report", "my-policy#1", "*", "https://cdn.example.com/a%20b", "/r%7BX%7De%2f"]  # fmt: skip
    bad = ["${A}", "{$A}", "a{b", "a}b", "%{HOME}e", '"x"', "a'b", "'x y'", "a\\b", "a b", "$uri", "", "x" * 2000,
           "a%", "a%2", "a%zz", "%%7B", "/r%{X}e"]  # fmt: skip
    assert [t for t in good if not writable_source(t)] == []
    assert [t for t in bad if writable_source(t)] == []


def test_a_policy_relying_on_a_nonce_says_to_send_it_from_the_application() -> None:
    value = "script-src 'nonce-r4nd0m' 'strict-dynamic' 'unsafe-eval'; object-src 'none'; base-uri 'none'"
    outcome, policy, note = _csp_proposal([("Content-Security-Policy", value)])
    assert outcome == "csp.unsafe_eval" and "'nonce-r4nd0m'" in policy
    assert "relies on a nonce" in note and "application that generates the nonce" in note
    assert "snippet" not in note  # the application sends this policy: no server snippet is shown for it
    _, _, enforce_note = _csp_proposal([("Content-Security-Policy-Report-Only", value)])
    assert "relies on a nonce" in enforce_note


def test_scripts_inside_svg_are_hashed_with_character_references_decoded_as_browsers_do() -> None:
    # Foreign content (HTML §13.2.6.5) decodes &amp; in an <svg> script; inside foreignObject it is HTML again
    body = "<svg><script>a=1&amp;&amp;2</script><foreignObject><script>b&amp;c</script></foreignObject></svg>"
    proposal = propose(html(body=body))
    sources = directives(proposal.policy)["script-src"]
    assert sha256("a=1&&2") in sources and sha256("b&amp;c") in sources
    assert sha256("a=1&amp;&amp;2") not in sources


def test_a_cdata_section_in_svg_is_hashed_as_its_characters_taken_literally() -> None:
    # HTML §13.2.5.69: in foreign content a CDATA section's characters are text as they stand, without the
    # markers and without decoding; a character reference outside one is decoded (libxml2 keeps all raw)
    body = (
        "<svg><style><![CDATA[.a{fill:red}]]></style><script><![CDATA[go();]]></script>"
        "<script>x&amp;<![CDATA[a &lt; b]]>&gt;<![CDATA[ open</script></svg>"
    )
    proposal = propose(html(body=body))
    script_src, style_src = directives(proposal.policy)["script-src"], directives(proposal.policy)["style-src"]
    assert sha256(".a{fill:red}") in style_src
    assert sha256("go();") in script_src and sha256("x&a &lt; b> open") in script_src
    assert sha256("<![CDATA[go();]]>") not in script_src


def test_google_fonts_stylesheets_get_their_fonts_origin_not_their_own() -> None:
    # Given the usual Google Fonts link: the CSS API answers with @font-face rules on fonts.gstatic.com
    head = (
        '<link rel="preconnect" href="https://fonts.googleapis.com">'
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Roboto&display=swap">'
        '<link rel="stylesheet" href="https://cdn.example.net/lib.css">'
    )
    proposal = propose(html(head, ""))
    policy = directives(proposal.policy)
    # Then the fonts are allowed where they are (the proposal allowed fonts.googleapis.com, which serves none, and a
    # pasted policy blocked the page's fonts), the stylesheet where it is, and another stylesheet's origin as before
    assert policy["style-src"] == ["'self'", "https://fonts.googleapis.com", "https://cdn.example.net"]
    assert policy["font-src"] == ["'self'", "https://fonts.gstatic.com", "https://cdn.example.net"]
    assert policy["img-src"] == ["'self'", "https://cdn.example.net"]
    fonts_note = "(the fonts of fonts.googleapis.com's stylesheets from fonts.gstatic.com, where they are)"
    assert any(fonts_note in note for note in proposal.notes)
    # and a page without Google Fonts is not told about it
    assert not any("gstatic" in note for note in propose(html('<link rel="stylesheet" href="/s.css">', "")).notes)


def test_known_scripts_get_what_their_makers_document_they_load_while_running() -> None:
    # Given reCAPTCHA's api.js, the Google tag and Stripe.js: each loads more than its own URL once it runs (a
    # widget in a frame, beacons, payment frames), which a policy of the page's URLs alone blocks
    head = (
        '<script src="https://www.google.com/recaptcha/api.js" async defer></script>'
        '<script async src="https://www.googletagmanager.com/gtag/js?id=G-XYZ"></script>'
        '<script src="https://js.stripe.com/v3/"></script>'
    )
    proposal = propose(html(head, ""))
    policy = directives(proposal.policy)
    # Then the policy allows what their makers document for a CSP (data/csp_services.toml)
    assert policy["script-src"] == [
        "'self'",
        "https://www.google.com/recaptcha/",
        "https://www.googletagmanager.com",
        "https://js.stripe.com",
        "https://www.gstatic.com/recaptcha/",
    ]
    assert policy["frame-src"] == [
        "'self'",
        "https://www.google.com/recaptcha/",
        "https://recaptcha.google.com/recaptcha/",
        "https://js.stripe.com",
        "https://*.js.stripe.com",
        "https://hooks.stripe.com",
    ]
    assert (
        "https://*.google-analytics.com" in policy["connect-src"] and "https://api.stripe.com" in policy["connect-src"]
    )
    assert policy["img-src"] == ["'self'", "https://*.google-analytics.com", "https://*.googletagmanager.com"]
    # and the notes count the page's own three origins apart from those, which a note of their own names
    assert proposal.notes[0].startswith(
        "The proposed policy allows what this page loads: 3 scripts, from its own origin and 3 others."
    )
    assert proposal.notes[1] == (
        "It also allows what reCAPTCHA, the Google tag (Google Analytics 4, Tag Manager) and Stripe.js load while "
        "running, as their makers document for a Content-Security-Policy"
    )


def test_a_script_from_a_known_makers_host_but_not_the_known_script_gets_nothing_more() -> None:
    policy = directives(propose(html('<script src="https://www.google.com/other.js"></script>', "")).policy)
    assert "frame-src" not in policy and policy["script-src"] == ["'self'", "https://www.google.com/other.js"]


@pytest.mark.parametrize(
    ("script", "added"),
    [
        (
            "https://challenges.cloudflare.com/turnstile/v0/api.js",
            {"frame-src": ["'self'", "https://challenges.cloudflare.com"]},
        ),
        (
            "https://js.hcaptcha.com/1/api.js",
            {
                directive: ["'self'", "https://hcaptcha.com", "https://*.hcaptcha.com"]
                for directive in ("frame-src", "style-src", "connect-src")
            },
        ),
        # the beacon Cloudflare injects into a proxied page, a version after its name
        (
            "https://static.cloudflareinsights.com/beacon.min.js/vcd15cbe7772f49c399c6a5babf22c1241717689176015",
            {"connect-src": ["'self'", "https://cloudflareinsights.com"]},
        ),
    ],
)
def test_widgets_and_beacons_get_what_their_makers_document(script: str, added: dict[str, list[str]]) -> None:
    policy = directives(propose(html(f'<script src="{script}" async defer></script>', "")).policy)
    assert {directive: policy.get(directive) for directive in added} == added
