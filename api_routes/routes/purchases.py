"""The one-time products (spec 4.6, 4.7, 4.8): parse, call the payment service, shape the response.

What a buyer does is `websec_app.usecases.purchases` (the web UI calls the same use cases); this module
translates requests and results, and its errors into statuses.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request

from websec_app.services.payments import TooManyRequests
from websec_app.services.pdf import PdfRenderError
from websec_app.services.prices import Product
from websec_app.store import TokenAlreadyIssued, TokenRejected
from websec_app.store.clients import quota_key
from websec_app.usecases import purchases

from ..context import Context
from ..errors import COMPLIANCE_TOKEN_MESSAGES, ApiError, token_error
from ..openapi import errors
from ..schemas import (
    GenerateRequest,
    GenerateResult,
    PayRequest,
    PayResult,
    VerifyOneTimeRequest,
    VerifyOneTimeResult,
)
from .scans import client_address

log = logging.getLogger(__name__)
router = APIRouter(tags=["one-time products"])

_E429 = "Too many requests from this address: retry after `Retry-After` seconds."
_E402 = "The payment could not be verified with the provider (not found, not captured, or for another product)."
_E503 = "Payments with this provider are not available on this server."


def _too_many(exc: TooManyRequests) -> ApiError:
    """429 with Retry-After (RFC 6585 section 4, RFC 9110 section 10.2.3)."""
    return ApiError(429, str(exc), {"Retry-After": str(exc.retry_after)})


@router.post(
    "/api/compliance-report/pay",
    summary="Start paying for a compliance report",
    response_model=PayResult,
    response_model_exclude_none=True,
    responses=errors(
        400, 429, 500, 502, 503, e429=_E429, e502="The payment provider could not be reached.", e503=_E503
    ),
)
async def pay(body: PayRequest, request: Request, ctx: Context) -> PayResult:
    """Creates the provider order. Provider A (razorpay): `order_id`, `amount` (paise, 24900), `key` and the
    payment `token` for the generate endpoint, usable once the payment is verified. Provider B (stripe):
    `{"checkout_url": ...}`, the hosted checkout page; the token is emailed once Stripe confirms the payment.
    In development without provider keys the sandbox answers (`sandbox: true`, `checkout_url` to a local page).
    Each client address may start a limited number of payments an hour (429 with Retry-After past it)."""
    client = quota_key(client_address(request, ctx.trusted_proxies))
    try:
        start = await purchases.start_checkout(
            ctx, Product.COMPLIANCE_REPORT, body.provider, body.email, body.url, client=client
        )
    except TooManyRequests as exc:
        raise _too_many(exc) from None
    if body.provider == "stripe":
        return PayResult(checkout_url=start.checkout_url, sandbox=start.sandbox or None)
    return PayResult(
        order_id=start.reference,
        amount=start.amount,
        key=str((start.razorpay_options or {}).get("key", "")) or None,
        token=start.token,
        checkout_url=start.checkout_url if start.sandbox else None,
        sandbox=start.sandbox or None,
    )


@router.post(
    "/api/verify-one-time",
    summary="Exchange a verified one-time payment for a scan token",
    response_model=VerifyOneTimeResult,
    responses=errors(
        400,
        402,
        409,
        500,
        502,
        503,
        e402=_E402 + " Or the email is not the one the payment was made with.",
        e409="A one-time scan token was already issued for this payment (it was emailed to the buyer).",
        e502="The payment provider could not be reached.",
        e503=_E503,
    ),
)
async def verify_one_time(body: VerifyOneTimeRequest, ctx: Context) -> VerifyOneTimeResult:
    """Verifies a provider A (razorpay) one-time scan payment with the provider (captured, amount, currency, order)
    and returns a one-time scan token (valid 24 hours, single use), also emailed. `email` must be the address the
    order was made with (any case; 402 otherwise), and the token is emailed there. A `payment_id` that is not
    `pay_` and 14 letters and digits is 400, before the provider is asked."""
    try:
        confirmation = await purchases.verify_one_time(ctx, body.payment_id, body.email)
    except TokenAlreadyIssued:
        raise ApiError(
            409,
            "A one-time scan token was already issued for this payment and emailed to the buyer. "
            "Each payment buys one token.",
        ) from None
    if confirmation.token is None:  # pragma: no cover - verify_one_time_payment always returns one
        raise ApiError(500, "The payment was verified but no token was issued. Please contact support.")
    return VerifyOneTimeResult(ok=True, token=confirmation.token)


@router.post(
    "/api/compliance-report/generate",
    summary="Generate and email the compliance report (payment token)",
    response_model=GenerateResult,
    responses=errors(
        400,
        403,
        429,
        500,
        502,
        503,
        e403="The payment token is unknown, already used (or being used by another request), or its payment is "
        "not confirmed.",
        e429=_E429,
        e500="The report could not be generated (the token stays usable).",
        e502="The target site or the payment provider could not be reached (the token stays usable).",
        e503=_E503 + " Or the scanner is at capacity: retry after `Retry-After` seconds (the token stays usable).",
    ),
)
async def generate(body: GenerateRequest, request: Request, ctx: Context) -> GenerateResult:
    """Runs a full Pro-level scan, maps it to OWASP Top 10 2021, PCI-DSS v4.0, GDPR Art. 32 and ISO 27001:2022,
    and emails the PDF. The token is used up together with queuing the email, in one transaction: a scan that
    fails (502) or a report that cannot be rendered (500) leaves it usable, and an email the mail server does not
    take at once is retried from the outbox until it is delivered."""
    client = quota_key(client_address(request, ctx.trusted_proxies))
    try:
        generated = await purchases.compliance_report(ctx, body.token, body.url, body.email, client=client)
    except TooManyRequests as exc:
        raise _too_many(exc) from None
    except TokenRejected as exc:
        raise token_error(exc, COMPLIANCE_TOKEN_MESSAGES) from None
    except PdfRenderError as exc:
        log.exception("compliance PDF rendering failed for %s", body.url)
        raise ApiError(500, "The compliance report could not be generated. Your token is still valid.") from exc
    return GenerateResult(ok=True, message=generated.message)
