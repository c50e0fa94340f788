"""The code `@dataclass` generates, compiled once and kept beside the byte-code (issue 14).

`dataclasses` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` (and, when frozen,
`__setattr__`/`__delattr__`) as source text and compiles it with `exec`: ~0.3 ms a class, ~35 ms for the ~85
dataclasses a command-line scan defines while it starts (its start-up is ~0.2 s). The text depends only on the
class's fields and options, so its compiled code can be kept as a `.pyc` is. `install()` gives the
`dataclasses` module an `exec` that looks the text up first and otherwise compiles it exactly as the built-in
would (no inherited `__future__` flags, file name "<string>"); `save()` writes what was compiled to a
marshal file in `__pycache__` (or under `sys.pycache_prefix`), keyed by the interpreter's byte-code magic
number; nothing is written when byte-code is not (`PYTHONDONTWRITEBYTECODE`), and a cache that cannot be read
or written is ignored. Only Python 3.11's dataclasses are known to build functions this way: elsewhere
`install()` does nothing. The scan command installs it for its start-up (websec_app/cli/__init__.py).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from types import CodeType
from typing import Any

from .bytecode_files import CodeCache, beside_bytecode

_cache: CodeCache[str, CodeType] = CodeCache(
    beside_bytecode(__file__, f"dataclass-code.{sys.implementation.cache_tag}.marshal"),
    lambda: importlib.util.MAGIC_NUMBER,
    # a bound on the file, not a target: a scan needs ~500 texts
    max_entries=4096,
    # other scans define a few other classes (a signed zone, an uncommon DNS reply), and they should not rewrite
    # the file for each other; texts left over from code since changed are many more, and go at the next save
    kept_unused=128,
)


def _supported() -> bool:
    create_fn = getattr(dataclasses, "_create_fn", None)
    return sys.version_info[:2] == (3, 11) and create_fn is not None and "exec" in create_fn.__code__.co_names


def _cached_exec(source: Any, globals_: dict[str, Any] | None = None, locals_: Any = None, /) -> None:
    if isinstance(source, str):
        code = _cache.get(source)
        if code is None:
            # What exec(text) in dataclasses.py compiles: that module has no __future__ imports.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _cache.add(source, code)
        source = code
    if globals_ is None:  # exec's default: the calling frame's globals, which were dataclasses' own
        globals_ = vars(dataclasses)
    exec(source, globals_, locals_)  # noqa: S102 - dataclasses' own generated code, as dataclasses runs it


def install() -> None:
    """Serve `dataclasses`' generated code from the cache from now on (once per process)."""
    with _cache.lock:
        if _cache.loaded or not _supported():
            return
        _cache.load()
        dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # shadows the built-in in that module


def compiled() -> int:
    """How many texts this process compiled, since its last save, because the cache did not have them."""
    return _cache.compiled


def allow_saving() -> None:
    """Let `save()` write the cache: only the scan command does, so that it holds what a scan defines and
    nothing a long-running process or a test run happened to define."""
    _cache.may_save = True


def save() -> None:
    """Write the cache when this process compiled something it lacked (and byte-code and the scan command
    allow it): what this process used, and the cache's other entries while they are few. A process that found
    everything writes nothing: a scan of another kind of site uses a few other classes, and the two should not
    rewrite the file for each other."""
    _cache.save()
