"""A graded report shaped like issue 11's example, for the "Fix these first" lists and the issue counts.

CSP costs 15 points but is only `warn` (unsafe-inline and friends), HSTS 12 (`weak`), a session cookie
10 (`bad`, a Pro-only section); smaller `missing` headers cost 5 and 3. Ordered by status first, the old
lists read -5, -3, -3, -12, -5 and left CSP out; by points lost they start CSP, HSTS, cookie.
"""

from __future__ import annotations

from typing import Any

from websec_app.scanner import ScanReport


def _header(
    status: str, severity: str, deduction: int, *, present: bool = True, note: str | None = None
) -> dict[str, Any]:
    return {
        "present": present,
        "value": None if not present else "x",
        "status": status,
        "severity": severity,
        "deduction": deduction,
        "explanation": "What this header does.",
        "fix": "the fix",
        "note": note,
    }


def _finding(check: str, status: str, severity: str, deduction: int, *subjects: str) -> dict[str, Any]:
    return {
        "check": check,
        "status": status,
        "severity": severity,
        "deduction": deduction,
        "explanation": f"Explanation of {check}.",
        "fix": f"fix for {check}",
        "cwe": "CWE-693",
        "subjects": list(subjects),
        "note": None,
    }


def _section(*findings: dict[str, Any]) -> dict[str, Any]:
    problems = [f for f in findings if f["status"] != "good"]
    return {
        "status": problems[0]["status"] if problems else "good",
        "deduction": sum(f["deduction"] for f in problems),
        "findings": list(findings),
    }


def impact_report() -> ScanReport:
    """CSP -15 (warn), HSTS -12 (weak), cookie -10 (bad, Pro-only), then -5, -5, -3, -3, -2, -2, -1."""
    sections: dict[str, dict[str, Any]] = {
        # The bare header map (spec 2.3): each header object carries its own (capped) deduction.
        "headers": {
            "Content-Security-Policy": _header("warn", "important", 15, note="'unsafe-inline' in script-src"),
            "Strict-Transport-Security": _header("weak", "important", 12, note="max-age=300"),
            "X-Frame-Options": _header("good", "important", 0),
            "X-Content-Type-Options": _header("missing", "minor", 5, present=False),
            "Referrer-Policy": _header("missing", "minor", 3, present=False),
            "Permissions-Policy": _header("missing", "minor", 3, present=False),
        },
        "tls": _section(_finding("tls.ok", "good", "minor", 0)),
        "dns": _section(_finding("dns.caa_missing", "warn", "minor", 1), _finding("check.error", "warn", "minor", 0)),
        "cookies": _section(
            _finding("cookie.session_no_secure", "bad", "important", 10, "sid"),
            _finding("cookie.no_httponly", "warn", "minor", 2, "theme"),
        ),
        # Header-shaped with findings: the findings list is what counts, not the header objects beside it.
        "cross_origin": {
            **_section(_finding("coop.missing", "missing", "important", 2)),
            "Cross-Origin-Opener-Policy": _header("missing", "important", 2, present=False),
        },
        "security_txt": _section(_finding("security_txt.ok", "good", "minor", 0)),
        "cors": _section(_finding("cors.ok", "good", "minor", 0)),
        "server_fingerprint": _section(_finding("fingerprint.product_only", "good", "minor", 0)),
        "page_analysis": _section(_finding("page.sri_missing_script", "weak", "minor", 5, "https://cdn.example/x.js")),
        "redirection": _section(_finding("redirect.ok", "good", "minor", 0)),
    }
    return ScanReport(
        url="https://example.com/",
        final_url="https://example.com/",
        status_code=200,
        score=42,
        grade="D",
        algorithm_version="test.1",
        scanned_at="2026-11-22T12:00:00Z",
        duration_ms=12,
        # As grading counts them: every non-good header object and non-good finding but check.error.
        issue_counts={"critical": 0, "important": 4, "minor": 6, "total": 10},
        sections=sections,
    )


#: The fixes, biggest first, in the full (Pro) report: equal points go by severity (COOP is important, the
#: theme cookie minor), then by section order (X-Content-Type-Options before the page's SRI); check.error is
#: no fix. The free report shows the same list without cookies and cross_origin.
PRO_ORDER = [
    ("headers", "Content-Security-Policy", 15),
    ("headers", "Strict-Transport-Security", 12),
    ("cookies", "cookie.session_no_secure", 10),
    ("headers", "X-Content-Type-Options", 5),
    ("page_analysis", "page.sri_missing_script", 5),
    ("headers", "Referrer-Policy", 3),
    ("headers", "Permissions-Policy", 3),
    ("cross_origin", "coop.missing", 2),
    ("cookies", "cookie.no_httponly", 2),
    ("dns", "dns.caa_missing", 1),
]
FREE_ORDER = [fix for fix in PRO_ORDER if fix[0] not in ("cookies", "cross_origin")]
