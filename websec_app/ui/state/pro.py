"""The Pro area: the API key (kept in the tab's sessionStorage, never in a URL), usage and recent scans."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx

from websec_app.usecases import KeyRefused, RecentScan, Subscriber, authenticate, recent, usage

from ..messages import describe, key_field_problem, when
from ..runtime import current_runtime
from .report import report_path


@dataclass(frozen=True)
class RecentRow:
    when: str
    url: str
    grade: str
    score: int
    kind: str
    link: str  # "" when the scan came through the API (nothing stored to show)


_KIND_LABELS = {"pro": "Pro scan", "pdf": "PDF report", "free": "Free scan", "one_time": "One-time scan"}


def _row(scan: RecentScan) -> RecentRow:
    return RecentRow(
        when=f"{scan.scanned_at:%Y-%m-%d %H:%M} UTC",
        url=scan.url,
        grade=scan.grade,
        score=scan.score,
        kind=_KIND_LABELS.get(scan.kind, scan.kind),
        link=report_path(scan.report_id) if scan.report_id else "",
    )


class ProState(rx.State):
    #: sessionStorage: gone when the tab closes, sent to the server only over the event websocket.
    api_key: str = rx.SessionStorage("", name="websec_api_key")
    email: str = ""
    plan: str = ""
    used: int = 0
    limit: int = 0
    resets: str = ""
    recent: list[RecentRow] = []
    problem: str = ""
    #: What is wrong with the key as typed (empty, not a key), shown next to its field.
    key_error: str = ""
    checking: bool = False
    _account: Subscriber | None = None

    @rx.var
    def signed_in(self) -> bool:
        return bool(self.email)

    @rx.var
    def key_hint(self) -> str:
        """The key as shown on the page: its prefix only."""
        return f"{self.api_key[:8]}…" if self.api_key else ""

    @rx.var
    def usage_percent(self) -> int:
        return min(100, round(100 * self.used / self.limit)) if self.limit else 0

    @rx.event
    async def open_page(self) -> None:
        """on_load: a key kept in this tab signs the page in again after a reload."""
        if self.api_key and self._account is None:
            await self._sign_in(self.api_key)
        elif self._account is not None:
            await self.refresh_usage()

    @rx.event
    async def sign_in(self, form: dict[str, str]) -> None:
        key = str(form.get("api_key") or "").strip()
        self.problem, self.key_error = "", key_field_problem(key)
        if self.key_error:
            return
        await self._sign_in(key)

    @rx.event
    def sign_out(self) -> None:
        self.api_key = ""
        self._forget()

    def _forget(self) -> None:
        self._account = None
        self.email = self.plan = self.resets = ""
        self.used = self.limit = 0
        self.recent = []

    async def _sign_in(self, key: str) -> None:
        self.checking = True
        try:
            account = await authenticate(current_runtime(), key)
        except KeyRefused as exc:
            self.api_key = ""
            self._forget()
            self.problem = describe(exc, current_runtime().now()).text
            return
        finally:
            self.checking = False
        self.api_key, self._account, self.problem = key, account, ""
        self.email, self.plan = account.email, account.plan_label
        await self.refresh_usage()

    async def refresh_usage(self) -> None:
        """Usage and history again (after a scan, a PDF, or on opening the page)."""
        if self._account is None:
            return
        runtime = current_runtime()
        month = await usage(runtime, self._account)
        self.used, self.limit, self.resets = month.used, month.limit, when(month.resets_at)
        self.recent = [_row(scan) for scan in await recent(runtime, self._account)]

    def signed_in_account(self) -> Subscriber | None:
        """The subscriber this tab is signed in as, or None (says nothing on the page)."""
        return self._account

    def account_or_none(self) -> Subscriber | None:
        if self._account is None:
            self.problem = "Sign in with your API key first."
        return self._account
