"""One-time scan tokens (24 h, single use) and compliance payment tokens (single use, once paid)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from websec_app.store import (
    Database,
    ScanToken,
    TokenAlreadyIssued,
    TokenProblem,
    TokenRejected,
    claim_compliance_token,
    claim_scan_token,
    find_compliance_token,
    find_compliance_token_by_order,
    issue_compliance_token,
    issue_scan_token,
    mark_compliance_token_paid,
    record_payment,
    release_compliance_token,
    release_scan_token,
)

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def rejection(call: object) -> TokenRejected:
    with pytest.raises(TokenRejected) as raised:
        call()  # type: ignore[operator]
    return raised.value


def test_a_scan_token_lives_24_hours(any_database: Database) -> None:
    with any_database.session() as session:
        token = issue_scan_token(session, email="T@example.com", now=NOW)

        assert token.token.startswith("wst_") and token.expires_at == NOW + timedelta(hours=24)
        expired = rejection(lambda: claim_scan_token(session, token.token, NOW + timedelta(hours=24)))
        claim = claim_scan_token(session, token.token, NOW + timedelta(hours=23, minutes=59))

    assert (expired.problem, expired.at) == (TokenProblem.EXPIRED, NOW + timedelta(hours=24))
    assert claim.email == "t@example.com"


def test_a_scan_token_is_single_use_until_released(any_database: Database) -> None:
    with any_database.session() as session:
        token = issue_scan_token(session, email="t@example.com", now=NOW).token
        claim = claim_scan_token(session, token, NOW)
        used = rejection(lambda: claim_scan_token(session, token, NOW))
        release_scan_token(session, claim)
        claim_scan_token(session, token, NOW)

    assert (used.problem, used.at) == (TokenProblem.USED, NOW)


def test_unknown_scan_tokens(database: Database) -> None:
    with database.session() as session:
        assert rejection(lambda: claim_scan_token(session, "wst_nope", NOW)).problem is TokenProblem.UNKNOWN
        assert rejection(lambda: claim_scan_token(session, "", NOW)).problem is TokenProblem.UNKNOWN


def test_a_payment_buys_one_scan_token(any_database: Database) -> None:
    with any_database.session() as session:
        payment, _ = record_payment(
            session,
            provider="razorpay",
            product="one_time_scan",
            email="p@example.com",
            amount=9900,
            currency="INR",
            status="paid",
            now=NOW,
            provider_payment_id="pay_9",
        )
        issue_scan_token(session, email="p@example.com", now=NOW, payment_id=payment.id)

        with pytest.raises(TokenAlreadyIssued):
            issue_scan_token(session, email="p@example.com", now=NOW, payment_id=payment.id)


def test_the_token_itself_is_not_stored(database: Database) -> None:
    with database.session() as session:
        token = issue_scan_token(session, email="t@example.com", now=NOW).token
        [row] = session.exec(select(ScanToken)).all()

    assert token not in {str(v) for v in row.model_dump().values()}


def test_a_compliance_token_needs_payment_then_works_once(any_database: Database) -> None:
    with any_database.session() as session:
        issued = issue_compliance_token(
            session,
            provider="razorpay",
            email="c@example.com",
            url="https://a.example/",
            now=NOW,
            provider_order_id="order_7",
        )
        unpaid = rejection(lambda: claim_compliance_token(session, issued.token, NOW))

        assert mark_compliance_token_paid(session, issued.token_id, NOW) is True
        assert mark_compliance_token_paid(session, issued.token_id, NOW) is False  # idempotent
        claim = claim_compliance_token(session, issued.token, NOW)
        used = rejection(lambda: claim_compliance_token(session, issued.token, NOW))
        release_compliance_token(session, claim)
        claim_compliance_token(session, issued.token, NOW)

        row = find_compliance_token(session, issued.token)
        by_order = find_compliance_token_by_order(session, "razorpay", "order_7")

    assert unpaid.problem is TokenProblem.UNPAID
    assert used.problem is TokenProblem.USED
    assert row is not None and by_order is not None and row.id == by_order.id == issued.token_id
    assert rejection(lambda: claim_compliance_token(session, "wsc_nope", NOW)).problem is TokenProblem.UNKNOWN
