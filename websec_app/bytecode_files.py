"""Files kept beside the byte-code (issue 14's caches: parsed data files, dataclasses' and regular expressions'
code, certifi's roots).

They live where Python keeps a module's `.pyc`: in `__pycache__` next to the module, or under
`sys.pycache_prefix`; the callers write them only when byte-code is written (`sys.dont_write_bytecode`), and a
file that cannot be written is simply not kept.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def beside_bytecode(module_file: str, name: str) -> Path:
    """The path of `name` in the byte-code directory of the module at `module_file`."""
    here = Path(module_file).resolve().parent
    directory = Path(sys.pycache_prefix, *here.parts[1:]) if sys.pycache_prefix else here / "__pycache__"
    return directory / name


def write_atomically(path: Path, data: bytes) -> bool:
    """Write `data` to `path` whole or not at all (a process reading at the same time sees the old file or
    the new one); False when it could not be written (a read-only install)."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError:
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True


class CodeCache(Generic[K, V]):
    """Compiled code kept in one marshal file beside the byte-code (startup_code.py, startup_regex.py): read
    when a process installs its cache, written at its end when it compiled something the file lacked.

    `version` is what the entries depend on besides their key (the interpreter's byte-code magic number, say):
    a file of another version is ignored. A save keeps what this process used, and the file's other entries
    while they are few (`kept_unused`): scans of other kinds of sites use a few other entries, and should not
    rewrite the file for each other; entries left over from code since changed are many more, and go."""

    def __init__(self, path: Path, version: Callable[[], object], *, max_entries: int, kept_unused: int) -> None:
        self.path = path
        self._version = version
        self._max_entries = max_entries  # a bound on the file, not a target
        self._kept_unused = kept_unused
        self.lock = threading.Lock()
        self.entries: dict[K, V] = {}  # the file's entries, then what this process compiled
        self._used: set[K] = set()  # the keys this process asked for: what a save keeps
        self.compiled = 0  # entries this process compiled (not found in the file) since it last saved
        self.loaded = False
        self.may_save = False

    def load(self) -> None:
        """Read the file's entries (once; the caller holds `lock`). Absent, unreadable or of another version:
        everything is compiled as usual."""
        self.loaded = True
        try:
            version, entries = marshal.loads(self.path.read_bytes())
            if version == self._version() and isinstance(entries, dict):
                self.entries.update(entries)
        except (OSError, EOFError, ValueError, TypeError):
            pass

    def get(self, key: K) -> V | None:
        entry = self.entries.get(key)
        if entry is not None:
            self._used.add(key)
        return entry

    def add(self, key: K, entry: V) -> None:
        """Keep what this process compiled for `key` (up to the bound)."""
        with self.lock:
            if len(self.entries) < self._max_entries:
                self.entries[key] = entry
                self._used.add(key)
            self.compiled += 1

    def save(self) -> None:
        """Write the file when this process compiled something it lacked, and byte-code and the command allow
        it. A process that found everything writes nothing."""
        with self.lock:
            if not (self.loaded and self.may_save) or sys.dont_write_bytecode or self.compiled == 0:
                return
            unused = len(self.entries) - len(self._used & self.entries.keys())
            kept = self.entries
            if unused > self._kept_unused:
                kept = {key: self.entries[key] for key in self._used if key in self.entries}
            data = marshal.dumps((self._version(), kept))  # type: ignore[arg-type]  # K, V: marshal's own types
            self.compiled = 0
        write_atomically(self.path, data)  # or not (a read-only install): compiled every time, as before
