"""Files kept beside the byte-code (issue 14's caches: parsed data files, dataclasses' code, certifi's roots).

They live where Python keeps a module's `.pyc`: in `__pycache__` next to the module, or under
`sys.pycache_prefix`; the callers write them only when byte-code is written (`sys.dont_write_bytecode`), and a
file that cannot be written is simply not kept.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


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
