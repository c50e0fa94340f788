"""The paid compliance report (spec 4.8): check the token is paid, scan, render the PDF, use the token
together with queuing its email, and try to send it at once.

The PDF and the email are rendered (pure) before the token is touched, so a failed scan or render leaves
the token usable; claiming the token and inserting the email are one transaction, so of racing requests
exactly one gets the report. (The framework mapping and the PDF itself are `services/compliance` and
`services/pdf`.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from websec_app.scanner import ScanReport, parse_target
from websec_app.store import Database, TokenProblem, TokenRejected, find_compliance_token
from websec_app.store.purchases import claim_compliance_token_with_email

from ..email.outbox import Outbox, notify_outbox
from ..email.render import compliance_report_email, queued
from ..pdf import render_compliance_pdf, report_filename
from . import messages
from .errors import PaymentsUnavailable
from .events import PaymentCaptured
from .fulfilment import Fulfilment
from .providers import PROVIDER_A
from .sandbox import SandboxGateway

if TYPE_CHECKING:
    from .gateways import Gateway, Gateways

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

    report: ScanReport
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

    def ensure_paid(self, token: str) -> None:
        """Before scanning for a compliance token: it must exist, be unused, and be paid.

        A Razorpay token whose payment was not confirmed yet (the buyer closed the tab before the
        callback, the webhook is late) is checked with Razorpay here, so a paid buyer is never turned
        away. Raises TokenRejected.
        """
        with self.database.session() as session:
            row = find_compliance_token(session, token)
        if row is None:
            raise TokenRejected(TokenProblem.UNKNOWN)
        if row.used_at is not None:
            raise TokenRejected(TokenProblem.USED, row.used_at)
        if row.paid_at is not None:
            return
        try:
            gateway: Gateway | None = self.gateways.get(row.provider)
        except PaymentsUnavailable:
            gateway = None
        real_razorpay = row.provider == PROVIDER_A and not isinstance(gateway, SandboxGateway | None)
        if real_razorpay and row.provider_order_id:
            for payment in gateway.order_payments(row.provider_order_id):  # type: ignore[union-attr]
                if payment.paid:
                    self.fulfilment.apply(
                        PROVIDER_A,
                        PaymentCaptured(
                            row.provider_order_id, payment.payment_id, payment.amount, payment.currency, payment.email
                        ),
                    )
                    break
            with self.database.session() as session:
                row = find_compliance_token(session, token)
            if row is not None and row.paid_at is not None:
                return
        raise TokenRejected(TokenProblem.UNPAID)

    async def generate(
        self, token: str, *, url: str, email: str, scan: Callable[[str], Awaitable[ScanReport]]
    ) -> GeneratedReport:
        """Spec 4.8 for the API and the UI alike: check the token, scan, render, use the token and queue the
        email in one transaction, try to send it. Raises TokenRejected, the scanner's errors (the token stays
        usable) and PdfRenderError (likewise)."""
        token = token.strip()
        target = parse_target(url)
        await anyio.to_thread.run_sync(self.ensure_paid, token)
        report = await scan(url)
        content = report.to_dict(pro=True, include_fix=True)
        result = await anyio.to_thread.run_sync(lambda: self.queue(token, email=email, report=content))
        if result.delivered:
            message = messages.compliance_report_emailed(target.host, email)
        else:
            message = messages.compliance_report_queued(target.host, email)
        return GeneratedReport(report, result.delivered, message)

    def queue(self, token: str, *, email: str, report: Mapping[str, Any]) -> QueuedReport:
        """Render the PDF and its email, use the token and queue the email in one transaction, try to send.

        The PDF is rendered before the token is touched: a render failure leaves the token usable.
        Raises TokenRejected if the token was used meanwhile.
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
            token_id, email_id = claim_compliance_token_with_email(session, token, self.clock(), held)
        if token_id is None or email_id is None:
            with self.database.session() as session:
                row = find_compliance_token(session, token)
            if row is None:
                raise TokenRejected(TokenProblem.UNKNOWN)
            if row.used_at is not None:
                raise TokenRejected(TokenProblem.USED, row.used_at)
            raise TokenRejected(TokenProblem.UNPAID)
        delivered = self.outbox.deliver_now(email_id)
        if not delivered:
            notify_outbox()
        return QueuedReport(email_id, delivered)


__all__ = ["SENT_BY_THE_REQUEST", "ComplianceReports", "GeneratedReport", "QueuedReport"]
