"""How a check quotes a string the site chose (a URL, a header or attribute value) in the report.

A page of 2 MiB can hold one URL of 2 MiB, and the report copies a URL into several places (a finding's
subject and note, the details' lists): unbounded, one `<script src>` made a 14.7 MB section. Every such string
goes through `shown`, which cuts it and says how much was cut, so a reader never takes a part for the whole.
"""

from __future__ import annotations

#: The most characters of one site-chosen string a report shows.
MAX_SHOWN = 2048


def shown(value: str, limit: int = MAX_SHOWN) -> str:
    """`value` itself up to `limit` characters; past that its first `limit` and how many more there were."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]} … ({len(value) - limit} more characters not shown)"
