"""The paid compliance report (spec 4.8): check the token is paid, reserve it, scan, render the PDF, use
the token together with queuing its email, and try to send it at once.

Paid work is claimed before it is done (issue 12): the payment is checked before the scan takes a scan
slot (an unpaid token never waits in the scan line), then the token is reserved for this request (a lease,
`store.tokens.reserve_compliance_token`), so of racing requests exactly one scans the target. A scan or a
PDF that fails on our side releases it at once; a request that dies mid-scan leaves the lease to run out.
Using the token and inserting the email are one transaction. Asking Razorpay about an unconfirmed payment
is cached per order and limited per client address (`limits.py`). (The framework mapping and the PDF
itself are `services/compliance` and `services/pdf`.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from websec_app.scanner import parse_target
from websec_app.store import Database, TokenProblem, TokenRejected, find_compliance_token
from websec_app.store.models import ComplianceToken
from websec_app.store.purchases import claim_compliance_token_with_email
from websec_app.store.tokens import (
    Reservation,
    compliance_problem,
    release_compliance_reservation,
    reserve_compliance_token,
)

from ..email.outbox import Outbox, notify_outbox
from ..email.render import compliance_report_email, queued
from ..pdf import render_compliance_pdf, report_filename
from . import messages
from .errors import PaymentsUnavailable, TooManyRequests
from .events import PaymentCaptured
from .fulfilment import Fulfilment
from .limits import PaymentLimits
from .providers import PROVIDER_A

if TYPE_CHECKING:
    from .gateways import Gateways

#: How long the compliance report email is left to the request that generates it (it sends the email at
#: once, then tells the buyer whether the mail server took it); after that the outbox workers retry it.
SENT_BY_THE_REQUEST = timedelta(minutes=1)


@dataclass(frozen=True)
class QueuedReport:
    email_id: int
    delivered: bool


@dataclass(frozen=True)
class GeneratedReport:
    """A compliance report that was scanned, rendered and queued (the token is used)."""

    body: Mapping[str, Any]  # the scan as the PDF shows it (spec 2.2)
    delivered: bool  # False: the mail server did not take it yet; the outbox retries it
    message: str  # a sentence for the buyer


@dataclass
class ComplianceReports:
    sender: str  # the From of the report email
    database: Database
    outbox: Outbox
    gateways: Gateways
    fulfilment: Fulfilment
    clock: Callable[[], datetime]
    limits: PaymentLimits

    def ensure_paid(self, token: str, client: str | None = None) -> None:
        """Before scanning for a compliance token: it must exist, be unused, not revoked, and be paid.

        A Razorpay token whose payment was not confirmed yet (the buyer closed the tab before the
        callback, the webhook is late) is checked with Razorpay here, so a paid buyer is never turned
        away; Razorpay's "not yet" is believed for a few seconds per order, and each client address may
        make us ask only so often (TooManyRequests). Raises TokenRejected.
        """
        with self.database.session() as session:
            row = find_compliance_token(session, token)
        if row is None or row.revoked_at is not None or row.used_at is not None:
            raise compliance_problem(row)
        if row.paid_at is not None:
            return
        # Razorpay (or the sandbox playing it) is asked; Stripe confirms by webhook only.
        try:
            razorpay = self.gateways.razorpay() if row.provider == PROVIDER_A else None
        except PaymentsUnavailable:
            razorpay = None
        order_id = row.provider_order_id
        if razorpay is not None and order_id:
            now = self.clock()
            if self.limits.not_paid_yet.fresh(order_id, now):
                raise TokenRejected(TokenProblem.UNPAID)
            wait = self.limits.status_checks.hit(client, now) if client else None
            if wait is not None:
                raise TooManyRequests(messages.too_many_requests(wait), wait)
            for payment in razorpay.order_payments(order_id):
                if payment.paid:
                    self.fulfilment.apply(
                        PROVIDER_A,
                        PaymentCaptured(order_id, payment.payment_id, payment.amount, payment.currency, payment.email),
                    )
                    break
            with self.database.session() as session:
                row = find_compliance_token(session, token)
            if row is not None and row.paid_at is not None:
                return
            self.limits.not_paid_yet.remember(order_id, now)
        raise TokenRejected(TokenProblem.UNPAID)

    async def generate(
        self,
        token: str,
        *,
        url: str,
        email: str,
        scan: Callable[[str], Awaitable[Mapping[str, Any]]],
        client: str | None = None,
    ) -> GeneratedReport:
        """Spec 4.8 for the API and the UI alike: check the token is paid, reserve it, scan (`scan` returns the
        spec 2.2 body: scanned in the scan line, or by a worker of the task engine), render, use the token and
        queue the email in one transaction, try to send it. Raises TokenRejected, TooManyRequests, the
        scanner's errors (the token stays usable) and PdfRenderError (likewise)."""
        token = token.strip()
        target = parse_target(url)
        await anyio.to_thread.run_sync(self.ensure_paid, token, client)
        reservation = await anyio.to_thread.run_sync(self.reserve, token)
        try:
            content = await scan(url)
            result = await anyio.to_thread.run_sync(lambda: self.queue(reservation, email=email, report=content))
        except BaseException:
            with anyio.CancelScope(shield=True):  # a client that went away still gets its token back
                await anyio.to_thread.run_sync(self.release, reservation)
            raise
        if result.delivered:
            message = messages.compliance_report_emailed(target.host, email)
        else:
            message = messages.compliance_report_queued(target.host, email)
        return GeneratedReport(content, result.delivered, message)

    def reserve(self, token: str) -> Reservation:
        """Hold the token for this request's scan (TokenRejected: unknown, used, unpaid, or held by another)."""
        with self.database.session() as session:
            return reserve_compliance_token(session, token, self.clock())

    def release(self, reservation: Reservation) -> None:
        with self.database.session() as session:
            release_compliance_reservation(session, reservation)

    def queue(self, reservation: Reservation, *, email: str, report: Mapping[str, Any]) -> QueuedReport:
        """Render the PDF and its email, use the reserved token and queue the email in one transaction, try
        to send it.

        The PDF is rendered before the token is touched: a render failure leaves the token usable.
        Raises TokenRejected if the token is no longer this reservation's (its lease ran out and another
        request took it, or its payment was refunded meanwhile).
        """
        url = str(report.get("url", ""))
        host = parse_target(url).host if url else "website"
        pdf = render_compliance_pdf(report, now=self.clock())
        rendered = compliance_report_email(
            to=email,
            url=url,
            grade=str(report.get("grade", "")),
            score=int(report.get("score", 0)),
            pdf=pdf,
            filename=report_filename(host, kind="compliance"),
        )
        with self.database.session() as session:
            # Held for this request, which sends it right below (QueuedEmail.held_for).
            outgoing = queued(rendered, sender=self.sender, now=self.clock(), dedupe_key=None)
            held = dataclasses.replace(outgoing, held_for=SENT_BY_THE_REQUEST)
            token_id, email_id = claim_compliance_token_with_email(session, reservation, self.clock(), held)
        if token_id is None or email_id is None:
            with self.database.session() as session:
                row = session.get(ComplianceToken, reservation.token_id)
            if row is not None and row.used_at is None and row.revoked_at is None and row.paid_at is not None:
                raise TokenRejected(TokenProblem.USED, self.clock())  # another request holds it now
            raise compliance_problem(row)
        delivered = self.outbox.deliver_now(email_id)
        if not delivered:
            notify_outbox()
        return QueuedReport(email_id, delivered)


__all__ = ["SENT_BY_THE_REQUEST", "ComplianceReports", "GeneratedReport", "QueuedReport"]
