"""A monitor's certificate-expiry alert reads every certificate the scan met: the page's, and the one of the
address scanned when the page is on another host (`tls.entry_certificate`), which visitors meet first and which
expires on its own schedule. The sooner one warns, named by its host when it is not the page's."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tests.factories import make_certificate, make_handshake, make_snapshot
from websec_app.scanner.scan import grade_snapshot
from websec_app.usecases.monitors import alert_reasons


def body(page_days: int, entry_days: int | None) -> dict[str, Any]:
    tls: dict[str, Any] = {"certificate": {"days_to_expiry": page_days}}
    if entry_days is not None:
        tls["entry_certificate"] = {"host": "example.com", "days_to_expiry": entry_days}
    return {"grade": "A", "score": 90, "tls": tls}


def test_the_address_scanneds_certificate_expiring_first_warns_by_its_host() -> None:
    reasons, threshold = alert_reasons(None, body(80, 10), None, None)
    assert reasons == ["The certificate of example.com expires in 10 days."] and threshold == 14
    # and a page's certificate expiring first warns as before, the other one unsaid
    assert alert_reasons(None, body(2, 10), None, None)[0] == ["The certificate expires in 2 days."]
    assert alert_reasons(None, body(2, None), None, None)[0] == ["The certificate expires in 2 days."]
    assert alert_reasons(None, body(80, -1), None, None)[0] == ["The certificate of example.com has expired."]


def test_a_scan_keeps_the_dates_of_the_address_scanneds_certificate() -> None:
    # Given example.com (its certificate ending 2026-12-02, ten days after the scan) redirecting to www.example.com
    ending = make_certificate(names=("example.com",), not_after=datetime(2026, 12, 2, 12, tzinfo=UTC))
    page = make_snapshot("https://www.example.com/", tls=make_handshake("www.example.com"))
    snapshot = replace(page, entry_tls=make_handshake("example.com", certificate=ending))
    tls = grade_snapshot(snapshot).to_dict()["tls"]
    assert tls["entry_certificate"]["host"] == "example.com" and tls["entry_certificate"]["days_to_expiry"] == 10
    # Then a monitor warns of it, though the page's certificate has months left
    assert alert_reasons(None, {"grade": "A", "score": 90, "tls": tls}, None, None)[0] == [
        "The certificate of example.com expires in 10 days."
    ]
    # And without a redirect to another host there is no such entry
    assert "entry_certificate" not in grade_snapshot(page).to_dict()["tls"]
