"""`MailServer.mail_tls`: what a sending server gets at an MX host, the one place the STARTTLS checks (dns_smtp.py),
DANE (dns_dane.py) and MTA-STS (dns_mail.py) read it from. The e2e tests (test_mail_servers_e2e.py) meet each state
at a real server; these hold every state, and the two that look alike (a refusal, and silence after STARTTLS)."""

from __future__ import annotations

import pytest

from websec_app.scanner.snapshot import Failure, MailServer, TlsHandshake

HOST = "mx.example.com"
WORKING = TlsHandshake(host=HOST, port=25, protocol="TLSv1.3")


@pytest.mark.parametrize(
    ("server", "state", "said"),
    [
        (MailServer(HOST, greeting="220 mx", starttls=True, tls=WORKING), "tls", WORKING),
        (
            MailServer(HOST, starttls=False, failure=Failure("protocol", "no STARTTLS in the EHLO reply")),
            "none",
            f"{HOST} does not offer STARTTLS",
        ),
        (
            MailServer(HOST, starttls=True, failure=Failure("protocol", "454 TLS not available")),
            "none",
            f"{HOST} offers STARTTLS and then fails it (454 TLS not available)",
        ),
        (
            MailServer(HOST, starttls=True, tls=TlsHandshake(HOST, 25, failure=Failure("tls", "alert 40"))),
            "none",
            f"the TLS handshake with {HOST} fails after STARTTLS (alert 40)",
        ),
        # Silence after STARTTLS: the server may be slow, or a firewall may drop it; no verdict.
        (MailServer(HOST, starttls=True, failure=Failure("timeout", "no reply in 3 s")), "unknown", "no reply in 3 s"),
        (MailServer(HOST, failure=Failure("unreachable", "connection refused")), "unknown", "connection refused"),
        (MailServer(HOST), "unknown", "no answer"),
    ],
)
def test_what_a_sending_server_gets_at_an_mx_host(server: MailServer, state: str, said: object) -> None:
    outcome = server.mail_tls
    assert (outcome.state, outcome.what) == (state, said)
    assert outcome.handshake == (said if state == "tls" else None)
    assert outcome.said("none") == (said if state == "none" else None)
    assert outcome.said("unknown") == (said if state == "unknown" else None)
