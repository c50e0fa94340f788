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
import marshal
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from .bytecode_files import beside_bytecode, write_atomically

#: Beyond this many texts nothing more is kept (a bound on the file, not a target: a scan needs ~500).
_MAX_ENTRIES = 4096
#: How many entries a save keeps beyond what its process used: other scans define a few other classes (a signed
#: zone, an uncommon DNS reply), and they should not rewrite the file for each other; texts left over from
#: code since changed are many more, and go at the next save.
_KEPT_UNUSED = 128

_lock = threading.Lock()
_code: dict[str, CodeType] = {}  # the cache's entries, then what this process compiled
_used: set[str] = set()  # the texts this process asked for: what a save keeps
_compiled = 0  # texts this process compiled (not found in the cache) since it last saved
_installed = False
_may_save = False


def _cache_file() -> Path:
    return beside_bytecode(__file__, f"dataclass-code.{sys.implementation.cache_tag}.marshal")


def _supported() -> bool:
    create_fn = getattr(dataclasses, "_create_fn", None)
    return sys.version_info[:2] == (3, 11) and create_fn is not None and "exec" in create_fn.__code__.co_names


def _cached_exec(source: Any, globals_: dict[str, Any] | None = None, locals_: Any = None, /) -> None:
    global _compiled  # noqa: PLW0603 - one cache per process
    if isinstance(source, str):
        code = _code.get(source)
        if code is None:
            # What exec(text) in dataclasses.py compiles: that module has no __future__ imports.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            with _lock:
                if len(_code) < _MAX_ENTRIES:
                    _code[source] = code
                _compiled += 1
        _used.add(source)
        source = code
    if globals_ is None:  # exec's default: the calling frame's globals, which were dataclasses' own
        globals_ = vars(dataclasses)
    exec(source, globals_, locals_)  # noqa: S102 - dataclasses' own generated code, as dataclasses runs it


def install() -> None:
    """Serve `dataclasses`' generated code from the cache from now on (once per process)."""
    global _installed  # noqa: PLW0603
    with _lock:
        if _installed or not _supported():
            return
        _installed = True
        try:
            magic, entries = marshal.loads(_cache_file().read_bytes())
            if magic == importlib.util.MAGIC_NUMBER and isinstance(entries, dict):
                _code.update(entries)
        except (OSError, EOFError, ValueError, TypeError):
            pass  # absent, unreadable or from another interpreter: compile as usual
        dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # shadows the built-in in that module


def compiled() -> int:
    """How many texts this process compiled, since its last save, because the cache did not have them."""
    return _compiled


def allow_saving() -> None:
    """Let `save()` write the cache: only the scan command does, so that it holds what a scan defines and
    nothing a long-running process or a test run happened to define."""
    global _may_save  # noqa: PLW0603
    _may_save = True


def save() -> None:
    """Write the cache when this process compiled something it lacked (and byte-code and the scan command
    allow it): what this process used, and the cache's other entries while they are few (`_KEPT_UNUSED`).
    A process that found everything writes nothing: a scan of another kind of site uses a few other classes,
    and the two should not rewrite the file for each other."""
    global _compiled  # noqa: PLW0603
    with _lock:
        if not (_installed and _may_save) or sys.dont_write_bytecode or _compiled == 0:
            return
        unused = len(_code) - len(_used & _code.keys())
        kept = _code if unused <= _KEPT_UNUSED else {text: _code[text] for text in _used if text in _code}
        data = marshal.dumps((importlib.util.MAGIC_NUMBER, kept))
        _compiled = 0
    write_atomically(_cache_file(), data)  # or not (a read-only install): compiled every time, as before
