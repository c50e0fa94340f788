"""Async and batch scans (issue 16): POST /api/scans queues Pro scan jobs, GET /api/scans/{id} reads one.

Each URL is one Pro scan of the month, taken when the batch is accepted (all or none) and given back when
its scan fails, exactly as POST /api/scan/pro. Only the key that queued a job reads it; to another key it
does not exist (404). The use cases are websec_app/usecases/jobs.py.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Security
from fastapi.responses import JSONResponse

from websec_app.jobs.callbacks import CallbacksUnavailable
from websec_app.usecases import jobs, presented
from websec_app.usecases.accounts import Subscriber

from ..auth import MISSING_HEADER, api_key_header, missing_key, subscriber_for
from ..context import Context
from ..errors import ApiError, iso, sentence
from ..openapi import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from ..schemas import QueuedScan, ScanJobStatus, ScansAccepted, ScansRequest

router = APIRouter(tags=["async scans"])


async def _subscriber(ctx: Context, key: str | None) -> Subscriber:
    """401 without a key, then the key's check (auth.py)."""
    if presented(key) is None:
        raise missing_key(MISSING_HEADER)
    return await subscriber_for(ctx, key)


@router.post(
    "/api/scans",
    summary="Queue Pro scans (X-API-Key)",
    status_code=202,
    response_model=ScansAccepted,
    responses={
        **errors(400, 401, 403, 500, e400="Malformed body, an invalid URL, or a refused callback_url."),
        429: {
            **errors(429, e429="Fewer Pro scans are left this month than URLs in the batch; nothing was queued.")[429],
            "headers": {**SCANS_REMAINING, **RETRY_AFTER},
        },
        **OVERLOADED,
    },
)
async def queue_scans(
    body: ScansRequest, ctx: Context, key: Annotated[str | None, Security(api_key_header)] = None
) -> JSONResponse:
    """Queues one Pro scan per URL (`url`, or `urls`: at most 50) and answers at once with their job ids.
    A batch is accepted whole or not at all. Each URL consumes one Pro scan; a scan that fails (the target is
    unreachable, say) gives it back. With `callback_url`, each finished job is also POSTed there, signed."""
    subscriber = await _subscriber(ctx, key)
    targets = body.targets
    try:
        submitted = await jobs.submit_scans(ctx, subscriber, targets, body.callback_url)
    except jobs.BatchQuotaUsed as exc:
        wait = max(1, int((exc.resets_at - ctx.now()).total_seconds()))
        message = (
            f"This batch needs {exc.wanted} Pro scans but {exc.remaining} are left this month; nothing was "
            f"queued. The quota resets at {iso(exc.resets_at)}."
        )
        raise ApiError(429, message, {"X-Scans-Remaining": str(exc.remaining), "Retry-After": str(wait)}) from None
    except CallbacksUnavailable as exc:
        raise ApiError(400, sentence(str(exc))) from None
    accepted = ScansAccepted(
        jobs=[QueuedScan(id=job_id, url=url) for job_id, url in zip(submitted.ids, targets, strict=True)],
        callback_secret=submitted.callback_secret,
    )
    return JSONResponse(
        accepted.model_dump(exclude_none=True),
        status_code=202,
        headers={"X-Scans-Remaining": str(submitted.remaining)},
    )


@router.get(
    "/api/scans/{job_id}",
    summary="A queued scan (X-API-Key)",
    response_model=ScanJobStatus,
    response_model_exclude_none=True,
    responses=errors(
        401,
        403,
        404,
        e404="No job with this id was queued with this key within the retention (WEBSEC_JOB_RETENTION_DAYS).",
    ),
)
async def read_scan(
    ctx: Context,
    job_id: Annotated[str, Path(max_length=64)],
    key: Annotated[str | None, Security(api_key_header)] = None,
) -> JSONResponse:
    """The job's `status` (queued, running, done, failed); when done, `report` is the same body as
    POST /api/scan/pro; when failed, `error` is what that endpoint would have answered."""
    subscriber = await _subscriber(ctx, key)
    job = await jobs.read_job(ctx, subscriber.key_id, job_id)
    if job is None:
        days = ctx.settings.job_retention_days
        kept = f" in the last {days} day{'s' if days != 1 else ''} (ended jobs are deleted after that)" if days else ""
        raise ApiError(404, f"No scan job with this id was queued with this API key{kept}.")
    return JSONResponse(jobs.job_view(job))
