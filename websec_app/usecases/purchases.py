"""Buying and using a paid product, for every interface: start a checkout, confirm it, read it back, and
generate the paid compliance report (spec 4.6, 4.7, 4.8).

Everything that talks to a provider, issues a token or sends mail is the runtime's PaymentService; this
module is what a user does with it: it checks the request (an email to send to, a public URL), runs the
service's blocking provider calls in a worker thread, and runs the compliance scan as a job of the task
engine like every other scan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from sqlmodel import Session

from websec_app.email_address import InvalidEmail, checked_email
from websec_app.scanner import parse_target
from websec_app.scanner.fetch.guard import refuse_known_private
from websec_app.services.payments import PROVIDERS, PaymentNotVerified, PaymentsUnavailable
from websec_app.services.prices import Product
from websec_app.store.purchases import CheckoutRecord, find_checkout

from . import jobs
from .runtime import Runtime
from .scans import Progress, no_progress

if TYPE_CHECKING:
    from websec_app.services.payments import CheckoutStart, Confirmation, GeneratedReport, Outcome, PaymentService


def payments(runtime: Runtime) -> PaymentService:
    """The runtime's payment service; PaymentsUnavailable (503) when this process has none."""
    if runtime.payments is None:
        raise PaymentsUnavailable("Payments are not available on this server. Please try again later.")
    return runtime.payments


def _email(address: str, what: str) -> str:
    """The one address check (websec_app/email_address.py), for the API and the UI's forms alike."""
    try:
        return checked_email(address)
    except InvalidEmail:
        raise PaymentNotVerified(f"Enter the email address {what} should be sent to.") from None


async def start_checkout(
    runtime: Runtime,
    product: Product,
    provider: str,
    email: str,
    url: str | None = None,
    *,
    success_url: str | None = None,
    cancel_url: str | None = None,
    client: str | None = None,
) -> CheckoutStart:
    """A Razorpay order or subscription, a Stripe Checkout Session, or a sandbox page. A compliance report
    needs a public URL (InvalidTarget when it is missing or malformed, or TargetRefused for an address or
    localhost name that is not public or a port browsers refuse, before anything is created). With `client` (the
    caller's address) the start counts against its limit (TooManyRequests, 429)."""
    if product is Product.COMPLIANCE_REPORT:
        # Refused before the buyer pays for a report its scan would refuse (spec 7: 400), an empty URL too.
        target = parse_target(url or "")
        refuse_known_private(target.host, port=target.port, allow_private=runtime.settings.allow_private_targets)
        url = target.url
    address = _email(email, "the purchase")
    service = payments(runtime)
    if client is not None:
        service.admit_checkout(client)
    return await anyio.to_thread.run_sync(
        lambda: service.start_checkout(
            product, provider, address, url or None, success_url=success_url, cancel_url=cancel_url
        )
    )


async def confirm_razorpay(runtime: Runtime, product: Product, response: Mapping[str, Any]) -> Confirmation:
    """Checkout.js's success response: the signature and the payment are checked with Razorpay, then the
    purchase is fulfilled (token, key or subscription)."""
    service = payments(runtime)
    payment_id = str(response.get("razorpay_payment_id") or "")
    signature = str(response.get("razorpay_signature") or "")
    if product is Product.SUBSCRIPTION:
        subscription_id = str(response.get("razorpay_subscription_id") or "")
        return await anyio.to_thread.run_sync(
            lambda: service.confirm_razorpay_subscription(
                subscription_id=subscription_id, payment_id=payment_id, signature=signature
            )
        )
    order_id = str(response.get("razorpay_order_id") or "")
    return await anyio.to_thread.run_sync(
        lambda: service.confirm_razorpay_payment(order_id=order_id, payment_id=payment_id, signature=signature)
    )


async def verify_one_time(runtime: Runtime, payment_id: str, email: str) -> Confirmation:
    """Spec 4.7: a captured one-time scan payment, checked with the provider, becomes a scan token (emailed
    too). Raises PaymentNotVerified, TokenAlreadyIssued or PaymentError."""
    service = payments(runtime)
    return await anyio.to_thread.run_sync(lambda: service.verify_one_time_payment(payment_id, email))


async def confirm_stripe_return(runtime: Runtime, session_id: str) -> Confirmation | None:
    """The buyer is back from Stripe with a Checkout Session id: Stripe is asked, and a paid session fulfilled
    as its webhook would (first wins). None: not paid yet. Raises PaymentError when Stripe cannot be reached."""
    service = payments(runtime)
    return await anyio.to_thread.run_sync(lambda: service.confirm_stripe_return(session_id))


async def checkout_status(runtime: Runtime, reference: str) -> CheckoutRecord | None:
    """The checkout a return page is about (Stripe session id or sandbox reference), as the store has it."""

    def find(session: Session) -> CheckoutRecord | None:
        for provider in PROVIDERS:
            record = find_checkout(session, provider, reference)
            if record is not None:
                return record
        return None

    if not reference or len(reference) > 255:
        return None
    return await runtime.db(find)


async def compliance_report(
    runtime: Runtime,
    token: str,
    url: str,
    email: str,
    progress: Progress = no_progress,
    *,
    client: str | None = None,
) -> GeneratedReport:
    """Spec 4.8: for a paid token, scan the site (a job of the task engine), render the compliance PDF and email it
    (the token used up together with queuing the email). The payment is checked and the token reserved
    before the scan takes a slot (issue 12): an unpaid or busy token never waits in the scan line, and of
    racing requests one scans. Raises store.TokenRejected (unknown, unpaid, used), TooManyRequests,
    ScannerBusy, the scanner's errors or PdfRenderError; the token stays usable unless the email was queued."""
    parse_target(url)
    address = _email(email, "the report")
    service = payments(runtime)

    async def scan_as_job(target_url: str) -> Mapping[str, Any]:
        # A worker scans and records the scan in the history with the job's end (usecases/jobs.py).
        return await jobs.compliance_scan(runtime, target_url, progress)

    progress("quota")
    return await service.generate_compliance_report(token, url=url, email=address, scan=scan_as_job, client=client)


async def fulfil_webhook(runtime: Runtime, provider: str, body: bytes, headers: Mapping[str, str]) -> Outcome:
    """A provider's webhook: verified with the provider's own signature code over the exact bytes, recorded
    once (replays answer `duplicate`), and what it says applied: tokens and keys issued, renewals, refunds and
    disputes. Raises the provider's signature error (400) or PaymentError (502 / 503)."""
    service = payments(runtime)
    return await anyio.to_thread.run_sync(lambda: service.handle_webhook(provider, body, headers))


__all__ = [
    "fulfil_webhook",
    "checkout_status",
    "compliance_report",
    "confirm_razorpay",
    "confirm_stripe_return",
    "payments",
    "start_checkout",
    "verify_one_time",
]
