"""Our own /.well-known/security.txt (RFC 9116), checked by our own scanner's parser and rules."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FrozenClock
from websec_app.scanner.records.security_txt import parse_security_txt
from websec_app.settings import Settings, SettingsError


async def test_the_service_publishes_a_valid_security_txt(
    make_api: Callable[..., FastAPI], settings: Settings, clock: FrozenClock
) -> None:
    api = make_api(settings=dataclasses.replace(settings, base_url="https://websec.example"))
    async with client_for(api) as client:
        response = await client.get("/.well-known/security.txt")
        legacy = await client.get("/security.txt", follow_redirects=False)

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    parsed = parse_security_txt(response.text)
    assert parsed.values("contact") == ["mailto:security@websec.example"]
    assert parsed.values("canonical") == ["https://websec.example/.well-known/security.txt"]
    assert parsed.values("preferred-languages") == ["en"]
    expires = datetime.fromisoformat(parsed.values("expires")[0].replace("Z", "+00:00"))
    days_ahead = (expires - clock()).days
    assert 150 <= days_ahead < 365 and expires.tzinfo == UTC
    assert parsed.problems == () and parsed.invalid_lines == ()
    assert legacy.status_code == 301 and legacy.headers["location"] == "/.well-known/security.txt"


async def test_a_plain_http_base_url_is_no_canonical_address(
    make_api: Callable[..., FastAPI], settings: Settings
) -> None:
    # Given the development default, a plain-HTTP base URL
    api = make_api(settings=dataclasses.replace(settings, base_url="http://localhost:3000"))
    async with client_for(api) as client:
        parsed = parse_security_txt((await client.get("/.well-known/security.txt")).text)

    # Then the file names no Canonical (RFC 9116 2.5.2: a web URI there must be https) and is valid as it is
    assert parsed.values("canonical") == []
    assert parsed.problems == () and parsed.invalid_lines == ()
    assert parsed.values("contact") == ["mailto:security@localhost"]


async def test_the_contact_comes_from_the_settings(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    api = make_api(settings=dataclasses.replace(settings, security_contact="https://websec.example/report"))
    async with client_for(api) as client:
        text = (await client.get("/.well-known/security.txt")).text

    assert "Contact: https://websec.example/report\n" in text


def test_the_contact_setting_must_be_a_uri_security_txt_allows() -> None:
    env = {"WEBSEC_SECURITY_CONTACT": "mailto:security@websec.example"}
    assert Settings.from_env(env).security_contact == "mailto:security@websec.example"
    with pytest.raises(SettingsError, match="WEBSEC_SECURITY_CONTACT"):
        Settings.from_env({"WEBSEC_SECURITY_CONTACT": "security@websec.example"})
