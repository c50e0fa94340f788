"""The emails of monitoring (issue 17): an alert when a monitored site gets worse, and the one notice a month
that runs are skipped because the month's scans are used up. Pure: facts in, a RenderedEmail out.

An alert says why it was sent, then what changed (new, fixed and changed findings by their plain titles, a new
one with its first notes: what the scan found), then the fixes of the new findings (each with its note on how
to apply it, as every report format gives it: a proposed CSP goes out Report-Only first), and links to the
site's page. Everything a scanned site controls (URLs, notes, fix values quoting its headers) is escaped in the
HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from websec_app.scanner.diff import FindingChange, ReportDiff, found_of
from websec_app.wording import counted

from .render import RenderedEmail, html_code, html_link, html_page, utc_text

KIND_MONITOR_ALERT = "monitor_alert"
KIND_MONITOR_QUOTA = "monitor_quota"
#: How many findings an alert lists per group (the site page has them all).
LISTED = 10


def site_page(base_url: str, url: str) -> str:
    """The web UI's page of one monitored site: its score over time and the latest diff."""
    return f"{base_url}/site?{urlencode({'url': url})}"


def change_title(change: FindingChange) -> str:
    """The finding's plain title, and its subject (a cookie's name) when it names one."""
    from websec_app.scanner.rules.titles import plain_title

    if change.section in ("headers", "cross_origin") and "." not in change.name:
        title = f"{change.name} header"
    else:
        title = plain_title(change.name)
    return f"{title}: {change.subject}" if change.subject else title


def _line(change: FindingChange) -> str:
    """One change: its points, its title and severity; a subject whose finding's points are counted on
    another line (or did not change) says it has none of its own rather than repeating them."""
    if change.shared:
        return f"{change_title(change)} ({change.severity}; no points of its own)"
    state = change.after or change.before or {}
    return f"-{state.get('deduction', 0)}  {change_title(change)} ({change.severity})"


def _found_lines(report: Mapping[str, Any] | None, changes: Sequence[FindingChange]) -> list[list[str]]:
    """What the scan found of each of `changes` (new findings), in order, a line each: its first notes ("Found:
    ..."), then how many more the site page has (diff.found_of)."""
    return [
        [f"Found: {note}" for note in found.notes]
        + ([f"(and {counted(found.more, 'more note')} on the site page)"] if found.more else [])
        for found in found_of(report, changes)
    ]


def _fixes_of(report: Mapping[str, Any], changes: Sequence[FindingChange]) -> list[tuple[str, str, str | None]]:
    """(title, fix, fix note) of the new findings that have a fix, as the report gives them."""
    from websec_app.report_formats._items import fix_note_of
    from websec_app.scanner.report import report_items

    wanted = {(c.section, c.name) for c in changes}
    found: list[tuple[str, str, str | None]] = []
    for item in report_items(report):
        fix = item.item.get("fix")
        if (item.section, item.name) in wanted and isinstance(fix, str) and fix:
            title = change_title(FindingChange(item.section, item.name, item.severity, None, None))
            found.append((title, fix, fix_note_of(item)))
    return found[:LISTED]


def monitor_alert_email(
    *,
    to: str,
    url: str,
    reasons: Sequence[str],
    diff: ReportDiff | None,
    report: Mapping[str, Any] | None,
    scanned_at: datetime,
    base_url: str,
) -> RenderedEmail:
    """One alert for one run: `reasons` are sentences ("The grade dropped from A to C."), in order."""
    page = site_page(base_url, url)
    subject = f"websec alert: {reasons[0].rstrip('.')} ({url})" if reasons else f"websec alert for {url}"
    text_lines = [f"websec checked {url} on {utc_text(scanned_at)}.", "", *[f"- {r}" for r in reasons], ""]
    paragraphs = [
        f"websec checked {html_link(url)} on {html.escape(utc_text(scanned_at))}.",
        "<ul>" + "".join(f"<li>{html.escape(r)}</li>" for r in reasons) + "</ul>",
    ]
    if diff is not None:
        text_lines.append(
            f"Grade {diff.grade_before} -> {diff.grade_after}, score {diff.score_before} -> {diff.score_after}."
        )
        paragraphs.append(
            html.escape(
                f"Grade {diff.grade_before} → {diff.grade_after}, score {diff.score_before} → {diff.score_after}."
            )
        )
        if diff.rules_note is not None:
            text_lines.append(diff.rules_note)
            paragraphs.append(html.escape(diff.rules_note))
        for label, changes in (("New", diff.new), ("Changed", diff.changed), ("Fixed", diff.fixed)):
            if not changes:
                continue
            shown = changes[:LISTED]
            more = f" (and {len(changes) - len(shown)} more)" if len(changes) > len(shown) else ""
            found = _found_lines(report if label == "New" else None, shown)
            text_lines += [f"{label} ({counted(len(changes), 'finding')}){more}:"]
            for change, notes in zip(shown, found, strict=True):
                text_lines += [f"  {_line(change)}", *(f"      {line}" for line in notes)]
            paragraphs.append(
                f"<strong>{label}</strong> ({html.escape(counted(len(changes), 'finding'))}){html.escape(more)}:"
                "<ul>"
                + "".join(
                    f"<li>{html.escape(_line(change))}"
                    + ("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in notes) + "</ul>" if notes else "")
                    + "</li>"
                    for change, notes in zip(shown, found, strict=True)
                )
                + "</ul>"
            )
        if report is not None:
            fixes = _fixes_of(report, diff.new)
            if fixes:
                text_lines += ["", "How to fix the new findings:"]
                for title, fix, note in fixes:
                    text_lines += [f"  {title}: {fix}", *([f"    {note}"] if note else [])]
                paragraphs.append(
                    "<strong>How to fix the new findings</strong>:<ul>"
                    + "".join(
                        f"<li>{html.escape(title)}: {html_code(fix)}"
                        + (f"<br>{html.escape(note)}" if note else "")
                        + "</li>"
                        for title, fix, note in fixes
                    )
                    + "</ul>"
                )
    text_lines += ["", f"The site's history and every fix, for your server: {page}"]
    paragraphs.append(
        f"The site's history and every fix, written for your server: {html_link(page, 'open the site page')}"
    )
    return RenderedEmail(
        KIND_MONITOR_ALERT, to, subject, "\n".join(text_lines) + "\n", html_page("websec alert", paragraphs)
    )


def monitor_quota_email(*, to: str, urls: Sequence[str], resets_at: datetime, base_url: str) -> RenderedEmail:
    """Runs are skipped: this month's scans are used up (sent once a month)."""
    sites = ", ".join(urls)
    text = (
        f"This month's Pro scans are used up, so websec skipped a scheduled check of {sites}.\n\n"
        f"Monitoring resumes when the quota resets on {utc_text(resets_at)}. Until then no monitor runs and no "
        "alert can be sent.\n\n"
        f"Your monitors and usage: {base_url}/pro\n"
    )
    body = html_page(
        "Monitoring paused until your scans reset",
        [
            f"This month's Pro scans are used up, so websec skipped a scheduled check of {html.escape(sites)}.",
            f"Monitoring resumes when the quota resets on {html.escape(utc_text(resets_at))}. Until then no monitor "
            "runs and no alert can be sent.",
            f"Your monitors and usage: {html_link(base_url + '/pro')}",
        ],
    )
    return RenderedEmail(KIND_MONITOR_QUOTA, to, "websec monitoring paused: this month's scans are used up", text, body)


__all__ = ["KIND_MONITOR_ALERT", "KIND_MONITOR_QUOTA", "monitor_alert_email", "monitor_quota_email", "site_page"]
