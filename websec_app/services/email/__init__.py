"""Email: pure rendering (`render`), delivery adapters (`transport`), and the durable outbox (`outbox`).

Every email is stored in the outbox first, in the transaction that issued what it carries, and
sent by a worker that retries with backoff; see `outbox.py`.
"""

from __future__ import annotations

from .outbox import Outbox, OutboxWorker, notify_outbox, outbox_for, outbox_lifespan
from .render import (
    Attachment,
    RenderedEmail,
    api_key_email,
    compliance_report_email,
    compliance_token_email,
    queued,
    scan_token_email,
    to_message,
)
from .transport import FileTransport, MailDeliveryError, MailTransport, SmtpConfig, SmtpTransport

__all__ = [
    "Attachment",
    "FileTransport",
    "MailDeliveryError",
    "MailTransport",
    "Outbox",
    "OutboxWorker",
    "RenderedEmail",
    "SmtpConfig",
    "SmtpTransport",
    "api_key_email",
    "compliance_report_email",
    "compliance_token_email",
    "notify_outbox",
    "outbox_for",
    "outbox_lifespan",
    "queued",
    "scan_token_email",
    "to_message",
]
