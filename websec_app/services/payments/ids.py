"""The shape of Razorpay's ids, checked before an id from a request goes into the path of an API URL
(issue 12), so a request cannot steer the SDK's call elsewhere (`pay_../../orders`). Kept apart from
`razorpay_gateway.py` so checking an id does not import the SDK."""

from __future__ import annotations

import re

from . import messages
from .errors import InvalidPaymentId

#: A prefix and 14 letters and digits (pay_29QQoUBi66xm2f, https://razorpay.com/docs/api/payments/).
PAYMENT_ID = re.compile(r"pay_[A-Za-z0-9]{14}")
ORDER_ID = re.compile(r"order_[A-Za-z0-9]{14}")
SUBSCRIPTION_ID = re.compile(r"sub_[A-Za-z0-9]{14}")


def check_id(value: str, pattern: re.Pattern[str], what: str) -> None:
    """Raise InvalidPaymentId (400) unless `value` is shaped like a Razorpay `what` id."""
    if not pattern.fullmatch(value):
        raise InvalidPaymentId(messages.malformed_payment_id(what))


__all__ = ["ORDER_ID", "PAYMENT_ID", "SUBSCRIPTION_ID", "check_id"]
