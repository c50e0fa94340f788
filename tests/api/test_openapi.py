"""OpenAPI at /docs describes every endpoint, field and error; validation errors are documented as 400."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import httpx
import pytest
from bs4 import BeautifulSoup

from api_routes.middleware.security_headers import API_CSP
from api_routes.routes.docs_ui import ASSETS_PATH
from websec_app.scanner import SECTIONS

ENDPOINTS = {
    # 503: the scanner is at capacity (api_routes/admission.py). 413: every POST, body over its limit
    # (api_routes/middleware/request_limits.py).
    ("post", "/api/scan"): {"200", "400", "403", "413", "429", "500", "502", "503"},
    ("post", "/api/scan/pro"): {"200", "400", "401", "403", "413", "429", "500", "502", "503"},
    ("post", "/api/report/pdf"): {"200", "400", "401", "403", "413", "429", "500", "502", "503"},
    ("get", "/api/verify-key"): {"200", "401", "403", "500"},
    ("get", "/api/usage"): {"200", "401", "403", "500"},
    ("post", "/api/compliance-report/pay"): {"200", "400", "413", "429", "500", "502", "503"},
    ("post", "/api/verify-one-time"): {"200", "400", "402", "409", "413", "500", "502", "503"},
    ("post", "/api/compliance-report/generate"): {"200", "400", "403", "413", "429", "500", "502", "503"},
}


@pytest.fixture
async def schema(client: httpx.AsyncClient) -> dict:  # type: ignore[type-arg]
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


async def test_docs_page_is_served(client: httpx.AsyncClient) -> None:
    response = await client.get("/docs")

    assert response.status_code == 200
    assert "swagger-ui" in response.text.lower()


def _subresources(html: str) -> list[str]:
    """Every URL a page loads by itself: script src, link href (stylesheets, icons), img src."""
    soup = BeautifulSoup(html, "html.parser")
    return [
        str(tag.get("src") or tag.get("href"))
        for tag in soup.find_all(["script", "link", "img"])
        if tag.get("src") or tag.get("href")
    ]


@pytest.mark.parametrize(
    ("page", "loads"),
    [
        (
            "/docs",
            {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css", "favicon.png": "image/png"},
        ),
        ("/redoc", {"redoc.standalone.js": "text/javascript", "favicon.png": "image/png"}),
    ],
)
async def test_docs_pages_load_pinned_assets_from_this_origin(
    client: httpx.AsyncClient, page: str, loads: dict[str, str]
) -> None:
    # Given the Swagger UI or ReDoc page
    html = (await client.get(page)).text

    # Then everything it loads is a path on this origin under /api/docs-assets/, no CDN
    urls = _subresources(html)
    assert {url.split("?")[0].rsplit("/", 1)[-1] for url in urls} == set(loads)
    for url in urls:
        assert url.startswith(f"{ASSETS_PATH}/") and not url.startswith("//"), url
        assert "jsdelivr" not in url and "://" not in url, url
        # And each is served with its type and the service's headers (nosniff makes the type binding)
        asset = await client.get(url)
        name = url.split("?")[0].rsplit("/", 1)[-1]
        assert asset.status_code == 200, url
        assert asset.headers["content-type"].startswith(loads[name]), url
        assert asset.headers["x-content-type-options"] == "nosniff"
        assert asset.headers["content-security-policy"] == API_CSP
        assert asset.headers["cross-origin-resource-policy"] == "same-origin"
        assert "max-age=" in asset.headers["cache-control"]
    assert "fonts.googleapis.com" not in html


async def test_an_unknown_docs_asset_is_a_json_404(client: httpx.AsyncClient) -> None:
    for name in ("index.html", "..%2Fcore.py", "swagger-ui-bundle.js.map"):
        response = await client.get(f"{ASSETS_PATH}/{name}")

        assert response.status_code == 404, name
        assert "error" in response.json()


async def test_the_swagger_ui_copy_is_a_release_that_reads_openapi_3_1(schema: dict) -> None:  # type: ignore[type-arg]
    # FastAPI writes OpenAPI 3.1, which Swagger UI reads from version 5 on (4.x shows "not a valid version").
    bundle = (Path(str(resources.files("fastapi_offline") / "static")) / "swagger-ui-bundle.js").read_text()
    version = re.search(r'PACKAGE_VERSION:"(\d+)\.', bundle)

    assert schema["openapi"].startswith("3.1")
    assert version is not None and int(version.group(1)) >= 5


async def test_every_endpoint_and_status_is_documented(schema: dict) -> None:  # type: ignore[type-arg]
    for (method, path), statuses in ENDPOINTS.items():
        operation = schema["paths"][path][method]
        assert set(operation["responses"]) == statuses, path
        assert operation.get("description"), path
        for status, response in operation["responses"].items():
            assert response.get("description"), (path, status)
            if status not in ("200",):
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/ErrorBody", (path, status)


async def test_no_422_is_documented(schema: dict) -> None:  # type: ignore[type-arg]
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    for path in schema["paths"].values():
        for operation in path.values():
            assert "422" not in operation["responses"]


async def test_fields_are_described(schema: dict) -> None:  # type: ignore[type-arg]
    components = schema["components"]["schemas"]
    for model in (
        "ScanRequest",
        "PdfRequest",
        "UsageResult",
        "KeyCheckResult",
        "HeaderResult",
        "FreeScanResult",
        "ProScanResult",
        "PayRequest",
        "GenerateRequest",
        "VerifyOneTimeRequest",
    ):
        properties = components[model]["properties"]
        described = [
            name
            for name, prop in properties.items()
            if prop.get("description")
            or "$ref" in prop
            or "allOf" in prop
            or "anyOf" in prop
            or "enum" in prop
            or "const" in prop
        ]
        assert described, model
    assert components["PdfRequest"]["properties"]["name"]["anyOf"][0]["maxLength"] == 80


async def test_key_auth_schemes_and_headers_are_documented(schema: dict) -> None:  # type: ignore[type-arg]
    schemes = schema["components"]["securitySchemes"]
    assert {"in": "header", "name": "X-API-Key"}.items() <= schemes["X-API-Key header"].items()
    assert {"in": "query", "name": "key"}.items() <= schemes["key query parameter"].items()
    pro = schema["paths"]["/api/scan/pro"]["post"]
    assert "X-Scans-Remaining" in pro["responses"]["200"]["headers"]
    assert "application/pdf" in schema["paths"]["/api/report/pdf"]["post"]["responses"]["200"]["content"]


async def test_every_key_endpoint_names_its_security_scheme(schema: dict) -> None:  # type: ignore[type-arg]
    expected = {
        ("post", "/api/scan/pro"): "X-API-Key header",
        ("post", "/api/report/pdf"): "X-API-Key header",
        ("get", "/api/verify-key"): "X-API-Key header",
        ("get", "/api/usage"): "key query parameter",
    }
    for (method, path), scheme in expected.items():
        assert schema["paths"][path][method]["security"] == [{scheme: []}], path


async def test_issue_counts_document_the_locked_findings(schema: dict) -> None:  # type: ignore[type-arg]
    counts = schema["components"]["schemas"]["IssueCounts"]["properties"]

    assert set(counts) == {"critical", "important", "minor", "total", "locked"}
    assert "cookies" in counts["locked"]["description"] and all(p.get("description") for p in counts.values())


async def test_section_fields_are_described_from_the_section_table(schema: dict) -> None:  # type: ignore[type-arg]
    components = schema["components"]["schemas"]
    free, pro = components["FreeScanResult"]["properties"], components["ProScanResult"]["properties"]

    # The free result documents every section but the Pro-only ones; the Pro result documents them all
    assert {s.key for s in SECTIONS if not s.pro_only} <= set(free)
    assert not {s.key for s in SECTIONS if s.pro_only} & set(free)
    for entry in SECTIONS:
        assert pro[entry.key]["description"].startswith(entry.description), entry.key


async def test_fix_snippets_are_documented_beside_each_fix(schema: dict) -> None:  # type: ignore[type-arg]
    from websec_app.scanner.fixes import SERVERS

    components = schema["components"]["schemas"]
    snippets = components["FixSnippets"]
    assert list(snippets["properties"]) == list(SERVERS)
    assert set(snippets["required"]) == set(SERVERS)
    assert all(prop["type"] == "string" and prop.get("description") for prop in snippets["properties"].values())
    for model in ("HeaderResult", "Finding"):
        field = components[model]["properties"]["fix_snippets"]
        assert {"$ref": "#/components/schemas/FixSnippets"} in field["anyOf"], model
        assert {"type": "null"} in field["anyOf"], model
        assert "null exactly where `fix` is null" in field["description"]


async def test_the_fix_note_is_documented_beside_each_fix(schema: dict) -> None:  # type: ignore[type-arg]
    components = schema["components"]["schemas"]
    for model in ("HeaderResult", "Finding"):
        field = components[model]["properties"]["fix_note"]
        assert {"type": "string"} in field["anyOf"] and {"type": "null"} in field["anyOf"], model
        assert "Null where `fix` is null" in field["description"] and "Report-Only first" in field["description"]


async def test_the_notes_one_by_one_are_documented_beside_each_note(schema: dict) -> None:  # type: ignore[type-arg]
    components = schema["components"]["schemas"]
    for model in ("HeaderResult", "Finding"):
        field = components[model]["properties"]["notes"]
        assert field["type"] == "array" and field["items"] == {"type": "string"}, model
        assert "one by one" in field["description"] and "cannot be split back" in field["description"], model


async def test_the_families_of_a_finding_are_documented(schema: dict) -> None:  # type: ignore[type-arg]
    field = schema["components"]["schemas"]["Finding"]["properties"]["families"]
    assert {"type": "null"} in field["anyOf"] and {"type": "array", "items": {"type": "string"}} in field["anyOf"]
    assert "check.error" in field["description"] and "left unchecked" in field["description"]


async def test_the_count_of_subjects_not_listed_is_documented(schema: dict) -> None:  # type: ignore[type-arg]
    field = schema["components"]["schemas"]["Finding"]["properties"]["subjects_not_listed"]
    assert field["type"] == "integer" and field["default"] == 0
    assert "at most 50" in field["description"] and "neither new nor fixed" in field["description"]


async def test_a_diff_change_documents_the_subject_it_concerns(schema: dict) -> None:  # type: ignore[type-arg]
    # GET /api/history/{id}/diff returns `subject` on each change (bb79c68): the schema must say so
    change = schema["components"]["schemas"]["FindingChangeBody"]["properties"]
    assert "subject" in change and "cookie" in change["subject"]["description"]
