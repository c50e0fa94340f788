"""A subscriber's scan history, the diff of two kept scans, and the public badge (issue 17; additions to
the spec, documented in OpenAPI and docs/api.md).

GET /api/history?url=... and GET /api/history/{id}[/diff] take the X-API-Key header and show only that
subscription's scans. GET /api/badge?url=... needs no key, shows the latest grade of a URL and its date,
and never starts a scan.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Security
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from websec_app.report_formats.badge import render_badge
from websec_app.scanner import InvalidTarget
from websec_app.usecases import history as history_cases

from ..auth import api_key_header, subscriber_for
from ..context import Context
from ..errors import ApiError, iso
from ..openapi import errors

router = APIRouter(tags=["history"])

NOT_FOUND = "No kept scan of yours has this id."
AGAINST_NOT_FOUND = "No kept scan of yours has the id given as 'against'."
#: Browsers, README renderers and GitHub's image proxy may keep a badge this long (seconds).
BADGE_MAX_AGE = 900


class HistoryItem(BaseModel):
    id: str = Field(description="The kept report's id: `GET /api/history/{id}` returns it.")
    scanned_at: str = Field(description="ISO 8601, UTC.")
    grade: str
    score: int
    kind: str = Field(description="What made the scan: `pro` (API or web UI), `pdf`, `monitor`.")


class HistoryList(BaseModel):
    url: str = Field(description="The URL as reports record it (normalised).")
    page: int
    per_page: int
    total: int = Field(description="Kept scans of this URL in all pages.")
    next_page: int | None = Field(description="The next page's number, or null on the last page.")
    scans: list[HistoryItem] = Field(description="Newest first.")


class KeptReportBody(BaseModel):
    id: str
    scanned_at: str
    report: dict[str, Any] = Field(description="The report exactly as the scan returned it (spec 2.2).")


class FindingChangeBody(BaseModel):
    section: str
    name: str = Field(description="The check's outcome id, or the header's name in the headers map.")
    severity: str
    subject: str | None = Field(
        description="The subject it concerns (a cookie's or header's name) when the finding names subjects: a "
        "subject newly named, or no longer named, is a change of its own. Null for a finding without subjects."
    )
    before: dict[str, Any] | None = Field(description="`{status, deduction}`; null when it was no issue before.")
    after: dict[str, Any] | None = Field(description="`{status, deduction}`; null when it is no issue now.")


class ScanDiffBody(BaseModel):
    before: HistoryItem | None = Field(description="The scan compared with; null for the first kept scan.")
    after: HistoryItem
    grade: dict[str, str] | None = Field(description="`{before, after}`; null for the first kept scan.")
    score: dict[str, int] | None = Field(description="`{before, after, change}`; null for the first kept scan.")
    new: list[FindingChangeBody] = Field(
        description="Issues found now and not before, costliest first; not one the scan before could not check "
        "(its check did not run: `check.error`, a header `not checked`, a bot challenge)."
    )
    fixed: list[FindingChangeBody] = Field(
        description="Issues found before and not now; not one this scan could not check."
    )
    changed: list[FindingChangeBody] = Field(description="Issues in both whose status or points changed.")


def _invalid(exc: InvalidTarget) -> ApiError:
    return ApiError(400, str(exc))


def _item(kept: history_cases.KeptReport) -> dict[str, Any]:
    return {
        "id": kept.report_id,
        "scanned_at": iso(kept.scanned_at),
        "grade": str(kept.body.get("grade", "")),
        "score": int(kept.body.get("score") or 0),
        "kind": kept.kind,
    }


@router.get(
    "/api/history",
    summary="Your kept scans of a URL (X-API-Key)",
    response_model=HistoryList,
    responses=errors(400, 401, 403),
)
async def list_history(
    ctx: Context,
    url: Annotated[str, Query(max_length=2048, description="The scanned URL, as given to the scan.")],
    key: Annotated[str | None, Security(api_key_header)] = None,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=history_cases.MAX_PAGE_SIZE)] = 20,
) -> JSONResponse:
    """Every Pro scan of the subscription (API, web UI, PDF export, monitor runs) of that URL, newest first,
    paginated. A rotated key keeps the history: it is the subscription's."""
    subscriber = await subscriber_for(ctx, key)
    try:
        found = await history_cases.history(ctx, subscriber, url, page=page, per_page=per_page)
    except InvalidTarget as exc:
        raise _invalid(exc) from None
    return JSONResponse(
        {
            "url": found.url,
            "page": found.page,
            "per_page": found.per_page,
            "total": found.total,
            "next_page": found.page + 1 if found.has_more else None,
            "scans": [
                {"id": e.report_id, "scanned_at": iso(e.scanned_at), "grade": e.grade, "score": e.score, "kind": e.kind}
                for e in found.entries
            ],
        }
    )


@router.get(
    "/api/history/{report_id}",
    summary="One kept report (X-API-Key)",
    response_model=KeptReportBody,
    responses=errors(401, 403, 404, e404=NOT_FOUND),
)
async def get_kept_report(
    ctx: Context, report_id: str, key: Annotated[str | None, Security(api_key_header)] = None
) -> JSONResponse:
    subscriber = await subscriber_for(ctx, key)
    kept = await history_cases.kept_report(ctx, subscriber, report_id)
    if kept is None:
        raise ApiError(404, NOT_FOUND)
    return JSONResponse({"id": kept.report_id, "scanned_at": iso(kept.scanned_at), "report": kept.body})


@router.get(
    "/api/history/{report_id}/diff",
    summary="What changed since the scan before (X-API-Key)",
    response_model=ScanDiffBody,
    responses=errors(
        400,
        401,
        403,
        404,
        e400="`against` is a kept scan of another URL: a diff compares two scans of the same URL.",
        e404=f"{NOT_FOUND} Or: {AGAINST_NOT_FOUND}",
    ),
)
async def get_diff(
    ctx: Context,
    report_id: str,
    key: Annotated[str | None, Security(api_key_header)] = None,
    against: Annotated[
        str | None,
        Query(max_length=32, description="Another kept scan of the same URL; default: the one just before."),
    ] = None,
) -> JSONResponse:
    """Findings new, fixed and changed (status or points), and the grade and score change."""
    subscriber = await subscriber_for(ctx, key)
    try:
        found = await history_cases.scan_diff(ctx, subscriber, report_id, against=against)
    except history_cases.AgainstNotFound:
        raise ApiError(404, AGAINST_NOT_FOUND) from None
    except history_cases.OtherUrl as exc:
        raise ApiError(
            400,
            f"The scan given as 'against' is of {exc.against_url} and scan {report_id} of {exc.url}: "
            "a diff compares two kept scans of the same URL.",
        ) from None
    if found is None:
        raise ApiError(404, NOT_FOUND)
    after = _item(found.after)
    if found.before is None or found.diff is None:
        return JSONResponse(
            {"before": None, "after": after, "grade": None, "score": None, "new": [], "fixed": [], "changed": []}
        )
    before = _item(found.before)
    return JSONResponse({"before": before, "after": after, **found.diff.to_dict()})


@router.get(
    "/api/badge",
    summary="A README badge with the latest grade of a URL",
    response_class=Response,
    responses={
        200: {
            "description": "An SVG badge (label `websec`, the grade in its colour; grey `not scanned` for a URL "
            "nobody has scanned). Cached for 15 minutes. Never starts a scan.",
            "content": {"image/svg+xml": {"schema": {"type": "string"}}},
        },
        **errors(400),
    },
)
async def badge(ctx: Context, url: Annotated[str, Query(max_length=2048)]) -> Response:
    """Only the grade and the date of the latest scan are shown, whoever made it."""
    try:
        facts = await history_cases.badge_facts(ctx, url)
    except InvalidTarget as exc:
        raise _invalid(exc) from None
    headers = {
        "Cache-Control": f"public, max-age={BADGE_MAX_AGE}",
        # Other sites' pages show it with <img>: under the service's same-origin CORP, browsers refuse it
        # (Fetch, "cross-origin resource policy check"). Its CSP is the service's: it may draw, never run anything.
        "Cross-Origin-Resource-Policy": "cross-origin",
    }
    if facts.scanned_at is not None:
        headers["Last-Modified"] = facts.scanned_at.strftime("%a, %d %b %Y %H:%M:%S GMT")
    return Response(render_badge(facts.grade, facts.scanned_at), media_type="image/svg+xml", headers=headers)
