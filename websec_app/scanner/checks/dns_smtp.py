"""The domain's MX hosts as a sending mail server meets them (fetch/smtp.py): whether each offers STARTTLS and
completes the TLS handshake after it (RFC 3207), and whether its certificate is valid for its name, which MTA-STS
requires in enforce mode (RFC 8461 4.2; dns_mail.py) and DANE replaces with the TLSA records (RFC 7672; dns_dane.py).

Without MTA-STS or DANE, senders deliver over any TLS they get, and without TLS when STARTTLS is missing or fails
(opportunistic TLS, RFC 7435): a host without working STARTTLS has its mail go in cleartext, readable on the path.
A host the scan could not ask (no connection to port 25, which many networks block, a greeting that refuses the
scanner, silence) is "could not check", never a verdict. Pure: what the hosts said comes from the snapshot."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ...wording import time_left
from ..findings import Finding, noted
from ..snapshot import MailServer, SiteSnapshot, TlsHandshake
from ._dns_shared import addressless, series
from .tls import EXPIRY_URGENT_DAYS

#: What the grading handshake, which offers up to TLS 1.3, negotiates only with a server that has nothing newer:
#: versions RFC 8996 deprecates.
_OUTDATED = ("SSLv3", "TLSv1", "TLSv1.1")


def _said_of(tls: TlsHandshake, now: datetime) -> str:
    """ "TLSv1.3", and what an MTA-STS sender would refuse of the certificate (opportunistic senders take any)."""
    problem = tls.refused_by_browsers(now)
    return f"{tls.protocol}; {problem}" if problem else str(tls.protocol)


def _described(server: MailServer, now: datetime) -> dict[str, Any]:
    shown: dict[str, Any] = {"greeting": server.greeting, "starttls": server.starttls}
    outcome = server.mail_tls
    tls = outcome.handshake
    if tls is not None:
        problem = tls.refused_by_browsers(now)  # RFC 8461 4.2: a browser's test
        shown["protocol"] = tls.protocol
        shown["cipher"] = tls.cipher
        shown["certificate"] = problem or f"valid for {server.host}"
        if tls.leaf is not None:
            shown["days_to_expiry"] = (tls.leaf.not_after - now).days
    else:
        shown["problem" if outcome.state == "none" else "error"] = outcome.what
    return {key: value for key, value in shown.items() if value is not None}


def starttls_findings(snapshot: SiteSnapshot, details: dict[str, Any], receives: bool | None) -> list[Finding]:
    """dns.mx_starttls (with dns.mx_cert_expires_soon for a certificate that expires within two weeks or has expired,
    and dns.mx_tls_outdated for a host that has nothing newer than TLS 1.1), dns.mx_no_starttls, and a check.error
    for each MX host the scan could not ask."""
    servers = snapshot.mail_servers
    if receives is not True or not servers:
        return []
    now = snapshot.fetched_at
    details["mail_servers"] = {server.host: _described(server, now) for server in servers}
    findings = [
        Finding("check.error", subject=f"STARTTLS of {server.host}", note=why)
        for server in servers
        if (why := server.mail_tls.said("unknown")) is not None and not addressless(snapshot.dns, server.host)
    ]
    problems = [problem for server in servers if (problem := server.mail_tls.said("none")) is not None]
    if problems:
        return [noted("dns.mx_no_starttls", [f"{p}: mail to it travels in cleartext" for p in problems]), *findings]
    working = [(server.host, tls) for server in servers if (tls := server.mail_tls.handshake) is not None]
    if working:
        note = series([f"{host} ({_said_of(tls, now)})" for host, tls in working])
        findings.insert(0, Finding("dns.mx_starttls", note=f"STARTTLS works at {note}"))
    outdated = [f"{host} ({tls.protocol})" for host, tls in working if tls.protocol in _OUTDATED]
    if outdated:
        note = f"{series(outdated)} negotiate{'s' if len(outdated) == 1 else ''} nothing newer"
        findings.insert(1, Finding("dns.mx_tls_outdated", note=note))
    expiring = [said for _, tls in working if (said := certificate_expiring(tls, now)) is not None]
    if expiring:
        findings.insert(1, noted("dns.mx_cert_expires_soon", expiring))
    return findings


def certificate_expiring(tls: TlsHandshake, now: datetime) -> str | None:
    """ "the certificate of mx.example.com expires in 9 days (on 2026-12-01)", or "expired 3 days ago", for a
    certificate that senders which authenticate the host (MTA-STS's test, DANE-TA's) accept but for its date (trusted,
    naming it) and that expires within two weeks, as the web server's (checks/tls.py EXPIRY_URGENT_DAYS), or has
    expired: a finding for it stays until it is renewed, rather than read as fixed the day it expires. None for any
    other (the STARTTLS note says what senders refuse of it)."""
    leaf = tls.leaf
    if leaf is None or not (tls.trusted and tls.hostname_matches) or leaf.not_before > now:
        return None
    left = leaf.not_after - now
    if left.days >= EXPIRY_URGENT_DAYS:
        return None
    when = f"expires in {time_left(left)}" if left > timedelta(0) else f"expired {time_left(-left)} ago"
    return f"the certificate of {tls.host} {when} (on {leaf.not_after:%Y-%m-%d})"
