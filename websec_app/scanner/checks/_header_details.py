"""The `present` and `value` of each header a section reports (spec 2.3), shared by the header checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..snapshot import HeaderList
from ._shown import shown

#: The most characters of a header's value the report shows, counted as stored (checks/_shown.py): a site's own
#: Content-Security-Policy of several KB is ordinary and shown whole, but a response head may hold 100 KiB of one
#: header (an X-Frame-Options of 100 KiB of 0xFF bytes, each a 6-character escape, made a 634 KB headers section).
MAX_VALUE_SHOWN = 8_192


def header_details(headers: HeaderList, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Spec 2.3 `present` and `value` per header (a repeated header's lines joined with ", "), the value cut at
    MAX_VALUE_SHOWN characters, saying how many more were not shown."""
    details: dict[str, dict[str, Any]] = {}
    for name in names:
        value = headers.get(name)
        details[name] = {"present": name in headers, "value": None if value is None else shown(value, MAX_VALUE_SHOWN)}
    return details
