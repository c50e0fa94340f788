"""One-time scan tokens (spec 2.7) and compliance payment tokens (spec 2.8).

Both are single use. A token is *claimed* with one conditional update
(`... SET used_at = :now WHERE token_hash = :h AND used_at IS NULL ...`), so of any
number of racing requests exactly one claims it. A claim whose scan fails without a
report is *released* again, so the buyer keeps what they paid for.

A compliance token is *reserved* before its scan (issue 12: one scan per purchase): a lease
(`reserved_until`) held by one request (`reserved_by`), taken with one conditional update, so
of racing requests exactly one scans. The holder uses it (with the report email,
`purchases.claim_compliance_token_with_email`) or releases it at once when the scan or the
PDF fails; a holder that died leaves the lease to run out. A token whose payment was
refunded or disputed is *revoked* (`revoked_at`) and can no longer be claimed or reserved.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select, update

from ._secrets import hash_secret, new_secret, plausible
from .keys import normalise_email
from .models import ComplianceToken, ScanToken

#: What makes a compliance token usable, in every statement that uses or reserves one: paid, not used yet, and
#: not revoked (its payment was refunded or disputed).
COMPLIANCE_TOKEN_USABLE = (
    col(ComplianceToken.used_at).is_(None),
    col(ComplianceToken.paid_at).is_not(None),
    col(ComplianceToken.revoked_at).is_(None),
)

SCAN_TOKEN_PREFIX = "wst_"
COMPLIANCE_TOKEN_PREFIX = "wsc_"
#: Spec 2.7 / 8: "valid 24 hours".
SCAN_TOKEN_LIFETIME = timedelta(hours=24)
#: How long a generate request holds a compliance token: its wait for a scan slot, the scan (20 s at most,
#: `ScanLimits.total_seconds`), the PDF and the email, with room to spare. A request that died mid-scan
#: keeps the buyer waiting this long at most.
COMPLIANCE_LEASE = timedelta(minutes=10)


class TokenProblem(StrEnum):
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    USED = "used"
    UNPAID = "unpaid"


class TokenRejected(Exception):
    """The token cannot be used; `problem` says why, `at` when it expired or was used."""

    def __init__(self, problem: TokenProblem, at: datetime | None = None) -> None:
        super().__init__(f"token {problem.value}")
        self.problem = problem
        self.at = at


class TokenAlreadyIssued(Exception):
    """A token already exists for this payment (verifying a payment twice mints nothing new)."""


@dataclass(frozen=True)
class IssuedToken:
    """A new token. `token` is the only copy of the plain value."""

    token: str
    token_id: int
    email: str
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Claim:
    """A claimed token; pass it to the matching `release_*` if the scan fails."""

    token_id: int
    email: str


# --- one-time scan tokens ---------------------------------------------------------------


def issue_scan_token(session: Session, *, email: str, now: datetime, payment_id: int | None = None) -> IssuedToken:
    """A one-time scan token valid for 24 hours. Raises TokenAlreadyIssued for a payment that has one."""
    plain = new_secret(SCAN_TOKEN_PREFIX)
    row = ScanToken(
        token_hash=hash_secret(plain),
        email=normalise_email(email),
        payment_id=payment_id,
        created_at=now,
        expires_at=now + SCAN_TOKEN_LIFETIME,
    )
    session.add(row)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise TokenAlreadyIssued(f"a scan token was already issued for payment {payment_id}") from None
    session.refresh(row)
    if row.id is None:  # pragma: no cover - the database assigns it
        raise RuntimeError("scan token row has no id after commit")
    return IssuedToken(plain, row.id, row.email, row.expires_at)


def claim_scan_token(session: Session, token: str, now: datetime, *, commit: bool = True) -> Claim:
    """Use a one-time scan token. Raises TokenRejected (unknown, expired or used). `commit=False`: the caller
    commits the claim together with what holds it (a job row), so no crash between two commits can lose it."""
    if not plausible(token):
        raise TokenRejected(TokenProblem.UNKNOWN)
    digest = hash_secret(token)
    claimed = session.exec(
        update(ScanToken)
        .where(
            col(ScanToken.token_hash) == digest,
            col(ScanToken.used_at).is_(None),
            col(ScanToken.revoked_at).is_(None),
            col(ScanToken.expires_at) > now,
        )
        .values(used_at=now)
        .returning(col(ScanToken.id), col(ScanToken.email))
    ).first()
    if claimed is not None:
        if commit:
            session.commit()
        return Claim(claimed[0], claimed[1])
    row = session.exec(select(ScanToken).where(ScanToken.token_hash == digest)).first()
    session.rollback()
    if row is None:
        raise TokenRejected(TokenProblem.UNKNOWN)
    if row.used_at is not None:
        raise TokenRejected(TokenProblem.USED, row.used_at)
    if row.revoked_at is not None:  # refunded or disputed: as if it had never been issued
        raise TokenRejected(TokenProblem.UNKNOWN)
    raise TokenRejected(TokenProblem.EXPIRED, row.expires_at)


def release_scan_token(session: Session, claim: Claim) -> None:
    session.exec(update(ScanToken).where(col(ScanToken.id) == claim.token_id).values(used_at=None))
    session.commit()


# --- compliance payment tokens ----------------------------------------------------------


def issue_compliance_token(
    session: Session, *, provider: str, email: str, url: str, now: datetime, provider_order_id: str | None = None
) -> IssuedToken:
    """A compliance payment token, unpaid until `mark_compliance_token_paid`."""
    plain = new_secret(COMPLIANCE_TOKEN_PREFIX)
    row = ComplianceToken(
        token_hash=hash_secret(plain),
        provider=provider,
        email=normalise_email(email),
        url=url,
        provider_order_id=provider_order_id,
        created_at=now,
    )
    session.add(row)
    session.commit()
    session.refresh(row)
    if row.id is None:  # pragma: no cover - the database assigns it
        raise RuntimeError("compliance token row has no id after commit")
    return IssuedToken(plain, row.id, row.email)


def set_compliance_order(session: Session, token_id: int, provider_order_id: str) -> None:
    """Attach the provider's order id (known only after the checkout was created)."""
    session.exec(
        update(ComplianceToken).where(col(ComplianceToken.id) == token_id).values(provider_order_id=provider_order_id)
    )
    session.commit()


def find_compliance_token(session: Session, token: str) -> ComplianceToken | None:
    if not plausible(token):
        return None
    return session.exec(select(ComplianceToken).where(ComplianceToken.token_hash == hash_secret(token))).first()


def find_compliance_token_by_order(session: Session, provider: str, provider_order_id: str) -> ComplianceToken | None:
    return session.exec(
        select(ComplianceToken).where(
            ComplianceToken.provider == provider, ComplianceToken.provider_order_id == provider_order_id
        )
    ).first()


def mark_compliance_token_paid(session: Session, token_id: int, now: datetime, payment_id: int | None = None) -> bool:
    """Record that the token's payment was verified. Idempotent: True only the first time."""
    result = session.exec(
        update(ComplianceToken)
        .where(col(ComplianceToken.id) == token_id, col(ComplianceToken.paid_at).is_(None))
        .values(paid_at=now, payment_id=payment_id)
    )
    session.commit()
    return result.rowcount == 1


def claim_compliance_token(session: Session, token: str, now: datetime) -> Claim:
    """Use a paid compliance token. Raises TokenRejected (unknown, unpaid or used)."""
    if not plausible(token):
        raise TokenRejected(TokenProblem.UNKNOWN)
    digest = hash_secret(token)
    claimed = session.exec(
        update(ComplianceToken)
        .where(
            col(ComplianceToken.token_hash) == digest,
            *COMPLIANCE_TOKEN_USABLE,
        )
        .values(used_at=now)
        .returning(col(ComplianceToken.id), col(ComplianceToken.email))
    ).first()
    if claimed is not None:
        session.commit()
        return Claim(claimed[0], claimed[1])
    row = session.exec(select(ComplianceToken).where(ComplianceToken.token_hash == digest)).first()
    session.rollback()
    raise compliance_problem(row)


def compliance_problem(row: ComplianceToken | None, now: datetime | None = None) -> TokenRejected:
    """Why a compliance token cannot be used or reserved now."""
    if row is None or row.revoked_at is not None:  # refunded or disputed: as if it had never been issued
        return TokenRejected(TokenProblem.UNKNOWN)
    if row.used_at is not None:
        return TokenRejected(TokenProblem.USED, row.used_at)
    if row.paid_at is None:
        return TokenRejected(TokenProblem.UNPAID)
    if now is not None and row.reserved_until is not None and row.reserved_until > now:
        # Another request is scanning for it right now: one scan per purchase.
        return TokenRejected(TokenProblem.USED, now)
    return TokenRejected(TokenProblem.UNPAID)  # pragma: no cover - changed between the update and the read


@dataclass(frozen=True)
class Reservation:
    """A compliance token held for one scan by one request (`holder`), until `until`."""

    token_id: int
    holder: str
    until: datetime


def reserve_compliance_token(
    session: Session, token: str, now: datetime, lease: timedelta = COMPLIANCE_LEASE
) -> Reservation:
    """Hold a paid, unused compliance token for one scan. Raises TokenRejected (unknown or revoked, used,
    unpaid, or held by another request whose lease has not run out: USED)."""
    if not plausible(token):
        raise TokenRejected(TokenProblem.UNKNOWN)
    digest = hash_secret(token)
    holder = secrets.token_hex(16)
    until = now + lease
    reserved = session.exec(
        update(ComplianceToken)
        .where(
            col(ComplianceToken.token_hash) == digest,
            *COMPLIANCE_TOKEN_USABLE,
            or_(col(ComplianceToken.reserved_until).is_(None), col(ComplianceToken.reserved_until) <= now),
        )
        .values(reserved_until=until, reserved_by=holder)
        .returning(col(ComplianceToken.id))
    ).first()
    if reserved is not None:
        session.commit()
        return Reservation(reserved[0], holder, until)
    row = session.exec(select(ComplianceToken).where(ComplianceToken.token_hash == digest)).first()
    session.rollback()
    raise compliance_problem(row, now)


def release_compliance_reservation(session: Session, reservation: Reservation) -> None:
    """The scan or the PDF failed on our side: the token is usable again at once (if still this holder's)."""
    session.exec(
        update(ComplianceToken)
        .where(
            col(ComplianceToken.id) == reservation.token_id,
            col(ComplianceToken.reserved_by) == reservation.holder,
            col(ComplianceToken.used_at).is_(None),
        )
        .values(reserved_until=None, reserved_by=None)
    )
    session.commit()


def release_compliance_token(session: Session, claim: Claim) -> None:
    session.exec(update(ComplianceToken).where(col(ComplianceToken.id) == claim.token_id).values(used_at=None))
    session.commit()
