"""API keys: only a hash is stored, the plain key is returned once, rotation and revocation act at once."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
from sqlmodel import select

from websec_app.store import (
    SUBSCRIPTION_CANCELLED,
    ActiveKeyExists,
    ApiKey,
    Database,
    KeyStatus,
    check_api_key,
    create_subscription,
    find_active_subscription,
    issue_api_key,
    list_api_keys,
    revoke_api_key,
    rotate_api_key,
    set_subscription_status,
)

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def new_subscription(database: Database, email: str = "k@example.com") -> int:
    with database.session() as session:
        subscription_id = create_subscription(session, email=email, now=NOW).id
    assert subscription_id is not None
    return subscription_id


def test_only_the_hash_of_a_key_is_stored(any_database: Database) -> None:
    sub = new_subscription(any_database)
    with any_database.session() as session:
        issued = issue_api_key(session, sub, NOW)
        [row] = session.exec(select(ApiKey)).all()

    assert issued.key.startswith("wsk_") and len(issued.key) == 4 + 43
    assert row.key_hash == hashlib.sha256(issued.key.encode()).hexdigest()
    assert issued.key not in {str(v) for v in row.model_dump().values()}
    assert row.prefix == issued.key[:8]


def test_a_key_checks_out_with_its_owner(any_database: Database) -> None:
    sub = new_subscription(any_database, "Owner@Example.com")
    with any_database.session() as session:
        issued = issue_api_key(session, sub, NOW)
        check = check_api_key(session, issued.key)

    assert check.valid
    assert (check.key_id, check.subscription_id, check.email, check.plan) == (
        issued.key_id,
        sub,
        "owner@example.com",
        "pro",
    )


@pytest.mark.parametrize("presented", ["", "wsk_", "wsk_" + "A" * 43, "x" * 10_000, "wsk_\u00e9\ud800"])
def test_unknown_keys_are_unknown(database: Database, presented: str) -> None:
    with database.session() as session:
        assert check_api_key(session, presented).status is KeyStatus.UNKNOWN


def test_a_second_key_needs_a_rotation(any_database: Database) -> None:
    sub = new_subscription(any_database)
    with any_database.session() as session:
        first = issue_api_key(session, sub, NOW)
        with pytest.raises(ActiveKeyExists) as raised:
            issue_api_key(session, sub, NOW)

    assert raised.value.prefix == first.prefix


def test_rotation_replaces_the_key(any_database: Database) -> None:
    sub = new_subscription(any_database)
    with any_database.session() as session:
        old = issue_api_key(session, sub, NOW)
        new = rotate_api_key(session, sub, NOW)

        assert check_api_key(session, old.key).status is KeyStatus.REVOKED
        assert check_api_key(session, new.key).valid
        assert [(k.key_id, k.active) for k in list_api_keys(session)] == [(old.key_id, False), (new.key_id, True)]


def test_revocation_is_immediate_and_once(any_database: Database) -> None:
    sub = new_subscription(any_database)
    with any_database.session() as session:
        issued = issue_api_key(session, sub, NOW)

        assert revoke_api_key(session, issued.key, NOW) is True
        assert revoke_api_key(session, issued.key, NOW) is False
        assert check_api_key(session, issued.key).status is KeyStatus.REVOKED


def test_a_cancelled_subscription_disables_its_key(any_database: Database) -> None:
    sub = new_subscription(any_database)
    with any_database.session() as session:
        issued = issue_api_key(session, sub, NOW)
        set_subscription_status(session, sub, SUBSCRIPTION_CANCELLED, NOW)

        assert check_api_key(session, issued.key).status is KeyStatus.SUBSCRIPTION_INACTIVE
        assert find_active_subscription(session, "k@example.com") is None
