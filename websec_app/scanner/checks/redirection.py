"""The `redirection` section: does plain HTTP send visitors to HTTPS, first on the same host?

Judged on the http:// URL the user gave (any port, any path: the main chain itself), or for an
https:// target on its http:// form on port 80 (snapshot.http_upgrade), as Mozilla's Observatory
does: the first hop must go to https on the same host, so the browser receives that host's HSTS
policy before going anywhere else (RFC 6797 §7.2). And that host must then send it: a site whose
pages are on another host (example.com -> www.example.com) is graded on that host's headers, so
the scanned host's own HTTPS redirects are read for HSTS here, as hstspreload.org reads them.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidTarget
from ..findings import CheckResult, Finding
from ..records.header_text import as_utf8
from ..records.header_values import parse_hsts
from ..snapshot import FetchChain, HttpResponse, SiteSnapshot
from ..target import ip_literal, parse_target
from ._shown import first_fitting, shown, stored_length
from .blocked import identify_block, not_checked

#: What a hop's raw headers may take in the report: the fetch bounds a response's head (100 KiB), which a site
#: may fill; this keeps a report readable (and its JSON small) when a site sends hundreds of headers. A hop lists
#: its first headers whose names and values store in HOP_HEADERS_BUDGET characters (checks/_shown.py), at most
#: MAX_HOP_HEADERS: the 22 responses of a scan, each a head of 0xFF bytes (6-character escapes), made a 4.4 MB
#: section when each hop listed 100 headers of 2,048 characters. An ordinary response's headers fit.
MAX_HOP_HEADERS = 100
HOP_HEADERS_BUDGET = 8_192


def _pair_length(pair: list[str]) -> int:
    return stored_length(pair[0]) + stored_length(pair[1])


def _hop_json(response: HttpResponse) -> dict[str, Any]:
    """One hop: its URL, status and Location (each `shown`), and its response headers in wire order, duplicates
    kept, as the evidence the UI and PDF show: a long name or value is cut and says so (`shown`: "as the server
    sent them" must not hide that a part is missing), and `headers_not_listed`, there only when some were left
    out, counts the headers past the hop's budget."""
    items = response.headers.items
    pairs = first_fitting(
        ([shown(name), shown(value)] for name, value in items), MAX_HOP_HEADERS, HOP_HEADERS_BUDGET, _pair_length
    )
    hop: dict[str, Any] = {
        "url": shown(response.url),
        "status_code": response.status_code,
        "location": None if response.location is None else shown(as_utf8(response.location)),
        "headers": pairs,
    }
    if len(items) > len(pairs):
        hop["headers_not_listed"] = len(items) - len(pairs)
    return hop


def _chain_json(chain: FetchChain) -> list[dict[str, Any]]:
    return [_hop_json(response) for response in chain.responses]


def _scheme_host(url: str) -> tuple[str, str] | None:
    try:
        target = parse_target(url)
    except InvalidTarget:
        return None
    return target.scheme, target.host


def _port(url: str) -> int:
    try:
        return parse_target(url).port
    except InvalidTarget:
        return 80


def _upgrade_findings(chain: FetchChain, host: str) -> list[Finding]:
    if not chain.responses:
        failure = chain.failure
        if failure is not None and failure.kind in ("unreachable", "timeout") and "refused" in failure.message.lower():
            port = _port(chain.start_url)
            return [Finding("redirect.http_not_served", note=f"nothing listens for plain HTTP on port {port}")]
        if failure is not None and failure.kind == "unreachable":
            return [Finding("redirect.http_not_served", note=failure.message)]
        return [Finding("check.error", note=failure.message if failure else "no response")]
    first = chain.responses[0]
    block = identify_block(first)
    if block is not None:  # a challenge says nothing about the site's redirect (checks/blocked.py)
        return [not_checked(block)]
    if not first.is_redirect:
        return [Finding("redirect.missing", note=f"{chain.start_url} answered {first.status_code} without redirecting")]
    findings: list[Finding] = []
    if chain.failure is not None:  # the chain never reached a page, wherever it stopped (on http or on https)
        return [Finding("redirect.broken", note=chain.failure.message)]
    # A chain that reached a page after a redirect has its second response: where the first redirect led.
    first_hop = _scheme_host(chain.responses[1].url) if len(chain.responses) > 1 else None
    final = _scheme_host(chain.final_url)
    if final is None or final[0] != "https":
        return [Finding("redirect.missing", note=f"the redirects end on {chain.final_url}, not on HTTPS")]
    if first_hop is not None and first_hop[0] != "https":
        findings.append(Finding("redirect.first_hop_http", note=f"the first redirect goes to {chain.responses[1].url}"))
    elif first_hop is not None and first_hop[1] != host:
        findings.append(
            Finding("redirect.off_host", note=f"the first redirect goes to {first_hop[1]}, not https://{host}/")
        )
    if not findings:
        permanent = first.status_code in (301, 308)
        note = None if permanent else f"uses a temporary {first.status_code}; 301 or 308 lets browsers remember it"
        findings.append(Finding("redirect.to_https", note=note))
    return findings


def _hsts_kept(response: HttpResponse) -> str | None:
    """None when browsers keep an HSTS policy from `response` (its first Strict-Transport-Security field, RFC 6797
    §8.1, valid and with a max-age); else why not."""
    values = response.headers.get_all("strict-transport-security")
    if not values:
        return "without a Strict-Transport-Security header"
    policy = parse_hsts(values[0])
    if policy.error:
        return f"with a Strict-Transport-Security header browsers ignore ({shown(policy.error, 200)})"
    if not policy.max_age:
        return "with Strict-Transport-Security max-age=0, which removes the host from browsers' HSTS lists"
    return None


def _entry_host_findings(snapshot: SiteSnapshot) -> list[Finding]:
    """redirect.host_without_hsts: the host scanned answers HTTPS only with redirects to another host, and none of
    them gives browsers an HSTS policy (hstspreload.org's `response.no_header` on the domain's first HTTPS response).
    The headers section grades HSTS on the final page, whose policy covers its own host and the names below it, so
    a visitor who types the scanned host (example.com, redirected to www.example.com) reaches it over plain HTTP on
    every visit. Not when the final host is above the scanned one and its policy has includeSubDomains (once a
    visitor has been there, it covers the scanned host), nor for a host never reached over HTTPS (the first hop
    over HTTP left it: redirect.first_hop_http, redirect.off_host)."""
    host = snapshot.target.host
    final = snapshot.main.final
    final_at = _scheme_host(final.url) if final is not None else None
    if final is None or final_at is None or final_at[0] != "https" or final_at[1] == host or ip_literal(host):
        return []
    chains = [snapshot.main]
    if snapshot.http_upgrade is not None and snapshot.http_upgrade is not snapshot.main:
        chains.append(snapshot.http_upgrade)
    entry = [r for chain in chains for r in chain.responses if _scheme_host(r.url) == ("https", host)]
    if not entry or any(identify_block(r) is not None for r in entry):
        return []
    why = [_hsts_kept(r) for r in entry]
    if any(reason is None for reason in why):
        return []
    page_kept = _hsts_kept(final) is None
    if host.endswith("." + final_at[1]) and page_kept:  # www.example.com -> example.com
        if parse_hsts(final.headers.get_all("strict-transport-security")[0]).include_subdomains:
            return []
    kept = (
        f"browsers keep HSTS for {final_at[1]}, never for {host}"
        if page_kept
        else f"browsers never keep HSTS for {host}"
    )
    note = f"{shown(entry[0].url)} redirects on to {shown(final.url)} {why[0]}: {kept}"
    where = (
        f"Add the header where {host} is served (its own server block, virtual host or site: the one that redirects "
        f"to {final_at[1]}), not only where {final_at[1]}'s pages are"
    )
    return [Finding("redirect.host_without_hsts", note=note, fix_note=where)]


def _www_judged(snapshot: SiteSnapshot) -> bool:
    """Whether www's HTTPS is judged at all: not when the page's own certificate is refused, since browsers then
    keep no policy from it (RFC 6797 §8.1, the headers section's hsts.ignored_tls_error)."""
    page = snapshot.tls
    return page is not None and page.failure is None and not page.refused_by_browsers(snapshot.fetched_at)


def www_without_https(snapshot: SiteSnapshot) -> tuple[str, str] | None:
    """(www's host, why a browser gets no page there) when the page's HSTS policy sends browsers to www over HTTPS
    (the fetch asked www only then: `SiteSnapshot.www_tls`) and www's HTTPS fails them; None when it works, or was not
    asked, or not judged (`_www_judged`)."""
    www = snapshot.www_tls
    if www is None or not _www_judged(snapshot):
        return None
    if www.failure is not None:
        return www.host, f"answers no HTTPS ({shown(www.failure.message, 300)})"
    refused = "the server sent no certificate" if www.leaf is None else www.refused_by_browsers(snapshot.fetched_at)
    return None if refused is None else (www.host, f"is served with a certificate browsers refuse ({refused})")


def _www_evidence(snapshot: SiteSnapshot) -> dict[str, Any] | None:
    """What the www check saw, when it judged www (the page's HSTS policy includes subdomains and www has an
    address): that it works is evidence too, where the finding says only what fails."""
    www = snapshot.www_tls
    if www is None or not _www_judged(snapshot):
        return None
    found = www_without_https(snapshot)
    return {"host": www.host, "works": found is None, "problem": None if found is None else found[1]}


def _www_findings(snapshot: SiteSnapshot) -> list[Finding]:
    """redirect.www_without_https: hstspreload.org's `domain.www.no_tls`, for every site whose policy includes
    subdomains, since the harm is the same whether the policy is preloaded or kept from a visit: a browser that keeps
    it upgrades every link to www (http:// ones included) and, on a failed handshake or a refused certificate, shows
    an error it offers no way past (RFC 6797 §12.1)."""
    found = www_without_https(snapshot)
    if found is None:
        return []
    www, problem = found
    note = (
        f"{www} {problem}: the HSTS policy of {snapshot.final_target_host} includes subdomains, so a browser that "
        f"keeps it opens {www} over HTTPS only, and stops at that error"
    )
    return [Finding("redirect.www_without_https", subject=www, note=note, fix_vars={"www": www})]


def check_redirection(snapshot: SiteSnapshot) -> CheckResult:
    details: dict[str, Any] = {"main_chain": _chain_json(snapshot.main)}
    chain = snapshot.http_upgrade
    if chain is None:
        return CheckResult("redirection", (Finding("check.error", note="the HTTP form was not fetched"),), details)
    details["http_url"] = chain.start_url
    details["http_chain"] = _chain_json(chain)
    if chain.failure is not None:
        details["error"] = shown(chain.failure.message)  # it may quote a Location of the 100 KiB head
    host = snapshot.target.host
    findings = (*_upgrade_findings(chain, host), *_entry_host_findings(snapshot), *_www_findings(snapshot))
    www = _www_evidence(snapshot)
    if www is not None:
        details["www_https"] = www
    # The fixes speak of the host scanned, whose redirects these are, not of the final page's (http://example.com/
    # was told to redirect http://www.example.com/ when it went to www first)
    return CheckResult("redirection", findings, details, fix_context={"host": host})
