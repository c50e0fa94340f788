"""What a Stripe invoice event says paid the invoice, in each shape of the Invoice object (issue 12)."""

from __future__ import annotations

from typing import Any

import pytest

from websec_app.services.payments.events import Ignored, PaymentReversed, SubscriptionCharged
from websec_app.services.payments.stripe_gateway import translate_event

_PARENT = {"type": "subscription_details", "subscription_details": {"subscription": "sub_1"}}
_INVOICE: dict[str, Any] = {"id": "in_1", "amount_paid": 700, "currency": "usd", "parent": _PARENT}


def _invoice_payment(kind: str, value: str, status: str = "paid") -> dict[str, Any]:
    return {"object": "invoice_payment", "invoice": "in_1", "status": status, "payment": {"type": kind, kind: value}}


@pytest.mark.parametrize(
    ("invoice", "expected"),
    [
        # API version 2025-03-31 and later: InvoicePayment objects under the includable `payments`
        (
            {
                **_INVOICE,
                "payments": {
                    "object": "list",
                    "data": [
                        _invoice_payment("payment_intent", "pi_1"),
                        _invoice_payment("charge", "ch_2"),
                        _invoice_payment("payment_intent", "pi_open", status="open"),
                    ],
                    "has_more": False,
                },
            },
            ("pi_1", "ch_2"),
        ),
        # before 2025-03-31: the invoice's own charge and payment intent, and the subscription at top level
        (
            {
                "id": "in_1",
                "amount_paid": 700,
                "currency": "usd",
                "subscription": "sub_1",
                "charge": "ch_1",
                "payment_intent": "pi_1",
            },
            ("pi_1", "ch_1"),
        ),
        # `payments` left out of the event: nothing here (the gateway asks Stripe)
        (_INVOICE, ()),
    ],
)
def test_a_paid_invoice_carries_the_ids_a_dispute_will_name(invoice: dict[str, Any], expected: tuple[str, ...]) -> None:
    change = translate_event("invoice.paid", invoice)

    assert isinstance(change, SubscriptionCharged)
    assert (change.subscription_id, change.payment_id) == ("sub_1", "in_1")
    assert change.payment_references == expected


def test_a_dispute_names_its_charge_and_payment_intent() -> None:
    change = translate_event("charge.dispute.created", {"id": "dp_1", "charge": "ch_1", "payment_intent": "pi_1"})

    assert change == PaymentReversed(("pi_1", "ch_1"), dispute=True)


def test_an_invoice_without_a_subscription_is_ignored() -> None:
    assert isinstance(translate_event("invoice.paid", {"id": "in_1", "amount_paid": 1}), Ignored)
