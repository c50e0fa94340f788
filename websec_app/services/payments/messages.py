"""Every sentence of payments that a buyer (or the developer at the sandbox) reads, in one place.

The API answers with these texts (an exception's `str()` becomes `{"error": ...}`, spec 4.6-4.8 and the
webhook 400) and the web UI shows them as they are; `Confirmation.message` and `GeneratedReport.message`
are the sentences after a payment and after a compliance report. The emails' subject lines and bodies are
rendered in `services/email/render.py`. What is recorded for operators (an `Outcome.detail`, an `Ignored`
reason, log lines) stays with the code that decides it.
"""

from __future__ import annotations

# --- providers and gateways -----------------------------------------------------------------------------


def unknown_provider(provider: str, providers: tuple[str, ...]) -> str:
    return f"Unknown payment provider {provider!r}: use {' or '.join(providers)}."


def provider_unavailable(provider: str) -> str:
    return f"Payments with {provider} are not available on this server."


RAZORPAY_IN_SANDBOX = "Razorpay payments are served by the sandbox here: use its checkout page."
RAZORPAY_NOT_CONFIGURED = "Razorpay is not configured on this server (RAZORPAY_KEY_ID/SECRET)."
STRIPE_NOT_CONFIGURED = "Stripe is not configured on this server (STRIPE_SECRET_KEY)."


def razorpay_refused(what: str, reason: object) -> str:
    return f"Razorpay refused the request ({what}): {reason}"


def provider_unreachable(what: str | None = None) -> str:
    if what is None:
        return "The payment provider could not be reached. Please try again."
    return f"The payment provider could not be reached ({what}). Please try again."


def stripe_refused_checkout(reason: object) -> str:
    return f"Stripe refused the checkout: {reason}"


STRIPE_SESSION_WITHOUT_URL = "Stripe returned a checkout session without a URL."

# --- starting a checkout ----------------------------------------------------------------------------------

COMPLIANCE_NEEDS_URL = "A compliance report needs the address of the website to scan."

# --- confirming a payment -----------------------------------------------------------------------------------

ORDER_SIGNATURE_INVALID = "The payment signature is not valid for this order."
SUBSCRIPTION_SIGNATURE_INVALID = "The payment signature is not valid for this subscription."


def not_paid_for_order(payment_id: str, status: str) -> str:
    return f"The payment {payment_id} is {status}, not paid for this order."


def not_paid(payment_id: str, status: str) -> str:
    return f"The payment {payment_id} is {status}, not paid."


def not_captured(payment_id: str) -> str:
    return f"The payment {payment_id} was not found or is not captured."


def payment_for_another_email(payment_id: str) -> str:
    # Says nothing about the address it was made for: whoever holds a payment id learns nothing from it.
    return (
        f"The payment {payment_id} was not made with this email address. Use the address you entered when "
        "you paid: the token is sent there."
    )


def malformed_payment_id(what: str) -> str:
    return f"That is not a Razorpay {what} id (pay_ or order_ followed by 14 letters and digits)."


def too_many_requests(seconds: int) -> str:
    return f"Too many payment requests from your address. Please try again in {seconds} seconds."


def not_a_one_time_scan(payment_id: str) -> str:
    return f"The payment {payment_id} is not for a one-time scan bought here."


def one_time_scan_price_mismatch(payment_id: str) -> str:
    return f"The payment {payment_id} does not match the price of a one-time scan."


PRICE_MISMATCH = "The payment does not match the price of what was bought."


def unmatched_payment(detail: str) -> str:
    return f"The payment could not be matched to a purchase ({detail})."


# --- what a confirmed payment tells the buyer (`Confirmation.message`) ------------------------------------


def scan_token_emailed(to: str) -> str:
    return f"Your one-time scan token was emailed to {to}."


def scan_token_confirmed_before(to: str) -> str:
    return f"This payment was confirmed before; its one-time scan token was emailed to {to}."


def compliance_token_emailed(to: str) -> str:
    return f"Your compliance report token was emailed to {to}."


COMPLIANCE_TOKEN_USABLE = "Payment confirmed: your compliance report token can be used now."
COMPLIANCE_TOKEN_CONFIRMED_BEFORE = "This payment was confirmed before: the compliance report token can be used."


def api_key_emailed(to: str) -> str:
    return f"Your Pro API key was emailed to {to}."


SUBSCRIPTION_ACTIVE_KEY_SENT_BEFORE = "Your Pro subscription is active; the API key was emailed when you subscribed."

# --- webhooks -------------------------------------------------------------------------------------------------

WEBHOOK_SIGNATURE_INVALID = "The webhook signature does not verify."
RAZORPAY_WEBHOOKS_NOT_CONFIGURED = "Razorpay webhooks are not configured on this server (RAZORPAY_WEBHOOK_SECRET)."
STRIPE_WEBHOOKS_NOT_CONFIGURED = "Stripe webhooks are not configured on this server (STRIPE_WEBHOOK_SECRET)."
NOT_A_RAZORPAY_EVENT = "The webhook body is not a Razorpay event."
NOT_A_STRIPE_EVENT = "The webhook body is not a Stripe event."
#: 502 to a status event of the same second as another that said otherwise, when the provider could not say which
#: is current (it delivers the event again later).
SUBSCRIPTION_STATUS_UNDECIDED = (
    "The subscription's current status could not be read from the payment provider, and this event cannot be "
    "ordered against another of the same second without it. Please deliver it again."
)
SUBSCRIPTION_STATUS_BUSY = (
    "The subscription's status kept changing while this event was applied. Please deliver it again."
)


def sandbox_sends_no_webhooks(provider: str) -> str:
    return f"{provider} is served by the sandbox here; it sends no webhooks."


# --- the compliance report (`GeneratedReport.message`) ---------------------------------------------------


def compliance_report_emailed(host: str, email: str) -> str:
    return f"The compliance report for {host} was emailed to {email}."


def compliance_report_queued(host: str, email: str) -> str:
    return (
        f"The compliance report for {host} is ready and queued for {email}; the mail server did not "
        "take it yet, so it is retried automatically until it is delivered."
    )


# --- the sandbox ------------------------------------------------------------------------------------------------

NO_SANDBOX_CHECKOUT = "There is no sandbox checkout with that reference."
SANDBOX_DISABLED = "The sandbox is not enabled on this server."


def unknown_sandbox_action(action: str) -> str:
    return f"Unknown sandbox action {action!r}."
