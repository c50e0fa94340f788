"""The development sandbox's checkout page: `/api/sandbox/checkout/<reference>` (not part of the spec).

In development, a provider without keys is served by the sandbox (`websec_app/services/payments/sandbox.py`):
checkouts point here instead of Razorpay or Stripe. The page says SANDBOX in large letters, and its
buttons play the provider (pay; for subscriptions also renew, fail a renewal, cancel) through the same
code as real webhooks. After Pay the browser is sent back as the provider sends it (303): to the success
page with Stripe's session id, or with Razorpay's payment id, order (or subscription) id and signature, which
the app then confirms as it confirms Razorpay's. In production the sandbox is refused, and these routes
answer 404.

Unless the operator opted in with WEBSEC_PAYMENTS_SANDBOX=on, the page answers only clients on this machine
(issue 12): the socket peer is a loopback address and no proxy forwarded the request. Its Pay button issues
a paid item without a payment, so nobody else may press it.
"""

from __future__ import annotations

import html
import ipaddress
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from websec_app.services.payments import Outcome, PaymentService, UnknownCheckout
from websec_app.services.prices import Product, price_for
from websec_app.store.models import SUBSCRIPTION_PENDING
from websec_app.store.payments import STATUS_PAID

from ..context import Context, Runtime

router = APIRouter(tags=["development sandbox"], include_in_schema=False)

_ACTIONS = {
    "pay": "Pay (sandbox)",
    "renew": "Simulate a renewal",
    "fail_renewal": "Simulate a failed renewal",
    "cancel": "Cancel the subscription",
}


def _service(ctx: Runtime, request: Request) -> PaymentService:
    if ctx.payments is None or ctx.settings.is_production:
        raise UnknownCheckout("There is no sandbox on this server.")
    if ctx.settings.sandbox_local_only and not _from_this_machine(request):
        raise UnknownCheckout("There is no sandbox on this server.")
    return ctx.payments


def _from_this_machine(request: Request) -> bool:
    """The peer is loopback and no proxy is in between (a proxy on this host would make everyone loopback)."""
    if any(name in request.headers for name in ("x-forwarded-for", "forwarded", "x-real-ip")):
        return False
    peer = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False


def _page(service: PaymentService, reference: str, outcome: Outcome | None) -> HTMLResponse:
    checkout, subscription_status = service.sandbox_checkout(reference)
    price = price_for(checkout.product, checkout.provider)
    esc = html.escape
    rows = [
        ("Product", price.name),
        ("Provider", f"{checkout.provider} (simulated)"),
        ("Price", price.display),
        ("Email", checkout.email),
        ("Payment", checkout.status),
    ]
    if subscription_status:
        rows.append(("Subscription", subscription_status))
    back = service.sandbox_return_url(reference)
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in rows)
    if checkout.product == Product.SUBSCRIPTION and subscription_status not in (None, SUBSCRIPTION_PENDING):
        actions = ["renew", "fail_renewal", "cancel"]
    elif checkout.status != STATUS_PAID and checkout.provider_payment_id is None:
        actions = ["pay"]
    else:
        actions = []
    buttons = "".join(
        f'<button name="action" value="{a}">{esc(_ACTIONS[a])}</button> ' for a in actions if a in _ACTIONS
    )
    result = ""
    if outcome is not None:
        result = f"<p class=result><b>{esc(outcome.name)}</b>: {esc(outcome.detail)}</p>"
        confirmation = outcome.confirmation
        if confirmation is not None:
            result += f"<p>{esc(confirmation.message)}</p>"
            if confirmation.token:
                result += f"<p>Token: <code>{esc(confirmation.token)}</code></p>"
        result += (
            "<p>Emails go to the outbox: the files in <code>var/outbox/</code> when WEBSEC_SMTP_URL is not set.</p>"
        )
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SANDBOX checkout: {esc(price.name)}</title>
<meta name="robots" content="noindex">
<style>
body {{ font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; color: #1f2328; }}
.banner {{ background: repeating-linear-gradient(45deg, #ffd33d, #ffd33d 12px, #1f2328 12px, #1f2328 24px);
  padding: .6rem; }}
.banner div {{ background: #fff8c5; padding: .8rem; font-weight: 700; text-align: center; }}
table {{ border-collapse: collapse; margin: 1rem 0; }} th, td {{ text-align: left; padding: .3rem .8rem; }}
button {{ font-size: 1rem; padding: .5rem 1rem; margin: .2rem 0; }}
.result {{ background: #dafbe1; padding: .6rem; }}
</style></head><body>
<div class="banner"><div>SANDBOX: no real money moves. Development only; refused in production.</div></div>
<h1>{esc(price.name)}</h1>
<table>{table}</table>
{result}
<form method="post">{buttons}</form>
{f'<p><a href="{esc(back)}">Return to websec</a> (as the provider would send you back)</p>' if back else ""}
<p><a href="/">Back to websec</a></p>
</body></html>"""
    return HTMLResponse(body)


@router.get("/api/sandbox/checkout/{reference}", response_class=HTMLResponse)
async def sandbox_page(reference: str, request: Request, ctx: Context) -> HTMLResponse:
    service = _service(ctx, request)
    return await anyio.to_thread.run_sync(_page, service, reference, None)


@router.post("/api/sandbox/checkout/{reference}", response_class=HTMLResponse)
async def sandbox_action(reference: str, action: Annotated[str, Form()], request: Request, ctx: Context) -> Response:
    """A button: Pay sends the browser back to the app as the provider would (303); the others show the page."""
    service = _service(ctx, request)

    def run() -> Response:
        outcome = service.complete_sandbox_checkout(reference, action)
        back = service.sandbox_return_url(reference) if action == "pay" else None
        if back is not None:
            return RedirectResponse(back, status_code=303)
        return _page(service, reference, outcome)

    return await anyio.to_thread.run_sync(run)
