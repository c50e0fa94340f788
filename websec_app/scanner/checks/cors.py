"""CORS: does the site let other websites read its responses, and with the user's cookies?

The fetch layer requests the final URL twice more, once with a foreign `Origin`
(`snapshot.cors_probe_origin`) and once with `Origin: null` (what sandboxed iframes and
`data:` documents send, so any site can forge it). What matters is what a browser would
do with the answer (WHATWG Fetch §3.2.5 "CORS check" and §4.9):

- the read is allowed when `Access-Control-Allow-Origin` is `*` or byte-for-byte the
  request's origin; with cookies (credentials mode "include") `*` is refused and
  `Access-Control-Allow-Credentials` must be exactly `true` (case-sensitive);
- so `*` is public data (fine for public content), `*` plus credentials is a
  misconfiguration browsers reject, and an echoed foreign origin plus `true` lets
  every website read the page as the logged-in user (PortSwigger, "CORS vulnerabilities").

A server that echoes the Origin must say `Vary: Origin` (Fetch §3.2.5 note; RFC 9110
§12.5.5), or a shared cache may hand one origin's permission to another.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..findings import CheckResult, Finding
from ..snapshot import HttpResponse, SiteSnapshot

SECTION = "cors"
#: Fetch's HTTP whitespace: what browsers trim around a header value (not U+00A0 or U+0085, as str.strip does).
_HTTP_WHITESPACE = " \t"


def _observe(response: HttpResponse | None, origin: str | None) -> dict[str, Any] | None:
    """The CORS headers one response carried."""
    if response is None:
        return None
    # Browsers trim only spaces and tabs: `<origin>\xa0` is not the origin (Chromium blocks the read).
    acao = [v.strip(_HTTP_WHITESPACE) for v in response.headers.get_all("access-control-allow-origin")]
    acac = [v.strip(_HTTP_WHITESPACE) for v in response.headers.get_all("access-control-allow-credentials")]
    vary = {t.strip(_HTTP_WHITESPACE).lower() for v in response.headers.get_all("vary") for t in v.split(",")}
    return {
        "origin_sent": origin,
        "status_code": response.status_code,
        "allow_origin": ", ".join(acao) if acao else None,
        "allow_credentials": ", ".join(acac) if acac else None,
        "vary_origin": "origin" in vary or "*" in vary,
        "_acao": acao,
        "_acac": acac,
    }


def _credentials(seen: dict[str, Any]) -> bool:
    """Fetch §4.9 step 4: only the exact value `true` lets a credentialed response through."""
    return bool(seen["_acac"] == ["true"])


def _judge_probe(seen: dict[str, Any], label: str) -> list[Finding]:
    """Findings for one probe that sent `Origin: <origin_sent>`."""
    acao: list[str] = seen["_acao"]
    origin = seen["origin_sent"]
    if not acao:
        return []
    if len(acao) > 1 or "," in acao[0]:
        # Fetch §3.2.5: the header must hold one value; browsers reject a list.
        return [Finding("cors.invalid", label, f"Access-Control-Allow-Origin: {seen['allow_origin']}")]
    value = acao[0]
    if not value:
        return [Finding("cors.invalid", label, "Access-Control-Allow-Origin is empty")]
    if value == "*":
        if _credentials(seen):
            return [Finding("cors.wildcard_credentials", label, "Access-Control-Allow-Origin: * with credentials")]
        return [Finding("cors.public", label, "Access-Control-Allow-Origin: *: anyone can read it without cookies")]
    if value != origin:
        if value.strip().lower().rstrip("/") == origin.lower():
            note = f"{label}: the Origin is echoed altered ({value!r}), which browsers do not accept"
            return [Finding("cors.allowlist", label, note)]
        return [Finding("cors.allowlist", label, f"{label}: only {value} is allowed")]
    findings: list[Finding] = []
    is_null = origin == "null"
    if _credentials(seen):
        outcome = "cors.null_credentials" if is_null else "cors.origin_reflected_credentials"
        note = f"Origin: {origin} was echoed with Access-Control-Allow-Credentials: true"
        findings.append(Finding(outcome, label, note))
    else:
        outcome = "cors.null_allowed" if is_null else "cors.origin_reflected"
        note = f"Origin: {origin} was echoed without credentials"
        if seen["allow_credentials"] is not None:
            note += f" (Access-Control-Allow-Credentials: {seen['allow_credentials']} is not exactly 'true')"
        findings.append(Finding(outcome, label, note))
    if not seen["vary_origin"]:
        findings.append(Finding("cors.vary_missing", label, f"{label}: the Origin is echoed without Vary: Origin"))
    return findings


#: The outcomes of an echoed Origin, and whether the echo let credentials through.
_ECHOES = {
    "cors.origin_reflected_credentials": True,
    "cors.origin_reflected": False,
    "cors.null_credentials": True,
    "cors.null_allowed": False,
}


def _fold_echoes(findings: list[Finding], judged: list[Finding]) -> list[Finding]:
    """`findings` plus `judged`, where an echo that an earlier echo already covers (it granted credentials,
    or neither did) becomes a note on that earlier finding: a server echoing every Origin, `null` included,
    has one misconfiguration and loses its points once, as much as one that echoes all but `null`."""
    merged = list(findings)
    for finding in judged:
        credentials = _ECHOES.get(finding.outcome)
        covering = next(
            (
                index
                for index, earlier in enumerate(merged)
                if credentials is not None and earlier.outcome in _ECHOES and _ECHOES[earlier.outcome] >= credentials
            ),
            None,
        )
        if covering is None:
            merged.append(finding)
        else:
            earlier = merged[covering]
            merged[covering] = replace(earlier, note=f"{earlier.note}; {finding.note} as well")
    return merged


def check_cors(snapshot: SiteSnapshot) -> CheckResult:
    final = snapshot.final
    probes = {
        "foreign_origin": _observe(snapshot.cors_probe, snapshot.cors_probe_origin),
        "null_origin": _observe(snapshot.cors_null_probe, "null"),
    }
    plain = _observe(final, None)
    details: dict[str, Any] = {
        name: {k: v for k, v in seen.items() if not k.startswith("_")} if seen else None
        for name, seen in {**probes, "no_origin": plain}.items()
    }
    findings: list[Finding] = []
    labels = {"foreign_origin": f"Origin: {snapshot.cors_probe_origin}", "null_origin": "Origin: null"}
    unanswered = [labels[name] for name, seen in probes.items() if seen is None]
    for name, seen in probes.items():
        if seen is not None:
            findings = _fold_echoes(findings, _judge_probe(seen, labels[name]))
    # A `*` sent to every visitor (no Origin at all) is judged like a probe answer.
    if plain is not None and plain["_acao"] and not findings:
        findings.extend(_judge_probe({**plain, "origin_sent": ""}, "no Origin"))
    # docs/scoring.md, "could not check": an origin whose request got no answer may be granted anything, so
    # the site is never called unexposed then; what the other requests saw is still reported.
    for label in unanswered:
        note = f"the request with {label} got no answer, so what that origin may read is unknown"
        findings.append(Finding("check.error", label, note))
    if not findings:
        findings.append(Finding("cors.not_exposed"))
    return CheckResult(SECTION, tuple(findings), details)
