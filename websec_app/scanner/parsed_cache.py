"""A cache of parsed data files (the rule table's TOML, the Public Suffix List), kept like Python's own `.pyc`.

Parsing them costs a fresh process ~25 ms (tomllib and its import ~18 ms, the PSL ~12 ms), a tenth of a
command-line scan (issue 14). The parsed value is written with `marshal` (built in: nothing to import, and
~1 ms to load) beside the byte-code: in `__pycache__` next to this module, or under `sys.pycache_prefix`.
Like a `.pyc`, it is keyed by the sources' modification times and sizes (and the caller's own key, such as
a library's version), it is not written when byte-code is not (`PYTHONDONTWRITEBYTECODE`), and a cache
that cannot be read or written is ignored: the data is then parsed as before.
"""

from __future__ import annotations

import marshal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ..bytecode_files import beside_bytecode, write_atomically

T = TypeVar("T")

#: Bumped when the shape of a cached value changes without its sources changing.
_FORMAT = 1


def _cache_file(name: str) -> Path:
    return beside_bytecode(__file__, f"{name}.{sys.implementation.cache_tag}.marshal")


def _stamp(sources: Sequence[Path], key: object) -> object:
    stats = [(str(path), (stat := path.stat()).st_mtime_ns, stat.st_size) for path in sources]
    return (_FORMAT, tuple(stats), key)


def cached(name: str, sources: Sequence[Path], build: Callable[[], T], *, key: object = None) -> T:
    """`build()`'s value, from the cache when `sources` (and `key`) are as they were when it was written.

    The value must be marshallable (dicts, lists, tuples, sets, strings, numbers, bools, None); one that
    is not (a TOML date) is returned and not cached."""
    stamp = _stamp(sources, key)
    path = _cache_file(name)
    try:
        written_stamp, value = marshal.loads(path.read_bytes())
        if written_stamp == stamp:
            return value  # type: ignore[no-any-return]
    except (OSError, EOFError, ValueError, TypeError):
        pass  # absent, unreadable or from another version: parse
    value = build()
    if not sys.dont_write_bytecode:
        _write(path, stamp, value)
    return value


def _write(path: Path, stamp: object, value: object) -> None:
    try:
        data = marshal.dumps((stamp, value))  # type: ignore[arg-type]  # checked: ValueError below
    except ValueError:
        return  # not marshallable
    write_atomically(path, data)  # or not, on a read-only install: parsed every time, as before
