"""Every error is {"error": "<sentence>"}: malformed bodies (400, never 422), unknown routes, wrong methods."""

from __future__ import annotations

import httpx
import pytest

from websec_app.store import IssuedKey


@pytest.mark.parametrize(
    ("content", "headers", "message"),
    [
        (b"{not json", {"Content-Type": "application/json"}, "The request body is not valid JSON."),
        (b"", {"Content-Type": "application/json"}, "A JSON request body is required."),
        (b"", {}, "A JSON request body is required."),
        (b"[1, 2]", {"Content-Type": "application/json"}, "The request body must be a JSON object."),
        (b'"example.com"', {"Content-Type": "application/json"}, "The request body must be a JSON object."),
        (b"{}", {"Content-Type": "application/json"}, "The field 'url' is required."),
        (b'{"url": 42}', {"Content-Type": "application/json"}, "The field 'url' must be a string."),
        (b'{"url": null}', {"Content-Type": "application/json"}, "The field 'url' must be a string."),
        (
            b'{"url": "a.com", "one_time_token": 7}',
            {"Content-Type": "application/json"},
            "The field 'one_time_token' must be a string.",
        ),
        (
            b"url=example.com",
            {"Content-Type": "application/x-www-form-urlencoded"},
            "The request body must be JSON, sent with Content-Type: application/json.",
        ),
        (
            b'{"url": "example.com"}',
            {"Content-Type": "application/x-www-form-urlencoded"},
            "The request body must be JSON, sent with Content-Type: application/json.",
        ),
        (
            b'{"url": "example.com"}',
            {"Content-Type": "text/plain"},
            "The request body must be JSON, sent with Content-Type: application/json.",
        ),
    ],
)
async def test_malformed_bodies_are_400(
    client: httpx.AsyncClient, content: bytes, headers: dict[str, str], message: str
) -> None:
    response = await client.post("/api/scan", content=content, headers=headers)

    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": message}


async def test_an_empty_url_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan", json={"url": "  "})

    assert response.status_code == 400
    assert response.json() == {"error": "A URL is required"}


@pytest.mark.parametrize("value", ["maybe", "true", "false", "yes", "on", "off", "", "01"])
async def test_a_full_parameter_other_than_1_or_0_is_400(client: httpx.AsyncClient, value: str) -> None:
    """Spec 4.1 defines `full=1`; docs/api.md: anything but 1 or 0 is a 400, not read as a boolean."""
    response = await client.post("/api/scan", params={"full": value}, json={"url": "example.com"})

    assert response.status_code == 400
    assert response.json() == {"error": "The query parameter 'full' must be 1 or 0."}


async def test_pro_body_errors_are_400_after_a_valid_key(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    response = await client.post("/api/scan/pro", json={"uri": "example.com"}, headers={"X-API-Key": pro_key.key})

    assert response.status_code == 400
    assert response.json() == {"error": "The field 'url' is required."}


BATCH_NEEDS_ONE = "The request body must give 'url' or 'urls', not both."


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # Objects that name both or neither: the model's own objection, not "must be a JSON object"
        (b'{"url": "a.test", "urls": ["b.test"]}', BATCH_NEEDS_ONE),
        (b"{}", BATCH_NEEDS_ONE),
        (b'{"callback_url": "https://x.test/"}', BATCH_NEEDS_ONE),
        # A body that is no object at all still says so
        (b'["a.test"]', "The request body must be a JSON object."),
        (b'"a.test"', "The request body must be a JSON object."),
        (b"null", "The request body must be a JSON object."),
        (b'{"urls": []}', "The field 'urls' is invalid: List should have at least 1 item after validation, not 0."),
    ],
)
async def test_a_batch_body_says_what_is_wrong_with_it(
    client: httpx.AsyncClient, pro_key: IssuedKey, body: bytes, message: str
) -> None:
    response = await client.post(
        "/api/scans", content=body, headers={"X-API-Key": pro_key.key, "Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": message}


@pytest.mark.parametrize(
    ("path", "content", "message"),
    [
        (
            "/api/report/pdf",
            b'{"url": "a.com", "name": "' + b"x" * 81 + b'"}',
            "The field 'name' must be at most 80 characters.",
        ),
        ("/api/scan/pro", b"{}", "The field 'url' is required."),
        ("/api/scan/pro", b'{"url": 42}', "The field 'url' must be a string."),
        ("/api/scan/pro", b"{", "The request body is not valid JSON."),
    ],
)
async def test_pro_body_errors_tell_the_scans_left(
    client: httpx.AsyncClient, pro_key: IssuedKey, path: str, content: bytes, message: str
) -> None:
    """Spec 8: X-Scans-Remaining after each Pro scan or PDF call, a 400 for its body as for its URL."""
    headers = {"X-API-Key": pro_key.key, "Content-Type": "application/json"}
    response = await client.post(path, content=content, headers=headers)

    assert response.status_code == 400
    assert response.json() == {"error": message}
    assert response.headers["X-Scans-Remaining"] == "50"


async def test_body_errors_of_a_refused_key_tell_no_scans_left(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan/pro", json={}, headers={"X-API-Key": "wsk_unknown"})

    assert response.status_code == 403
    assert "X-Scans-Remaining" not in response.headers


async def test_an_unknown_route_is_404_json(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/nothing-here")

    assert response.status_code == 404
    assert response.json() == {"error": "There is no endpoint at /api/nothing-here. The API is described at /docs."}


async def test_a_wrong_method_is_405_json(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/scan")

    assert response.status_code == 405
    assert response.json() == {"error": "GET is not allowed on /api/scan; use POST."}
    assert response.headers["Allow"] == "POST"


async def test_head_is_get_without_content_on_every_get_endpoint(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    """RFC 9110 9.3.2: HEAD answers what GET would, headers and status, without content; 9.1: a general-purpose
    server supports it wherever GET works. Also on the raw-ASGI key endpoints and the error answers."""
    api_key = pro_key.key
    cases = [
        ("/api/health", {}),
        ("/.well-known/security.txt", {}),
        ("/api/verify-key", {"X-API-Key": api_key}),
        ("/api/verify-key", {}),  # 401
        (f"/api/usage?key={api_key}", {}),
        ("/docs", {}),
    ]
    for path, headers in cases:
        got = await client.get(path, headers=headers)
        head = await client.head(path, headers=headers)

        assert head.status_code == got.status_code != 405, path
        assert head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == str(len(got.content)), path


async def test_head_where_there_is_no_get_is_405(client: httpx.AsyncClient) -> None:
    response = await client.head("/api/scan")

    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.content == b""


async def test_errors_never_contain_html_or_tracebacks(client: httpx.AsyncClient) -> None:
    responses = [
        await client.post("/api/scan", content=b"<html>"),
        await client.delete("/api/usage"),
        await client.get("/nope"),
    ]

    for response in responses:
        assert response.headers["content-type"] == "application/json"
        assert set(response.json()) == {"error"}
        assert "Traceback" not in response.text and "<" not in response.json()["error"]


async def test_unknown_api_paths_are_json_even_when_mounted_in_the_ui() -> None:
    # Given the API mounted the way rx.App(api_transformer=...) does: everything else goes to the UI app
    from fastapi import FastAPI
    from starlette.responses import HTMLResponse

    from api_routes import create_api
    from tests.api.conftest import client_for
    from websec_app.settings import Settings

    ui = FastAPI()

    @ui.get("/{path:path}")
    async def page(path: str) -> HTMLResponse:
        return HTMLResponse("<html>UI</html>", status_code=404)

    api = create_api(Settings(database_url="sqlite://"))  # in-memory: this test touches no table
    api.mount("", ui)

    async with client_for(api) as client:
        unknown = await client.get("/api/nothing-here")
        wrong_method = await client.delete("/api/verify-key")
        page = await client.get("/some/page")

    assert unknown.status_code == 404 and unknown.json()["error"].startswith("There is no endpoint")
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {"error": "DELETE is not allowed on /api/verify-key; use GET, HEAD."}
    assert page.text == "<html>UI</html>"
