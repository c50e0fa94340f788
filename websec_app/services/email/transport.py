"""Delivering rendered messages: SMTP (`WEBSEC_SMTP_URL`) or `.eml` files for local use.

`smtp://user:pass@host:587` speaks STARTTLS (RFC 3207) and refuses to continue, credentials
included, if the server does not offer it; `smtps://host:465` is TLS from the first byte
(RFC 8314 section 3.3); `?tls=none` is for a relay on the same host or a test server only.
"""

from __future__ import annotations

import email.utils
import os
import smtplib
import ssl
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from websec_app.email_address import ascii_form
from websec_app.settings import Settings, SettingsError

_TLS_MODES = ("starttls", "ssl", "none")
_DEFAULT_PORTS = {"smtp": 587, "smtps": 465}


class MailDeliveryError(Exception):
    """The message was not accepted (the outbox retries it later)."""


class MailTransport(Protocol):
    def send(self, sender: str, recipient: str, message: bytes) -> None:
        """Deliver one message or raise MailDeliveryError."""
        ...


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    tls: str  # starttls, ssl, none
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> SmtpConfig:
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS:
            raise SettingsError(f"WEBSEC_SMTP_URL must start with smtp:// or smtps://, got {parts.scheme!r}")
        if not parts.hostname:
            raise SettingsError("WEBSEC_SMTP_URL has no host")
        query = parse_qs(parts.query)
        tls = query.get("tls", ["ssl" if parts.scheme == "smtps" else "starttls"])[0].lower()
        if tls not in _TLS_MODES:
            raise SettingsError(f"WEBSEC_SMTP_URL tls= must be one of {', '.join(_TLS_MODES)}, got {tls!r}")
        return cls(
            host=parts.hostname,
            port=parts.port or _DEFAULT_PORTS[parts.scheme],
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


def _envelope_sender(sender: str) -> str:  # "websec <billing@websec.test>" -> billing@websec.test
    return email.utils.parseaddr(sender)[1] or sender


class SmtpTransport:
    """One SMTP connection per message: simple, and no idle connection to lose between sends."""

    def __init__(self, config: SmtpConfig, *, ssl_context: ssl.SSLContext | None = None, timeout: float = 20) -> None:
        self.config = config
        self._context = ssl_context or ssl.create_default_context()
        self._timeout = timeout

    @classmethod
    def from_url(cls, url: str, **options: object) -> SmtpTransport:
        return cls(SmtpConfig.parse(url), **options)  # type: ignore[arg-type]

    def send(self, sender: str, recipient: str, message: bytes) -> None:
        config = self.config
        client: smtplib.SMTP | None = None
        try:
            if config.tls == "ssl":
                client = smtplib.SMTP_SSL(config.host, config.port, timeout=self._timeout, context=self._context)
            else:
                client = smtplib.SMTP(config.host, config.port, timeout=self._timeout)
            client.ehlo()
            if config.tls == "starttls":
                if not client.has_extn("starttls"):
                    raise MailDeliveryError(f"{config.host}:{config.port} does not offer STARTTLS")
                client.starttls(context=self._context)
                client.ehlo()
            if config.username:
                client.login(config.username, config.password or "")
            mail_from, rcpt_to = _envelope_sender(sender), recipient
            ascii_from, ascii_to = ascii_form(mail_from), ascii_form(rcpt_to)
            options: list[str] = []
            if ascii_from is None or ascii_to is None:  # a local part that is not ASCII (RFC 6531)
                if not client.has_extn("smtputf8"):
                    raise MailDeliveryError(
                        f"{config.host}:{config.port} does not offer SMTPUTF8, which {rcpt_to} needs"
                    )
                options = ["SMTPUTF8"]
            client.sendmail(ascii_from or mail_from, [ascii_to or rcpt_to], message, mail_options=options)
            client.quit()
        except MailDeliveryError:
            raise
        except (smtplib.SMTPException, OSError, UnicodeError) as exc:  # refused, timeout, TLS, 4xx/5xx, encoding
            raise MailDeliveryError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            # After a failure the connection may be half-dead (a TLS handshake aborted): drop it rather
            # than wait for a QUIT reply that will not come.
            if client is not None:
                client.close()


class FileTransport:
    """Writes each message to `<directory>/<time>-<id>.eml` (open it with any mail client)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def send(self, sender: str, recipient: str, message: bytes) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}.eml"
            # Written under a temporary name and renamed: a reader never sees half a message.
            with tempfile.NamedTemporaryFile(dir=self.directory, suffix=".tmp", delete=False) as handle:
                handle.write(message)
            os.replace(handle.name, self.directory / name)
        except OSError as exc:
            raise MailDeliveryError(f"could not write to {self.directory}: {exc}") from exc


def transport_from_settings(settings: Settings) -> MailTransport:
    if settings.mail.smtp_url:
        return SmtpTransport.from_url(settings.mail.smtp_url)
    return FileTransport(settings.outbox_dir)


__all__ = [
    "FileTransport",
    "MailDeliveryError",
    "MailTransport",
    "SmtpConfig",
    "SmtpTransport",
    "transport_from_settings",
]
