"""Stories about the RFC 8941 structured-field parser (examples from the RFC where possible)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from websec_app.scanner.records.structured_fields import (
    InnerList,
    Item,
    StructuredFieldError,
    Token,
    parse_dictionary,
    parse_item,
)


def test_a_permissions_policy_dictionary() -> None:
    members = parse_dictionary('camera=(), geolocation=(self "https://maps.example"), fullscreen=*, autoplay')

    assert members["camera"] == InnerList((), {})
    assert members["geolocation"] == InnerList((Item(Token("self"), {}), Item("https://maps.example", {})), {})
    assert members["fullscreen"] == Item(Token("*"), {})
    assert members["autoplay"] == Item(True, {})  # a bare key is boolean true


def test_rfc_8941_dictionary_example() -> None:
    # RFC 8941 §3.2: Example-Dict: en="Applepie", da=:w4ZibGV0w6ZydGU=:
    members = parse_dictionary('en="Applepie", da=:w4ZibGV0w6ZydGU=:')

    assert members["en"] == Item("Applepie", {})
    assert members["da"] == Item("Æbletærte".encode(), {})


def test_later_dictionary_members_win() -> None:
    assert parse_dictionary("a=1, a=2")["a"] == Item(2, {})


def test_items_with_parameters() -> None:
    assert parse_item('same-origin; report-to="coop"') == Item(Token("same-origin"), {"report-to": "coop"})
    assert parse_item("  ?1;a;b=-1.5 ") == Item(True, {"a": True, "b": Decimal("-1.5")})


@pytest.mark.parametrize(
    "text",
    [
        "a, b",  # two items
        "Same-Origin;",  # parameter without a key
        '"unterminated',
        '"bad \\x escape"',
        "1.2345",  # too many fractional digits
        "1234567890123456",  # integer too long
        "?2",
        ":not base64!:",
        "",
    ],
)
def test_malformed_items_fail(text: str) -> None:
    with pytest.raises(StructuredFieldError):
        parse_item(text)


@pytest.mark.parametrize(
    "text",
    [
        "a=1,",  # trailing comma
        "A=1",  # keys are lowercase
        "a=(1 2",  # unterminated inner list
        "a=(1,2)",  # inner list members are separated by spaces
        "geolocation 'none'",  # Feature-Policy syntax
        "a=1 b=2",
    ],
)
def test_malformed_dictionaries_fail(text: str) -> None:
    with pytest.raises(StructuredFieldError):
        parse_dictionary(text)


def test_an_empty_dictionary_is_valid() -> None:
    assert parse_dictionary("") == {}
    assert parse_dictionary("   ") == {}
