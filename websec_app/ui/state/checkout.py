"""Checkout: pick a currency, enter an email, pay with Razorpay (in the page) or Stripe (redirect), see the result.

The handlers call `ui/purchases.py` (the payment service); this module only decides what the browser
does next: open Razorpay's Checkout.js with the options the service made, follow a redirect, or show
what the confirmation said. The return pages read the checkout back from the store.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import reflex as rx
from reflex.utils.format import format_queue_events

from websec_app.services.email.links import where_used
from websec_app.services.payments import ACTION_RAZORPAY, PROVIDER_B, Confirmation
from websec_app.services.prices import Product
from websec_app.usecases import purchases as buying

from .. import purchases
from ..messages import describe, email_field_problem, url_field_problem
from ..runtime import current_runtime
from .scan import ScanState

log = logging.getLogger(__name__)

#: The return page looks for the provider's confirmation this often, this many times (about half a minute).
_WATCH_SECONDS = 1.0
_WATCH_ROUNDS = 30
#: While it waits, it asks Stripe itself every this many rounds (at most 6 calls per page opened).
_ASK_STRIPE_EVERY = 5

#: Razorpay's hosted script (https://razorpay.com/docs/payments/payment-gateway/web-integration/standard/).
#: Loaded only when a buyer pays in INR, so no other page waits for it.
RAZORPAY_CHECKOUT_JS = "https://checkout.razorpay.com/v1/checkout.js"

#: The checkout form's fields that can say what is wrong with them (components/field.py).
_NO_FIELD_ERRORS = {"checkout-email": "", "checkout-url": ""}
#: The button that leads from a paid checkout to where the purchase is used.
_NEXT_LABEL = {
    Product.SUBSCRIPTION.value: "Open the Pro area",
    Product.ONE_TIME_SCAN.value: "Start my scan now",
    Product.COMPLIANCE_REPORT.value: "Generate my report",
}
#: Under it, when the token is not in the link (it was emailed, and this page never saw it).
_FROM_THE_EMAIL = {
    Product.SUBSCRIPTION.value: "Sign in there with the API key from your email.",
    Product.ONE_TIME_SCAN.value: "Open the link in your email (it fills in the token), or paste the token there.",
    Product.COMPLIANCE_REPORT.value: "Open the link in your email (it fills in the form), or paste the token there.",
}

#: What the buyer receives, per product, once paid (return pages).
_DELIVERY = {
    Product.SUBSCRIPTION.value: "Your API key",
    Product.ONE_TIME_SCAN.value: "Your one-time scan token",
    Product.COMPLIANCE_REPORT.value: "Your compliance report token",
}

#: Opens Checkout.js with `options` and calls `done` once with what happened: {"status": "paid", razorpay_*
#: ids} / "dismissed" / "failed" / "unavailable". This text is compiled into the page's own JS module (served
#: from 'self'), not sent over the socket: `rx.call_script` runs the code it sends, and its callback, with
#: `eval` (reflex_base/.templates/web/utils/state.js, `_call_script`), which the CSP would have to allow.
_OPEN_RAZORPAY: rx.vars.FunctionStringVar[Any] = rx.vars.FunctionStringVar.create(
    """((options, src, done) => {
  let settled = false;
  const finish = (result) => { if (!settled) { settled = true; done(result); } };
  const open = () => {
    const checkout = new window.Razorpay(Object.assign({}, options, {
      handler: (response) => finish(Object.assign({status: "paid"}, response)),
      modal: {ondismiss: () => finish({status: "dismissed"})},
    }));
    checkout.on("payment.failed", (response) =>
      finish({status: "failed", reason: (response.error && response.error.description) || ""}));
    checkout.open();
  };
  if (window.Razorpay) { open(); return; }
  const script = document.createElement("script");
  script.src = src;
  script.onload = open;
  script.onerror = () => finish({status: "unavailable"});
  document.head.appendChild(script);
})"""
)
#: A full page load, not Reflex's client-side navigation: the sandbox page is on this host but is not a page of
#: the UI (`rx.redirect` would route it inside the app and show "not found").
_LEAVE_FOR: rx.vars.FunctionStringVar[Any] = rx.vars.FunctionStringVar.create("((url) => window.location.assign(url))")


class CheckoutState(rx.State):
    product: str = ""  # Product value of the page
    currency: str = "INR"
    sandbox: bool = False
    busy: bool = False
    problem_title: str = ""
    problem_text: str = ""
    field_errors: dict[str, str] = _NO_FIELD_ERRORS
    #: After a payment confirmed in the page (Razorpay): what the buyer got.
    done: bool = False
    done_text: str = ""
    done_product: str = ""
    #: Where the purchase is used (`/pro`, the scan page or the compliance form, a token in the fragment), the
    #: button's label, and what to do when the link cannot carry the token ("" when it does).
    next_href: str = ""
    next_label: str = ""
    next_note: str = ""
    #: Return pages (`/checkout/success`, `/checkout/cancelled`).
    return_status: str = ""  # paid, pending, unknown, failed
    return_title: str = ""
    return_text: str = ""
    return_product_slug: str = ""
    #: The checkout started in this tab: its email, website and compliance token (Razorpay compliance only).
    _email: str = ""
    _url: str = ""
    _compliance_token: str = ""
    _reference: str = ""
    #: What the browser does next: pages/checkout.py runs `open_razorpay()` / `leave()` when one is set.
    razorpay_options: dict[str, Any] = {}
    leave_to: str = ""

    @rx.var
    def provider_label(self) -> str:
        return "Razorpay" if self.currency == "INR" else "Stripe"

    @rx.var
    def razorpay_opening(self) -> bool:
        return bool(self.razorpay_options)

    # -- the checkout page ---------------------------------------------------------------------------

    @rx.event
    def open_checkout(self) -> None:
        """on_load of `/checkout/<product>`: which product, which currency (from `?currency=`, else kept)."""
        slug = self.router.url.path.rstrip("/").rsplit("/", 1)[-1]
        product = purchases.PRODUCT_SLUGS.get(slug)
        self.product = product.value if product is not None else ""
        currency = str(self.router.url.query_parameters.get("currency", "") or "").upper()
        if currency in purchases.CURRENCIES:
            self.currency = currency
        self.busy = self.done = False
        self.problem_title = self.problem_text = self.done_text = self.leave_to = ""
        self.next_href = self.next_label = self.next_note = ""
        self.field_errors = _NO_FIELD_ERRORS
        self.razorpay_options = {}
        self.sandbox = purchases.sandbox_serves(current_runtime(), self.currency)

    @rx.event
    def set_currency(self, currency: str | list[str]) -> None:
        value = currency if isinstance(currency, str) else (currency[0] if currency else "INR")
        if value in purchases.CURRENCIES:
            self.currency = value
            self.sandbox = purchases.sandbox_serves(current_runtime(), value)

    @rx.event
    async def pay(self, form: dict[str, Any]) -> Any:
        if self.busy or not self.product:
            return None
        product = Product(self.product)
        self.problem_title = self.problem_text = ""
        self._email, self._url = str(form.get("email") or "").strip(), str(form.get("url") or "").strip()
        self.field_errors = {
            "checkout-email": email_field_problem(self._email),
            "checkout-url": url_field_problem(self._url) if product is Product.COMPLIANCE_REPORT else "",
        }
        if any(self.field_errors.values()):
            return None
        self.busy = True
        try:
            start = await purchases.begin(current_runtime(), product, self.currency, self._email, self._url)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message on the page
            self._fail(exc)
            return None
        self._compliance_token = start.token or ""
        if start.action == ACTION_RAZORPAY and start.razorpay_options is not None:
            self.razorpay_options = dict(start.razorpay_options)
            return None
        self.busy = False
        self.leave_to = start.checkout_url or "/checkout/cancelled"
        return None

    @rx.event
    def taken_over(self) -> None:
        """The browser has what it needs to open Razorpay or leave: a reload or Back must not do it again."""
        self.razorpay_options = {}
        self.leave_to = ""

    @rx.event
    async def razorpay_done(self, result: dict[str, Any]) -> Any:
        """What Checkout.js reported: confirm a payment with the service, or say why there is none."""
        status = str((result or {}).get("status", ""))
        if status != "paid":
            self.busy = False
            self.problem_title, self.problem_text = {
                "dismissed": ("Payment cancelled", "The payment window was closed. Nothing was charged."),
                "failed": ("The payment failed", str(result.get("reason") or "Razorpay declined the payment.")),
            }.get(status, ("Razorpay is not reachable", "The payment window could not be opened. Please try again."))
            return None
        try:
            confirmation = await buying.confirm_razorpay(current_runtime(), Product(self.product), result)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
            return None
        self.busy = False
        self.done, self.done_product, self.done_text = True, confirmation.product, confirmation.message
        await self._lead_to_use(confirmation)
        return None

    async def _lead_to_use(self, confirmation: Confirmation) -> None:
        """The way from a confirmed payment to where it is used: the button's link carries the token (in the
        fragment) when this tab has it, and the forms of this tab are filled for a client-side visit too."""
        product = confirmation.product
        token = confirmation.token
        if product == Product.COMPLIANCE_REPORT.value:
            token = token or self._compliance_token or None  # Razorpay: the token came with the order
        self.next_href = where_used(product, token=token, url=self._url, email=self._email or confirmation.email)
        self.next_label = _NEXT_LABEL.get(product, "Continue")
        self.next_note = "" if token or product not in _FROM_THE_EMAIL else _FROM_THE_EMAIL[product]
        if product == Product.SUBSCRIPTION.value:
            self.next_note = _FROM_THE_EMAIL[product]
        scan = await self.get_state(ScanState)
        if product == Product.ONE_TIME_SCAN.value and token:
            scan.token = token
        if product == Product.COMPLIANCE_REPORT.value and token:
            scan.fill_compliance_form(token, self._url, self._email or confirmation.email)

    def _fail(self, exc: Exception) -> None:
        problem = describe(exc, current_runtime().now())
        if problem.kind == "error":
            log.error("checkout of %s failed", self.product, exc_info=exc)
        self.busy = False
        if problem.kind in ("invalid", "refused"):  # the website to assess: said next to its field
            self.field_errors = {**_NO_FIELD_ERRORS, "checkout-url": problem.text}
            return
        self.problem_title, self.problem_text = problem.title, problem.text

    # -- the return pages ----------------------------------------------------------------------------

    @rx.event
    async def open_success(self) -> Any:
        """on_load of `/checkout/success`: Stripe's return (`?session_id=cs_...`), Razorpay's redirect (spec 4.7:
        `?razorpay_payment_id=...&razorpay_order_id=...&razorpay_signature=...`, or `razorpay_subscription_id`;
        the sandbox returns the same way), or `?reference=...` (a sandbox checkout)."""
        params = {name: str(value or "") for name, value in self.router.url.query_parameters.items()}
        self.next_href = self.next_label = self.next_note = ""
        if params.get("razorpay_payment_id"):
            await self._confirm_razorpay_return(params)
            return None
        self._reference = params.get("session_id", "") or params.get("reference", "")
        if params.get("session_id") and await self._confirm_stripe_return():
            return None
        await self._read_return()
        return CheckoutState.watch_success if self.return_status == "pending" else None

    async def _confirm_stripe_return(self) -> bool:
        """Back from Stripe before its webhook: Stripe is asked about the session, and a paid one is fulfilled
        here (first wins), so this page has the token and carries it on. False: the webhook was first (the
        store says paid), Stripe says not yet, or it cannot be asked; the page then reads the store."""
        confirmation = await _ask_stripe(self._reference)
        if confirmation is None:
            return False
        await self._show_confirmed(confirmation)
        return True

    async def _show_confirmed(self, confirmation: Confirmation) -> None:
        self.return_product_slug = purchases.SLUG_OF_PRODUCT.get(confirmation.product, "")
        self.return_status, self.return_title = "paid", "Payment received, thank you"
        self.return_text = confirmation.message
        await self._lead_to_use(confirmation)

    async def _confirm_razorpay_return(self, params: dict[str, str]) -> None:
        """Razorpay sent the buyer back with the payment: confirmed here as Checkout.js's handler confirms it
        (signature, then the payment itself, then fulfilment: first confirmation wins)."""
        self._reference = params.get("razorpay_order_id", "") or params.get("razorpay_subscription_id", "")
        runtime = current_runtime()
        record = await buying.checkout_status(runtime, self._reference)
        if record is None:
            self._unknown_return()
            return
        self.return_product_slug = purchases.SLUG_OF_PRODUCT.get(record.product, "")
        try:
            confirmation = await buying.confirm_razorpay(runtime, Product(record.product), params)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message on the page
            problem = describe(exc, runtime.now())
            if problem.kind == "error":
                log.error("Razorpay return for %s failed", self._reference, exc_info=exc)
            self.return_status, self.return_title, self.return_text = "failed", problem.title, problem.text
            return
        self.return_status, self.return_title = "paid", "Payment received, thank you"
        self.return_text = confirmation.message
        await self._lead_to_use(confirmation)

    def _unknown_return(self) -> None:
        self.return_status, self.return_title = "unknown", "We could not find this purchase"
        self.return_text = "If you paid, the confirmation email is on its way. Otherwise, please try again."
        self.return_product_slug = ""

    @rx.event(background=True)
    async def watch_success(self) -> None:
        """Stripe confirms by webhook, often a moment after the buyer is back: look again for a while."""
        for round_number in range(1, _WATCH_ROUNDS + 1):
            await asyncio.sleep(_WATCH_SECONDS)
            async with self:
                if self.return_status != "pending":
                    return
                await self._read_return()
                reference, pending = self._reference, self.return_status == "pending"
            if pending and round_number % _ASK_STRIPE_EVERY == 0:
                # A webhook that does not come (late, or not set up) does not strand the buyer: Stripe is asked
                # again now and then, outside the state's lock (the call may take seconds).
                confirmation = await _ask_stripe(reference)
                if confirmation is not None:
                    async with self:
                        await self._show_confirmed(confirmation)
                    return

    async def _read_return(self) -> None:
        record = await buying.checkout_status(current_runtime(), self._reference)
        if record is None:
            self._unknown_return()
            return
        what = _DELIVERY.get(record.product, "Your purchase")
        self.return_product_slug = purchases.SLUG_OF_PRODUCT.get(record.product, "")
        if record.status == "paid":
            # Stripe confirms by webhook, which emails the token: this page never sees it, so it leads to the
            # page where it is used and says how the email's link fills it in.
            self.return_status, self.return_title = "paid", "Payment received, thank you"
            self.return_text = f"{what} was emailed to {record.email}."
            self.next_href = where_used(record.product)
            self.next_label = _NEXT_LABEL.get(record.product, "Continue")
            self.next_note = _FROM_THE_EMAIL.get(record.product, "")
        else:
            self.return_status, self.return_title = "pending", "Payment being confirmed"
            self.return_text = (
                f"The provider has not confirmed the payment to us yet; this usually takes a few seconds. "
                f"{what} will be emailed to {record.email} as soon as it is confirmed."
            )

    @rx.event
    def open_cancelled(self) -> None:
        self.return_product_slug = str(self.router.url.query_parameters.get("product", "") or "")


async def _ask_stripe(reference: str) -> Confirmation | None:
    """A Stripe checkout this store has, still unpaid here: Stripe's word on it, fulfilled if paid and new to us.
    None otherwise (not Stripe, paid already, not paid at Stripe, Stripe unreachable: the webhook still counts)."""
    runtime = current_runtime()
    record = await buying.checkout_status(runtime, reference)
    if record is None or record.status == "paid" or record.provider != PROVIDER_B:
        return None
    try:
        confirmation = await buying.confirm_stripe_return(runtime, reference)
    except Exception as exc:  # noqa: BLE001 - the webhook still confirms it; the page waits for that
        log.warning("Stripe return %s could not be confirmed: %s", reference, exc)
        return None
    return confirmation if confirmation is not None and confirmation.newly_fulfilled else None


def open_razorpay() -> list[Any]:
    """Browser-side: open Checkout.js with `razorpay_options`, then send the outcome to `razorpay_done`.

    Events of the compiled page (an `on_mount`): Reflex calls the function they hold, no text is evaluated.
    The state forgets the options first (the function keeps the ones it was rendered with).
    """
    done = format_queue_events(CheckoutState.razorpay_done, args_spec=lambda result: [result])
    opening = _OPEN_RAZORPAY.call(CheckoutState.razorpay_options, RAZORPAY_CHECKOUT_JS, done)
    return [CheckoutState.taken_over, rx.run_script(opening)]


def leave() -> list[Any]:
    """Browser-side: load `leave_to` (Stripe's checkout page or the sandbox's) in this tab; as above."""
    return [CheckoutState.taken_over, rx.run_script(_LEAVE_FOR.call(CheckoutState.leave_to))]
