"""How a check quotes a string the site chose (a URL, a header or attribute value) in the report.

A page of 2 MiB can hold one URL of 2 MiB, and the report copies a URL into several places (a finding's
subject and note, the details' lists): unbounded, one `<script src>` made a 14.7 MB section. Every such string
goes through `shown`, which cuts it and says how much was cut, so a reader never takes a part for the whole.

Lengths are counted as the report stores them: JSON, where a character outside ASCII is a `\\uXXXX` escape
(6 characters, 12 outside the Basic Multilingual Plane) and a control character or quote is escaped too. A URL
of 2,048 emoji is 2,048 characters to Python but 24,576 in the stored report, so a cut counted in code points
let a 2 MiB page of them make a section twelve times the size the bound promised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..findings import LIST_BUDGET, LIST_LIMIT, CountedNote

T = TypeVar("T")

#: The most characters of one site-chosen string a report shows, counted as stored (`stored_length`).
MAX_SHOWN = 2048


def stored_length(value: str) -> int:
    """How many characters `value` takes in the stored report (JSON with ASCII escapes, quotes not counted)."""
    return len(json.dumps(value)) - 2


def _json_length(item: object) -> int:
    return stored_length(item) if isinstance(item, str) else len(json.dumps(item))


def shown(value: str, limit: int = MAX_SHOWN) -> str:
    """`value` itself when it stores in `limit` characters; past that its longest beginning that does, and how
    many more characters (as the site sent them) were not shown."""
    if len(value) <= limit and stored_length(value) <= limit:
        return value
    # Every character stores in at least one, so the kept part lies within the first `limit`: a binary search
    # for the longest beginning that stores in `limit` (json.dumps is C; a 2 MiB value is never escaped whole).
    head = value[:limit]
    if stored_length(head) <= limit:  # plain ASCII, the usual case: cut at `limit`
        return f"{head} … ({len(value) - len(head):,} more characters not shown)"
    low, high = 0, len(head)
    while low < high:
        middle = (low + high + 1) // 2
        if stored_length(head[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return f"{value[:low]} … ({len(value) - low:,} more characters not shown)"


def listed(
    values: Iterable[str], limit: int, *, each: int = MAX_SHOWN, more: str = "", budget: int = LIST_BUDGET
) -> list[str]:
    """The distinct `values` in order, each `shown` (at most `each` characters), the first `limit` that store in
    `budget` characters together (the first always), then how many more there were (`more` names them: "and 12
    more notes like these, not listed"), so a list a site can grow (one error per term of a 64 KB record, one
    note per <meta>) stays a few KB and says it is not whole."""
    distinct = list(dict.fromkeys(values))
    kept = first_fitting((shown(value, each) for value in distinct), limit, budget)
    if len(distinct) > len(kept):
        left_out = len(distinct) - len(kept)
        kept.append(CountedNote(f"and {left_out:,} more{more}, not listed", left_out))
    return kept


def shown_lists(lists: Mapping[str, Iterable[str]]) -> dict[str, Any]:
    """Lists of site-chosen strings (URLs, a file's field values) as a section's details show them: each its
    distinct items, `shown`, the first LIST_LIMIT that store in LIST_BUDGET characters together (the first
    always), and `not_listed`, there only when one was cut, with how many more it had (`{"active": 463}`)."""
    shown_items: dict[str, Any] = {}
    not_listed: dict[str, int] = {}
    for name, items in lists.items():
        distinct = list(dict.fromkeys(items))
        shown_items[name] = first_fitting((shown(item) for item in distinct), LIST_LIMIT)
        if len(distinct) > len(shown_items[name]):
            not_listed[name] = len(distinct) - len(shown_items[name])
    return {**shown_items, "not_listed": not_listed} if not_listed else shown_items


def first_fitting(
    items: Iterable[T], limit: int = 0, budget: int = LIST_BUDGET, size_of: Callable[[T], int] | None = None
) -> list[T]:
    """The first of `items` that store in `budget` characters together, at most `limit` of them (0: no count
    limit): the first item always, so a list cut by its budget still shows one; the rest are not read. An item's
    size is `size_of(item)`, by default its JSON's length (a string's `stored_length`)."""
    kept: list[T] = []
    used = 0
    for item in items:
        size = size_of(item) if size_of is not None else _json_length(item)
        if kept and (used + size > budget or len(kept) == limit):
            break
        kept.append(item)
        used += size
    return kept
