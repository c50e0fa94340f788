"""Payments and webhook events are recorded once, however often a provider retries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from websec_app.store import Database, find_payment, record_payment, record_webhook_event, set_payment_status
from websec_app.store.purchases import PENDING_REVERSAL_KEPT, pending_reversal, reverse_payment

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def test_the_same_provider_payment_is_one_row(any_database: Database) -> None:
    with any_database.session() as session:
        first, created_first = record_payment(
            session,
            provider="stripe",
            product="compliance_report",
            email="Buyer@Example.com",
            amount=300,
            currency="usd",
            status="paid",
            now=NOW,
            provider_order_id="cs_1",
            provider_payment_id="pi_1",
        )
        again, created_again = record_payment(
            session,
            provider="stripe",
            product="compliance_report",
            email="buyer@example.com",
            amount=300,
            currency="usd",
            status="paid",
            now=NOW + timedelta(minutes=1),
            provider_payment_id="pi_1",
        )

    assert created_first is True and created_again is False
    assert again.id == first.id
    assert (first.email, first.currency, first.amount) == ("buyer@example.com", "USD", 300)


def test_the_same_id_at_another_provider_is_another_payment(any_database: Database) -> None:
    with any_database.session() as session:
        a, _ = record_payment(
            session,
            provider="razorpay",
            product="x",
            email="a@example.com",
            amount=1,
            currency="INR",
            status="paid",
            now=NOW,
            provider_payment_id="same",
        )
        b, _ = record_payment(
            session,
            provider="stripe",
            product="x",
            email="a@example.com",
            amount=1,
            currency="USD",
            status="paid",
            now=NOW,
            provider_payment_id="same",
        )

    assert a.id != b.id


def test_status_changes_are_kept(any_database: Database) -> None:
    with any_database.session() as session:
        payment, _ = record_payment(
            session,
            provider="razorpay",
            product="subscription",
            email="a@example.com",
            amount=49900,
            currency="INR",
            status="created",
            now=NOW,
            provider_order_id="o_1",
        )
        assert payment.id is not None
        set_payment_status(session, payment.id, "paid", NOW, provider_payment_id="pay_1")
        found = find_payment(session, "razorpay", provider_payment_id="pay_1")

    assert found is not None and found.status == "paid" and found.provider_order_id == "o_1"


def test_a_payment_needs_a_provider_id(database: Database) -> None:
    with database.session() as session, pytest.raises(ValueError, match="provider order id or payment id"):
        record_payment(
            session,
            provider="stripe",
            product="x",
            email="a@example.com",
            amount=1,
            currency="USD",
            status="paid",
            now=NOW,
        )


def test_a_webhook_event_is_processed_once(any_database: Database) -> None:
    with any_database.session() as session:
        first = record_webhook_event(
            session, provider="stripe", event_id="evt_1", event_type="checkout.completed", now=NOW
        )
        retry = record_webhook_event(
            session, provider="stripe", event_id="evt_1", event_type="checkout.completed", now=NOW
        )

    assert (first, retry) == (True, False)


def test_a_reversal_waiting_for_its_capture_is_kept_until_no_capture_can_come(any_database: Database) -> None:
    # Given a refund of a payment this service never recorded (another product's charge on the same account)
    with any_database.session() as session:
        assert reverse_payment(session, "stripe", ["pi_elsewhere"], dispute=False, now=NOW).pending

    # When later refunds arrive: within the providers' delivery window it still blocks a late capture ...
    with any_database.session() as session:
        later = NOW + PENDING_REVERSAL_KEPT - timedelta(minutes=1)
        assert reverse_payment(session, "stripe", ["pi_next"], dispute=False, now=later).pending
        assert pending_reversal(session, "stripe", ["pi_elsewhere"]) is False

    # ... and past it, it is gone, so refunds of payments made elsewhere do not pile up for ever
    with any_database.session() as session:
        past = NOW + PENDING_REVERSAL_KEPT + timedelta(minutes=1)
        assert reverse_payment(session, "razorpay", ["pay_new"], dispute=True, now=past).pending
        assert pending_reversal(session, "stripe", ["pi_elsewhere"]) is None
        assert pending_reversal(session, "stripe", ["pi_next"]) is False
        assert pending_reversal(session, "razorpay", ["pay_new"]) is True
