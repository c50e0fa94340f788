"""A library's regular expressions compiled when first used instead of when it is imported (issue 14).

cryptography's x509 package compiles the RFC 4514 name parser's patterns at import (`_RFC4514NameParser`,
`cryptography/x509/name.py`): one of them spans Unicode character classes and costs ~10 ms, a twentieth of a
command-line scan, for `Name.from_rfc4514_string`, which the scanner never calls. `lazy_patterns_of(modules)`
makes `re.compile` return a `LazyPattern` to code running in those modules while a `with` block imports
them; every other caller, and every call after the block, gets `re.compile` itself. A LazyPattern compiles
the pattern on its first attribute access (`.match`, `.sub`, ...) and then behaves as the compiled one. It
is only for modules that use their patterns through methods (as that parser does), never passing them to
`re.match(pattern, ...)` or checking `isinstance(p, re.Pattern)`: tests/scanner/test_lazy_regex.py keeps
the one module this is applied to honest.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class LazyPattern:
    """`re.compile(pattern, flags)`, done on first use."""

    __slots__ = ("_flags", "_lock", "_pattern", "_compiled")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._lock = threading.Lock()
        self._compiled: re.Pattern[Any] | None = None

    def compiled(self) -> re.Pattern[Any]:
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = _original_compile(self._pattern, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._pattern!r}, {self._flags!r})"


_original_compile = re.compile


@contextmanager
def lazy_patterns_of(modules: frozenset[str]) -> Iterator[None]:
    """Within the block, patterns compiled at import by code of `modules` are compiled on first use."""

    def compile_lazily_for(pattern: Any, flags: int = 0) -> Any:
        if sys._getframe(1).f_globals.get("__name__") in modules:
            return LazyPattern(pattern, flags)
        return _original_compile(pattern, flags)

    re.compile = compile_lazily_for
    try:
        yield
    finally:
        re.compile = _original_compile
