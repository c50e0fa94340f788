"""Running a scan from the browser: free (home page), one-time token, Pro scan and Pro PDF.

Each handler is a Reflex background task: it reads the form, calls one use case (`websec_app/usecases`)
and, while the flow runs, sends the current step and the elapsed time to the page a few
times a second, so the page is never frozen. A finished scan is shown on its report page;
a refusal is shown as a message (`ui/messages.py`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, quote

import reflex as rx

from websec_app.services.email.links import ONE_TIME_SCAN_PAGE
from websec_app.store.tokens import COMPLIANCE_TOKEN_PREFIX, SCAN_TOKEN_PREFIX
from websec_app.usecases import jobs, purchases, scans
from websec_app.usecases.accounts import Subscriber
from websec_app.usecases.scans import PdfFile, Progress, Scanned

from ..messages import describe, email_field_problem, token_field_problem, url_field_problem
from ..runtime import current_runtime
from .pro import ProState
from .report import ReportState, report_path

log = logging.getLogger(__name__)

#: How often the page hears about a running scan.
_TICK_SECONDS = 0.25

#: What each step of `usecases.scans.STEPS` is called on the page, per kind of scan.
STEP_LABELS = {
    "free": ("Checking today's free scans", "Fetching the site: page, TLS, DNS, cookies, CORS", "Saving the report"),
    "token": ("Redeeming your one-time token", "Fetching the site: page, TLS, DNS, cookies, CORS", "Saving the report"),
    "pro": ("Checking this month's quota", "Fetching the site: page, TLS, DNS, cookies, CORS", "Saving the report"),
    "pdf": ("Checking this month's quota", "Fetching the site: page, TLS, DNS, cookies, CORS", "Writing the PDF"),
    "compliance": (
        "Checking the payment token",
        "Fetching the site: page, TLS, DNS, cookies, CORS",
        "Writing the compliance PDF and emailing it",
    ),
}


#: The fields that can say what is wrong with them (`field_errors` keys: "<form>-<name>", components/field.py).
FIELDS = (
    "free-url",
    "token-url",
    "token-token",
    "pro-url",
    "pdf-url",
    "compliance-token",
    "compliance-url",
    "compliance-email",
)
_NO_FIELD_ERRORS = dict.fromkeys(FIELDS, "")


def _form_text(form: dict[str, Any], name: str) -> str:
    return str(form.get(name) or "").strip()


def link_fields(fragment: str, query: dict[str, str]) -> dict[str, str]:
    """What a link fills in: the fragment (`#token=...&url=...`, where purchase links put a token, since no
    server sees it), or else the query (`?token=...`, the links of older emails)."""
    found = {name: values[0] for name, values in parse_qs(fragment).items() if values}
    for name in ("token", "url", "email"):
        if name not in found and query.get(name):
            found[name] = str(query[name])
    return found


# The scans of the forms, as the API's: jobs of the task engine, the report kept for its /report/<id> link.


async def _free_scan(url: str, client: str, progress: Progress) -> Scanned:
    return await jobs.free_scan(current_runtime(), url, client, keep=True, progress=progress)


async def _token_scan(url: str, token: str, progress: Progress) -> Scanned:
    return await jobs.token_scan(current_runtime(), url, token, keep=True, progress=progress)


async def _pro_scan(account: Subscriber, url: str, progress: Progress) -> Scanned:
    return await jobs.pro_scan(current_runtime(), account, url, keep=True, progress=progress)


async def _pro_pdf(account: Subscriber, url: str, name: str, progress: Progress) -> PdfFile:
    return await jobs.pro_pdf(current_runtime(), account, url, name, keep=True, progress=progress)


class ScanState(rx.State):
    """One scan at a time per browser tab."""

    running: bool = False
    kind: str = ""  # free, token, pro, pdf: which form started the scan
    target: str = ""
    step: int = 0  # index into STEP_LABELS[kind]
    waiting: bool = False  # every scan slot of the process is busy: the scan waits its turn (usecases.scans.WAITING)
    elapsed: str = "0.0 s"
    problem_kind: str = ""
    problem_title: str = ""
    problem_text: str = ""
    #: The one-time token page, opened from the emailed link (`?token=...`).
    token: str = ""
    #: The compliance report page (`?token=wsc_...&url=...`), and what the last finished job said.
    compliance_token: str = ""
    compliance_email: str = ""
    done_text: str = ""
    #: What is wrong with each field, shown next to it ("" when nothing is).
    field_errors: dict[str, str] = _NO_FIELD_ERRORS

    @rx.var
    def step_labels(self) -> list[str]:
        return list(STEP_LABELS.get(self.kind, STEP_LABELS["free"]))

    @rx.event
    def open_home(self) -> Any:
        """on_load of the home page. The purchase email links to `/?one_time_token=...`: that is a paid scan."""
        token = str(self.router.url.query_parameters.get("one_time_token", "") or "")
        if token:  # emails sent before issue 15 link here (a client-side move: no server sees the new URL)
            return rx.redirect(f"{ONE_TIME_SCAN_PAGE}?token={quote(token)}", replace=True)
        return None

    @rx.event
    def open_token_page(self) -> None:
        """on_load of the one-time scan page: take the token (and a URL, if given) from the link."""
        fields = link_fields(self.router.url.fragment, dict(self.router.url.query_parameters))
        self.token = fields.get("token", self.token)
        self.target = fields.get("url", self.target)
        self._clear_problem()

    @rx.event
    def open_compliance_page(self) -> None:
        """on_load of the compliance report page: the token, website and address from the link, if any."""
        fields = link_fields(self.router.url.fragment, dict(self.router.url.query_parameters))
        self.compliance_token = fields.get("token", self.compliance_token)
        self.target = fields.get("url", self.target)
        self.compliance_email = fields.get("email", self.compliance_email)
        self.done_text = ""
        self._clear_problem()

    def fill_compliance_form(self, token: str, url: str, email: str) -> None:
        """After a purchase in this tab: the compliance page opens with its form filled."""
        self.compliance_token, self.target, self.compliance_email = token, url, email

    @rx.event
    def dismiss(self) -> None:
        self._clear_problem()

    def _clear_problem(self) -> None:
        self.problem_kind = self.problem_title = self.problem_text = ""
        self.field_errors = _NO_FIELD_ERRORS

    def _check_fields(self, kind: str, problems: dict[str, str]) -> bool:
        """Show what is wrong with each field of a form (`problems`: name -> message or ""); True if nothing."""
        self.kind = kind
        self.problem_kind = self.problem_title = self.problem_text = ""
        self.field_errors = {**_NO_FIELD_ERRORS, **{f"{kind}-{name}": text for name, text in problems.items()}}
        return not any(problems.values())

    def _client(self) -> str:
        headers = self.router.headers.raw_headers
        peer = headers.get("asgi-scope-client") or self.router.session.client_ip or None
        forwarded = [headers["x-forwarded-for"]] if headers.get("x-forwarded-for") else []
        return scans.client_key(peer, forwarded, current_runtime())

    # -- handlers --------------------------------------------------------------------------------

    @rx.event(background=True)
    async def free_scan(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url = _form_text(form, "url")
        async with self:
            client = self._client()
        async for event in self._run("free", url, lambda step: _free_scan(url, client, step)):
            yield event

    @rx.event(background=True)
    async def token_scan(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, token = _form_text(form, "url"), _form_text(form, "token")
        async with self:
            problems = {"url": url_field_problem(url), "token": token_field_problem(token, SCAN_TOKEN_PREFIX)}
            if not self._check_fields("token", problems):
                return
        async for event in self._run("token", url, lambda step: _token_scan(url, token, step)):
            yield event

    @rx.event(background=True)
    async def pro_scan(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url = _form_text(form, "url")
        async with self:
            account = (await self.get_state(ProState)).account_or_none()
        if account is None:
            return
        async for event in self._run("pro", url, lambda step: _pro_scan(account, url, step)):
            yield event

    @rx.event(background=True)
    async def pro_pdf(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, name = _form_text(form, "url"), _form_text(form, "client_name")
        async with self:
            account = (await self.get_state(ProState)).account_or_none()
        if account is None:
            return
        async for event in self._run("pdf", url, lambda step: _pro_pdf(account, url, name, step)):
            yield event

    @rx.event(background=True)
    async def compliance_report(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, token, email = _form_text(form, "url"), _form_text(form, "token"), _form_text(form, "email")
        async with self:
            self.compliance_token, self.compliance_email = token, email  # a failed attempt keeps what was typed
            problems = {
                "token": token_field_problem(token, COMPLIANCE_TOKEN_PREFIX),
                "url": url_field_problem(url),
                "email": email_field_problem(email),
            }
            if not self._check_fields("compliance", problems):
                return
        runtime = current_runtime()
        async with self:
            client = self._client()  # provider status checks are limited per client, as for the API

        async def job(step: Callable[[str], None]) -> str:
            # The same use case as `POST /api/compliance-report/generate`: payment checked and token reserved
            # before the scan line; the page shows the sentence it ends with.
            return (await purchases.compliance_report(runtime, token, url, email, step, client=client)).message

        async for event in self._run("compliance", url, job):
            yield event

    # -- the shared part --------------------------------------------------------------------------

    def _show_problem(self, kind: str, title: str, text: str) -> None:
        self.problem_kind, self.problem_title, self.problem_text = kind, title, text

    async def _run(
        self, kind: str, url: str, job: Callable[[Callable[[str], None]], Awaitable[Any]]
    ) -> AsyncIterator[Any]:
        """Run `job(progress)`, keeping the page informed; then show the report, the PDF or the problem."""
        async with self:
            if self.running:
                return
            if not self._check_fields(kind, {"url": url_field_problem(url)}):
                return
            self.running, self.kind, self.target, self.step, self.elapsed = True, kind, url, 0, "0.0 s"
            self.waiting, self.done_text = False, ""
            self._clear_problem()
        current = {"step": 0, "waiting": False}

        def progress(step: str) -> None:
            current["waiting"] = step == scans.WAITING
            if step != scans.WAITING:
                current["step"] = scans.STEPS.index(step)

        started = time.monotonic()
        task = asyncio.ensure_future(job(progress))
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=_TICK_SECONDS)
                async with self:
                    self.step, self.waiting = int(current["step"]), bool(current["waiting"])
                    self.elapsed = f"{time.monotonic() - started:.1f} s"
            result = task.result()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message on the page
            problem = describe(exc, current_runtime().now(), token="compliance" if kind == "compliance" else "scan")
            if problem.kind == "error":
                log.error("%s scan of %s failed", kind, url, exc_info=exc)
            async with self:
                self.running = self.waiting = False
                self._show_problem(problem.kind, problem.title, problem.text)
            return
        finally:
            if not task.done():  # the tab went away: stop the scan (its unit is given back)
                task.cancel()
        async with self:
            self.running = self.waiting = False
            if isinstance(result, str):  # a job that ends in a sentence (the compliance report was emailed)
                self.done_text = result
                return
            if isinstance(result, PdfFile):
                pro = await self.get_state(ProState)
                await pro.refresh_usage()
            else:
                report = await self.get_state(ReportState)
                report.show(result.report_id, result.body)
                if kind == "pro":
                    await (await self.get_state(ProState)).refresh_usage()
        if isinstance(result, PdfFile):
            yield rx.download(data=result.data, filename=result.filename, mime_type="application/pdf")
        else:
            yield rx.redirect(report_path(result.report_id))
