"""A parser for RFC 8941 Structured Field Values (dictionaries and items), as browsers apply them.

Permissions-Policy (W3C Permissions Policy), Cross-Origin-Opener-Policy and
Cross-Origin-Embedder-Policy (HTML "Cross-origin opener/embedder policies") are structured fields: a value that does
not parse is ignored as a whole, so "does it parse" is itself a finding. The maintained
parser (`http_sfv`) is not among our pinned dependencies, and only parsing is needed, so
this is a direct transcription of RFC 8941 §4.2 with the section numbers beside each step.
Serialisation is deliberately absent.
"""

from __future__ import annotations

import base64
import binascii
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # imported where a decimal is parsed: headers rarely hold one (issue 14's start-up)
    from decimal import Decimal

__all__ = [
    "BareItem",
    "InnerList",
    "Item",
    "Parameters",
    "StructuredFieldError",
    "Token",
    "parse_dictionary",
    "parse_item",
]

#: A bare item: int | Decimal | str (sf-string) | Token | bytes | bool.
BareItem: TypeAlias = "int | Decimal | str | bytes | bool"
Parameters: TypeAlias = "dict[str, BareItem]"


class StructuredFieldError(ValueError):
    """The value does not follow RFC 8941; a browser ignores the whole field."""


class Token(str):
    """An sf-token, kept apart from an sf-string (`same-origin` vs `"same-origin"`)."""

    __slots__ = ()


@dataclass(frozen=True)
class Item:
    value: BareItem
    params: Parameters


@dataclass(frozen=True)
class InnerList:
    items: tuple[Item, ...]
    params: Parameters


_LCALPHA = frozenset(string.ascii_lowercase)
_ALPHA = frozenset(string.ascii_letters)
_DIGIT = frozenset(string.digits)
_KEY_CHARS = _LCALPHA | _DIGIT | frozenset("_-.*")
# RFC 9110 §5.6.2 tchar, plus ":" and "/" (RFC 8941 §3.3.4 sf-token).
_TOKEN_CHARS = _ALPHA | _DIGIT | frozenset("!#$%&'*+-.^_`|~:/")
_BASE64_CHARS = _ALPHA | _DIGIT | frozenset("+/=")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        self.pos += 1
        return char

    def done(self) -> bool:
        return self.pos >= len(self.text)

    def skip(self, chars: str) -> None:
        while self.peek() and self.peek() in chars:
            self.pos += 1

    def fail(self, why: str) -> StructuredFieldError:
        return StructuredFieldError(f"{why} at position {self.pos} of {self.text!r}")


def parse_dictionary(text: str) -> dict[str, Item | InnerList]:
    """RFC 8941 §4.2 with §4.2.2. Several field lines must be joined with ", " first."""
    reader = _Reader(text)
    reader.skip(" ")  # §4.2 step 2: leading SP only
    members: dict[str, Item | InnerList] = {}
    while not reader.done():
        key = _key(reader)
        if reader.peek() == "=":
            reader.take()
            members[key] = _item_or_inner_list(reader)
        else:
            members[key] = Item(True, _parameters(reader))  # a bare key means boolean true
        reader.skip(" \t")  # OWS
        if reader.done():
            break
        if reader.take() != ",":
            raise reader.fail("expected ',' between dictionary members")
        reader.skip(" \t")
        if reader.done():
            raise reader.fail("trailing comma")
    return members


def parse_item(text: str) -> Item:
    """RFC 8941 §4.2 with §4.2.3: one item, nothing after it (so "a, b" fails)."""
    reader = _Reader(text)
    reader.skip(" ")
    item = _item(reader)
    reader.skip(" ")
    if not reader.done():
        raise reader.fail("unexpected characters after the item")
    return item


def _item_or_inner_list(reader: _Reader) -> Item | InnerList:
    return _inner_list(reader) if reader.peek() == "(" else _item(reader)


def _inner_list(reader: _Reader) -> InnerList:  # §4.2.1.2
    reader.take()
    items: list[Item] = []
    while not reader.done():
        reader.skip(" ")
        if reader.peek() == ")":
            reader.take()
            return InnerList(tuple(items), _parameters(reader))
        items.append(_item(reader))
        if reader.peek() not in (" ", ")"):
            raise reader.fail("expected a space or ')' in inner list")
    raise reader.fail("unterminated inner list")


def _item(reader: _Reader) -> Item:  # §4.2.3
    value = _bare_item(reader)
    return Item(value, _parameters(reader))


def _parameters(reader: _Reader) -> Parameters:  # §4.2.3.2
    params: Parameters = {}
    while reader.peek() == ";":
        reader.take()
        reader.skip(" ")
        key = _key(reader)
        value: BareItem = True
        if reader.peek() == "=":
            reader.take()
            value = _bare_item(reader)
        params[key] = value
    return params


def _key(reader: _Reader) -> str:  # §4.2.3.3
    first = reader.peek()
    if not first or (first not in _LCALPHA and first != "*"):
        raise reader.fail("a key must start with a lowercase letter or '*'")
    start = reader.pos
    while reader.peek() and reader.peek() in _KEY_CHARS:
        reader.pos += 1
    return reader.text[start : reader.pos]


def _bare_item(reader: _Reader) -> BareItem:  # §4.2.3.1
    char = reader.peek()
    if char == "-" or (char and char in _DIGIT):
        return _number(reader)
    if char == '"':
        return _string(reader)
    if char == "*" or (char and char in _ALPHA):
        return _token(reader)
    if char == ":":
        return _byte_sequence(reader)
    if char == "?":
        return _boolean(reader)
    raise reader.fail("not a valid item")


def _number(reader: _Reader) -> int | Decimal:  # §4.2.4
    sign = ""
    if reader.peek() == "-":
        sign = reader.take()
    if not reader.peek() or reader.peek() not in _DIGIT:
        raise reader.fail("a number needs a digit")
    digits = ""
    is_decimal = False
    while reader.peek():
        char = reader.peek()
        if char in _DIGIT:
            digits += reader.take()
        elif char == "." and not is_decimal:
            if len(digits) > 12:
                raise reader.fail("too many integer digits in a decimal")
            digits += reader.take()
            is_decimal = True
        else:
            break
        if len(digits) > (16 if is_decimal else 15):
            raise reader.fail("number too long")
    if not is_decimal:
        return int(sign + digits)
    if digits.endswith(".") or len(digits.split(".")[1]) > 3:
        raise reader.fail("a decimal needs 1 to 3 fractional digits")
    from decimal import Decimal

    return Decimal(sign + digits)


def _string(reader: _Reader) -> str:  # §4.2.5
    reader.take()
    out: list[str] = []
    while not reader.done():
        char = reader.take()
        if char == "\\":
            escaped = reader.take()
            if escaped not in ('"', "\\"):
                raise reader.fail('only \\" and \\\\ may be escaped')
            out.append(escaped)
        elif char == '"':
            return "".join(out)
        elif not " " <= char <= "~":
            raise reader.fail("strings hold printable ASCII only")
        else:
            out.append(char)
    raise reader.fail("unterminated string")


def _token(reader: _Reader) -> Token:  # §4.2.6
    start = reader.pos
    reader.take()
    while reader.peek() and reader.peek() in _TOKEN_CHARS:
        reader.pos += 1
    return Token(reader.text[start : reader.pos])


def _byte_sequence(reader: _Reader) -> bytes:  # §4.2.7
    reader.take()
    end = reader.text.find(":", reader.pos)
    if end < 0:
        raise reader.fail("unterminated byte sequence")
    encoded = reader.text[reader.pos : end]
    if any(c not in _BASE64_CHARS for c in encoded):
        raise reader.fail("byte sequences hold base64 only")
    reader.pos = end + 1
    try:
        return base64.b64decode(encoded + "=" * (-len(encoded) % 4))
    except binascii.Error as exc:
        raise reader.fail("bad base64") from exc


def _boolean(reader: _Reader) -> bool:  # §4.2.8
    reader.take()
    char = reader.take()
    if char not in ("0", "1"):
        raise reader.fail("a boolean is ?0 or ?1")
    return char == "1"
