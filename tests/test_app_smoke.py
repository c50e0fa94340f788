"""The app starts the way `make run` starts it and serves the UI and the API on one port.

Given the service started with `make run` (Reflex prod mode) on a free port,
when a client asks for the home page, the API and the Reflex event endpoint,
then all of them answer on that same port.
"""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.ports import free_port
from tests.fixtures.processes import make_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with make_run(os.environ, tmp_path_factory.mktemp("app"), free_port()) as (base_url, seconds):
        print(f"`make run` served {base_url} after {seconds:.1f}s")
        yield base_url


def test_home_page_is_the_html_ui(app_url: str) -> None:
    response = httpx.get(f"{app_url}/", timeout=10)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "<title>websec" in response.text
    assert "https://example.com" in response.text  # the prerendered URL field
    assert "Built with Reflex" not in response.text


def test_api_answers_json_on_the_same_port(app_url: str) -> None:
    response = httpx.get(f"{app_url}/api/health", timeout=10)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"status": "ok"}


def test_openapi_docs_are_served_on_the_same_port(app_url: str) -> None:
    docs = httpx.get(f"{app_url}/docs", timeout=10)
    schema = httpx.get(f"{app_url}/openapi.json", timeout=10)

    assert docs.status_code == 200
    assert docs.headers["content-type"].startswith("text/html")
    assert "/api/health" in schema.json()["paths"]


def _websocket_first_message(base_url: str, path: str) -> tuple[str, str]:
    """Open a WebSocket (RFC 6455 section 4.1) by hand and return the status line and the first text frame."""
    url = httpx.URL(base_url)
    host, port = url.host, url.port or 80
    with socket.create_connection((host, port), timeout=10) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(4096) or b"\r\n\r\n"
        head, _, frame = data.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].decode()
        if " 101 " not in status_line:
            return status_line, ""
        while len(frame) < 2:
            frame += sock.recv(4096)
        length = frame[1] & 0x7F  # the engine.io OPEN packet is short: a one-byte length, unmasked
        while len(frame) < 2 + length:
            frame += sock.recv(4096)
        return status_line, frame[2 : 2 + length].decode()


def test_reflex_event_endpoint_is_on_the_same_port(app_url: str) -> None:
    """The UI talks to its state over socket.io at /_event; an engine.io handshake proves it is there."""
    status_line, message = _websocket_first_message(app_url, "/_event/?EIO=4&transport=websocket")

    assert " 101 " in status_line
    assert message.startswith('0{"sid":')  # engine.io OPEN packet


def test_static_assets_are_served(app_url: str) -> None:
    response = httpx.get(f"{app_url}/favicon.ico", timeout=10)

    assert response.status_code == 200
    assert response.content[:4] == b"\x00\x00\x01\x00"  # ICO header
