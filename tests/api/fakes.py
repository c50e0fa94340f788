"""Test doubles for the API: a scanner that returns a made-up report, and a clock that stands still."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from websec_app.scanner import ScanError, ScanReport, parse_target
from websec_app.settings import Settings

NOON = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class FrozenClock:
    """`clock()` returns `now`; tests move it with `set` or `advance`."""

    def __init__(self, now: datetime = NOON) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: datetime) -> None:
        self.now = now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def _header(
    present: bool,
    status: str,
    severity: str,
    deduction: int,
    fix: str | None,
    value: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    return {
        "present": present,
        "value": value,
        "status": status,
        "severity": severity,
        "deduction": deduction,
        "explanation": "What this header does.",
        "fix": fix,
        "note": note,
    }


def _section(status: str, deduction: int, check: str, fix: str | None, **details: Any) -> dict[str, Any]:
    finding = {
        "check": check,
        "status": status,
        "severity": "important" if status != "good" else "minor",
        "deduction": deduction,
        "explanation": f"Explanation of {check}.",
        "fix": fix,
        "cwe": "CWE-693",
        "subjects": [],
        "note": None,
    }
    return {"status": status, "deduction": deduction, "findings": [finding], **details}


def make_report(url: str = "https://example.com/", *, grade: str = "C", score: int = 64) -> ScanReport:
    """A report with a fix value in every section, so stripping and Pro-only sections are visible."""
    sections = {
        "headers": {
            "Content-Security-Policy": _header(False, "missing", "critical", 20, "default-src 'self'"),
            "Strict-Transport-Security": _header(
                True, "weak", "important", 5, "max-age=63072000", value="max-age=60", note="max-age is short"
            ),
            "X-Content-Type-Options": _header(True, "good", "minor", 0, None, value="nosniff"),
        },
        "tls": _section("good", 0, "tls.ok", None, protocol="TLSv1.3"),
        "dns": _section("missing", 3, "dns.caa_missing", 'example.com. CAA 0 issue "letsencrypt.org"'),
        "cookies": _section("weak", 4, "cookies.no_httponly", "Set-Cookie: sid=...; HttpOnly"),
        "cross_origin": {
            "status": "missing",
            "deduction": 2,
            "findings": [],
            "Cross-Origin-Opener-Policy": _header(False, "missing", "minor", 2, "same-origin"),
        },
        "security_txt": _section("missing", 1, "security_txt.missing", "Contact: mailto:security@example.com"),
        "cors": _section("good", 0, "cors.ok", None),
        "server_fingerprint": _section("warn", 2, "fingerprint.version", "ServerTokens Prod"),
        "page_analysis": _section("weak", 3, "page.sri_missing", 'integrity="sha384-..."'),
        "redirection": _section("good", 0, "redirection.ok", None),
    }
    return ScanReport(
        url=url,
        final_url=url,
        status_code=200,
        score=score,
        grade=grade,
        algorithm_version="test.1",
        scanned_at="2026-11-22T12:00:00Z",
        duration_ms=12,
        issue_counts={"critical": 1, "important": 4, "minor": 1, "total": 6},
        sections=sections,
        caps=(),
        uncapped_score=score,
    )


@dataclass
class FakeScanner:
    """Stands in for `websec_app.scanner.scan`: records calls, raises configured errors, can be slowed down."""

    errors: dict[str, ScanError] = field(default_factory=dict)  # host -> error to raise
    delay: float = 0.0
    calls: list[str] = field(default_factory=list)
    crash: Exception | None = None
    gate: asyncio.Event | None = None  # set: scans wait for it to open

    async def __call__(self, url: str, settings: Settings) -> ScanReport:
        target = parse_target(url)
        self.calls.append(target.url)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.gate is not None:
            await self.gate.wait()
        if self.crash is not None:
            raise self.crash
        error = self.errors.get(target.host)
        if error is not None:
            raise error
        return make_report(target.url)
