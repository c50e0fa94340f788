"""Long words fit a phone: a long host name in an error message and a long email on the Pro page wrap inside
their box instead of widening the page or being cut off; and a checkout return page that cannot find the
purchase still leads somewhere.

Each page is looked at 375 and 1280 px wide (screenshots in var/screenshots/long-text/).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.clock import TEST_NOW
from websec_app.services.prices import Product
from websec_app.store import create_subscription, issue_api_key
from websec_app.store.purchases import open_checkout

from .conftest import ROOT, App, at_each_width, open_page

SHOTS = ROOT / "var" / "screenshots" / "long-text"

LONG_HOST = "internationalbusinessmachinescorporationsubsidiaryportal.test"  # resolves nowhere (fixture DNS)
LONG_EMAIL = "jonathan.richardson-smith@internationalbusinessmachines.com"

#: Is the element's whole box on screen: inside the viewport's width and not cut by an ancestor that
#: clips (overflow other than visible), with no text overflowing the element itself?
_FULLY_VISIBLE = """el => {
  const r = el.getBoundingClientRect();
  const out = [];
  if (r.left < -1 || r.right > window.innerWidth + 1) out.push(`outside the viewport: ${r.left}..${r.right}`);
  if (el.scrollWidth > el.clientWidth + 1) out.push(`its text overflows: ${el.scrollWidth} > ${el.clientWidth}`);
  for (let a = el.parentElement; a; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const q = a.getBoundingClientRect();
    if (r.left < q.left - 1 || r.right > q.right + 1) out.push(`cut by ${a.tagName}.${a.className}`);
  }
  return out;
}"""


def check_fits(page: Page, element: Locator, name: str) -> list[Path]:
    """At each width: no sideways scrolling and `element` fully visible; a screenshot to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def check(width: str) -> Path:
        scroll = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll[0] <= scroll[1], f"{name} at {width} px: the page is {scroll[0]} px wide"
        problems = element.evaluate(_FULLY_VISIBLE)
        assert not problems, f"{name} at {width} px: {problems}"
        path = SHOTS / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return at_each_width(page, check)


def scan_from_home(page: Page, app: App, url: str) -> Locator:
    open_page(page, app.path("/"))
    page.get_by_label("Website address").fill(url)
    page.get_by_role("button", name="Scan").click()
    return page.get_by_role("alert")


def test_an_unreachable_long_host_name_wraps_in_the_message(page: Page, app: App) -> None:
    alert = scan_from_home(page, app, f"https://{LONG_HOST}/")

    expect(alert).to_contain_text("The site could not be reached", timeout=40_000)
    expect(alert).to_contain_text(LONG_HOST)
    check_fits(page, alert.get_by_text(LONG_HOST), "unreachable-long-host")


def test_an_over_long_invalid_address_wraps_in_the_message(page: Page, app: App) -> None:
    host = "a" * 300 + ".test"
    alert = scan_from_home(page, app, f"https://{host}/" + "b" * 200)

    expect(alert).to_contain_text("Check the address")
    expect(alert).to_contain_text(host)
    check_fits(page, alert.get_by_text(host), "invalid-long-host")


def test_a_long_email_is_shown_whole_on_the_pro_page(page: Page, app: App) -> None:
    with app.database.session() as session:
        subscription = create_subscription(session, email=LONG_EMAIL, now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW).key
    open_page(page, app.path("/pro"))
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()

    email = page.get_by_test_id("pro-email")
    expect(email).to_have_text(LONG_EMAIL)
    check_fits(page, email, "pro-long-email")


def test_a_purchase_not_found_leads_to_the_prices(page: Page, app: App) -> None:
    for name, path in (
        ("checkout-success-unknown", "/checkout/success?session_id=cs_test_not_a_session_here"),
        ("checkout-success-bare", "/checkout/success"),
    ):
        open_page(page, app.path(path))
        expect(page.get_by_test_id("return-title")).to_have_text("We could not find this purchase")
        prices = page.get_by_role("link", name="See prices")
        expect(prices).to_have_attribute("href", "/pricing")
        check_fits(page, prices, name)
        prices.click()
        page.wait_for_url("**/pricing")


def test_a_failed_payment_offers_to_try_again_and_the_prices(page: Page, app: App) -> None:
    # Given a Razorpay order the store knows, and a return from Razorpay whose signature does not match
    reference = "order_longtextfailed01"
    with app.database.session() as session:
        open_checkout(
            session,
            provider="razorpay",
            product=Product.ONE_TIME_SCAN.value,
            email="failed-return@example.com",
            amount=49900,
            currency="INR",
            reference=reference,
            now=TEST_NOW,
        )
    query = f"razorpay_payment_id=pay_longtextfailed01&razorpay_order_id={reference}&razorpay_signature=0f0f"
    open_page(page, app.path(f"/checkout/success?{query}"))

    expect(page.get_by_role("link", name="Try again")).to_have_attribute("href", "/checkout/one-time-scan")
    prices = page.get_by_role("link", name="See prices")
    expect(prices).to_have_attribute("href", "/pricing")
    check_fits(page, prices, "checkout-success-failed")
