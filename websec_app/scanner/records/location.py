"""A redirect's `Location` header as browsers read it.

The snapshot keeps header values as Latin-1 text, one character a byte (RFC 9110 5.5: field values are
octets). Browsers read a Location's bytes as UTF-8: Chromium and Firefox follow `Location: /à-propos` sent
as UTF-8 to `/%C3%A0-propos`, and `https://bücher.test/` to its IDNA name.
"""

from __future__ import annotations

__all__ = ["location_text"]


def location_text(value: str) -> str:
    """The Location as browsers read it: its bytes as UTF-8, or, when they are not UTF-8, as Latin-1."""
    if value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):  # not bytes (a hand-built value), or not UTF-8
        return value
