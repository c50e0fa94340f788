"""`python -m websec_app account`: the Pro account use cases behind a new interface, the shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clock import TEST_NOW
from websec_app.cli import main
from websec_app.settings import get_settings
from websec_app.store import (
    SCAN_PRO,
    SUBSCRIPTION_CANCELLED,
    check_api_key,
    create_subscription,
    database_for,
    issue_api_key,
    record_scan,
    reserve_monthly_scan,
    revoke_api_key,
    set_subscription_status,
)


@pytest.fixture
def pro_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A subscriber with two scans this month, in the database the command will open (WEBSEC_DATA_DIR)."""
    monkeypatch.setenv("WEBSEC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("WEBSEC_DATABASE_URL", raising=False)
    monkeypatch.setenv("WEBSEC_CLOCK_START", TEST_NOW.isoformat())
    get_settings.cache_clear()
    database = database_for(get_settings().resolved_database_url)
    with database.session() as session:
        subscription = create_subscription(session, email="ops@example.com", now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW).key
        for url, grade, score in (("https://a.example/", "B", 80), ("https://b.example/", "A+", 98)):
            reserve_monthly_scan(session, subscription.id, TEST_NOW, 50)
            record_scan(
                session,
                kind=SCAN_PRO,
                url=url,
                final_url=url,
                grade=grade,
                score=score,
                algorithm_version="test",
                now=TEST_NOW,
                subscription_id=subscription.id,
            )
    yield key
    database.dispose()
    get_settings.cache_clear()


def test_the_account_shows_plan_usage_and_recent_scans(
    pro_key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WEBSEC_API_KEY", pro_key)

    assert main(["account", "--recent", "1"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ops@example.com: Pro"
    assert lines[1] == "2 of 50 scans used this month, 48 left; resets 2026-12-01 00:00 UTC"
    assert len(lines) == 3 and lines[2].endswith("pro      https://b.example/")


def test_a_revoked_key_is_refused_with_exit_1(
    pro_key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with database_for(get_settings().resolved_database_url).session() as session:
        revoke_api_key(session, pro_key, TEST_NOW)
    monkeypatch.setenv("WEBSEC_API_KEY", pro_key)

    assert main(["account"]) == 1
    assert "refused (revoked)" in capsys.readouterr().err


def test_a_cancelled_subscription_says_that_pro_bought_again_has_a_new_key(
    pro_key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with database_for(get_settings().resolved_database_url).session() as session:
        check = check_api_key(session, pro_key)
        assert check.subscription_id is not None
        set_subscription_status(session, check.subscription_id, SUBSCRIPTION_CANCELLED, TEST_NOW)
    monkeypatch.setenv("WEBSEC_API_KEY", pro_key)

    assert main(["account"]) == 1
    assert capsys.readouterr().err == (
        "error: the key is refused (subscription inactive): The Pro subscription for this API key was cancelled, "
        "and a cancelled subscription cannot be renewed. To scan with Pro again, subscribe again: the new "
        "subscription comes with a new key.\n"
    )


def test_without_a_key_it_says_where_to_put_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("WEBSEC_API_KEY", raising=False)
    assert main(["account"]) == 2
    assert "WEBSEC_API_KEY" in capsys.readouterr().err
