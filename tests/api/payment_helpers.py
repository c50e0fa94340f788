"""Helpers for the end-to-end payment tests: the app wired to the stand-ins, webhooks, secrets from emails."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Protocol

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.fixtures.providers.smtp import Delivered
from websec_app.services.payments import PaymentService
from websec_app.settings import Settings


@pytest.fixture(name="client")
async def paid_client(
    make_api: Callable[..., FastAPI], paid_settings: Settings, service: PaymentService, worker: object
) -> AsyncIterator[httpx.AsyncClient]:
    """The `client` of a payment test module (imported there): the API with the payment service wired to the
    stand-ins, and the outbox worker running."""
    async with client_for(make_api(settings=paid_settings, payments=service)) as http:
        yield http


class Signed(Protocol):
    body: bytes
    headers: dict[str, str]


async def deliver(client: httpx.AsyncClient, provider: str, webhook: Signed) -> httpx.Response:
    """POST a signed webhook to our app, exactly as the provider would."""
    return await client.post(f"/api/webhooks/{provider}", content=webhook.body, headers=webhook.headers)


def secret_in(mail: Delivered, prefix: str) -> str:
    """The token or key (`wst_`, `wsc_`, `wsk_`) an email carries, from its text part."""
    found = re.search(rf"\b{prefix}[A-Za-z0-9_-]{{43}}\b", mail.text())
    assert found is not None, f"no {prefix}... in {mail.message['Subject']!r}"
    return found.group(0)


def to(mails: list[Delivered], recipient: str, subject_part: str) -> list[Delivered]:
    return [m for m in mails if recipient in m.recipients and subject_part in str(m.message["Subject"])]
