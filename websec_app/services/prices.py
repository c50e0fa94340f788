"""The price table (`prices.toml`): one row per product and provider, in minor units.

Checkouts take their amounts from here and webhooks check what the provider reports against
it, so a price can only change in one place.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from websec_app.store import PRODUCT_COMPLIANCE_REPORT, PRODUCT_ONE_TIME_SCAN, PRODUCT_SUBSCRIPTION

_TABLE = Path(__file__).with_name("prices.toml")
_SYMBOLS = {"INR": "₹", "USD": "$"}
#: Currencies whose minor unit is 1/100 (all the table uses).
_MINOR_UNITS = {"INR": 100, "USD": 100}


class Product(StrEnum):
    """What can be bought. The values are the store's product names (`payments.product`)."""

    SUBSCRIPTION = PRODUCT_SUBSCRIPTION  # Pro, monthly
    ONE_TIME_SCAN = PRODUCT_ONE_TIME_SCAN
    COMPLIANCE_REPORT = PRODUCT_COMPLIANCE_REPORT


class PriceTableError(ValueError):
    """prices.toml is inconsistent (checked at load and by tests)."""


@dataclass(frozen=True)
class Price:
    product: Product
    provider: str
    amount: int  # minor units (paise, cents)
    currency: str  # ISO 4217, upper case
    name: str
    description: str
    interval: str | None = None  # "month" for subscriptions

    @property
    def display(self) -> str:
        """ "₹499", "$7.00": what a buyer reads."""
        major, minor = divmod(self.amount, _MINOR_UNITS[self.currency])
        symbol = _SYMBOLS.get(self.currency, self.currency + " ")
        if self.currency == "INR" and minor == 0:
            text = f"{symbol}{major:,}"
        else:
            text = f"{symbol}{major:,}.{minor:02d}"
        return f"{text}/{self.interval}" if self.interval else text

    def matches(self, amount: int, currency: str) -> bool:
        return amount == self.amount and currency.upper() == self.currency


@dataclass(frozen=True)
class PriceTable:
    version: str
    prices: tuple[Price, ...]

    def price(self, product: Product | str, provider: str) -> Price:
        for price in self.prices:
            if price.product == product and price.provider == provider:
                return price
        raise KeyError(f"no price for {product!r} with {provider!r}")


def load_price_table(path: Path = _TABLE) -> PriceTable:
    # Imported here, not at the top: the payments package prices its checkouts with this module.
    from .payments.providers import PROVIDERS

    data = tomllib.loads(path.read_text("utf-8"))
    prices: list[Price] = []
    products = data.get("products", {})
    for product in Product:
        row = products.get(product.value)
        if row is None:
            raise PriceTableError(f"prices.toml has no row for {product.value!r}")
        for provider in PROVIDERS:
            cell = row.get(provider)
            if not isinstance(cell, dict):
                raise PriceTableError(f"prices.toml: {product.value} has no {provider} price")
            amount, currency = cell.get("amount"), str(cell.get("currency", "")).upper()
            if not isinstance(amount, int) or amount <= 0 or currency not in _MINOR_UNITS:
                raise PriceTableError(f"prices.toml: {product.value}/{provider} needs a positive amount and currency")
            prices.append(
                Price(
                    product=product,
                    provider=provider,
                    amount=amount,
                    currency=currency,
                    name=str(row["name"]),
                    description=str(row["description"]),
                    interval=row.get("interval"),
                )
            )
    unknown = set(products) - {p.value for p in Product}
    if unknown:
        raise PriceTableError(f"prices.toml has unknown products {sorted(unknown)}")
    return PriceTable(version=str(data["version"]), prices=tuple(prices))


@lru_cache(maxsize=1)
def price_table() -> PriceTable:
    return load_price_table()


def price_for(product: Product | str, provider: str) -> Price:
    return price_table().price(product, provider)


def price_list() -> tuple[Price, ...]:
    """Every (product, provider) price, for pages that show them."""
    return price_table().prices


__all__ = ["Price", "PriceTable", "PriceTableError", "Product", "load_price_table", "price_for", "price_list"]
