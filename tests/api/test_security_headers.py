"""The service grades itself A+ by its own rules (issue 7, "The service's own security").

Given the API built with test fakes, and a page shaped like Reflex's prerendered HTML (inline scripts,
a module bootstrap) mounted inside it the way Reflex mounts its frontend,
when our scanner's pure checks grade snapshots made of the real responses (served over HTTPS, with a good
TLS handshake and DNS standing in for the terminating proxy),
then the header, cookie, cross-origin, CORS and fingerprint sections have nothing worse than the
documented trade-offs, and the grade is A+.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from api_routes.middleware.security_headers import API_CSP, SecurityHeaders, inline_script_hashes
from tests.api.conftest import client_for
from tests.factories import cipher_probes, make_handshake, make_response, make_snapshot, protocol_probes
from websec_app.scanner.fetch.cors_origins import cors_probe_origins
from websec_app.scanner.records.csp import parse_policy
from websec_app.scanner.scan import grade_snapshot
from websec_app.scanner.snapshot import CorsProbe
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

PAGE = (
    b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>websec</title>'
    b"<script>\nif (typeof document !== 'undefined') { document.documentElement.dataset.x = '1'; }\n</script>"
    b'<link rel="modulepreload" href="/assets/root.js">'
    b'<script>window.__reactRouterContext = {"basename":"/"};</script>'
    b'<script type="module" async="">import "/assets/manifest.js";\nimport("/assets/entry.client.js");</script>'
    b'<script src="/assets/x.js"></script>'
    b"</head><body><main>Scan a site</main></body></html>"
)
#: What the pages may still cost, by outcome: the trade-offs documented in api_routes/security_headers.py.
ACCEPTED = {"csp.unsafe_inline_style", "coop.allow_popups", "coep.missing"}
HEADER_SECTIONS = ("headers", "cookies", "cross_origin", "cors", "server_fingerprint")


def _frontend(request: Any) -> Response:
    return HTMLResponse(PAGE) if request.url.path == "/" else PlainTextResponse("console.log(1)")


@pytest.fixture
def service(make_api: Callable[..., FastAPI]) -> FastAPI:
    """The API with a stand-in for Reflex's frontend mounted inside it, as `rx.App(api_transformer=...)` does."""
    api = make_api()
    api.router.routes.append(Route("/", _frontend))
    return api


async def _get(app: FastAPI, path: str, **headers: str) -> httpx.Response:
    async with client_for(app) as client:
        client.base_url = httpx.URL("https://websec.example")
        return await client.get(path, headers=headers)


def _recorded(url: str, response: httpx.Response) -> Any:
    return make_response(url, response.status_code, list(response.headers.multi_items()), response.content, None)


async def _self_grade(app: FastAPI, path: str) -> Any:
    url = f"https://websec.example{path}"
    main = await _get(app, path)
    probes = [
        CorsProbe(kind, origin, _recorded(url, await _get(app, path, origin=origin)))
        for kind, origin in cors_probe_origins(parse_target(url))
    ]
    snapshot = make_snapshot(
        url,
        headers=list(main.headers.multi_items()),
        body=main.content,
        status=main.status_code,
        content_type=None,
        cors_probes=tuple(probes),
        tls=make_handshake("websec.example", protocols=protocol_probes(), cipher_probes=cipher_probes()),
    )
    return grade_snapshot(snapshot)


def _problems(report: Any) -> list[str]:
    """Every non-good finding of the header-like sections that is not an accepted trade-off."""
    problems = []
    for name in HEADER_SECTIONS:
        section = report.sections.get(name, {})
        findings = list(section.get("findings", []))
        findings += [entry for entry in section.values() if isinstance(entry, dict) and "check" in entry]
        for finding in findings:
            if finding.get("status") != "good" and finding.get("check") not in ACCEPTED:
                problems.append(f"{name}: {finding.get('check')} {finding.get('status')} {finding.get('note')}")
    return problems


@pytest.mark.parametrize(
    "path", ["/", "/api/health", "/docs", "/redoc", "/openapi.json", "/api/no-such-endpoint", "/api/badge?url=a.test"]
)
async def test_the_service_grades_itself_a_plus(service: FastAPI, path: str) -> None:
    report = await _self_grade(service, path)

    csp = report.sections["headers"]["Content-Security-Policy"]
    assert report.grade == "A+", (report.score, report.caps, _problems(report))
    assert csp["present"] and csp["status"] in ("good", "warn"), csp
    assert report.sections["headers"]["Strict-Transport-Security"]["status"] == "good"
    assert _problems(report) == []


async def test_a_page_csp_lists_exactly_its_inline_scripts_and_no_unsafe_inline_script(service: FastAPI) -> None:
    response = await _get(service, "/")

    policy = parse_policy(response.headers["content-security-policy"])
    script_src = policy.get("script-src") or ()
    assert [s for s in script_src if s.startswith("'sha256-")] == inline_script_hashes(PAGE)
    assert len(inline_script_hashes(PAGE)) == 3  # the src= script is not inline
    assert "'unsafe-inline'" not in script_src
    assert policy.get("frame-ancestors") == ("'none'",) and policy.get("object-src") == ("'none'",)


async def test_a_page_csp_allows_no_eval(service: FastAPI) -> None:
    # The checkout opens Razorpay with a function compiled into the page, not rx.call_script's eval.
    policy = parse_policy((await _get(service, "/")).headers["content-security-policy"])

    assert "'unsafe-eval'" not in (policy.get("script-src") or ())
    assert "'unsafe-eval'" not in (policy.get("default-src") or ())


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
async def test_the_docs_policy_names_no_other_host(service: FastAPI, path: str) -> None:
    response = await _get(service, path)
    policy = parse_policy(response.headers["content-security-policy"])

    sources = [source for _, values in policy.directives for source in values]
    assert [s for s in sources if "." in s or "://" in s or s in ("*", "https:", "http:")] == []
    script_src = policy.get("script-src") or ()
    assert "'self'" in script_src and "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert [s for s in script_src if s.startswith("'sha256-")] == inline_script_hashes(response.content)


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
async def test_our_page_checks_find_nothing_third_party_on_the_docs(service: FastAPI, path: str) -> None:
    # Before: Swagger UI from cdn.jsdelivr.net without integrity cost /docs 7 points (page.sri_missing_*).
    report = await _self_grade(service, path)

    page = report.sections["page_analysis"]
    outcomes = [f.get("check") for f in page.get("findings", [])]
    outcomes += [entry.get("check") for entry in page.values() if isinstance(entry, dict) and "check" in entry]
    assert not [o for o in outcomes if o and o.startswith("page.sri_") and o != "page.sri_ok"], outcomes
    assert report.score >= 97, (report.score, _problems(report))


async def test_a_gzip_encoded_page_is_hashed_from_its_decoded_body(make_api: Callable[..., FastAPI]) -> None:
    import gzip

    def compressed(request: Any) -> Response:
        return Response(gzip.compress(PAGE), media_type="text/html", headers={"Content-Encoding": "gzip"})

    api = make_api()
    api.router.routes.append(Route("/", compressed))
    response = await _get(api, "/")

    assert response.content == PAGE  # the body itself is forwarded untouched (httpx decodes it)
    for source in inline_script_hashes(PAGE):
        assert source in response.headers["content-security-policy"]


async def test_json_gets_the_closed_policy_and_no_server_version(service: FastAPI) -> None:
    response = await _get(service, "/api/health")

    assert response.headers["content-security-policy"] == API_CSP
    assert "server" not in response.headers and "x-powered-by" not in response.headers
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cross-origin-opener-policy"] == "same-origin"


async def test_only_the_badge_may_be_loaded_by_other_sites(service: FastAPI) -> None:
    # An <img> on another site is a no-cors request: Fetch's CORP check refuses it under same-origin
    # (tests/api/test_badge_browser.py shows it in Chromium).
    badge = await _get(service, "/api/badge?url=example.com")

    assert badge.status_code == 200 and badge.headers["content-type"].startswith("image/svg+xml")
    assert badge.headers.get_list("cross-origin-resource-policy") == ["cross-origin"]
    assert badge.headers["content-security-policy"] == API_CSP  # drawn, never run, never framed
    assert badge.headers["x-frame-options"] == "DENY" and badge.headers["x-content-type-options"] == "nosniff"
    # Everything else stays same-origin: the badge's own error, JSON, the OpenAPI document, pages, docs assets
    for path in ("/api/badge?url=not%20a%20url", "/api/health", "/openapi.json", "/api/nothing", "/", "/docs"):
        response = await _get(service, path)
        assert response.headers.get_list("cross-origin-resource-policy") == ["same-origin"], path


async def test_plain_http_in_development_has_no_hsts_but_production_always_does(
    make_api: Callable[..., FastAPI], settings: Settings
) -> None:
    async with client_for(make_api()) as client:
        development = await client.get("/api/health")
    production = make_api(settings=dataclasses.replace(settings, environment="production"))
    async with client_for(production) as client:
        prod = await client.get("/api/health")

    assert "strict-transport-security" not in development.headers
    assert prod.headers["strict-transport-security"].startswith("max-age=63072000")


async def test_websockets_and_lifespan_pass_through_untouched() -> None:
    seen: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    wrapped = SecurityHeaders(inner, production=True)
    for kind in ("websocket", "lifespan"):
        await wrapped({"type": kind, "path": "/_event"}, None, None)  # type: ignore[arg-type]

    assert seen == ["websocket", "lifespan"]


async def test_an_unexpected_error_still_carries_the_headers(make_api: Callable[..., FastAPI]) -> None:
    def boom(request: Any) -> Response:
        raise RuntimeError("unexpected")

    api = make_api()
    api.router.routes.insert(0, Route("/api/boom", boom))
    response = await _get(api, "/api/boom")

    assert response.status_code == 500
    assert response.json() == {"error": "An internal error occurred. Please try again later."}
    assert response.headers["content-security-policy"] == API_CSP


async def test_a_page_sent_by_path_is_hashed_from_its_file(tmp_path: Any) -> None:
    # Granian serves Reflex's static pages with the ASGI "http.response.pathsend" extension: no body message.
    page = tmp_path / "index.html"
    page.write_bytes(PAGE)
    sent: list[dict[str, Any]] = []

    async def static(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.pathsend", "path": str(page)})

    async def record(message: Any) -> None:
        sent.append(message)

    await SecurityHeaders(static, production=False)({"type": "http", "path": "/"}, None, record)  # type: ignore[arg-type]

    assert [m["type"] for m in sent] == ["http.response.start", "http.response.pathsend"]
    csp = dict(sent[0]["headers"])[b"content-security-policy"].decode()
    assert all(source in csp for source in inline_script_hashes(PAGE))


async def test_a_not_modified_answer_keeps_the_cached_pages_policy() -> None:
    # StaticFiles answers a revalidation with 304 and no Content-Type; browsers merge its headers into the
    # cached page, so a CSP on it would replace the page's own (and block the page's inline scripts).
    sent: list[dict[str, Any]] = []

    async def not_modified(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", b'"1"')]})
        await send({"type": "http.response.body", "body": b""})

    async def record(message: Any) -> None:
        sent.append(message)

    await SecurityHeaders(not_modified, production=False)({"type": "http", "path": "/"}, None, record)  # type: ignore[arg-type]

    headers = dict(sent[0]["headers"])
    assert b"content-security-policy" not in headers and headers[b"x-frame-options"] == b"DENY"


def _vary_tokens(response: httpx.Response) -> list[str]:
    return [t.strip() for value in response.headers.get_list("vary") for t in value.split(",") if t.strip()]


def _page_with_vary(request: Any) -> Response:
    # A static file served compressed says so (RFC 9110 §12.5.5); the app's own Vary must survive.
    return HTMLResponse(PAGE, headers={"Vary": "Accept-Encoding"})


@pytest.fixture
def reflex_stack(make_api: Callable[..., FastAPI]) -> Any:
    """The layers `rx.App(api_transformer=create_api())` builds (reflex/app.py): Reflex's own app with its
    CORSMiddleware, mounted inside our API, which Reflex gives a CORSMiddleware too, mounted in a top
    Starlette app with a third CORSMiddleware."""
    from reflex.app import App
    from starlette.applications import Starlette

    inner = Starlette(routes=[Route("/", _page_with_vary)])
    App._add_cors(inner)
    api = make_api()
    App._add_cors(api)
    api.mount("", inner)
    top = Starlette()
    top.mount("", api)
    App._add_cors(top)
    return top


@pytest.mark.parametrize("path", ["/api/health", "/api/no-such-endpoint", "/"])
async def test_vary_names_each_token_once_through_reflex_s_cors_layers(reflex_stack: Any, path: str) -> None:
    # Given a cross-origin request through every CORS layer Reflex installs
    async with client_for(reflex_stack) as client:
        response = await client.get(path, headers={"Origin": "https://elsewhere.example"})

    # Then Vary names Origin once (and keeps what the app said), not "Origin, Origin"
    tokens = _vary_tokens(response)
    assert tokens.count("Origin") == 1, response.headers.get_list("vary")
    assert len({t.lower() for t in tokens}) == len(tokens)
    if path == "/":
        assert tokens == ["Accept-Encoding", "Origin"]


async def test_vary_from_the_app_is_merged_into_one_header(make_api: Callable[..., FastAPI]) -> None:
    # Given serve-api (no Reflex, no CORS) and an app that says Vary twice, in two fields
    api = make_api()

    async def twice(scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/plain"),
                    (b"vary", b"Accept-Encoding"),
                    (b"vary", b"cookie, Accept-Encoding"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"x"})

    api.mount("/raw", twice)
    async with client_for(api) as client:
        response = await client.get("/raw/x", headers={"Origin": "https://elsewhere.example"})
        health = await client.get("/api/health")

    # Then one Vary field names each token once, in first-seen order
    assert response.headers.get_list("vary") == ["Accept-Encoding, cookie"]
    assert "vary" not in health.headers
