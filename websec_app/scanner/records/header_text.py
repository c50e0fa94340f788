"""A header value as the characters browsers read in it.

The snapshot keeps header values as Latin-1 text, one character a byte (RFC 9110 5.5: field values are octets).
Where browsers read a value's bytes as UTF-8 (a redirect's Location, a cookie's name as DevTools shows it), so
does `as_utf8`. Imports nothing: the fetch reads Locations with it before any parser is loaded.
"""

from __future__ import annotations

__all__ = ["as_utf8"]


def as_utf8(value: str) -> str:
    """`value` (the Latin-1 text of a header's bytes) as the characters those bytes spell when they are UTF-8
    (`Jürgen` where the text reads `JÃ¼rgen`); else as it is. For what is shown, or followed as browsers follow it:
    what is matched or sent back keeps the bytes."""
    if value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):  # not bytes (a hand-built value), or not UTF-8
        return value
