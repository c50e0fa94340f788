"""Monitoring (issue 17): a subscriber's sites scanned daily or weekly, alerts when one gets worse.

- `add`, `listed`, `remove`: the subscriber's monitors (at most 10).
- `tick(runtime, submit)`: schedule every run due at the runtime's clock and hand each to `submit` (the
  task engine defers it; tests run it at once). The task engine calls it once per minute across the
  whole cluster (websec_app/jobs/engine.py); the store makes a run once however many call it.
- `execute_run(runtime, run_id)`: one run. It takes one of the month's Pro scans (when none is left, the
  run is skipped and the owner told once that month), scans, keeps the report in the history, compares it
  with the previous scan of the URL (and, for a finding that scan could not check, with the last one before
  it that did: `_compared`), and sends at most one alert: the grade dropped; a critical or
  important finding appeared; the certificate expires within 14 days (and again within 3); the site could
  not be reached in two runs in a row. A run that cannot reach the site gives its unit back. The run's
  report id, the previous report's id and the alert's reasons are stored on the run with the report's
  history entry, in one transaction: a run retried after its worker died past that point scans nothing
  again and adds nothing to the history; it rebuilds the diff from the kept reports and sends the
  alert (the email is deduplicated by the run, the webhook carries `run_id` for its receiver).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from sqlmodel import Session

from websec_app.scanner import ScanError, TargetUnreachable, parse_target
from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.services.metering import record_report
from websec_app.store import Subscription, month_period, month_resets_at, reserve_monthly_scan, save_report
from websec_app.store.history import history_page, kept_report_ids_before
from websec_app.store.models import ScanRecord, StoredReport
from websec_app.store.monitors import (
    INTERVALS,
    MAX_MONITORS,
    RUN_DONE,
    RUN_FAILED,
    RUN_SKIPPED_QUOTA,
    RUN_UNREACHABLE,
    AlreadyMonitored,
    ClaimedRun,
    Monitor,
    MonitorRun,
    TooManyMonitors,
    add_monitor,
    claim_run,
    end_exhausted_runs,
    finish_run,
    keep_reservation,
    last_runs,
    monitor_state,
    monitors_of,
    note_kept_run,
    remove_monitor,
    schedule_due_runs,
    waiting_runs,
)
from websec_app.store.outbox import enqueue_email
from websec_app.store.quotas import Reservation
from websec_app.store.scan_jobs import first_showing_of_callback_secret

from .accounts import Subscriber
from .runtime import Runtime

log = logging.getLogger(__name__)

#: What a monitor run is, in the history (`scan_records.kind`).
SCAN_MONITOR = "monitor"
#: Certificate expiry thresholds (days): an alert when the certificate enters each, once per certificate.
CERTIFICATE_WARNINGS = (14, 3)
#: Unreachable runs in a row that alert (once, when the count reaches it).
UNREACHABLE_ALERT_AFTER = 2
#: Attempts of a monitor's webhook, and the pause before each retry (seconds, doubling).
WEBHOOK_ATTEMPTS = 3
WEBHOOK_FIRST_PAUSE = 1.0
#: Kept reports before the previous one that a run's diff may read, for a finding the previous report could not
#: check (a scan blocked by a bot challenge, a failed DNS lookup: scanner/diff.py). A count, not a time, so that
#: it bounds the reads of daily and weekly monitors alike (ten days, ten weeks), Pro scans of the URL kept
#: between them included; a finding left unchecked for longer is compared with nothing, so not new.
LOOK_BACK_REPORTS = 10

__all__ = [
    "INTERVALS",
    "MAX_MONITORS",
    "SCAN_MONITOR",
    "AlreadyMonitored",
    "MonitorView",
    "TooManyMonitors",
    "add",
    "execute_run",
    "listed",
    "remove",
    "tick",
]


@dataclass(frozen=True)
class MonitorView:
    id: int
    url: str
    interval: str
    callback_url: str | None
    created_at: datetime
    next_run_at: datetime
    last_run_at: datetime | None = None
    last_status: str | None = None
    last_report_id: str | None = None
    #: On the monitor `add` just made with a callback_url: the key's callback secret, which signs its
    #: webhooks, the first time the key's secret is shown (by this or by POST /api/scans); None afterwards.
    callback_secret: str | None = None


def _view(monitor: Monitor, last: MonitorRun | None = None) -> MonitorView:
    assert monitor.id is not None
    return MonitorView(
        monitor.id,
        monitor.url,
        monitor.interval,
        monitor.callback_url,
        monitor.created_at,
        monitor.next_run_at,
        last.due_at if last else None,
        last.status if last else None,
        last.report_id if last else None,
    )


async def add(
    runtime: Runtime, subscriber: Subscriber, url: str, interval: str, callback_url: str | None = None
) -> MonitorView:
    """A new monitor; its first run is due at once. With a callback URL, the key's callback secret the first
    time it is shown (the rule of POST /api/scans): the webhooks are signed with it, and a user who never
    queued an async scan had no other way to get it. Raises InvalidTarget, ValueError (interval),
    AlreadyMonitored, TooManyMonitors, and for a callback URL CallbacksUnavailable or the scanner's guard errors."""
    from websec_app.scanner.fetch.guard import refuse_known_private

    target = parse_target(url)
    refuse_known_private(target.host, port=target.port, allow_private=runtime.settings.allow_private_targets)
    wanted = target.url
    if interval not in INTERVALS:
        raise ValueError(f"The interval must be one of: {', '.join(INTERVALS)}.")
    secret = None
    if callback_url:
        from websec_app.jobs.callbacks import callback_secret, checked_address

        secret = callback_secret(runtime.settings, subscriber.key_id)  # CallbacksUnavailable: cannot be signed
        await checked_address(callback_url, runtime.settings)
    monitor = await runtime.db(
        add_monitor,
        subscription_id=subscriber.subscription_id,
        api_key_id=subscriber.key_id,
        url=wanted,
        interval=interval,
        callback_url=callback_url or None,
        now=runtime.now(),
    )
    # Marked shown only once the monitor exists: a refused monitor does not use up the one showing.
    shown = secret is not None and await runtime.db(first_showing_of_callback_secret, subscriber.key_id, runtime.now())
    return replace(_view(monitor), callback_secret=secret if shown else None)


def _listed(session: Session, subscription_id: int) -> list[MonitorView]:
    monitors = monitors_of(session, subscription_id)
    latest = last_runs(session, [m.id for m in monitors if m.id is not None])
    return [_view(m, latest.get(m.id or 0)) for m in monitors]


async def listed(runtime: Runtime, subscriber: Subscriber) -> list[MonitorView]:
    return await runtime.db(_listed, subscriber.subscription_id)


async def remove(runtime: Runtime, subscriber: Subscriber, monitor_id: int) -> bool:
    """Stop one of the subscriber's monitors; False when it is not theirs (or already stopped)."""
    return bool(await runtime.db(remove_monitor, subscription_id=subscriber.subscription_id, monitor_id=monitor_id))


# --- scheduling -------------------------------------------------------------------------------------------


def _schedule(session: Session, now: datetime, base_url: str, sender: str) -> list[int]:
    owed = partial(_owed_alert, now=now, base_url=base_url, sender=sender)
    given_up = end_exhausted_runs(session, now, owed_alert=owed)
    if given_up:
        log.warning("monitor runs %s ended: abandoned mid-run too many times", given_up)
    created = schedule_due_runs(session, now)
    # Runs left by a process that stopped after scheduling them (or whose worker died mid-run) go out again.
    return list(dict.fromkeys([*created, *waiting_runs(session, now)]))


async def tick(runtime: Runtime, submit: Callable[[int], Awaitable[None]]) -> list[int]:
    """Schedule the runs due now and submit each; their ids."""
    settings = runtime.settings
    run_ids: list[int] = await runtime.db(_schedule, runtime.now(), settings.base_url, settings.mail.sender)
    for run_id in run_ids:
        await submit(run_id)
    return run_ids


# --- one run ----------------------------------------------------------------------------------------------


def _reserve(session: Session, claimed: ClaimedRun, now: datetime, limit: int) -> Reservation | None:
    """The run's unit: the one it took before (a retried run), or a new one; None when the month is used up.
    A new unit is committed with the run that holds it (store/quotas.py): a worker that dies in between takes
    neither, and the retried run takes the one unit."""
    if claimed.run.reservation:
        return Reservation(**claimed.run.reservation)
    reservation = reserve_monthly_scan(session, claimed.monitor.subscription_id, now, limit, commit=False)
    if reservation is not None:
        assert claimed.run.id is not None
        keep_reservation(session, claimed.run.id, asdict(reservation))
        session.commit()
    return reservation


def _owner_email(session: Session, subscription_id: int) -> str:
    subscription = session.get(Subscription, subscription_id)
    return subscription.email if subscription is not None else ""


def _kept(session: Session, report_id: str | None) -> StoredReport | None:
    from websec_app.store import find_report

    return find_report(session, report_id) if report_id else None


def _compared(session: Session, subscription_id: int, previous: StoredReport, body: Mapping[str, Any]) -> ReportDiff:
    """`body` compared with the previous kept report and, for what that one could not check, with the kept
    reports of the URL before it (at most LOOK_BACK_REPORTS, newest first, each read only when a finding needs
    it): a run and its retry (`_kept_alert`, from the run's previous report) get the same diff."""

    def earlier() -> Iterator[dict[str, Any]]:
        record = session.get(ScanRecord, previous.scan_record_id) if previous.scan_record_id is not None else None
        if record is None:
            return
        ids = kept_report_ids_before(session, subscription_id=subscription_id, record=record, limit=LOOK_BACK_REPORTS)
        for report_id in ids:
            if (stored := _kept(session, report_id)) is not None:
                yield dict(stored.body)

    return diff_reports(dict(previous.body), body, earlier())


def _previous_and_diff(
    session: Session, subscription_id: int, url: str, body: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any] | None, ReportDiff | None]:
    """The latest kept report of the URL in the subscription's history (its id and body), and `body` compared
    with it (`_compared`); Nones for the URL's first report."""
    rows, _ = history_page(session, subscription_id=subscription_id, url=url, offset=0, limit=1)
    previous = _kept(session, rows[0][1]) if rows else None
    if previous is None:
        return None, None, None
    return previous.id, dict(previous.body), _compared(session, subscription_id, previous, body)


def _keep(
    session: Session,
    claimed: ClaimedRun,
    report: Any,
    body: Mapping[str, Any],
    now: datetime,
    previous_report_id: str | None,
    reasons: list[str],
) -> str:
    """The report in the history, and on the run its id, the previous report's and the alert's reasons:
    one transaction, so that a retried run finds either nothing kept (and scans) or all of it (and only
    alerts)."""
    assert claimed.run.id is not None
    record = record_report(
        session,
        report,
        kind=SCAN_MONITOR,
        now=now,
        subscription_id=claimed.monitor.subscription_id,
        api_key_id=claimed.monitor.api_key_id,
        commit=False,
    )
    kept = save_report(session, body=body, kind=SCAN_MONITOR, now=now, scan_record_id=record.id, commit=False)
    note_kept_run(session, claimed.run.id, report_id=kept.id, previous_report_id=previous_report_id, alerts=reasons)
    session.commit()
    return kept.id


def _grade_rank(grade: str) -> int:
    from websec_app.scanner.rules import default_rulebook

    grades = [band.grade for band in default_rulebook().bands]
    return grades.index(grade) if grade in grades else len(grades)


def _certificate_days(body: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """The days until the soonest certificate expiry the scan read, and the host it is for when that is not the
    page's: the certificate of the address scanned (`entry_certificate`), which visitors meet before the redirect
    to the page's host, expires on its own schedule (an apex on another load balancer than www)."""
    tls = body.get("tls")
    found: list[tuple[int, str | None]] = []
    for key in ("certificate", "entry_certificate"):
        certificate = tls.get(key) if isinstance(tls, Mapping) else None
        if not isinstance(certificate, Mapping) or not isinstance(days := certificate.get("days_to_expiry"), int):
            continue
        host = certificate.get("host") if key == "entry_certificate" else None
        found.append((days, host if isinstance(host, str) else None))
    if not found:
        return None, None
    return min(found, key=lambda item: item[0])


def _drop_seen(diff: ReportDiff | None) -> bool:
    """Whether a grade below the previous report's is the site's doing. When that report could not check part
    of the site (a bot challenge, a lookup that failed and so deducted nothing), its grade stood higher only for
    what it did not see: the drop is the site's only if the diff shows a finding new or worse than before.
    Otherwise the alert was false (a dangling CNAME whose target's lookup failed once made the next run "The
    grade dropped from A+ to B" with no finding new)."""
    if diff is None or not diff.before_checked_less:
        return True

    def points(state: Mapping[str, Any] | None) -> int:
        return int(state.get("deduction") or 0) if state else 0

    return bool(diff.new) or any(points(change.after) > points(change.before) for change in diff.changed)


def alert_reasons(
    previous: Mapping[str, Any] | None, body: Mapping[str, Any], diff: ReportDiff | None, alerted_days: int | None
) -> tuple[list[str], int | None]:
    """Why this run alerts (sentences, most serious first), and the certificate threshold now alerted."""
    reasons: list[str] = []
    dropped = previous is not None and _grade_rank(str(body.get("grade"))) > _grade_rank(str(previous.get("grade")))
    if previous is not None and dropped and _drop_seen(diff):
        reasons.append(f"The grade dropped from {previous.get('grade')} to {body.get('grade')}.")
    if diff is not None:
        serious = [c for c in diff.new if c.severity in ("critical", "important")]
        if serious:
            from websec_app.services.email.monitor_alerts import change_title

            names = ", ".join(change_title(c) for c in serious[:5])
            more = f" and {len(serious) - 5} more" if len(serious) > 5 else ""
            reasons.append(f"New critical or important finding{'s' if len(serious) > 1 else ''}: {names}{more}.")
    days, host = _certificate_days(body)
    threshold = alerted_days
    if days is None or days > max(CERTIFICATE_WARNINGS):
        threshold = None  # renewed (or no certificate read): the next expiry warns again
    else:
        due = min(t for t in CERTIFICATE_WARNINGS if days <= t)
        if alerted_days is None or due < alerted_days:
            when = "today" if days <= 0 else f"in {days} day{'s' if days != 1 else ''}"
            which = f"The certificate of {host}" if host else "The certificate"
            reasons.append(f"{which} expires {when}." if days >= 0 else f"{which} has expired.")
            threshold = due
    return reasons, threshold


def _queue_alert_email(
    session: Session,
    monitor: Monitor,
    run_id: int | None,
    alert: tuple[list[str], ReportDiff | None, Mapping[str, Any] | None],
    now: datetime,
    base_url: str,
    sender: str,
    *,
    commit: bool = True,
) -> None:
    """The alert email of one run into the outbox (its dedupe key makes it one per run)."""
    from websec_app.services.email.monitor_alerts import monitor_alert_email
    from websec_app.services.email.render import queued

    reasons, diff, body = alert
    rendered = monitor_alert_email(
        to=_owner_email(session, monitor.subscription_id),
        url=monitor.url,
        reasons=reasons,
        diff=diff,
        report=body,
        scanned_at=now,
        base_url=base_url,
    )
    email = queued(rendered, sender=sender, now=now, dedupe_key=f"monitor-run:{run_id}")
    enqueue_email(session, email, now, commit=commit)


async def _send_alert(
    runtime: Runtime, claimed: ClaimedRun, reasons: list[str], diff: ReportDiff | None, body: Mapping[str, Any] | None
) -> None:
    """The alert email (through the outbox, one per run: its dedupe key) and the optional signed webhook."""
    from websec_app.services.email.monitor_alerts import site_page

    settings = runtime.settings
    alert = (reasons, diff, body)
    await runtime.db(
        _queue_alert_email,
        claimed.monitor,
        claimed.run.id,
        alert,
        runtime.now(),
        settings.base_url,
        settings.mail.sender,
    )
    if claimed.monitor.callback_url and claimed.monitor.api_key_id is not None:
        payload = {
            "event": "monitor.alert",
            # A retried run sends its alert again (at least once): the receiver deduplicates by run_id.
            "run_id": claimed.run.id,
            "monitor_id": claimed.monitor.id,
            "url": claimed.monitor.url,
            "reasons": reasons,
            "diff": diff.to_dict() if diff is not None else None,
            "site_page": site_page(settings.base_url, claimed.monitor.url),
        }
        await _webhook(runtime, claimed.monitor.callback_url, claimed.monitor.api_key_id, payload)


async def _webhook(runtime: Runtime, url: str, api_key_id: int, payload: Mapping[str, Any]) -> None:
    from websec_app.jobs.callbacks import callback_secret, deliver, encode, sign

    body = encode(payload)
    try:
        signature = sign(callback_secret(runtime.settings, api_key_id), body)
    except Exception:  # noqa: BLE001 - callbacks switched off since the monitor was made: the email went
        log.warning("monitor webhook to %s not sent: callbacks are not enabled", url)
        return
    pause = WEBHOOK_FIRST_PAUSE
    for attempt in range(1, WEBHOOK_ATTEMPTS + 1):
        try:
            status = await deliver(url, body, signature, runtime.settings)
            if 200 <= status < 300:
                return
            log.warning("monitor webhook to %s answered %s (attempt %s)", url, status, attempt)
        except Exception as exc:  # noqa: BLE001 - retried, then given up: the email carries the alert
            log.warning("monitor webhook to %s failed (attempt %s): %s", url, attempt, exc)
        if attempt < WEBHOOK_ATTEMPTS:
            await asyncio.sleep(pause)
            pause *= 2


def _quota_notice(session: Session, claimed: ClaimedRun, now: datetime, base_url: str, sender: str) -> None:
    """Tell the owner once a month that runs are skipped (the outbox's dedupe key makes it once)."""
    from websec_app.services.email.monitor_alerts import monitor_quota_email
    from websec_app.services.email.render import queued

    subscription_id = claimed.monitor.subscription_id
    rendered = monitor_quota_email(
        to=_owner_email(session, subscription_id),
        urls=[claimed.monitor.url],
        resets_at=month_resets_at(now),
        base_url=base_url,
    )
    key = f"monitor-quota:{subscription_id}:{month_period(now)}"
    enqueue_email(session, queued(rendered, sender=sender, now=now, dedupe_key=key), now)


async def execute_run(runtime: Runtime, run_id: int) -> str | None:
    """Run one scheduled run (the task engine's task); its end status, or None when another worker has it,
    it has ended already (a retried copy), or it was ended `skipped` as it was claimed (the subscription is no
    longer active): then nothing is scanned, no unit taken, no alert sent."""
    now = runtime.now()
    claimed: ClaimedRun | None = await runtime.db(claim_run, run_id, now)
    if claimed is None:
        return None
    monitor = claimed.monitor
    if claimed.run.report_id is not None:
        return await _alert_kept_run(runtime, claimed)
    limit = runtime.settings.pro_scans_per_month
    reservation: Reservation | None = await runtime.db(_reserve, claimed, now, limit)
    if reservation is None:
        await runtime.db(_quota_notice, claimed, now, runtime.settings.base_url, runtime.settings.mail.sender)
        await runtime.db(finish_run, run_id, status=RUN_SKIPPED_QUOTA, now=now)
        return RUN_SKIPPED_QUOTA
    try:
        report = await runtime.scanner(monitor.url, runtime.settings)
    except ScanError as exc:
        unreachable = isinstance(exc, TargetUnreachable)
        # Only unreachable runs count towards the alert (docs/api.md): a refused or failed run is not one, so it
        # breaks the row as a done run does.
        in_row = monitor.unreachable_in_row + 1 if unreachable else 0
        reasons = []
        if in_row == UNREACHABLE_ALERT_AFTER:
            reasons = [f"The site could not be reached in {UNREACHABLE_ALERT_AFTER} runs in a row: {exc}"]
        if reasons:
            await _send_alert(runtime, claimed, reasons, None, None)
        status = RUN_UNREACHABLE if unreachable else RUN_FAILED
        await runtime.db(
            finish_run,
            run_id,
            status=status,
            now=runtime.now(),
            alerts=reasons,
            error=str(exc),
            monitor_changes={"unreachable_in_row": in_row},
            give_back=reservation,
        )
        return status
    except Exception as exc:  # noqa: BLE001 - a scanner bug on this site: the run ends, its unit given back
        log.exception("monitor run %s of %s failed", run_id, monitor.url)
        await runtime.db(
            finish_run,
            run_id,
            status=RUN_FAILED,
            now=runtime.now(),
            error=f"the scan failed ({type(exc).__name__})",
            monitor_changes={"unreachable_in_row": 0},
            give_back=reservation,
        )
        return RUN_FAILED
    body = report.to_dict(pro=True, include_fix=True)
    previous_id, previous, diff = await runtime.db(_previous_and_diff, monitor.subscription_id, monitor.url, body)
    reasons, threshold = alert_reasons(previous, body, diff, monitor.certificate_alerted_days)
    report_id = await runtime.db(_keep, claimed, report, body, now, previous_id, reasons)
    if reasons:
        await _send_alert(runtime, claimed, reasons, diff, body)
    await runtime.db(
        finish_run,
        run_id,
        status=RUN_DONE,
        now=runtime.now(),
        report_id=report_id,
        alerts=reasons,
        monitor_changes={"unreachable_in_row": 0, "certificate_alerted_days": threshold},
    )
    return RUN_DONE


def _kept_alert(
    session: Session, run: MonitorRun, monitor: Monitor
) -> tuple[ReportDiff | None, dict[str, Any] | None, int | None]:
    """A kept run's diff rebuilt from its kept reports (its own and its previous one, and the ones before that
    as the run compared them: `_compared`), its report's body, and the certificate threshold it alerted (the
    monitor's own when its report is gone)."""
    kept, found = _kept(session, run.report_id), _kept(session, run.previous_report_id)
    body = dict(kept.body) if kept is not None else None
    previous = dict(found.body) if found is not None else None
    diff = None
    if found is not None and body is not None:
        diff = _compared(session, monitor.subscription_id, found, body)
    threshold = monitor.certificate_alerted_days
    if body is not None:
        _, threshold = alert_reasons(previous, body, diff, monitor.certificate_alerted_days)
    return diff, body, threshold


async def _alert_kept_run(runtime: Runtime, claimed: ClaimedRun) -> str:
    """A run retried after its worker died with its report kept (`_keep`): no scan, no history entry, the
    same unit; the diff rebuilt from the two kept reports, the stored alert sent, the run ended done."""
    run, monitor = claimed.run, claimed.monitor
    assert run.id is not None and run.report_id is not None
    diff, body, threshold = await runtime.db(_kept_alert, run, monitor)
    reasons = list(run.alerts)
    log.warning("monitor run %s was retried with its report kept: its alert goes out without a new scan", run.id)
    if reasons:
        await _send_alert(runtime, claimed, reasons, diff, body)
    await runtime.db(
        finish_run,
        run.id,
        status=RUN_DONE,
        now=runtime.now(),
        report_id=run.report_id,
        alerts=reasons,
        monitor_changes={"unreachable_in_row": 0, "certificate_alerted_days": threshold},
    )
    return RUN_DONE


def _owed_alert(
    session: Session, run: MonitorRun, monitor: Monitor, *, now: datetime, base_url: str, sender: str
) -> tuple[str, dict[str, Any]]:
    """A run abandoned too many times after its report was kept (`end_exhausted_runs`) still owes its alert:
    its email is queued in the transaction that ends the run (the outbox's dedupe key makes it one, also when
    an earlier attempt queued it before dying). Not its webhook: the tick does not wait on a site's receiver,
    and sending is what the dead attempts were doing. Nothing is sent for a deleted monitor or a subscription
    no longer entitled (as when such a run is claimed). A note for the run's error, and the monitor's state."""
    active, entitled = monitor_state(session, monitor.id) if monitor.id is not None else (False, False)
    if not active:
        return "its alert was not sent: the monitor was deleted", {}
    if not entitled:
        return "its alert was not sent: the subscription is not active", {}
    diff, body, threshold = _kept_alert(session, run, monitor)
    changes: dict[str, Any] = {"unreachable_in_row": 0, "certificate_alerted_days": threshold}
    if not run.alerts:
        return "it had no alert to send", changes
    _queue_alert_email(session, monitor, run.id, (list(run.alerts), diff, body), now, base_url, sender, commit=False)
    webhook = " (not its webhook)" if monitor.callback_url else ""
    return f"its alert email was queued{webhook}", changes
