"""The code of the regular expressions modules compile at import, kept beside the byte-code (issue 14).

A command-line scan compiles ~230 regular expressions while its modules and libraries import (ours, h11,
http.cookiejar, email, logging, argparse ...): ~13-15 ms of a ~175 ms process, nearly all of it in Python's
own pattern parser and code generator (`re._parser`, `re._compiler`). Turning the generated code into a
pattern (`_sre.compile`, C) is ~1% of that, and the code depends only on the pattern, its flags and the
interpreter, so it can be kept as a `.pyc` is. `install()` gives `re` a compiler that takes a pattern's code
from the cache and otherwise generates it exactly as `re._compiler.compile` does; `save()` writes what
modules compiled while they were imported to a marshal file in `__pycache__` (or under
`sys.pycache_prefix`), keyed by the interpreter's version and `_sre`'s code format; nothing is written when
byte-code is not (`PYTHONDONTWRITEBYTECODE`), and a cache that cannot be read or written is ignored.

A pattern from the cache is the pattern `re` would compile (equal code, flags and groups: tests/cli/
test_startup_regex.py). Only what module bodies compile is kept: a pattern built at run time from what a
scanned site sent (an SPF macro's delimiters, say) is compiled as usual and never written down. The one
difference: `re` warns of a possible nested set or set operation (FutureWarning) when it parses such a pattern,
which a cached one is not parsed for; the process that first compiled it warned. Only Python 3.11's `re` is
known to compile this way: elsewhere `install()` does nothing. The command line installs it for every command
(websec_app/cli/__init__.py); only a scan writes it, like startup_code.py's cache.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from typing import Any

from .bytecode_files import CodeCache, beside_bytecode

# Python 3.11's parser and compiler behind `re`, and its C engine (elsewhere install() does nothing)
_compiler: Any = getattr(re, "_compiler", None)
_parser: Any = getattr(re, "_parser", None)
_sre: Any = getattr(_compiler, "_sre", None)

#: (pattern, flags) -> what `_sre.compile` takes after the pattern: its flags, code, groups, group names by
#: name and by number.
Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]

_original_compile: Any = None


def _version() -> tuple[Any, ...]:
    """What the generated code depends on besides the pattern: the interpreter (its `re` and Unicode database)
    and `_sre`'s code format."""
    return (importlib.util.MAGIC_NUMBER, sys.version, _sre.MAGIC, _sre.CODESIZE, sys.maxunicode)


_cache: CodeCache[tuple[str | bytes, int], Entry] = CodeCache(
    beside_bytecode(__file__, f"regex-code.{sys.implementation.cache_tag}.marshal"),
    _version,
    max_entries=2048,  # a bound on the file, not a target: a scan compiles ~230 patterns
    kept_unused=128,  # see startup_code.py
)


def _supported() -> bool:
    if sys.version_info[:2] != (3, 11) or _compiler is None or _parser is None or _sre is None:
        return False
    names = _compiler.compile.__code__.co_names
    return all(name in names for name in ("parse", "_code", "compile")) and hasattr(_compiler, "_code")


def _entry_for(pattern: str | bytes, flags: int) -> Entry:
    """What `re._compiler.compile(pattern, flags)` passes `_sre.compile` (Python 3.11, Lib/re/_compiler.py)."""
    return _entry_of(_parser.parse(pattern, flags), flags)


def _entry_of(parsed: Any, flags: int) -> Entry:
    code = _compiler._code(parsed, flags)
    groupindex = parsed.state.groupdict
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        int(flags | parsed.state.flags),
        [int(op) for op in code],  # plain ints (the opcodes are an int subclass): marshal writes those
        parsed.state.groups - 1,
        dict(groupindex),
        tuple(indexgroup),
    )


def _in_module_body() -> bool:
    """Whether a module (other than the program's `__main__`) is running its body further up this thread's
    stack: a pattern compiled while importing is the same in every process; one compiled later may be made of
    what a site sent."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") != "__main__":
            return True
        frame = frame.f_back
    return False


def _compile(pattern: Any, flags: int = 0) -> Any:
    """`re._compiler.compile`, with the code of patterns compiled at import from the cache."""
    if type(pattern) not in (str, bytes) or flags & re.DEBUG:  # exact types: marshal writes no subclass
        return _original_compile(pattern, flags)
    key = (pattern, int(flags))
    entry = _cache.get(key)
    if entry is None:
        # Parsed here, as deep in the stack as re parses it: the parser's warnings name the caller's line
        parsed = _parser.parse(pattern, flags)  # raises re.error as re does, for a pattern that does not parse
        entry = _entry_of(parsed, flags)
        if _in_module_body():
            _cache.add(key, entry)
    final_flags, code, groups, groupindex, indexgroup = entry
    return _sre.compile(pattern, final_flags, code, groups, dict(groupindex), indexgroup)


def install() -> None:
    """Serve the code of patterns compiled at import from the cache from now on (once per process)."""
    global _original_compile  # noqa: PLW0603 - one cache per process
    with _cache.lock:
        if _cache.loaded or not _supported():
            return
        _cache.load()
        _original_compile = _compiler.compile
        _compiler.compile = _compile  # what re._compile calls for a pattern not in its own cache


def compiled() -> int:
    """How many patterns this process's imports compiled, since its last save, because the cache lacked them."""
    return _cache.compiled


def allow_saving() -> None:
    """Let `save()` write the cache: only the scan command does (see startup_code.allow_saving)."""
    _cache.may_save = True


def save() -> None:
    """Write the cache when this process's imports compiled a pattern it lacked (and byte-code and the scan
    command allow it): what this process used, and the cache's other entries while they are few."""
    _cache.save()
