"""`/site?url=...`: the signed-in Pro subscriber's kept scans of one site, its score over time and the latest diff.

The account is the Pro area's (`ProState`: the key in this tab's sessionStorage); the page loads once it is
signed in, on opening (after `ProState.open_page`) or right after the sign-in form on this page.
"""

from __future__ import annotations

import reflex as rx

from websec_app.scanner import InvalidTarget
from websec_app.usecases.history import MAX_PAGE_SIZE, history, scan_diff

from ..history_view import DiffView, HistoryRow, ScoreChart, diff_view, history_rows, score_chart
from ..messages import describe
from ..runtime import current_runtime
from .pro import ProState

#: History rows shown before "Show all".
ROWS_SHOWN = 10


class SiteState(rx.State):
    #: The URL as given in the link, and as the reports record it (after a successful load).
    asked: str = ""
    url: str = ""
    problem: str = ""
    loading: bool = False
    loaded: bool = False
    total: int = 0
    rows: list[HistoryRow] = []
    chart: ScoreChart = ScoreChart()
    diff: DiffView = DiffView()
    show_all: bool = False
    #: (key id, URL asked) of what is shown: the signed-in content mounts after on_load has filled it.
    _loaded_for: str = ""

    @rx.var
    def shown_rows(self) -> list[HistoryRow]:
        return self.rows if self.show_all else self.rows[:ROWS_SHOWN]

    @rx.var
    def more_rows(self) -> int:
        return max(0, len(self.rows) - ROWS_SHOWN)

    @rx.event
    async def reload(self) -> None:
        """on_load (after ProState.open_page): every visit shows the history as it is now (a scan since)."""
        self._loaded_for = ""
        await self._open()

    @rx.event
    async def open_page(self) -> None:
        """on_mount of the signed-in content: after this page's sign-in form; no second load after on_load."""
        await self._open()

    async def _open(self) -> None:
        pro = await self.get_state(ProState)
        account = pro.signed_in_account()
        self.asked = str(self.router.url.query_parameters.get("url", "") or "").strip()
        if account is None:
            self._loaded_for, self.loaded = "", False
            return
        wanted = f"{account.key_id}:{self.asked}"
        if wanted != self._loaded_for:
            await self._load(wanted)

    @rx.event
    def toggle_rows(self) -> None:
        self.show_all = not self.show_all

    async def _load(self, wanted: str) -> None:
        pro = await self.get_state(ProState)
        account = pro.signed_in_account()
        if account is None:
            return
        self.problem, self.show_all, self.loaded = "", False, False
        self.rows, self.total, self.chart, self.diff = [], 0, ScoreChart(), DiffView()
        if not self.asked:
            self.problem = "No site was given: open this page from a monitored site or a link in an alert email."
            self._loaded_for = wanted
            return
        runtime = current_runtime()
        self.loading = True
        try:
            page = await history(runtime, account, self.asked, page=1, per_page=MAX_PAGE_SIZE)
            compared = await scan_diff(runtime, account, page.entries[0].report_id) if page.entries else None
        except InvalidTarget as exc:
            self.problem = describe(exc, runtime.now()).text
            self._loaded_for = wanted
            return
        finally:
            self.loading = False
        self.url, self.total = page.url, page.total
        self.rows = history_rows(page.entries)
        self.chart = score_chart(page.entries)
        if compared is not None:
            self.diff = diff_view(
                compared.diff,
                compared.before.scanned_at if compared.before else None,
                compared.after.scanned_at,
                compared.after.body,
            )
        self.loaded, self._loaded_for = True, wanted


__all__ = ["ROWS_SHOWN", "SiteState"]
