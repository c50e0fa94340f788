"""Email: rendering is pure (no server), delivery goes through a real SMTP server with STARTTLS and AUTH."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiosmtpd.controller import Controller
from bs4 import BeautifulSoup

from tests.fixtures.pki import Pki
from tests.fixtures.providers import SmtpSink
from tests.payment_fixtures import Mailbox
from websec_app.services.email import (
    FileTransport,
    MailDeliveryError,
    SmtpConfig,
    SmtpTransport,
    api_key_email,
    compliance_report_email,
    compliance_token_email,
    scan_token_email,
    to_message,
)
from websec_app.settings import SettingsError

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
SENDER = "websec <billing@websec.test>"


def test_a_scan_token_email_has_text_and_html_with_the_token_and_expiry() -> None:
    rendered = scan_token_email(to="b@example.com", token="wst_abc", expires_at=NOW, base_url="https://websec.test")

    message = email.message_from_bytes(to_message(rendered, sender=SENDER, now=NOW), policy=email.policy.default)

    assert message["Subject"] == "Your websec one-time scan token"
    assert message["To"] == "b@example.com" and message["From"] == SENDER
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = message.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert "wst_abc" in text and "2026-11-22 12:00 UTC" in text
    assert "https://websec.test/one-time-scan#token=wst_abc" in html


def test_untrusted_text_is_escaped_in_html() -> None:
    rendered = compliance_report_email(
        to="b@example.com",
        url="https://x.test/<script>alert(1)</script>",
        grade="F",
        score=3,
        pdf=b"%PDF-1.4",
        filename="x.test-websec-compliance.pdf",
    )

    assert "<script>" not in rendered.html and "&lt;script&gt;" in rendered.html


def test_the_report_pdf_is_attached() -> None:
    rendered = compliance_report_email(
        to="b@example.com", url="https://a.test/", grade="B", score=75, pdf=b"%PDF-1.4 x", filename="a.pdf"
    )

    message = email.message_from_bytes(to_message(rendered, sender=SENDER, now=NOW), policy=email.policy.default)

    [attachment] = list(message.iter_attachments())  # type: ignore[attr-defined]
    assert attachment.get_filename() == "a.pdf" and attachment.get_content_type() == "application/pdf"
    assert attachment.get_payload(decode=True) == b"%PDF-1.4 x"


def test_messages_use_crlf_line_ends() -> None:
    data = to_message(
        api_key_email(to="p@example.com", key="wsk_x", plan="Pro", scans_per_month=50, base_url="https://w.test"),
        sender=SENDER,
        now=NOW,
    )

    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://user:p%40ss@mail.example.com:587", SmtpConfig("mail.example.com", 587, "starttls", "user", "p@ss")),
        ("smtp://mail.example.com", SmtpConfig("mail.example.com", 587, "starttls")),
        ("smtps://u:p@mail.example.com", SmtpConfig("mail.example.com", 465, "ssl", "u", "p")),
        ("smtp://localhost:25?tls=none", SmtpConfig("localhost", 25, "none")),
    ],
)
def test_smtp_urls(url: str, expected: SmtpConfig) -> None:
    assert SmtpConfig.parse(url) == expected


def test_an_unknown_scheme_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="smtp:// or smtps://"):
        SmtpConfig.parse("http://mail.example.com")


def test_delivery_over_starttls_with_auth(smtp_server: SmtpSink, mailbox: Mailbox) -> None:
    transport = SmtpTransport.from_url(smtp_server.url, ssl_context=smtp_server.client_context)
    rendered = scan_token_email(to="b@example.com", token="wst_abc", expires_at=NOW, base_url="https://w.test")

    transport.send(SENDER, "b@example.com", to_message(rendered, sender=SENDER, now=NOW))

    [delivered] = mailbox.messages
    assert delivered.sender == "billing@websec.test" and delivered.recipients == ("b@example.com",)
    assert "wst_abc" in delivered.text()


def test_a_wrong_password_or_an_untrusted_certificate_is_a_delivery_error(smtp_server: SmtpSink, pki: Pki) -> None:
    wrong_password = SmtpTransport(
        SmtpConfig(smtp_server.host, smtp_server.port, "starttls", "mailer", "nope"),
        ssl_context=smtp_server.client_context,
    )
    default_trust = SmtpTransport.from_url(smtp_server.url)  # the test root is not in the system store

    for transport in (wrong_password, default_trust):
        with pytest.raises(MailDeliveryError):
            transport.send(SENDER, "b@example.com", b"Subject: x\r\n\r\nx\r\n")


def test_a_server_without_starttls_gets_no_credentials(pki: Pki) -> None:

    class Handler:  # a server that offers no STARTTLS at all
        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:  # noqa: N802
            return "250 OK"

    probe = SmtpSink(pki)  # only for a free port
    controller = Controller(Handler(), hostname="127.0.0.1", port=probe.port)
    controller.start()
    try:
        transport = SmtpTransport(SmtpConfig("127.0.0.1", probe.port, "starttls", "u", "p"))
        with pytest.raises(MailDeliveryError, match="does not offer STARTTLS"):
            transport.send(SENDER, "b@example.com", b"Subject: x\r\n\r\nx\r\n")
    finally:
        controller.stop()


@pytest.mark.parametrize(
    ("address", "envelope", "to_header"),
    [
        ("用户@例子.广告", "用户@例子.广告", "用户@例子.广告"),  # RFC 6531: SMTPUTF8, the server offers it
        ("b@bücher.example", "b@xn--bcher-kva.example", "b@xn--bcher-kva.example"),  # plain SMTP, IDNA domain
    ],
)
def test_an_internationalised_address_is_delivered(
    smtp_server: SmtpSink, mailbox: Mailbox, address: str, envelope: str, to_header: str
) -> None:
    transport = SmtpTransport.from_url(smtp_server.url, ssl_context=smtp_server.client_context)
    rendered = scan_token_email(to=address, token="wst_abc", expires_at=NOW, base_url="https://w.test")

    transport.send(SENDER, address, to_message(rendered, sender=SENDER, now=NOW))

    [delivered] = mailbox.messages
    assert delivered.recipients == (envelope,)
    assert delivered.message["To"] == to_header and "wst_abc" in delivered.text()


def test_a_server_without_smtputf8_is_a_delivery_error_for_a_non_ascii_local_part(pki: Pki) -> None:
    class Handler:
        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:  # noqa: N802
            return "250 OK"

    probe = SmtpSink(pki)  # only for a free port
    controller = Controller(Handler(), hostname="127.0.0.1", port=probe.port, enable_SMTPUTF8=False)
    controller.start()
    try:
        transport = SmtpTransport(SmtpConfig("127.0.0.1", probe.port, "none"))
        with pytest.raises(MailDeliveryError, match="does not offer SMTPUTF8"):
            transport.send(SENDER, "用户@例子.广告", b"Subject: x\r\n\r\nx\r\n")
    finally:
        controller.stop()


def test_without_smtp_messages_are_eml_files(tmp_path: Path) -> None:
    transport = FileTransport(tmp_path / "outbox")

    transport.send(SENDER, "b@example.com", b"Subject: hi\r\n\r\nbody\r\n")

    [eml] = list((tmp_path / "outbox").glob("*.eml"))
    assert eml.read_bytes() == b"Subject: hi\r\n\r\nbody\r\n"


# --- every purchase email links to the page where the bought thing is used (issue 15) -------------------------


def _links(message: email.message.EmailMessage) -> tuple[list[str], str]:
    """The HTML part's link targets, and the text part."""
    html = message.get_body(("html",)).get_content()  # type: ignore[union-attr]
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    return [a["href"] for a in BeautifulSoup(html, "html.parser").find_all("a")], text


def test_purchase_emails_link_where_the_purchase_is_used(smtp_server: SmtpSink, mailbox: Mailbox) -> None:
    # Given the three purchase emails, delivered by a real SMTP server
    base = "https://websec.test"
    transport = SmtpTransport.from_url(smtp_server.url, ssl_context=smtp_server.client_context)
    for rendered in (
        scan_token_email(to="b@example.com", token="wst_scan", expires_at=NOW, base_url=base),
        compliance_token_email(to="b@example.com", token="wsc_audit", url="https://shop.example/", base_url=base),
        api_key_email(to="b@example.com", key="wsk_secret", plan="Pro", scans_per_month=50, base_url=base),
    ):
        transport.send(SENDER, "b@example.com", to_message(rendered, sender=SENDER, now=NOW))
    scan, compliance, key = (delivered.message for delivered in mailbox.wait_for(3))

    # Then the one-time scan email opens the scan page with its token in the fragment (never sent to a server)
    [scan_link], scan_text = _links(scan)
    assert scan_link == f"{base}/one-time-scan#token=wst_scan"
    assert scan_link in scan_text and "one_time_token=" not in scan_text.split("curl")[0]

    # And the compliance email opens the compliance form with token, website and address filled in
    [compliance_link], compliance_text = _links(compliance)
    parts = urlsplit(compliance_link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{base}/compliance-report" and not parts.query
    assert parse_qs(parts.fragment) == {
        "token": ["wsc_audit"],
        "url": ["https://shop.example/"],
        "email": ["b@example.com"],
    }
    assert compliance_link in compliance_text

    # And the key email opens the Pro area, with the key in no link at all
    [pro_link], key_text = _links(key)
    assert pro_link == f"{base}/pro"
    assert f"{base}/pro" in key_text and "wsk_secret" not in pro_link


def test_the_compliance_email_promises_the_remediation_plan_the_pdf_has() -> None:
    """The compliance PDF's plan goes by points lost (tests/services/test_pdf.py), not by severity."""
    rendered = compliance_report_email(
        to="b@example.com", url="https://a.test/", grade="B", score=75, pdf=b"%PDF-1.4 x", filename="a.pdf"
    )

    for body in (rendered.text, rendered.html):
        assert "a remediation plan that puts the problems costing the most points first" in " ".join(body.split())
        assert "severity" not in body


def _alert_on_new(report: dict[str, Any], reason: str) -> Any:
    """The alert on `report` for `reason`, every finding of it new (compared with no report)."""
    from websec_app.scanner.diff import diff_reports
    from websec_app.services.email.monitor_alerts import monitor_alert_email

    return monitor_alert_email(
        to="a@example.com",
        url="https://www.example.com/",
        reasons=[reason],
        diff=diff_reports({}, report),
        report=report,
        scanned_at=datetime(2026, 11, 22, tzinfo=UTC),
        base_url="https://websec.example",
    )


def test_a_monitor_alert_gives_each_new_fix_its_note_on_how_to_apply_it() -> None:
    from tests.factories import make_snapshot
    from websec_app.report_formats._items import plain
    from websec_app.scanner.checks.headers import check_headers
    from websec_app.scanner.grading import grade
    from websec_app.scanner.rules import default_rulebook

    # Given a page without CSP, whose proposed policy comes with its rollout advice (Report-Only first)
    page = "<!DOCTYPE html><script src='https://cdn.other.net/a.js'></script>"
    snapshot = make_snapshot("https://www.example.com/", body=page)
    context = {"host": "www.example.com", "domain": "example.com", "origin": "https://www.example.com"}
    graded = grade([check_headers(snapshot)], default_rulebook(), context)
    report = {"grade": graded.grade, "score": graded.score, **graded.sections}
    csp = report["headers"]["Content-Security-Policy"]
    note = plain(csp["fix_note"])
    assert csp["fix"] and "Report-Only" in note

    # When the alert lists the fixes of the new findings
    mail = _alert_on_new(report, "New critical or important finding: Content-Security-Policy header.")

    # Then both parts give the note once, right after the policy
    lines = mail.text.splitlines()
    fix_line = next(
        i for i, line in enumerate(lines) if line.strip() == f"Content-Security-Policy header: {csp['fix']}"
    )
    assert lines[fix_line + 1].strip() == note
    assert mail.text.count(note) == 1
    fixes = BeautifulSoup(mail.html, "html.parser").find_all("li")
    csp_fix = next(li for li in fixes if li.find("code") and li.find("code").get_text() == csp["fix"])
    assert note in csp_fix.get_text() and mail.html.count("Report-Only") == 1


def test_a_monitor_alert_quotes_what_the_scan_found_of_each_new_finding() -> None:
    from tests.reports import impact_report
    from websec_app.scanner.diff import QUOTED_NOTE_CHARS as NOTE_CHARS

    # Given a report whose CSP has four notes (one quoting a hostile page, one longer than an alert quotes) and
    # whose HSTS has one, and a session cookie finding on two cookies, all new since the last run
    report = impact_report().to_dict()
    notes = ["<script>alert(1)</script> is allowed", "x" * 400, "no base-uri directive", "the fourth note"]
    report["headers"]["Content-Security-Policy"].update(note="; ".join(notes), notes=notes)
    cookie = next(f for f in report["cookies"]["findings"] if f["status"] != "good")
    cookie.update(subjects=["sid", "token"], note="sid: sent over HTTP; token: sent over HTTP")
    cookie["notes"] = ["sid: sent over HTTP", "token: sent over HTTP"]

    # When the alert is written
    mail = _alert_on_new(report, "The grade dropped from A to F.")

    # Then each new finding's line is followed by its first three notes, one a line, a long one cut, and how many
    # more the site page has
    lines = mail.text.splitlines()
    at = next(i for i, line in enumerate(lines) if "Content-Security-Policy header" in line and line.startswith("  -"))
    assert [line.strip() for line in lines[at + 1 : at + 5]] == [
        f"Found: {notes[0]}",
        f"Found: {'x' * (NOTE_CHARS - 1)}…",
        f"Found: {notes[2]}",
        "(and 1 more note on the site page)",
    ]
    hsts = next(i for i, line in enumerate(lines) if "Strict-Transport-Security header" in line)
    assert lines[hsts + 1].strip() == "Found: max-age=300"
    # and a finding on several cookies, one change per cookie, quotes none (its notes are not told apart by cookie)
    assert "Found: sid" not in mail.text and "Found: token" not in mail.text
    # and the HTML holds the page's text as text
    items = [li.get_text() for li in BeautifulSoup(mail.html, "html.parser").find_all("li")]
    assert f"Found: {notes[0]}" in items and "<script>" not in mail.html
