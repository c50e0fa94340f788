"""The price table is the spec's prices (section 1), in each provider's minor unit, and settings guard it."""

from __future__ import annotations

import pytest

from websec_app.services.prices import Product, price_for, price_list
from websec_app.settings import Settings, SettingsError, check_production_payments


@pytest.mark.parametrize(
    ("product", "provider", "amount", "currency", "display"),
    [
        (Product.SUBSCRIPTION, "razorpay", 49900, "INR", "₹499/month"),
        (Product.SUBSCRIPTION, "stripe", 700, "USD", "$7.00/month"),
        (Product.ONE_TIME_SCAN, "razorpay", 9900, "INR", "₹99"),
        (Product.ONE_TIME_SCAN, "stripe", 200, "USD", "$2.00"),
        (Product.COMPLIANCE_REPORT, "razorpay", 24900, "INR", "₹249"),
        (Product.COMPLIANCE_REPORT, "stripe", 300, "USD", "$3.00"),
    ],
)
def test_the_table_holds_the_spec_prices(
    product: Product, provider: str, amount: int, currency: str, display: str
) -> None:
    price = price_for(product, provider)

    assert (price.amount, price.currency, price.display) == (amount, currency, display)
    assert price.matches(amount, currency.lower())
    assert not price.matches(amount - 1, currency)


def test_only_pro_is_monthly() -> None:
    assert {p.product for p in price_list() if p.interval == "month"} == {Product.SUBSCRIPTION}
    assert len(price_list()) == 6


def test_the_sandbox_serves_only_unconfigured_providers_in_development() -> None:
    settings = Settings.from_env({"RAZORPAY_KEY_ID": "rzp_test_1", "RAZORPAY_KEY_SECRET": "s"})

    assert not settings.sandbox_serves("razorpay")
    assert settings.sandbox_serves("stripe")
    assert not settings.with_overrides(environment="production").sandbox_serves("stripe")


def test_production_refuses_the_sandbox_and_unverifiable_webhooks() -> None:
    with pytest.raises(SettingsError, match="WEBSEC_PAYMENTS_SANDBOX=on is refused"):
        check_production_payments(Settings.from_env({"WEBSEC_ENV": "production", "WEBSEC_PAYMENTS_SANDBOX": "on"}))
    with pytest.raises(SettingsError, match="STRIPE_WEBHOOK_SECRET is required"):
        check_production_payments(Settings.from_env({"WEBSEC_ENV": "production", "STRIPE_SECRET_KEY": "sk_live_1"}))


def test_a_key_id_without_its_secret_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="must be set together"):
        Settings.from_env({"RAZORPAY_KEY_ID": "rzp_live_1"})
