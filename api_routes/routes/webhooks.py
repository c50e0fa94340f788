"""Provider webhooks: `POST /api/webhooks/stripe` and `POST /api/webhooks/razorpay` (issue 5; spec 6).

The raw body is handed to the payment service untouched: both providers sign the exact bytes
they sent, so the body must not be parsed and re-serialised before the signature is checked.
A bad signature is 400 (the provider shows it in its dashboard); a provider that must be asked
and cannot be is 502 (the provider delivers the event again); everything else is 200 with
what processing did, including events that were duplicates, ignored, or refused for a wrong
amount: answering 2xx stops the provider from retrying an event that will never succeed, and
the outcome is recorded in `webhook_events` for operators.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from websec_app.services.payments import PROVIDER_A, PROVIDER_B
from websec_app.usecases import purchases

from ..context import Context, Runtime
from ..openapi import errors
from ..schemas import WebhookResult

router = APIRouter(tags=["provider webhooks"])


async def _handle(provider: str, request: Request, ctx: Runtime) -> WebhookResult:
    body = await request.body()
    headers = {name.lower(): value for name, value in request.headers.items()}
    outcome = await purchases.fulfil_webhook(ctx, provider, body, headers)
    return WebhookResult(received=True, outcome=outcome.name)


_RESPONSES = errors(
    400,
    503,
    502,
    e400="The signature does not verify (or the body is not an event).",
    e502=(
        "The provider could not be reached to complete the event (Stripe: an invoice's payments; both: the"
        " subscription's current status, when another event of the same second said otherwise). The event is not"
        " recorded, so the provider's retry is processed."
    ),
    e503="The provider is not configured.",
)


@router.post("/api/webhooks/stripe", summary="Stripe webhook (Stripe-Signature)", responses=_RESPONSES)
async def stripe_webhook(request: Request, ctx: Context) -> WebhookResult:
    """Verified with `stripe.Webhook.construct_event` and `STRIPE_WEBHOOK_SECRET`. Handles
    checkout.session.completed / async_payment_succeeded (one-time tokens emailed, Pro key emailed),
    invoice.paid (renewal), invoice.payment_failed, customer.subscription.updated / deleted, charge.refunded
    (unused tokens revoked) and charge.dispute.created (unused tokens revoked, the subscription's key suspended)."""
    return await _handle(PROVIDER_B, request, ctx)


@router.post("/api/webhooks/razorpay", summary="Razorpay webhook (X-Razorpay-Signature)", responses=_RESPONSES)
async def razorpay_webhook(request: Request, ctx: Context) -> WebhookResult:
    """Verified with `RAZORPAY_WEBHOOK_SECRET` (HMAC-SHA256 of the body). Handles payment.captured and order.paid
    (one-time products), subscription.charged (start and renewal), subscription.pending / halted / cancelled /
    completed / activated / resumed / paused, refund.processed (unused tokens revoked) and payment.dispute.created
    (unused tokens revoked, the subscription's key suspended)."""
    return await _handle(PROVIDER_A, request, ctx)
