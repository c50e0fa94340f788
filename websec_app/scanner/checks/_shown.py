"""How a check quotes a string the site chose (a URL, a header or attribute value) in the report.

A page of 2 MiB can hold one URL of 2 MiB, and the report copies a URL into several places (a finding's
subject and note, the details' lists): unbounded, one `<script src>` made a 14.7 MB section. Every such string
goes through `shown`, which cuts it and says how much was cut, so a reader never takes a part for the whole.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The most characters of one site-chosen string a report shows.
MAX_SHOWN = 2048


def shown(value: str, limit: int = MAX_SHOWN) -> str:
    """`value` itself up to `limit` characters; past that its first `limit` and how many more there were."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]} … ({len(value) - limit:,} more characters not shown)"


def listed(values: Iterable[str], limit: int, *, each: int = MAX_SHOWN, more: str = "") -> list[str]:
    """The distinct `values` in order, each `shown` (at most `each` characters), the first `limit`, then how
    many more there were (`more` names them: "and 12 more notes like these, not listed"), so a list a site can
    grow (one error per term of a 64 KB record, one note per <meta>) stays a few KB and says it is not whole."""
    distinct = list(dict.fromkeys(values))
    kept = [shown(value, each) for value in distinct[:limit]]
    if len(distinct) > limit:
        kept.append(f"and {len(distinct) - limit:,} more{more}, not listed")
    return kept
