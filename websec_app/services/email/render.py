"""Emails, rendered: pure functions from facts to subject, text, HTML and attachments.

Nothing here sends or stores anything (STYLE.md 8): `to_message` turns a `RenderedEmail` into
the RFC 5322 bytes the outbox keeps, and the transports in `transport.py` deliver those bytes.
Everything that comes from a buyer or a scanned site (addresses, URLs, names) is escaped before
it goes into HTML.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP as _SMTP_POLICY
from email.policy import SMTPUTF8 as _SMTPUTF8_POLICY
from email.utils import format_datetime, make_msgid

from websec_app.email_address import ascii_form
from websec_app.store.outbox import QueuedEmail
from websec_app.wording import counted

from .links import where_used

#: Outbox kinds (the `kind` column): what an email delivers.
KIND_SCAN_TOKEN = "scan_token"
KIND_COMPLIANCE_TOKEN = "compliance_token"
KIND_API_KEY = "api_key"
KIND_COMPLIANCE_REPORT = "compliance_report"


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str  # "application/pdf"
    data: bytes


@dataclass(frozen=True)
class RenderedEmail:
    kind: str
    to: str
    subject: str
    text: str
    html: str
    attachments: tuple[Attachment, ...] = field(default=())


def html_page(title: str, paragraphs: list[str]) -> str:
    """A minimal, inline-styled HTML body (mail clients ignore <style> blocks and external CSS)."""
    body = "\n".join(f'<p style="margin:0 0 14px">{p}</p>' for p in paragraphs)
    return (
        "<!doctype html>\n"
        f'<html><body style="font-family:Arial,Helvetica,sans-serif;font-size:15px;color:#1f2328;'
        f'line-height:1.5;max-width:600px;margin:0 auto;padding:16px">\n'
        f'<h1 style="font-size:20px;margin:0 0 16px">{html.escape(title)}</h1>\n{body}\n'
        '<p style="margin:24px 0 0;color:#656d76;font-size:12px">websec, website security scanning. '
        "You receive this email because of a purchase made with this address.</p>\n"
        "</body></html>\n"
    )


def html_code(value: str) -> str:
    return (
        '<code style="font-family:Consolas,Menlo,monospace;font-size:14px;background:#f6f8fa;'
        f'padding:4px 6px;border-radius:4px;word-break:break-all">{html.escape(value)}</code>'
    )


def html_link(url: str, label: str | None = None) -> str:
    return f'<a href="{html.escape(url, quote=True)}">{html.escape(label or url)}</a>'


def utc_text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def scan_token_email(*, to: str, token: str, expires_at: datetime, base_url: str) -> RenderedEmail:
    """A one-time scan token (spec 2.7): valid 24 hours, single use."""
    link = where_used("one_time_scan", token=token, base_url=base_url)
    text = (
        "Thank you for buying a one-time scan.\n\n"
        f"Your one-time scan token:\n\n    {token}\n\n"
        f"It is valid until {utc_text(expires_at)} and can be used for one full scan.\n"
        f"Start your scan here (the token is filled in for you):\n\n    {link}\n\nor use the API:\n\n"
        f'    curl -X POST {base_url}/api/scan -H "Content-Type: application/json" \\\n'
        f'         -d \'{{"url": "example.com", "one_time_token": "{token}"}}\'\n'
    )
    body = html_page(
        "Your one-time scan token",
        [
            "Thank you for buying a one-time scan. Your token:",
            html_code(token),
            f"It is valid until <b>{html.escape(utc_text(expires_at))}</b> and can be used for one full scan.",
            f"{html_link(link, 'Start your scan')} (the token is filled in for you), or pass it as "
            "<code>one_time_token</code> to "
            "<code>POST /api/scan</code>.",
        ],
    )
    return RenderedEmail(KIND_SCAN_TOKEN, to, "Your websec one-time scan token", text, body)


def compliance_token_email(*, to: str, token: str, url: str, base_url: str) -> RenderedEmail:
    """A compliance payment token (spec 2.8), for buyers who paid through Stripe's hosted checkout."""
    link = where_used("compliance_report", token=token, url=url, email=to, base_url=base_url)
    text = (
        "Thank you for buying a compliance report.\n\n"
        f"Your compliance report token:\n\n    {token}\n\n"
        f"Website: {url}\n"
        "Use it once to generate the report; the PDF is emailed to the address you give. Generate it here (the "
        f"form is filled in for you):\n\n    {link}\n\nor with the API:\n\n"
        f'    curl -X POST {base_url}/api/compliance-report/generate -H "Content-Type: application/json" \\\n'
        f'         -d \'{{"token": "{token}", "url": "{url}", "email": "{to}"}}\'\n'
    )
    body = html_page(
        "Your compliance report token",
        [
            "Thank you for buying a compliance report. Your token:",
            html_code(token),
            f"Website: {html.escape(url)}",
            "Use it once to generate the report (OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32, ISO/IEC "
            "27001:2022); the PDF is emailed to the address you give. "
            f"{html_link(link, 'Generate your report')} (the form is filled in for you) or call "
            "<code>POST /api/compliance-report/generate</code>.",
        ],
    )
    return RenderedEmail(KIND_COMPLIANCE_TOKEN, to, "Your websec compliance report token", text, body)


def api_key_email(*, to: str, key: str, plan: str, scans_per_month: int, base_url: str) -> RenderedEmail:
    """The API key of a new Pro subscription (spec 5: delivered by email, treated as a password). The link goes
    to the Pro area without the key: a key is never put in a URL."""
    pro = where_used("subscription", base_url=base_url)
    text = (
        f"Welcome to websec {plan}.\n\n"
        f"Your API key:\n\n    {key}\n\n"
        f"It gives {counted(scans_per_month, 'Pro scan')} per calendar month (reset on the 1st, UTC), PDF exports and "
        "the API.\n"
        "Treat it like a password: whoever has it can use your quota. If it leaks, ask support to rotate it.\n\n"
        f"Sign in with it in the Pro area: {pro}\n\n"
        f'    curl -H "X-API-Key: {key}" {base_url}/api/verify-key\n'
    )
    body = html_page(
        f"Welcome to websec {plan}",
        [
            "Your API key:",
            html_code(key),
            f"It gives <b>{counted(scans_per_month, 'Pro scan')}</b> per calendar month (reset on the 1st, UTC), "
            "PDF exports and the API. Send it in the <code>X-API-Key</code> header.",
            f"{html_link(pro, 'Open the Pro area')} and sign in with it to run Pro scans and download PDF reports.",
            "Treat it like a password: whoever has it can use your quota. If it leaks, ask support to rotate it.",
        ],
    )
    return RenderedEmail(KIND_API_KEY, to, f"Your websec {plan} API key", text, body)


def compliance_report_email(*, to: str, url: str, grade: str, score: int, pdf: bytes, filename: str) -> RenderedEmail:
    """The compliance report PDF as an attachment."""
    text = (
        f"Your compliance report for {url} is attached ({filename}).\n\n"
        f"Grade {grade}, score {score}/100. The report maps the scan to OWASP Top 10 2021, PCI DSS v4.0, "
        "GDPR Article 32 and ISO/IEC 27001:2022 Annex A, with a remediation plan that puts the problems costing the "
        "most points first.\n"
    )
    body = html_page(
        "Your compliance report",
        [
            f"Your compliance report for {html.escape(url)} is attached ({html.escape(filename)}).",
            f"Grade <b>{html.escape(grade)}</b>, score <b>{score}</b>/100.",
            "The report maps the scan to OWASP Top 10 2021, PCI DSS v4.0, GDPR Article 32 and ISO/IEC 27001:2022 "
            "Annex A, with a remediation plan that puts the problems costing the most points first.",
        ],
    )
    return RenderedEmail(
        KIND_COMPLIANCE_REPORT,
        to,
        f"websec compliance report: {url}",
        text,
        body,
        (Attachment(filename, "application/pdf", pdf),),
    )


def to_message(email: RenderedEmail, *, sender: str, now: datetime) -> bytes:
    """RFC 5322 bytes: multipart/alternative text + HTML, attachments alongside (multipart/mixed)."""
    message = EmailMessage()
    message["From"] = sender
    # An internationalised address goes in as ASCII where it can (IDNA domain); one whose local part is not
    # ASCII is written as UTF-8, which only a server offering SMTPUTF8 takes (transport.py says so when not).
    to = ascii_form(email.to)
    message["To"] = to or email.to
    message["Subject"] = email.subject
    message["Date"] = format_datetime(now)
    domain = sender.rpartition("@")[2].rstrip(">").strip() or "websec.localhost"
    message["Message-ID"] = make_msgid(domain=domain)
    message.set_content(email.text)
    message.add_alternative(email.html, subtype="html")
    for attachment in email.attachments:
        maintype, _, subtype = attachment.content_type.partition("/")
        message.add_attachment(attachment.data, maintype=maintype, subtype=subtype, filename=attachment.filename)
    # CRLF line ends (RFC 5322 2.1): smtplib sends bytes as they are, and servers refuse bare LF lines.
    return message.as_bytes(policy=_SMTP_POLICY if to is not None else _SMTPUTF8_POLICY)


def queued(email: RenderedEmail, *, sender: str, now: datetime, dedupe_key: str | None = None) -> QueuedEmail:
    """What the outbox stores for a rendered email."""
    return QueuedEmail(
        kind=email.kind,
        recipient=email.to,
        subject=email.subject,
        message=to_message(email, sender=sender, now=now),
        dedupe_key=dedupe_key,
    )


__all__ = [
    "KIND_API_KEY",
    "KIND_COMPLIANCE_REPORT",
    "KIND_COMPLIANCE_TOKEN",
    "KIND_SCAN_TOKEN",
    "Attachment",
    "RenderedEmail",
    "api_key_email",
    "compliance_report_email",
    "compliance_token_email",
    "queued",
    "scan_token_email",
    "to_message",
]
