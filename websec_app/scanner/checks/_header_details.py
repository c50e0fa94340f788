"""The `present` and `value` of each header a section reports (spec 2.3), shared by the header checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..snapshot import HeaderList


def header_details(headers: HeaderList, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Spec 2.3 `present` and `value` per header (a repeated header's lines joined with ", ")."""
    return {name: {"present": name in headers, "value": headers.get(name)} for name in names}
