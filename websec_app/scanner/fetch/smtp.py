"""The domain's mail servers as a sending mail server meets them (RFC 5321, RFC 3207): each MX host's port 25, its
greeting, EHLO, STARTTLS and the TLS handshake after it, whose certificate DANE (RFC 7672) and MTA-STS (RFC 8461
4.1) judge. Nothing is sent past the handshake: no MAIL FROM, no message.

Every host goes through the same resolver, guard and pinned addresses as the web fetch, so a domain whose MX points
at a private address is refused there as its web host would be. The plain dialogue is bounded as the rest: a reply
line of at most MAX_REPLY_LINE bytes, a reply of at most MAX_REPLY_LINES lines, and the handshake's own timeout
over it all (a server that sends its greeting a byte a second does not hold the scan).

`Settings.smtp_port` is where the hosts are asked: 25, as senders do (RFC 5321 2.3.5); 0 asks none, for a scanner
whose network blocks outbound port 25, as many clouds do. The report then says the servers were not asked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from ...settings import Settings
from ..snapshot import Failure, MailServer
from ..target import ip_literal
from .resolve import Pinner
from .tls import pinned_tls

#: RFC 5321 4.5.3.1.5 allows a reply line 512 octets; servers' banners stay well within twice that.
MAX_REPLY_LINE = 1024
#: An EHLO reply lists a dozen extensions; past this many lines the server is not talking SMTP.
MAX_REPLY_LINES = 64
#: What the scan says to a server while asking nothing (RFC 5321 4.1.1.1 wants the client's own name).
_FALLBACK_EHLO_NAME = "scanner.invalid"
#: The dialogue's last stage: the plain part is over, and a failure from here on is the handshake's.
_IN_TLS = "in the TLS handshake after STARTTLS"


class SmtpStopped(Exception):
    """The plain dialogue ended before TLS: `reason` says where and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Dialogue:
    """What the plain part of one connection showed, filled as it goes (the handshake's timeout may cut it)."""

    ehlo_name: str
    connected: bool = False
    stage: str = "waiting for the server's greeting"
    greeting: str | None = None
    starttls: bool | None = None
    stopped: str | None = None


async def _reply(reader: asyncio.StreamReader) -> tuple[int, list[str]]:
    """One SMTP reply (RFC 5321 4.2): its code and its lines' texts. Raises SmtpStopped for what is no reply."""
    code: int | None = None
    texts: list[str] = []
    while len(texts) < MAX_REPLY_LINES:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            raise SmtpStopped("the server closed the connection") from None
        except asyncio.LimitOverrunError:
            raise SmtpStopped(f"the server sent a reply line longer than {MAX_REPLY_LINE} bytes") from None
        if len(raw) > MAX_REPLY_LINE:
            raise SmtpStopped(f"the server sent a reply line longer than {MAX_REPLY_LINE} bytes")
        line = raw.rstrip(b"\r\n").decode("utf-8", "replace")
        if len(line) < 3 or not line[:3].isdigit() or (len(line) > 3 and line[3] not in " -"):
            raise SmtpStopped(f"the server answered what is no SMTP reply ({line[:60]!r})")
        if code is not None and int(line[:3]) != code:
            raise SmtpStopped("the server's reply changed its code between lines")
        code = int(line[:3])
        texts.append(line[4:])
        if len(line) == 3 or line[3] == " ":
            return code, texts
    raise SmtpStopped(f"the server's reply ran past {MAX_REPLY_LINES} lines")


def _said(code: int, texts: list[str]) -> str:
    return f"{code} {texts[0]}".strip()[:200]


async def _starttls(dialogue: _Dialogue, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Greeting, EHLO, STARTTLS: returns when the server waits for the ClientHello; raises SmtpStopped (noted in
    `dialogue`) when it will not get there."""
    dialogue.connected = True
    try:
        code, texts = await _reply(reader)
        dialogue.greeting = _said(code, texts)
        if code != 220:  # 554: "no SMTP service here" (RFC 5321 3.1)
            raise SmtpStopped(f"the server greeted with {_said(code, texts)}, not 220")
        dialogue.stage = "waiting for the answer to EHLO"
        writer.write(f"EHLO {dialogue.ehlo_name}\r\n".encode("ascii"))
        await writer.drain()
        code, texts = await _reply(reader)
        if code != 250:
            raise SmtpStopped(f"the server answered EHLO with {_said(code, texts)}")
        dialogue.starttls = any(text.split(" ", 1)[0].upper() == "STARTTLS" for text in texts[1:])
        if not dialogue.starttls:
            writer.write(b"QUIT\r\n")
            await writer.drain()
            raise SmtpStopped("the server does not offer STARTTLS in its answer to EHLO")
        dialogue.stage = "waiting for the answer to STARTTLS"
        writer.write(b"STARTTLS\r\n")
        await writer.drain()
        code, texts = await _reply(reader)
        if code != 220:
            raise SmtpStopped(f"the server answered STARTTLS with {_said(code, texts)}")
        dialogue.stage = _IN_TLS
    except SmtpStopped as stop:
        dialogue.stopped = stop.reason
        raise
    except (ConnectionError, OSError) as exc:
        dialogue.stopped = f"the connection failed {dialogue.stage} ({exc.strerror or exc})"
        raise SmtpStopped(dialogue.stopped) from None


def ehlo_name(settings: Settings) -> str:
    """The service's own host name (Settings.base_url), else a name that is plainly no one's."""
    host = (urlsplit(settings.base_url).hostname or "").rstrip(".")
    return host if "." in host and ip_literal(host) is None else _FALLBACK_EHLO_NAME


#: Said of a connection to an MX host that timed out: the usual cause is the scanner's own network.
_BLOCKED = (
    " (many networks, clouds and CI runners among them, block outbound port 25; WEBSEC_SMTP_PORT=0 asks no mail server)"
)
#: A mail server takes a connection at once or not at all; a network that drops port 25 should cost a scan little.
SMTP_CONNECT_SECONDS = 3.0


def _asking(settings: Settings) -> Settings:
    """`settings` with the connect timeout at most SMTP_CONNECT_SECONDS."""
    limits = settings.limits
    if limits.connect_seconds <= SMTP_CONNECT_SECONDS:
        return settings
    return replace(settings, limits=replace(limits, connect_seconds=SMTP_CONNECT_SECONDS))


async def _mail_server(exchange: str, pinner: Pinner, settings: Settings) -> MailServer:
    dialogue = _Dialogue(ehlo_name(settings))

    async def before_tls(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _starttls(dialogue, reader, writer)

    tls = await pinned_tls(exchange, settings.smtp_port, pinner, _asking(settings), probes=False, before_tls=before_tls)
    if dialogue.stopped is not None:
        return MailServer(exchange, dialogue.greeting, dialogue.starttls, failure=Failure("protocol", dialogue.stopped))
    if not dialogue.connected:  # refused by the guard, unresolvable, or no connection: the handshake's failure says
        failure = tls.failure
        if failure is not None and failure.kind == "timeout":
            failure = Failure("timeout", f"{failure.message}{_BLOCKED}")
        return MailServer(exchange, failure=failure)
    if dialogue.stage != _IN_TLS:  # the handshake's timeout ran out in the plain dialogue
        failure = Failure("timeout", f"the server stopped answering, {dialogue.stage}")
        return MailServer(exchange, dialogue.greeting, dialogue.starttls, failure=failure)
    return MailServer(exchange, dialogue.greeting, True, tls=tls)


async def fetch_mail_servers(exchanges: list[str], pinner: Pinner, settings: Settings) -> tuple[MailServer, ...]:
    """Each MX host's STARTTLS and certificate, at once, in the order given (the MX hosts fetch/dns.py asked for:
    at most MAX_MX_HOSTS); () when `Settings.smtp_port` is 0."""
    if settings.smtp_port == 0 or not exchanges:
        return ()
    return tuple(await asyncio.gather(*(_mail_server(exchange, pinner, settings) for exchange in exchanges)))
