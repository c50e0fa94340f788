"""Monitors (issue 17; additions to the spec, in OpenAPI and docs/api.md): a Pro subscriber's sites scanned
daily or weekly, with alerts by email (and an optional signed webhook) when one gets worse.

POST /api/monitors, GET /api/monitors, DELETE /api/monitors/{id}: X-API-Key, the subscription's monitors only.
Each run uses one of the month's Pro scans (websec_app/usecases/monitors.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Security
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from websec_app.jobs.callbacks import CallbacksUnavailable
from websec_app.usecases import monitors as monitor_cases

from ..auth import api_key_header, subscriber_for
from ..context import Context
from ..errors import ApiError, iso, sentence
from ..openapi import errors

router = APIRouter(tags=["monitors"])

NOT_FOUND = "No monitor of yours has this id."


class MonitorRequest(BaseModel):
    url: str = Field(max_length=2048, description="The site to scan on every run.")
    interval: Literal["daily", "weekly"]
    callback_url: str | None = Field(
        default=None,
        max_length=2048,
        description="Optional: alerts are also POSTed here, signed like async-scan callbacks (X-Websec-Signature).",
    )


class MonitorBody(BaseModel):
    id: int
    url: str
    interval: str
    callback_url: str | None
    created_at: str
    next_run_at: str = Field(description="When the next run is due (ISO 8601, UTC).")
    last_run_at: str | None = None
    last_status: str | None = Field(
        default=None, description="`done`, `unreachable`, `skipped_quota`, `skipped`, `failed`, `queued` or `running`."
    )
    last_report_id: str | None = Field(default=None, description="`GET /api/history/{id}` returns it.")


class MonitorCreated(MonitorBody):
    callback_secret: str | None = Field(
        default=None,
        description="With callback_url: the key's callback signing secret, which signs the monitor's webhooks, "
        "shown once: in the key's first answer with a callback_url (this or POST /api/scans). Keep it; it is "
        "never shown again.",
    )


class MonitorList(BaseModel):
    monitors: list[MonitorBody]
    limit: int = Field(description="Monitors a subscription may have at once.")


def _when(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


def _body(view: monitor_cases.MonitorView) -> dict[str, object]:
    return {
        "id": view.id,
        "url": view.url,
        "interval": view.interval,
        "callback_url": view.callback_url,
        "created_at": iso(view.created_at),
        "next_run_at": iso(view.next_run_at),
        "last_run_at": _when(view.last_run_at),
        "last_status": view.last_status,
        "last_report_id": view.last_report_id,
    }


@router.post(
    "/api/monitors",
    summary="Monitor a site (X-API-Key)",
    status_code=201,
    response_model=MonitorCreated,
    responses=errors(
        400,
        401,
        403,
        409,
        e409=f"The site is monitored already, or the subscription has {monitor_cases.MAX_MONITORS} monitors.",
    ),
)
async def add_monitor(
    body: MonitorRequest, ctx: Context, key: Annotated[str | None, Security(api_key_header)] = None
) -> JSONResponse:
    """The first run is due at once, then every day or week. Each run uses one of the month's Pro scans;
    when they are used up, runs are skipped and you are told once that month. With `callback_url`, the
    answer carries `callback_secret` the first time the key's secret is shown (as POST /api/scans does)."""
    subscriber = await subscriber_for(ctx, key)
    try:
        view = await monitor_cases.add(ctx, subscriber, body.url, body.interval, body.callback_url)
    except monitor_cases.AlreadyMonitored as exc:
        raise ApiError(409, f"You monitor {exc} already.") from None
    except monitor_cases.TooManyMonitors:
        raise ApiError(
            409,
            f"A subscription can monitor at most {monitor_cases.MAX_MONITORS} sites; remove one first.",
        ) from None
    except CallbacksUnavailable as exc:
        raise ApiError(400, sentence(str(exc))) from None
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    created = _body(view)
    if view.callback_secret is not None:
        created["callback_secret"] = view.callback_secret
    return JSONResponse(created, status_code=201)


@router.get(
    "/api/monitors",
    summary="Your monitors (X-API-Key)",
    response_model=MonitorList,
    responses=errors(401, 403),
)
async def list_monitors(ctx: Context, key: Annotated[str | None, Security(api_key_header)] = None) -> JSONResponse:
    subscriber = await subscriber_for(ctx, key)
    views = await monitor_cases.listed(ctx, subscriber)
    return JSONResponse({"monitors": [_body(v) for v in views], "limit": monitor_cases.MAX_MONITORS})


@router.delete(
    "/api/monitors/{monitor_id}",
    summary="Stop monitoring a site (X-API-Key)",
    status_code=204,
    response_class=Response,
    responses=errors(401, 403, 404, e404=NOT_FOUND),
)
async def remove_monitor(
    monitor_id: int, ctx: Context, key: Annotated[str | None, Security(api_key_header)] = None
) -> Response:
    """Its past runs stay in the history."""
    subscriber = await subscriber_for(ctx, key)
    if not await monitor_cases.remove(ctx, subscriber, monitor_id):
        raise ApiError(404, NOT_FOUND)
    return Response(status_code=204)
