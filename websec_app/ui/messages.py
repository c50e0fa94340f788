"""What the UI tells a person when a scan, a token or a key does not work: a title and a sentence or two.

The scanner's own messages are already written for people ("Refusing to scan: 10.0.0.1 is a
private address. Only public addresses can be scanned."), so they are shown as they are; this
module adds what the person can do next and when a quota comes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from websec_app.email_address import InvalidEmail, checked_email
from websec_app.scanner import InvalidTarget, ScanError, TargetRefused, TargetUnreachable
from websec_app.services.admission import ScannerBusy
from websec_app.services.payments import PaymentError
from websec_app.services.pdf import PdfRenderError
from websec_app.store import TokenProblem, TokenRejected
from websec_app.store.keys import KEY_PREFIX
from websec_app.store.tokens import COMPLIANCE_TOKEN_PREFIX, SCAN_TOKEN_PREFIX
from websec_app.usecases import FreeQuotaUsed, KeyRefused, MonthlyQuotaUsed, inactive_subscription_sentence
from websec_app.wording import counted


@dataclass(frozen=True)
class Problem:
    kind: str  # invalid, refused, unreachable, quota, busy, token, key, payment, error: a test id and a tone
    title: str
    text: str


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if text.endswith((".", "!", "?")) else text + "."


def when(moment: datetime) -> str:
    """'Monday 23 November 2026, 00:00 UTC'."""
    return f"{moment:%A} {moment.day} {moment:%B %Y, %H:%M} UTC"


def wait_for(moment: datetime, now: datetime) -> str:
    """'in 3 h 12 min' (or 'in 4 days' for long waits)."""
    seconds = max(0, int((moment - now).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = max(1, rest // 60) if not days and not hours else rest // 60
    if days:
        return f"in {counted(days, 'day')}"
    if hours:
        return f"in {hours} h {minutes} min"
    return f"in {minutes} min"


_TOKEN_TEXT = {
    TokenProblem.UNKNOWN: "This one-time scan token does not exist. Check that the link or token was copied "
    "completely.",
    TokenProblem.EXPIRED: "This one-time scan token expired on {at}: tokens are valid for 24 hours after purchase.",
    TokenProblem.USED: "This one-time scan token was already used on {at}. Each token is good for one scan; the "
    "report of that scan is at the link you got when it finished.",
}

_COMPLIANCE_TOKEN_TEXT = {
    TokenProblem.UNKNOWN: "This compliance report token does not exist. Check that it was copied completely (it "
    "starts with wsc_).",
    TokenProblem.USED: "This compliance report token was already used on {at}: the report was emailed then.",
    TokenProblem.UNPAID: "The payment for this token is not confirmed yet. If you just paid, try again in a minute.",
    TokenProblem.EXPIRED: "This compliance report token has expired.",
}

_KEY_TEXT = {
    "unknown": "This API key is not valid. Check that it was copied completely (it starts with wsk_).",
    "revoked": "This API key has been revoked. Use your current key, or ask support for a new one.",
    "no_plan": "This key's plan does not include Pro scans.",
}


def describe(exc: BaseException, now: datetime, *, token: str = "scan") -> Problem:
    """The message for anything a UI flow raises (`token`: which kind of token a TokenRejected is about)."""
    if isinstance(exc, FreeQuotaUsed):
        return Problem(
            "quota",
            "You have used today's free scans",
            f"Your network has used its {counted(exc.limit, 'free scan')} for today. They reset at midnight UTC "
            f"({when(exc.resets_at)}, {wait_for(exc.resets_at, now)}). A one-time scan or a Pro subscription "
            "scans right away, with the fix for every finding.",
        )
    if isinstance(exc, MonthlyQuotaUsed):
        return Problem(
            "quota",
            "This month's Pro scans are used",
            f"This month's quota of {counted(exc.limit, 'scan')} is used up. It resets on {when(exc.resets_at)} "
            f"({wait_for(exc.resets_at, now)}).",
        )
    if isinstance(exc, ScannerBusy):
        # The API's 503 + Retry-After, in words: same slots, same wait (services/admission.py).
        return Problem(
            "busy",
            "The scanner is busy",
            f"The scanner is busy right now. Please try again in {counted(exc.retry_after, 'second')}. "
            "Nothing was counted for this attempt.",
        )
    if isinstance(exc, TargetRefused):
        return Problem("refused", "This address cannot be scanned", _sentence(exc))
    if isinstance(exc, InvalidTarget):
        return Problem(
            "invalid", "Check the address", f"{_sentence(exc)} Enter a website address such as https://example.com."
        )
    if isinstance(exc, TargetUnreachable) and exc.requires_client_certificate:
        return Problem(
            "unreachable",
            "The site requires a client certificate",
            f"{_sentence(exc)} A visitor without such a certificate gets no page from it, and neither does the "
            "scanner. Scan a page of the site that does not ask for one. Nothing was counted for this attempt.",
        )
    if isinstance(exc, TargetUnreachable):
        return Problem(
            "unreachable",
            "The site could not be reached",
            f"{_sentence(exc)} Check the address, or try again if the site is down. "
            "Nothing was counted for this attempt.",
        )
    if isinstance(exc, ScanError):
        return Problem("error", "The scan did not finish", f"{_sentence(exc)} Nothing was counted for this attempt.")
    if isinstance(exc, TokenRejected):
        at = when(exc.at) if exc.at is not None else "an unknown date"
        if token == "compliance":
            text = _COMPLIANCE_TOKEN_TEXT[exc.problem].format(at=at)
            return Problem("token", "This compliance report token cannot be used", text)
        return Problem("token", "This one-time token cannot be used", _TOKEN_TEXT[exc.problem].format(at=at))
    if isinstance(exc, PdfRenderError):
        return Problem("error", "The report could not be generated", "Nothing was used up; please try again.")
    if isinstance(exc, KeyRefused):
        if exc.reason == "subscription_inactive":  # the API's words: usecases.inactive_subscription_sentence
            return Problem("key", "API key not accepted", inactive_subscription_sentence(exc.subscription_status))
        return Problem("key", "API key not accepted", _KEY_TEXT.get(exc.reason, _KEY_TEXT["unknown"]))
    if isinstance(exc, PaymentError):
        return Problem("payment", "The payment did not go through", _sentence(exc))
    return Problem(
        "error",
        "Something went wrong on our side",
        "The request could not be completed and nothing was counted. Please try again in a moment.",
    )


# --- what a form field says when it is empty or malformed (shown next to the field: components/field.py) ---

FIELD_URL_MISSING = "Enter the address of the website, for example https://example.com."
FIELD_EMAIL_MISSING = "Enter your email address."
FIELD_EMAIL_INVALID = "This is not an email address we can send to. Check it, for example you@example.com."
_TOKEN_NAMES = {SCAN_TOKEN_PREFIX: "one-time token", COMPLIANCE_TOKEN_PREFIX: "compliance report token"}


def url_field_problem(url: str) -> str:
    """'' when the website field can be sent to the scanner (which says what else is wrong with it)."""
    return "" if url.strip() else FIELD_URL_MISSING


def email_field_problem(email: str) -> str:
    if not email.strip():
        return FIELD_EMAIL_MISSING
    try:
        checked_email(email)
    except InvalidEmail:
        return FIELD_EMAIL_INVALID
    return ""


def token_field_problem(token: str, prefix: str) -> str:
    """A one-time (`wst_`) or compliance (`wsc_`) token: present and of its kind."""
    name = _TOKEN_NAMES.get(prefix, "token")
    if not token.strip():
        return f"Enter your {name}. It starts with {prefix} and is in your purchase email."
    if not token.strip().startswith(prefix):
        return f"A {name} starts with {prefix}. Check that you copied the whole token from your email."
    return ""


def key_field_problem(key: str) -> str:
    if not key.strip():
        return f"Enter your API key. It starts with {KEY_PREFIX} and was emailed to you when you subscribed."
    if not key.strip().startswith(KEY_PREFIX):
        return f"An API key starts with {KEY_PREFIX}. Check that you copied the whole key from your email."
    return ""
