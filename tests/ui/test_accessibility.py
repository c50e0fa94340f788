"""Every page passes axe-core with no serious or critical violation, and the scan form and the report work
from the keyboard alone.

Given the app as `make run` serves it and axe-core from the npm registry (`make setup-test` puts it in
.tools/axe), when axe runs in headless Chromium on each page, then it finds nothing serious.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from .conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ROOT, App, open_page
from .test_report_evidence import Reports, open_report, reports

__all__ = ["reports"]  # the stored reports fixture of test_report_evidence.py, used here

AXE = ROOT / ".tools" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
#: What fails the test; "moderate" and "minor" findings are printed but allowed.
BLOCKING = ("serious", "critical")
PAGES = (
    "/",
    "/pricing",
    "/pro",
    "/one-time-scan",
    "/compliance-report",
    "/checkout/pro",
    "/checkout/one-time-scan",
    "/checkout/compliance-report",
    "/checkout/success",
    "/checkout/cancelled",
    "/api-docs",
    "/site?url=https://example.com/",  # signed out: the key form (issue 17)
    "/no-such-page",
)

_RUN_AXE = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    return result.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 6).map(
            n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').split('\\n').slice(1).join(' ')),
    }));
}"""


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory, app: App) -> Iterator[BrowserContext]:
    """conftest's Chromium, but allowed to inject axe: the app's CSP admits only its own hashed scripts."""
    assert AXE.is_file(), f"{AXE} is missing: `make setup-test` fetches axe-core"
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-axe-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=DESKTOP,
            bypass_csp=True,
        )
        context.set_default_timeout(15_000)
        try:
            yield context
        finally:
            context.close()


def axe_violations(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    violations: list[dict[str, Any]] = page.evaluate(_RUN_AXE)
    for violation in violations:
        print(f"axe {violation['impact']}: {violation['id']} ({violation['help']})", *violation["nodes"], sep="\n  ")
    return [v for v in violations if v["impact"] in BLOCKING]


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("width", [1280, 375])
def test_every_page_passes_axe(page: Page, app: App, path: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_page(page, app.path(path))
    page.wait_for_timeout(300)  # let on_load's state reach the page

    assert axe_violations(page) == []


@pytest.mark.parametrize("which", ["worst", "worst_free", "best", "cookie_free", "grade_c"])  # F, F, A+, B, C
@pytest.mark.parametrize("width", [1280, 375])
def test_the_report_page_passes_axe(page: Page, app: App, reports: Reports, which: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_report(page, app, getattr(reports, which))

    assert axe_violations(page) == []


#: Each colour in sRGB bytes as Chromium paints it (a canvas reads Radix's display-p3 colours back in sRGB).
_GRADE_COLOURS = """square => {
    const srgb = colour => {
        const canvas = document.createElement('canvas').getContext('2d');
        canvas.fillStyle = colour;
        canvas.fillRect(0, 0, 1, 1);
        return Array.from(canvas.getImageData(0, 0, 1, 1).data.slice(0, 3));
    };
    return [srgb(getComputedStyle(square.firstElementChild).color), srgb(getComputedStyle(square).backgroundColor)];
}"""


def _contrast(first: list[int], second: list[int]) -> float:
    """WCAG 2.2's contrast ratio of two sRGB colours (relative luminance, G18)."""

    def luminance(rgb: list[int]) -> float:
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@pytest.mark.parametrize("which", ["best", "cookie_free", "grade_c", "worst"])  # A+, B, C, F
def test_the_grade_square_is_readable(page: Page, app: App, reports: Reports, which: str) -> None:
    """axe leaves the square alone (role=img: its text is not read), so the contrast is measured here. The letter
    is large text (60 px bold): WCAG 2.2 SC 1.4.3 asks at least 3:1; white on lime (B) or amber (C) was ~1.5:1."""
    open_report(page, app, getattr(reports, which))

    text, background = page.get_by_test_id("grade").evaluate(_GRADE_COLOURS)

    assert _contrast(text, background) >= 3, (which, text, background)


def _focus_is_visible(page: Page) -> bool:
    """An outline or a focus ring (box shadow) on the focused element or its field wrapper."""
    return bool(
        page.evaluate(
            """() => [document.activeElement, document.activeElement.parentElement].some(el => {
                const style = getComputedStyle(el);
                return (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0)
                    || style.boxShadow !== 'none';
            })"""
        )
    )


def test_the_scan_form_works_from_the_keyboard(page: Page, app: App) -> None:
    open_page(page, app.path("/"))
    field = page.get_by_label("Website address")
    button = page.get_by_role("button", name="Scan")

    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    assert _focus_is_visible(page)
    page.keyboard.press("Enter")  # to the main column
    for _ in range(10):
        page.keyboard.press("Tab")
        if field.evaluate("el => el === document.activeElement"):
            break
    expect(field).to_be_focused()
    assert _focus_is_visible(page)
    page.keyboard.type("not a url at all")
    page.keyboard.press("Tab")
    expect(button).to_be_focused()
    assert _focus_is_visible(page)


def test_every_control_of_the_report_is_reachable_by_tab(page: Page, app: App, reports: Reports) -> None:
    open_report(page, app, reports.worst)
    reached: set[str] = set()
    for _ in range(400):
        page.keyboard.press("Tab")
        what = page.evaluate(
            "() => { const el = document.activeElement; return el.getAttribute('role') || el.dataset.testid || "
            "el.tagName.toLowerCase(); }"
        )
        reached.add(what)
        if what == "snippet-copy" and {"region", "tab", "snippet-copy", "summary"} <= reached:
            break
    # The scrollable tables, the fix tabs, a snippet's Copy button and the passed checks' toggles
    assert {"region", "tab", "snippet-copy", "summary"} <= reached, reached
