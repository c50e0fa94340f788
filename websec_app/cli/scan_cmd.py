"""`python -m websec_app scan URL`: scan one site and print the report.

Exit codes: 0 report printed; 2 invalid target or refused by the SSRF guard (or a bad option);
3 target unreachable; 4 the grade is worse than `--fail-under` (the report is still printed);
1 anything else (the report could not be written, or a bug: the message says so); 130 interrupted (Ctrl-C).

An error is `{"error": "..."}` on stdout with `--format json` (the default); with any other format it is one
line on stderr, so stdout (or the file it is redirected to) never holds anything but the report.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..wording import BIDI_CONTROLS, bidi_escaped

if TYPE_CHECKING:  # the scanner is imported when a scan runs, not for `--help` or another command (issue 14)
    from ..scanner import ScanReport, Section
    from ..scanner.report import ReportItem

FORMATS = ("json", "text", "sarif", "junit", "markdown")
#: Exit status when the grade is worse than --fail-under.
EXIT_GRADE_TOO_LOW = 4

_STATUS_MARK = {"good": "ok  ", "warn": "warn", "weak": "weak", "missing": "MISS", "bad": "BAD "}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("scan", help="scan a website and print its security report")
    parser.add_argument("url", help="the site to scan; https:// is assumed when no scheme is given")
    parser.add_argument("--text", action="store_true", help="print a readable summary (the same as --format text)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="json (default), text, sarif (SARIF 2.1.0, for GitHub code scanning), junit (JUnit XML), "
        "markdown (a pull-request comment)",
    )
    parser.add_argument(
        "--fail-under",
        metavar="GRADE",
        help="exit with status 4 when the grade is worse than GRADE (e.g. B): a CI gate",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the report (in --format) to FILE and print a one-line summary instead",
    )
    parser.add_argument(
        "--header",
        metavar="'NAME: VALUE'",
        action="append",
        default=[],
        help="send this request header to the scanned site (repeatable): basic auth or a preview cookie of a "
        "staging site. Only to the site's own origin, never after a redirect to another host; never printed",
    )
    parser.add_argument("--free", action="store_true", help="print the free-scan shape (no cookies, no fixes)")
    parser.add_argument(
        "--server",
        metavar="NAME",
        help="with --text: write the top fixes for this server (nginx, apache, caddy, iis, express, netlify, "
        "vercel or cloudflare); default: the one the site's headers name, else nginx",
    )
    parser.set_defaults(handler=run)


def _print_error(message: str, output_format: str = "json") -> None:
    """JSON on stdout for `--format json` (what a script parses); one line on stderr for the others, whose
    stdout is a document (XML, SARIF, Markdown, text) that an error must not be written into."""
    if output_format == "json":
        emit(json.dumps({"error": message}))
    else:
        print(f"error: {printable(message)}", file=sys.stderr)


def emit(text: str) -> None:
    """Print to stdout. When the reader has gone (`scan ... | head`), the rest is dropped and stdout points at
    devnull so the exit flush cannot fail either (https://docs.python.org/3/library/signal.html#note-on-sigpipe):
    the command still ends with its own status (the gate's), not a BrokenPipeError."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_to_devnull()


def stdout_to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


# C0 controls but tab, DEL, and C1 controls: a terminal or CI log reads ESC, BEL, CSI (U+009B)...
# as commands (clear the screen, set the window title, fake colours). The bidirectional controls reorder
# what a reader sees of the rest of the line.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")


def _escaped(match: re.Match[str]) -> str:
    ch = match.group()
    return f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF else bidi_escaped(ch)


def printable(line: str) -> str:
    """One line of output with every control character but tab shown as an escape (ESC -> `\\x1b`, a newline
    too, RIGHT-TO-LEFT OVERRIDE -> `\\u202e`): what a scanned site sent reaches a terminal as text, shown in
    the order it was sent, and cannot start a line of its own."""
    return _CONTROL.sub(_escaped, line)


def _without_httpx_cli() -> None:
    """Keep httpx's own command-line client (click, rich, pygments: ~35 ms of imports, issue 14) out of a scan.

    httpx's package imports it whenever those are installed (Reflex installs them) and falls back to a stub
    when that import fails. A None entry in sys.modules makes the import fail
    (https://docs.python.org/3/reference/import.html#the-module-cache). Only in this process, only before
    httpx is loaded; nothing here runs httpx's CLI.
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None is the documented "absent"


def run(args: argparse.Namespace) -> int:
    import asyncio

    _without_httpx_cli()

    from ..scanner import ScanError, scan
    from ..settings import SettingsError, get_settings

    output_format = args.format or ("text" if args.text else "json")
    try:
        settings = get_settings()
    except SettingsError as exc:
        _print_error(f"Invalid configuration: {exc}", output_format)
        return 2
    try:
        fail_under = _gate_grade(args.fail_under)
    except ValueError as exc:
        _print_error(str(exc), output_format)
        return 2
    try:
        snippet_server = _snippet_server(args.server)
    except ValueError as exc:
        _print_error(str(exc), output_format)
        return 2
    try:
        request_headers = _request_headers(args.header)
    except ValueError as exc:
        _print_error(f"--header: {exc}", output_format)
        return 2
    try:
        report = asyncio.run(scan(args.url, settings, request_headers=request_headers))
    except ScanError as exc:
        _print_error(str(exc), output_format)
        return exc.exit_code
    if output_format == "text":
        document = render_text(report, server=snippet_server, free=args.free)
    else:
        body = report.to_dict(pro=not args.free, include_fix=not args.free)
        # The service's address tells a SARIF reader where the tool lives; a local default says nothing.
        about = None if settings.base_url_is_loopback else settings.base_url
        document = (
            json.dumps(body, indent=2) if output_format == "json" else _render_ci_format(output_format, body, about)
        )
    if args.output:
        try:
            Path(args.output).write_text(document + "\n", encoding="utf-8")
        except OSError as exc:
            _print_error(f"Could not write the report to {args.output}: {exc.strerror or exc}", output_format)
            return 1
        emit(summary_line(report, args.output))
    else:
        emit(document)
    if fail_under is not None and _worse(report.grade, fail_under):
        print(f"grade {report.grade} is worse than {fail_under} (--fail-under)", file=sys.stderr)
        return EXIT_GRADE_TOO_LOW
    return 0


def summary_line(report: ScanReport, written_to: str) -> str:
    """What `--output` prints: the grade first (a CI log's one line; action.yml reads it)."""
    counts = report.issue_counts
    return (
        f"Grade {report.grade} ({report.score}/100) for {report.url}: {counts.get('total', 0)} issues "
        f"({counts.get('critical', 0)} critical, {counts.get('important', 0)} important, "
        f"{counts.get('minor', 0)} minor); report written to {written_to}"
    )


def _request_headers(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """The --header options as (name, value) pairs; ValueError (request_headers.BadHeader) for a bad one."""
    if not lines:
        return ()
    from ..scanner.request_headers import MAX_HEADERS, BadHeader, parse_header_line

    if len(lines) > MAX_HEADERS:
        raise BadHeader(f"at most {MAX_HEADERS} extra headers")
    return tuple(parse_header_line(line) for line in lines)


def _snippet_server(wanted: str | None) -> str | None:
    """The --server name as fix_snippets spells it (None without the option); ValueError for another name."""
    if wanted is None:
        return None
    from ..scanner.fixes import SERVERS

    name = wanted.strip().lower()
    if name not in SERVERS:
        raise ValueError(f"--server takes one of {', '.join(SERVERS)}, not {wanted!r}")
    return name


def _gate_grade(wanted: str | None) -> str | None:
    """The --fail-under grade as the rule table spells it (None without the option); ValueError when the
    table has no such grade."""
    if wanted is None:
        return None
    from ..scanner.rules import default_rulebook

    grades = [band.grade for band in default_rulebook().bands]
    for grade in grades:
        if grade.lower() == wanted.strip().lower():
            return grade
    raise ValueError(f"--fail-under takes one of {', '.join(grades)}, not {wanted!r}")


def _worse(grade: str, threshold: str) -> bool:
    """Bands are listed best first (grading.toml): a later band is a worse grade."""
    from ..scanner.rules import default_rulebook

    grades = [band.grade for band in default_rulebook().bands]
    return grades.index(grade) > grades.index(threshold)


def _render_ci_format(output_format: str, body: dict[str, Any], base_url: str | None) -> str:
    from ..report_formats import render_junit, render_markdown, render_sarif

    if output_format == "sarif":
        return render_sarif(body, information_uri=base_url)
    if output_format == "junit":
        return render_junit(body)
    return render_markdown(body)


def _note_lines(item: dict[str, Any]) -> list[str]:
    """A problem's notes, one a line under it."""
    from ..scanner.report import notes_of

    return [f"          {note}" for note in notes_of(item)] if item["status"] != "good" else []


def _section_lines(entry: Section, body: dict[str, Any]) -> list[str]:
    if "findings" not in body:  # the headers map
        lines = [f"{entry.title}:"]
        for header, info in body.items():
            mark = _STATUS_MARK.get(info["status"], info["status"])
            lines.append(f"  [{mark}] {header} (-{info['deduction']})")
            lines += _note_lines(info)
        return lines
    lines = [f"{entry.title}: {body['status']} (-{body['deduction']})"]
    for finding in body["findings"]:
        mark = _STATUS_MARK.get(finding["status"], finding["status"])
        subjects = f" [{', '.join(finding['subjects'])}]" if finding.get("subjects") else ""
        lines.append(f"  [{mark}] {finding['check']}{subjects} (-{finding['deduction']})")
        lines += _note_lines(finding)
    return lines


def _fix_line(number: int, fix: ReportItem) -> str:
    """ "  1. -15  Content-Security-Policy (Headers, warn, important)": the section by its short label."""
    from ..scanner import section

    subjects = fix.item.get("subjects") if isinstance(fix.item.get("subjects"), list) else []
    on = f" [{', '.join(map(str, subjects))}]" if subjects else ""
    return f"  {number}. -{fix.deduction}  {fix.name}{on} ({section(fix.section).label}, {fix.status}, {fix.severity})"


#: How many of the top fixes get their snippet printed.
SNIPPETS_SHOWN = 5


def _snippet_lines(fixes: list[ReportItem], body: dict[str, Any], chosen: str | None) -> list[str]:
    """The top fixes written for one server: the --server one, else the one the site's headers name, else
    nginx (the first of SERVERS)."""
    from ..scanner.fixes import SERVER_LABELS, SERVERS, detected_server

    detected = detected_server(body)
    server = chosen or detected or SERVERS[0]
    why = "chosen with --server" if chosen else ("detected from the response headers" if detected else "the default")
    with_snippets = [fix for fix in fixes if isinstance(fix.item.get("fix_snippets"), dict)][:SNIPPETS_SHOWN]
    if not with_snippets:
        return []
    lines = ["", f"How to fix them in {SERVER_LABELS[server]} ({why}; --server NAME for another):"]
    for number, fix in enumerate(with_snippets, start=1):
        lines.append(f"  {number}. {fix.name}")
        if fix.item.get("fix_note"):  # how to apply it (the CSP proposal's rollout advice)
            lines.append(f"       {fix.item['fix_note']}")
        lines.extend(f"       {line}".rstrip() for line in str(fix.item["fix_snippets"][server]).splitlines())
    return lines


def render_text(report: ScanReport, *, server: str | None = None, free: bool = False) -> str:
    """The readable summary; `free`: of the free-scan body, like the other formats with --free (no cookies,
    no fixes). What the site sent is shown as text: its control characters are escaped (`printable`)."""
    from ..scanner import SECTIONS
    from ..scanner.report import fixes_by_impact, grade_caps

    body = report.to_dict(pro=not free, include_fix=not free)
    counts = body["issue_counts"]
    lines = [
        f"{body['url']} -> {body['final_url']} (HTTP {body['status_code']})",
        f"Grade {body['grade']}  score {body['score']}/100  "
        f"issues: {counts['critical']} critical, {counts['important']} important, {counts['minor']} minor",
    ]
    for cap in grade_caps(body):  # the strictest first; one the score has already passed holds once it rises
        lines.append(f"  grade {cap.reach} {cap.max_grade} by {cap.outcome}{cap.condition}")
    fixes = fixes_by_impact(body)
    if fixes:
        lines += ["", "Fix these first:", *(_fix_line(n, fix) for n, fix in enumerate(fixes, start=1))]
        lines += _snippet_lines(fixes, body, server)
    for entry in SECTIONS:  # titles and order from the section table
        if isinstance(body.get(entry.key), dict):
            lines.append("")
            lines.extend(_section_lines(entry, body[entry.key]))
    return "\n".join(printable(line) for line in lines)
