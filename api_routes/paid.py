"""The one-time products (spec 4.6, 4.7, 4.8): request validation, tokens and payments in the store.

Everything that talks to a provider or sends email goes through the `PaymentGateway` and
`Fulfilment` protocols of `websec_app.services.payments` (implemented in issue 5). While
they are not configured these endpoints answer 503.
"""

from __future__ import annotations

import logging

import anyio.to_thread
from fastapi import APIRouter

from websec_app.scanner import ScanReport
from websec_app.services.payments import (
    DeliveryFailed,
    Fulfilment,
    PaymentGateway,
    PaymentsUnavailable,
    VerifiedPayment,
)
from websec_app.store import (
    PRODUCT_COMPLIANCE_REPORT,
    PRODUCT_ONE_TIME_SCAN,
    SCAN_COMPLIANCE,
    TokenAlreadyIssued,
    TokenProblem,
    TokenRejected,
    claim_compliance_token,
    find_compliance_token,
    issue_compliance_token,
    issue_scan_token,
    mark_compliance_token_paid,
    record_payment,
    release_compliance_token,
)
from websec_app.store.payments import STATUS_PAID

from .context import ApiContext, Context
from .docs import errors
from .errors import COMPLIANCE_TOKEN_MESSAGES, ApiError, token_error
from .metering import released_on_failure, save_record, target_of
from .schemas import (
    GenerateRequest,
    GenerateResult,
    PayRequest,
    PayResult,
    VerifyOneTimeRequest,
    VerifyOneTimeResult,
)

log = logging.getLogger(__name__)
router = APIRouter(tags=["one-time products"])

_E402 = "The payment could not be verified with the provider (not found, not captured, or for another product)."
_E503 = "Payments or email delivery are not configured on this server."


def _gateway(ctx: ApiContext) -> PaymentGateway:
    if ctx.payments is None:
        raise PaymentsUnavailable("Payments are not available on this server yet. Please try again later.")
    return ctx.payments


def _fulfilment(ctx: ApiContext) -> Fulfilment:
    if ctx.fulfilment is None:
        raise PaymentsUnavailable("Report delivery is not available on this server yet. Please try again later.")
    return ctx.fulfilment


@router.post(
    "/api/compliance-report/pay",
    summary="Start paying for a compliance report",
    response_model=PayResult,
    response_model_exclude_none=True,
    responses=errors(400, 500, 502, 503, e502="The payment provider could not be reached.", e503=_E503),
)
async def pay(body: PayRequest, ctx: Context) -> PayResult:
    """Creates the provider order. Provider A (razorpay): `order_id`, `amount` (paise), `key` and the payment
    `token` for the generate endpoint. Provider B (stripe): `checkout_url`; the token is emailed after payment."""
    target = target_of(body.url)
    gateway = _gateway(ctx)
    checkout = await anyio.to_thread.run_sync(
        lambda: gateway.start_compliance_checkout(provider=body.provider, email=body.email, url=target.url)
    )
    fields = dict(checkout.fields)
    if checkout.token_in_response:
        issued = await ctx.db(
            issue_compliance_token,
            provider=body.provider,
            email=body.email,
            url=target.url,
            now=ctx.now(),
            provider_order_id=checkout.provider_order_id,
        )
        fields["token"] = issued.token
    return PayResult(**fields)


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
        e402=_E402,
        e409="A one-time scan token was already issued for this payment (it was emailed to the buyer).",
        e502="The payment provider could not be reached.",
        e503=_E503,
    ),
)
async def verify_one_time(body: VerifyOneTimeRequest, ctx: Context) -> VerifyOneTimeResult:
    """Verifies a provider A one-time payment and returns a one-time scan token (valid 24 hours, single use)."""
    gateway = _gateway(ctx)
    verified: VerifiedPayment = await anyio.to_thread.run_sync(gateway.verify_one_time_payment, body.payment_id)
    now = ctx.now()
    payment, _ = await ctx.db(
        record_payment,
        provider=verified.provider,
        product=PRODUCT_ONE_TIME_SCAN,
        email=verified.email or body.email,
        amount=verified.amount,
        currency=verified.currency,
        status=STATUS_PAID,
        now=now,
        provider_order_id=verified.provider_order_id,
        provider_payment_id=verified.provider_payment_id or body.payment_id,
    )
    try:
        issued = await ctx.db(issue_scan_token, email=body.email, now=now, payment_id=payment.id)
    except TokenAlreadyIssued:
        raise ApiError(
            409,
            "A one-time scan token was already issued for this payment and emailed to the buyer. "
            "Each payment buys one token.",
        ) from None
    if ctx.fulfilment is not None:
        try:
            await anyio.to_thread.run_sync(
                lambda: _fulfilment(ctx).send_scan_token(email=body.email, token=issued.token)
            )
        except DeliveryFailed:  # the token is in this response; the email is a convenience copy
            log.warning("could not email the one-time scan token for payment %s", payment.id)
    return VerifyOneTimeResult(ok=True, token=issued.token)


def _confirm_payment(ctx: ApiContext, token: str) -> None:
    """Make sure a compliance token's payment is recorded, asking the provider if needed (worker thread)."""
    row = ctx.db_sync(find_compliance_token, token)
    if row is None:
        raise token_error(TokenRejected(TokenProblem.UNKNOWN), COMPLIANCE_TOKEN_MESSAGES)
    if row.used_at is not None:
        raise token_error(TokenRejected(TokenProblem.USED, row.used_at), COMPLIANCE_TOKEN_MESSAGES)
    if row.paid_at is not None or row.id is None:
        return
    if row.provider_order_id is None:
        raise token_error(TokenRejected(TokenProblem.UNPAID), COMPLIANCE_TOKEN_MESSAGES)
    verified = _gateway(ctx).confirm_compliance_payment(provider=row.provider, provider_order_id=row.provider_order_id)
    if verified is None:
        raise token_error(TokenRejected(TokenProblem.UNPAID), COMPLIANCE_TOKEN_MESSAGES)
    now = ctx.now()
    payment, _ = ctx.db_sync(
        record_payment,
        provider=verified.provider,
        product=PRODUCT_COMPLIANCE_REPORT,
        email=verified.email or row.email,
        amount=verified.amount,
        currency=verified.currency,
        status=STATUS_PAID,
        now=now,
        provider_order_id=verified.provider_order_id or row.provider_order_id,
        provider_payment_id=verified.provider_payment_id,
    )
    ctx.db_sync(mark_compliance_token_paid, row.id, now, payment.id)


@router.post(
    "/api/compliance-report/generate",
    summary="Generate and email the compliance report (payment token)",
    response_model=GenerateResult,
    responses=errors(
        400,
        403,
        500,
        502,
        503,
        e403="The payment token is unknown, already used, or its payment is not confirmed.",
        e502="The target site could not be reached, the provider could not be reached, or the email could not be "
        "sent (the token stays usable).",
        e503=_E503,
    ),
)
async def generate(body: GenerateRequest, ctx: Context) -> GenerateResult:
    """Runs a full Pro-level scan, maps it to OWASP Top 10 2021, PCI-DSS v4.0, GDPR Art. 32 and ISO 27001:2022,
    and emails the PDF. Uses up the payment token; if the scan or the email fails, the token stays usable."""
    target = target_of(body.url)
    fulfilment = _fulfilment(ctx)
    await anyio.to_thread.run_sync(_confirm_payment, ctx, body.token)
    now = ctx.now()
    try:
        claim = await ctx.db(claim_compliance_token, body.token, now)
    except TokenRejected as exc:
        raise token_error(exc, COMPLIANCE_TOKEN_MESSAGES) from None
    async with released_on_failure(ctx, release_compliance_token, claim):
        report: ScanReport = await ctx.scanner(body.url, ctx.settings)
        content = report.to_dict(pro=True, include_fix=True)
        await anyio.to_thread.run_sync(
            lambda: fulfilment.send_compliance_report(email=body.email, url=report.url, report=content)
        )
    await save_record(ctx, report, SCAN_COMPLIANCE, now)
    return GenerateResult(ok=True, message=f"The compliance report for {target.host} was emailed to {body.email}.")
