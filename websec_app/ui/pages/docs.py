"""`/api-docs`: every endpoint with a curl example, and links to the full OpenAPI reference at `/docs`."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx

from websec_app.settings import get_settings

from ..components.common import copyable, section_card
from ..components.layout import page, page_heading

_JSON = '-H "Content-Type: application/json"'


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    credential: str
    what: str
    curl: str
    answer: str


def endpoints(base: str) -> tuple[Endpoint, ...]:
    """One entry per endpoint of the spec (section 4), in its order."""
    return (
        Endpoint(
            "POST",
            "/api/scan",
            "None (daily quota per IP address), or a one-time token",
            "Free scan. Add ?full=1 for the fix values; with one_time_token it is a full scan that uses the token.",
            f'curl -s {base}/api/scan {_JSON} \\\n  -d \'{{"url": "example.com"}}\'\n\n'
            f'curl -s "{base}/api/scan?full=1" {_JSON} \\\n  -d \'{{"url": "example.com"}}\'\n\n'
            f'curl -s {base}/api/scan {_JSON} \\\n  -d \'{{"url": "example.com", "one_time_token": "wst_..."}}\'',
            '{"url": "https://example.com/", "grade": "B", "score": 74, "pro_locked": true, '
            '"issue_counts": {...}, ...}',
        ),
        Endpoint(
            "POST",
            "/api/scan/pro",
            "X-API-Key header",
            "Pro scan: every section with fixes. Uses one of the month's 50 scans; X-Scans-Remaining says what "
            "is left.",
            f'curl -si {base}/api/scan/pro -H "X-API-Key: $KEY" {_JSON} \\\n  -d \'{{"url": "example.com"}}\'',
            'x-scans-remaining: 49\n{"url": "https://example.com/", "grade": "B", "pro_locked": false, '
            '"cookies": {...}, ...}',
        ),
        Endpoint(
            "POST",
            "/api/report/pdf",
            "X-API-Key header",
            "A Pro scan as a PDF; name (up to 80 characters) goes in the header. Uses one scan.",
            f'curl -s -OJ {base}/api/report/pdf -H "X-API-Key: $KEY" {_JSON} \\\n'
            '  -d \'{"url": "example.com", "name": "Example Ltd"}\'',
            "saves example.com-websec-report.pdf",
        ),
        Endpoint(
            "GET",
            "/api/verify-key",
            "X-API-Key header",
            "Is this key valid? Uses nothing.",
            f'curl -s {base}/api/verify-key -H "X-API-Key: $KEY"',
            '{"valid": true, "plan": "pro"}',
        ),
        Endpoint(
            "GET",
            "/api/usage",
            "key query parameter",
            "Scans used this calendar month and the limit. Uses nothing.",
            f'curl -s "{base}/api/usage?key=$KEY"',
            '{"valid": true, "email": "you@example.com", "plan": "pro", "scans_used": 1, "scans_limit": 50}',
        ),
        Endpoint(
            "POST",
            "/api/compliance-report/pay",
            "None",
            "Start paying for a compliance report: razorpay (INR) answers the checkout fields and a payment token, "
            "stripe (USD) a checkout URL.",
            f"curl -s {base}/api/compliance-report/pay {_JSON} \\\n"
            '  -d \'{"provider": "razorpay", "email": "you@example.com", "url": "example.com"}\'',
            '{"order_id": "order_...", "amount": 24900, "key": "rzp_...", "token": "wsc_..."}',
        ),
        Endpoint(
            "POST",
            "/api/verify-one-time",
            "None",
            "Exchange a verified Razorpay one-time payment for a one-time scan token (valid 24 hours, single use).",
            f"curl -s {base}/api/verify-one-time {_JSON} \\\n"
            '  -d \'{"payment_id": "pay_...", "email": "you@example.com"}\'',
            '{"ok": true, "token": "wst_..."}',
        ),
        Endpoint(
            "POST",
            "/api/compliance-report/generate",
            "Payment token in the body",
            "Scan, map to OWASP Top 10, PCI-DSS, GDPR Art. 32 and ISO 27001, and email the PDF. Uses the token.",
            f"curl -s {base}/api/compliance-report/generate {_JSON} \\\n"
            '  -d \'{"token": "wsc_...", "url": "example.com", "email": "you@example.com"}\'',
            '{"ok": true, "message": "The compliance report for example.com was emailed to you@example.com."}',
        ),
    )


def _endpoint(endpoint: Endpoint) -> rx.Component:
    slug = endpoint.path.strip("/").replace("/", "-")
    return section_card(
        rx.flex(
            rx.badge(endpoint.method, color_scheme="green" if endpoint.method == "GET" else "indigo", size="2"),
            rx.heading(rx.code(endpoint.path, variant="ghost"), as_="h2", size="4"),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        rx.text(endpoint.what, size="2"),
        rx.text(rx.el.strong("Credential: "), endpoint.credential, size="2", color_scheme="gray"),
        copyable(endpoint.curl, f"curl example for {endpoint.path}", testid=f"curl-{slug}"),
        rx.text("Answer", size="1", weight="bold", color_scheme="gray"),
        rx.el.pre(rx.el.code(endpoint.answer), class_name="answer"),
        id=slug,
        data_testid="endpoint",
    )


def docs() -> rx.Component:
    base = get_settings().base_url
    return page(
        page_heading(
            "API",
            "The same scans as this site, as JSON. Every field, status and error is described in the "
            "OpenAPI reference.",
        ),
        rx.flex(
            rx.link(
                rx.button(rx.icon("book-open", aria_hidden="true"), "OpenAPI reference (/docs)", size="3"),
                href="/docs",
                underline="none",
                is_external=True,
            ),
            rx.link(rx.button("ReDoc", size="3", variant="outline"), href="/redoc", underline="none", is_external=True),
            rx.link(
                rx.button("openapi.json", size="3", variant="outline"),
                href="/openapi.json",
                underline="none",
                is_external=True,
            ),
            spacing="3",
            wrap="wrap",
        ),
        section_card(
            rx.heading("Authentication and limits", as_="h2", size="4"),
            rx.el.ul(
                rx.el.li("Pro endpoints take your key in the X-API-Key header (usage: in the key query parameter)."),
                rx.el.li("Missing key: 401. Invalid, revoked or inactive key: 403."),
                rx.el.li("Pro: 50 scans per calendar month (UTC), reset on the 1st; 429 when used up."),
                rx.el.li("Free scans: a daily quota per IP address, reset at midnight UTC; shared with this site."),
                rx.el.li('Every error is JSON: {"error": "..."}. A scan that fails (400, 502) uses nothing.'),
                class_name="bullets",
            ),
            rx.text("In the examples, set KEY to your API key first: ", rx.code("KEY=wsk_..."), size="2"),
        ),
        *[_endpoint(endpoint) for endpoint in endpoints(base)],
        width="900px",
    )
