"""fix_snippets (issue 15): the remedy table covers every fix, each snippet sets what the fix recommends, the
machine-readable ones parse, hostile values cannot break out of the configuration, and the report nulls them
exactly where it nulls `fix`. Real servers load the snippets in tests/snippets/."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from websec_app.scanner.findings import CheckResult, Finding
from websec_app.scanner.fixes import SERVERS, render_snippets
from websec_app.scanner.fixes.actions import CSP
from websec_app.scanner.fixes.csp_proposal import relies_on_nonce
from websec_app.scanner.fixes.remedies import CODE_KINDS, remedy_table
from websec_app.scanner.grading import grade, render_template
from websec_app.scanner.records.csp import parse_policy
from websec_app.scanner.report import ScanReport
from websec_app.scanner.rules import load_rulebook

BOOK = load_rulebook()
TABLE = remedy_table()
#: Values for every placeholder a fix template uses.
CONTEXT = {
    "host": "www.example.com",
    "domain": "example.com",
    "cookie": "sessionid",
    "policy": "default-src 'self'",
    "csp_proposal": "default-src 'self'; img-src 'self' data: https://cdn.example; object-src 'none'",
    "max_age": "31536000",
    "allowed": "https://partner.example",
    "permissions_policy": "camera=()",
    "name": "old.example.com",
    "target": "gone.cloudapp.net",
    "spf_strict": "v=spf1 mx -all",
    "caa_name": "example.com",
    "caa_found": "com",
    "allow": "Cloudflare blocked the scan.",
    "www": "www.example.com",
    "security_txt_url": "https://www.example.com/.well-known/security.txt",
    "dane_fix": "Publish this TLSA record beside the old ones:\n`_25._tcp.mx.example.com. IN TLSA 3 1 1 ab12`",
    "dane_web_fix": "Publish this TLSA record beside the old ones:\n`_443._tcp.example.com. IN TLSA 3 1 1 ab12`",
    "nameservers": "ns1.gone-dns.example",
    "nameserver_domain": "gone-dns.example",
    "nameserver": "ns2.old-dns.example",
    "policy_host": "mta-sts.example.com",
}
FIXED = [rule for rule in BOOK.rules.values() if rule.fix]
HEADER_RULES = [rule for rule in FIXED if rule.subject]


def _fix(outcome: str) -> str:
    fix = render_template(BOOK.rule(outcome).fix, CONTEXT)
    assert fix and "{" not in fix.replace("{R:", ""), f"a placeholder of {outcome} has no test value"
    return fix


def _snippets(outcome: str, subjects: tuple[str, ...] = ()) -> dict[str, str]:
    rule = BOOK.rule(outcome)
    snippets = render_snippets(outcome, _fix(outcome), subject=rule.subject, subjects=subjects)
    assert snippets is not None
    return snippets


def netlify_headers(text: str) -> dict[str, list[tuple[str, str]]]:
    """Netlify's documented `_headers` format: a path line, then indented `Name: value` lines; # comments."""
    rules: dict[str, list[tuple[str, str]]] = {}
    path = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            assert line.startswith("/"), f"a path line starts with /: {line!r}"
            path = line.strip()
            rules[path] = []
            continue
        assert path is not None, "a header line before any path"
        name, sep, value = line.strip().partition(":")
        assert sep and re.fullmatch(r"[A-Za-z0-9-]+", name) and value.strip(), f"not Name: value: {line!r}"
        rules[path].append((name, value.strip()))
    return rules


# -- the remedy table ---------------------------------------------------------------------------------------------


def test_every_outcome_with_a_fix_has_a_remedy_and_every_remedy_an_outcome() -> None:
    fixed = {rule.outcome for rule in FIXED}
    assert sorted(fixed - set(TABLE.remedies)) == []
    assert sorted(set(TABLE.remedies) - set(BOOK.rules)) == []


def test_every_header_object_outcome_is_a_header_remedy() -> None:
    assert [rule.outcome for rule in HEADER_RULES if TABLE.remedies[rule.outcome].kind != "header"] == []


def test_templates_have_every_server_and_are_used() -> None:
    used = {remedy.kind for remedy in TABLE.remedies.values()} - set(CODE_KINDS)
    used |= {remedy.on_plain_http for remedy in TABLE.remedies.values() if remedy.on_plain_http}
    assert used == set(TABLE.templates)
    for texts in TABLE.templates.values():
        assert list(texts) == list(SERVERS)


# -- the snippet object ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", FIXED, ids=lambda rule: rule.outcome)
def test_each_fix_has_one_non_empty_string_per_server(rule) -> None:
    snippets = _snippets(rule.outcome, ("sessionid",) if rule.section == "cookies" else ())
    assert list(snippets) == list(SERVERS)
    assert all(isinstance(text, str) and text.strip() for text in snippets.values())
    assert not any("{fix}" in text for text in snippets.values())


def test_no_fix_no_snippets() -> None:
    assert render_snippets("hsts.missing", None, subject="Strict-Transport-Security") is None


def _expected_header(rule) -> tuple[str, str]:
    """What the snippet must set: the fix's `Name: value` (or the bare value), remark in parentheses dropped."""
    fix = _fix(rule.outcome)
    match = re.search(r"(?<![\w-])([A-Z][A-Za-z]*(?:-[A-Za-z]+)+): (.+)$", fix)
    name, value = (match.group(1), match.group(2)) if match else (rule.subject, fix)
    value = re.sub(r" \([^()]*\)$", "", value)
    proposal = rule.outcome != "csp.report_only_only"  # that fix is the site's own, tried Report-Only policy
    if name == "Content-Security-Policy" and rule.subject == "Content-Security-Policy" and proposal:
        name = "Content-Security-Policy-Report-Only"
    return name, value


@pytest.mark.parametrize("rule", HEADER_RULES, ids=lambda rule: rule.outcome)
def test_a_header_object_snippet_sets_its_fix_value(rule) -> None:
    snippets = _snippets(rule.outcome)
    name, value = _expected_header(rule)
    assert f'add_header {name} "{value}" always;' in snippets["nginx"]
    assert re.search(rf'^Header always (set|add) {re.escape(name)} "{re.escape(value)}"$', snippets["apache"], re.M)
    assert f'{name} "{value}"' in snippets["caddy"]
    assert netlify_headers(snippets["netlify"]) == {"/*": [(name, value)]}
    vercel = json.loads(snippets["vercel"])
    assert vercel["headers"][0]["headers"] == [{"key": name, "value": value}]
    rule_json = json.loads(snippets["cloudflare"])
    assert rule_json["action"] == "rewrite"
    assert rule_json["action_parameters"]["headers"][name]["value"] == value
    customs = ET.fromstring(snippets["iis"]).find("system.webServer/httpProtocol/customHeaders")
    assert customs is not None
    assert [(add.get("name"), add.get("value")) for add in customs.iter("add")] == [(name, value)]
    if name == rule.subject or name == "Content-Security-Policy-Report-Only":
        assert [r.get("name") for r in customs.iter("remove")] == [name]  # replaces the site's own


def test_csp_goes_out_report_only_first_with_the_fix_as_value() -> None:
    bare = render_snippets("csp.missing", "default-src 'self'", subject="Content-Security-Policy")
    assert bare is not None
    assert "add_header Content-Security-Policy-Report-Only \"default-src 'self'\" always;" in bare["nginx"]
    assert "reportOnly: true" in bare["express"]
    assert '"default-src": ["\'self\'"]' in bare["express"]
    # X-Frame-Options fixed by CSP frame-ancestors: enforced beside any CSP the site sends (frame-ancestors
    # is ignored in a Report-Only policy), never replacing it
    xfo = _snippets("xfo.allow_from")
    assert (
        "Header always add Content-Security-Policy \"frame-ancestors 'self' https://partner.example\"" in xfo["apache"]
    )
    assert "proxy_hide_header" not in xfo["nginx"]


def test_express_uses_helmet_where_helmet_has_the_header() -> None:
    assert (
        "helmet.strictTransportSecurity({ maxAge: 63072000, includeSubDomains: true })"
        in _snippets("hsts.missing")["express"]
    )
    assert 'helmet.xFrameOptions({ action: "sameorigin" })' in _snippets("xfo.missing")["express"]
    assert (
        'helmet.referrerPolicy({ policy: ["strict-origin-when-cross-origin"] })'
        in _snippets("referrer.missing")["express"]
    )
    assert 'helmet.crossOriginEmbedderPolicy({ policy: "require-corp" })' in _snippets("coep.missing")["express"]
    permissions = _snippets("permissions.missing")["express"]  # helmet has no Permissions-Policy
    assert (
        'res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")'
        in permissions
    )


# -- cookies, fingerprint, templates -------------------------------------------------------------------------------


def test_cookie_snippets_edit_only_the_named_cookies() -> None:
    snippets = _snippets("cookie.session_no_secure", ("sessionid",))
    # the whole set the fix recommends for a session cookie, so the fixes of one cookie agree
    # nginx's samesite= replaces the cookie's own SameSite: written only where SameSite is missing
    assert "proxy_cookie_flags sessionid secure httponly;" in snippets["nginx"]
    samesite = _snippets("cookie.session_no_samesite", ("sessionid",))
    assert "proxy_cookie_flags sessionid secure httponly samesite=lax;" in samesite["nginx"]
    assert '(sessionid=.*)$" "$1; Secure"' in snippets["apache"]
    assert '(sessionid=.*)$" "$1; SameSite=Lax"' in snippets["apache"]
    express = 'res.cookie("sessionid", value, { secure: true, httpOnly: true, sameSite: "lax", path: "/" });'
    assert express in snippets["express"]
    assert 'const COOKIES = ["sessionid"];' in snippets["cloudflare"]
    rule = ET.fromstring(snippets["iis"]).find("system.webServer/rewrite/outboundRules/rule")
    assert rule is not None and rule.find("action").get("value") == "{R:0}; Secure"
    assert _snippets("cookie.session_no_httponly", ("sessionid",))["nginx"] == snippets["nginx"]
    # Netlify and Vercel cannot edit cookies: one sentence saying where it is done
    assert snippets["netlify"].startswith("Netlify's _headers file cannot edit cookies")
    every = _snippets("cookie.no_samesite")
    assert "proxy_cookie_flags ~ secure samesite=lax;" in every["nginx"]


def test_fingerprint_hides_versions_per_server() -> None:
    snippets = _snippets("fingerprint.header_version", ("Server", "X-Powered-By"))
    assert "server_tokens off;" in snippets["nginx"] and "proxy_hide_header X-Powered-By;" in snippets["nginx"]
    assert "ServerTokens Prod" in snippets["apache"] and "Header unset X-Powered-By" in snippets["apache"]
    assert "-Server" in snippets["caddy"] and "-X-Powered-By" in snippets["caddy"]
    assert "helmet.xPoweredBy()" in snippets["express"]
    assert json.loads(snippets["cloudflare"])["action_parameters"]["headers"] == {
        "X-Powered-By": {"operation": "remove"}
    }
    iis = ET.fromstring(snippets["iis"])
    assert iis.find("system.webServer/security/requestFiltering").get("removeServerHeader") == "true"


@pytest.mark.parametrize(
    "outcome", ["dns.caa_missing", "tls.cert_expired", "page.sri_missing_script", "security_txt.missing"]
)
def test_fixes_made_elsewhere_are_one_sentence_with_the_fix(outcome) -> None:
    fix = _fix(outcome).replace("`", "")  # put in as prose, its Markdown backticks dropped
    for server, text in _snippets(outcome).items():
        assert fix in text, server
        assert text.startswith(("Done", "Caddy", "Netlify", "Vercel", "In the Cloudflare")), (server, text)
        assert "add_header" not in text and "Header " not in text


def test_a_fix_made_elsewhere_is_put_in_without_its_markdown_backticks() -> None:
    """The DANE fix marks its record as code (`...`), which the PDF sets in monospace; a snippet is shown as it is."""
    fix = _fix("dns.dane_mismatch")
    assert "`_25._tcp.mx.example.com. IN TLSA 3 1 1 ab12`" in fix
    for server, text in _snippets("dns.dane_mismatch").items():
        assert "`" not in text and "_25._tcp.mx.example.com. IN TLSA 3 1 1 ab12" in text, server


def test_tls_fixes_are_server_configuration() -> None:
    protocols = _snippets("tls.legacy_protocols")
    assert "ssl_protocols TLSv1.2 TLSv1.3;" in protocols["nginx"]
    assert "SSLProtocol -all +TLSv1.2 +TLSv1.3" in protocols["apache"]
    assert "protocols tls1.2 tls1.3" in protocols["caddy"]
    assert "SCHANNEL" in protocols["iis"] and "Minimum TLS Version" in protocols["cloudflare"]
    ciphers = _snippets("tls.cipher_rc4")
    assert "ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:" in ciphers["nginx"]
    assert "RC4" not in ciphers["nginx"] and "SSLCipherSuite ECDHE" in ciphers["apache"]


def test_json_and_xml_snippets_parse_for_every_code_remedy() -> None:
    for rule in FIXED:
        if TABLE.remedies[rule.outcome].kind not in CODE_KINDS:
            continue
        snippets = _snippets(rule.outcome, ("sessionid",) if rule.section == "cookies" else ("X-Powered-By",))
        ET.fromstring(snippets["iis"].split("-->", 1)[1])
        if snippets["vercel"].startswith("{"):
            json.loads(snippets["vercel"])
        if snippets["cloudflare"].startswith("{"):
            json.loads(snippets["cloudflare"])
        if snippets["netlify"].startswith("/"):
            netlify_headers(snippets["netlify"])


# -- hostile values ----------------------------------------------------------------------------------------------


def test_hostile_values_cannot_leave_their_quotes() -> None:
    policy = "default-src 'self' \"x\n}; evil on; $uri %{HOME}e \\"
    snippets = render_snippets("csp.missing", f"Content-Security-Policy: {policy}", subject="Content-Security-Policy")
    assert snippets is not None
    nginx_line = next(line for line in snippets["nginx"].splitlines() if line.startswith("add_header"))
    escaped = "default-src 'self' \\\"x }; evil on; ${dollar}uri %{HOME}e"
    assert nginx_line == f'add_header Content-Security-Policy-Report-Only "{escaped}" always;'
    assert 'geo $dollar { default "$"; }' in snippets["nginx"]
    assert '"default-src \'self\' \\"x }; evil on; $uri %%{HOME}e"' in snippets["apache"]
    assert all(
        "\n"
        not in json.loads(snippets[key])["action_parameters"]["headers"]["Content-Security-Policy-Report-Only"]["value"]
        for key in ("cloudflare",)
    )
    ET.fromstring(snippets["iis"].split("-->", 1)[1])
    assert len(netlify_headers(snippets["netlify"])["/*"]) == 1
    # Caddy fills {placeholders} in header values: braces are escaped
    braces = render_snippets("csp.missing", "default-src 'self' {host}", subject="Content-Security-Policy")
    assert braces is not None and "\"default-src 'self' \\{host\\}\"" in braces["caddy"]


def test_a_proposed_csp_is_deployed_report_only_but_a_tried_report_only_policy_is_enforced() -> None:
    proposed = render_snippets("csp.missing", "default-src 'self'", subject="Content-Security-Policy")
    tried = render_snippets("csp.report_only_only", "default-src 'self'", subject="Content-Security-Policy")
    assert proposed is not None and tried is not None
    assert "add_header Content-Security-Policy-Report-Only \"default-src 'self'\" always;" in proposed["nginx"]
    assert "add_header Content-Security-Policy \"default-src 'self'\" always;" in tried["nginx"]
    assert "Report-Only" not in tried["apache"] and "Report-Only" in proposed["apache"]


def test_hostile_cookie_names_are_left_out_of_configuration() -> None:
    snippets = render_snippets("cookie.no_secure", "Add Secure", subjects=('a"b', "x;y", "ok_name", "$host"))
    assert snippets is not None
    assert "proxy_cookie_flags ok_name secure;" in snippets["nginx"]
    for text in snippets.values():
        assert 'a"b' not in text and "x;y" not in text and "$host" not in text


# -- the report -------------------------------------------------------------------------------------------------------


def _report(results: list[CheckResult]) -> ScanReport:
    graded = grade(results, BOOK, {"host": "www.example.com", "domain": "example.com"})
    return ScanReport(
        url="https://www.example.com/",
        final_url="https://www.example.com/",
        status_code=200,
        score=graded.score,
        grade=graded.grade,
        algorithm_version=BOOK.version,
        scanned_at="2026-01-01T00:00:00Z",
        duration_ms=1,
        issue_counts=graded.issue_counts,
        sections=graded.sections,
    )


def _results() -> list[CheckResult]:
    headers = [Finding(outcome) for outcome in ("hsts.missing", "csp.missing", "xfo.missing")]
    return [
        CheckResult("headers", tuple(headers), {}),
        CheckResult(
            "cookies", (Finding("cookie.session_no_secure", "sessionid", fix_vars={"cookie": "sessionid"}),), {}
        ),
    ]


def _fix_carriers(node: object) -> list[dict]:
    if isinstance(node, dict):
        own = [node] if "fix" in node else []
        return own + [c for value in node.values() for c in _fix_carriers(value)]
    if isinstance(node, list):
        return [c for item in node for c in _fix_carriers(item)]
    return []


def test_the_report_carries_snippets_beside_every_fix_and_strips_them_with_it() -> None:
    report = _report(_results())
    body = report.to_dict()
    hsts = body["headers"]["Strict-Transport-Security"]
    assert hsts["fix_snippets"]["nginx"].endswith(
        'add_header Strict-Transport-Security "max-age=63072000; includeSubDomains" always;'
    )
    assert "Content-Security-Policy-Report-Only" in body["headers"]["Content-Security-Policy"]["fix_snippets"]["caddy"]
    carriers = _fix_carriers(body)
    assert carriers
    for item in carriers:
        assert (item["fix"] is None) == (item["fix_snippets"] is None), item
        if item["fix"] is not None:
            assert list(item["fix_snippets"]) == list(SERVERS)
    assert "proxy_cookie_flags sessionid secure httponly;" in body["cookies"]["findings"][0]["fix_snippets"]["nginx"]
    free = report.to_dict(pro=False, include_fix=False)
    assert all(item["fix"] is None and item["fix_snippets"] is None for item in _fix_carriers(free))


def test_the_nginx_lines_of_one_cookies_findings_agree_so_the_first_one_nginx_applies_is_whole() -> None:
    # Given a session cookie without Secure, HttpOnly or SameSite (three findings), and one whose SameSite=Strict
    # must be kept (only Secure missing)
    cookie = {"cookie": "sid"}
    findings = (
        Finding("cookie.session_no_secure", "sid", fix_vars=cookie),
        Finding("cookie.session_no_httponly", "sid", fix_vars=cookie),
        Finding("cookie.session_no_samesite", "sid", fix_vars=cookie),
        Finding("cookie.session_no_secure", "strict_sid", fix_vars={"cookie": "strict_sid"}),
    )
    body = _report([CheckResult("cookies", findings, {})]).to_dict()
    lines = {
        finding["check"]: [ln for ln in finding["fix_snippets"]["nginx"].splitlines() if ln.startswith("proxy_")]
        for finding in body["cookies"]["findings"]
    }
    # nginx applies only the first proxy_cookie_flags line matching a cookie: pasted in any order, sid gets all
    whole = "proxy_cookie_flags sid secure httponly samesite=lax;"
    assert all(whole in found for found in lines.values()), lines
    # and samesite= (which replaces the cookie's own) is not written for the cookie that has SameSite
    assert "proxy_cookie_flags strict_sid secure httponly;" in lines["cookie.session_no_secure"]


def test_snippets_are_rendered_once_per_fix() -> None:
    from websec_app.scanner.fixes import snippets

    snippets._cached.cache_clear()
    _report(_results())
    first = snippets._cached.cache_info()
    _report(_results())
    second = snippets._cached.cache_info()
    assert second.misses == first.misses and second.hits > first.hits


def test_template_text_is_plain_formatting() -> None:
    # `{fix}` is the only placeholder: Caddy's {host} and IIS's {HTTPS} stay as written
    redirect = _snippets("redirect.missing")
    assert "redir https://{host}{uri} permanent" in redirect["caddy"]
    assert '<add input="{HTTPS}" pattern="^OFF$" />' in redirect["iis"]


def test_fixed_texts_that_are_files_parse() -> None:
    parsed = 0
    for kind, texts in TABLE.templates.items():
        if texts["iis"].startswith("<!--"):
            root = ET.fromstring(texts["iis"].split("-->", 1)[1])
            assert root.tag == "configuration", kind
            parsed += 1
        for server in ("vercel", "cloudflare"):
            if texts[server].lstrip().startswith("{"):
                json.loads(texts[server])
    assert parsed >= 2  # the HTTP to HTTPS rewrite rule and the CORS module


def test_apache_and_caddy_snippets_are_not_written_with_an_environment_variable_in_the_value() -> None:
    # Apache expands ${NAME} on every line (no escape exists); the Caddyfile {$NAME} before reading escapes
    apache = render_snippets("csp.missing", "default-src 'self'; report-uri /r?${SECRET}", subject=CSP)
    caddy = render_snippets("csp.missing", "default-src 'self'; report-uri /r?{$SECRET:x}", subject=CSP)
    assert apache is not None and caddy is not None
    assert apache["apache"].startswith("Not written for Apache httpd: ") and "Header " not in apache["apache"]
    assert caddy["caddy"].startswith("Not written for Caddy: ") and "header {" not in caddy["caddy"]
    # the other servers read them literally: nginx as ${dollar}{SECRET}, Caddy escaped \{SECRET\}
    assert 'report-uri /r?${dollar}{SECRET}" always;' in apache["nginx"]
    assert "report-uri /r?$\\{SECRET\\}" in apache["caddy"]
    assert 'Header always set Content-Security-Policy-Report-Only "' in caddy["apache"]


def test_a_policy_with_a_nonce_gets_no_fixed_header_anywhere() -> None:
    policy = "script-src 'nonce-r4nd0m' 'strict-dynamic'; object-src 'none'; base-uri 'none'"
    for outcome in ("csp.unsafe_eval", "csp.report_only_only"):
        snippets = render_snippets(outcome, policy, subject=CSP)
        assert snippets is not None
        for server, text in snippets.items():
            assert text.startswith("Not a fixed ") and "application that generates the nonce" in text, server
            assert text.endswith(policy)


def test_nonce_detection_is_the_proposals_a_nonce_source_not_the_text_anywhere() -> None:
    # snippets.py and csp_proposal.relies_on_nonce once had two rules: "'nonce-" anywhere vs a source
    for policy in ("default-src 'self'; report-uri /csp?v='nonce-x'", "default-src 'self'; 'nonce-x'"):
        snippets = render_snippets("csp.missing", policy, subject=CSP)
        assert snippets is not None and not snippets["nginx"].startswith("Not a fixed "), policy
        assert relies_on_nonce(parse_policy(policy).directives) is False
    both = "default-src 'self', script-src 'NONCE-abc'"  # a second policy in the same header value
    snippets = render_snippets("csp.missing", both, subject=CSP)
    assert snippets is not None and snippets["nginx"].startswith("Not a fixed ")
