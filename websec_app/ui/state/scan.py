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
from urllib.parse import quote

import reflex as rx

from websec_app.usecases import purchases, scans
from websec_app.usecases.scans import PdfFile

from ..messages import describe
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


def _form_text(form: dict[str, Any], name: str) -> str:
    return str(form.get(name) or "").strip()


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

    @rx.var
    def step_labels(self) -> list[str]:
        return list(STEP_LABELS.get(self.kind, STEP_LABELS["free"]))

    @rx.event
    def open_home(self) -> Any:
        """on_load of the home page. The purchase email links to `/?one_time_token=...`: that is a paid scan."""
        token = str(self.router.url.query_parameters.get("one_time_token", "") or "")
        if token:
            return rx.redirect(f"/one-time-scan?token={quote(token)}", replace=True)
        return None

    @rx.event
    def open_token_page(self) -> None:
        """on_load of the one-time scan page: take the token (and a URL, if given) from the link."""
        params = self.router.url.query_parameters
        self.token = str(params.get("token", "") or self.token)
        self.target = str(params.get("url", "") or self.target)
        self._clear_problem()

    @rx.event
    def open_compliance_page(self) -> None:
        """on_load of the compliance report page: the token (and website) from the link, if any."""
        params = self.router.url.query_parameters
        self.compliance_token = str(params.get("token", "") or self.compliance_token)
        self.target = str(params.get("url", "") or self.target)
        self.done_text = ""
        self._clear_problem()

    @rx.event
    def dismiss(self) -> None:
        self._clear_problem()

    def _clear_problem(self) -> None:
        self.problem_kind = self.problem_title = self.problem_text = ""

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
        async for event in self._run(
            "free", url, lambda step: scans.free_scan(current_runtime(), url, client, progress=step)
        ):
            yield event

    @rx.event(background=True)
    async def token_scan(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, token = _form_text(form, "url"), _form_text(form, "token")
        if not token:
            async with self:
                self.kind = "token"
                self._show_problem("token", "Enter your one-time token", "It starts with wst_ and is in your email.")
            return
        async for event in self._run(
            "token", url, lambda step: scans.token_scan(current_runtime(), url, token, progress=step)
        ):
            yield event

    @rx.event(background=True)
    async def pro_scan(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url = _form_text(form, "url")
        async with self:
            account = (await self.get_state(ProState)).account_or_none()
        if account is None:
            return
        async for event in self._run(
            "pro", url, lambda step: scans.pro_scan(current_runtime(), account, url, progress=step)
        ):
            yield event

    @rx.event(background=True)
    async def pro_pdf(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, name = _form_text(form, "url"), _form_text(form, "client_name")
        async with self:
            account = (await self.get_state(ProState)).account_or_none()
        if account is None:
            return
        job = lambda step: scans.pro_pdf(current_runtime(), account, url, name, progress=step)  # noqa: E731
        async for event in self._run("pdf", url, job):
            yield event

    @rx.event(background=True)
    async def compliance_report(self, form: dict[str, Any]) -> AsyncIterator[Any]:
        url, token, email = _form_text(form, "url"), _form_text(form, "token"), _form_text(form, "email")
        if not token:
            async with self:
                self.kind = "compliance"
                self._show_problem("token", "Enter your compliance report token", "It starts with wsc_.")
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
            self.kind = kind
            if not url:
                self._show_problem("invalid", "Enter a website address", "For example https://example.com.")
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
