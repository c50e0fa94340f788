"""Cross-origin isolation headers of the final page (report section "cross_origin").

COOP and COEP are structured-field items (HTML "obtain a cross-origin opener policy",
"obtain an embedder policy"): a value that does not parse, or a token
the browser does not know, falls back to unsafe-none. Both also need a secure context, so
over plain HTTP they are ignored. CORP is compared byte for byte (Fetch "cross-origin
resource policy internal check"), so `Same-Origin` or a repeated header is ignored.
"""

from __future__ import annotations

from ..findings import CheckResult, Finding
from ..records.header_values import trim_http_whitespace
from ..records.structured_fields import StructuredFieldError, Token, parse_item
from ..snapshot import HeaderList, SiteSnapshot
from ._header_details import header_details

SECTION = "cross_origin"
COOP = "Cross-Origin-Opener-Policy"
COEP = "Cross-Origin-Embedder-Policy"
CORP = "Cross-Origin-Resource-Policy"
HEADERS = (COOP, COEP, CORP)

_COOP_OUTCOMES = {
    "same-origin": "coop.good",
    "same-origin-allow-popups": "coop.allow_popups",
    # Chrome 124+: severs same-origin openers too, but popups keep their reference, like allow-popups.
    "noopener-allow-popups": "coop.allow_popups",
    "unsafe-none": "coop.unsafe_none",
}
_COEP_OUTCOMES = {
    "require-corp": "coep.good",
    "credentialless": "coep.good",
    "unsafe-none": "coep.unsafe_none",
}
_CORP_OUTCOMES = {
    "same-origin": "corp.good",
    "same-site": "corp.good",
    "cross-origin": "corp.cross_origin",
}


def check_cross_origin(snapshot: SiteSnapshot) -> CheckResult:
    final = snapshot.final
    if final is None:
        return CheckResult(
            SECTION,
            (Finding("check.error", note="No HTTP response was received, so headers could not be checked."),),
            {**header_details(HeaderList(), HEADERS), "cross_origin_isolated": False},
        )
    headers = final.headers
    secure = final.url.lower().startswith("https://")
    coop, coop_token = _policy_item(headers, COOP, "coop", _COOP_OUTCOMES, secure)
    coep, coep_token = _policy_item(headers, COEP, "coep", _COEP_OUTCOMES, secure)
    isolated = coop_token == "same-origin" and coep_token in ("require-corp", "credentialless")
    return CheckResult(
        SECTION,
        (coop, coep, _resource_policy(headers)),
        {**header_details(headers, HEADERS), "cross_origin_isolated": isolated},
    )


def _policy_item(
    headers: HeaderList, name: str, prefix: str, outcomes: dict[str, str], secure: bool
) -> tuple[Finding, str | None]:
    """(finding, the token browsers act on or None) for COOP or COEP."""
    raw = headers.get(name)
    if raw is None:
        notes = []
        if f"{name}-Report-Only" in headers:
            notes.append(f"only {name}-Report-Only is sent; it reports but does not protect")
        return Finding(f"{prefix}.missing", name, "; ".join(notes) or None), None
    lines = len(headers.get_all(name))
    try:
        value = parse_item(raw).value
    except StructuredFieldError:
        if lines > 1:
            why = f"{lines} headers were sent, which browsers read as one invalid value"
        else:
            why = f"{raw!r} does not parse"
        return Finding(f"{prefix}.invalid", name, why), None
    token = value if isinstance(value, Token) else None
    if token is None or token not in outcomes:
        hint = ""
        if isinstance(value, str) and value.lower() in outcomes:  # a Token is a str too; a quoted String is not one
            hint = " (values are case-sensitive)" if token is not None else " (it must be a bare token, without quotes)"
        return Finding(f"{prefix}.invalid", name, f"{raw!r} is not a known value{hint}"), None
    if not secure:
        # HTML "obtain a cross-origin opener policy" / "obtain an embedder policy": outside a
        # secure context both return the default (unsafe-none) policy.
        return Finding(f"{prefix}.invalid", name, "ignored because the page is not served over HTTPS"), None
    return Finding(outcomes[token], name), token


def _resource_policy(headers: HeaderList) -> Finding:
    raw = headers.get(CORP)
    if raw is None:
        return Finding("corp.missing", CORP)
    # Chromium ignores `same-origin\xa0`: the no-break space is part of the value.
    value = trim_http_whitespace(raw)
    outcome = _CORP_OUTCOMES.get(value)
    if outcome is None:
        lines = len(headers.get_all(CORP))
        if lines > 1:
            why = f"{lines} headers were sent, which browsers read as the single invalid value {raw!r}"
        elif value.lower() in _CORP_OUTCOMES:
            why = f"{raw!r} must be written in lowercase"
        elif value.strip().lower() in _CORP_OUTCOMES:
            why = f"{raw!r} has a character around the value that browsers keep (they trim only spaces and tabs)"
        else:
            why = f"{raw!r} is not same-origin, same-site or cross-origin"
        return Finding("corp.invalid", CORP, why)
    if outcome == "corp.cross_origin":
        return Finding(outcome, CORP, "any site may load this response (a deliberate choice for embeddable content)")
    return Finding(outcome, CORP)
