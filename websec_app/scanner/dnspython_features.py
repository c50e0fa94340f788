"""dnspython's optional-feature checks answered from the parse cache (issue 14).

dnspython decides at import whether its optional features are usable (IDNA 2008 through `idna`, DNSSEC
through `cryptography`, ...): `dns._features.have()` reads the installed packages' metadata through
`importlib.metadata`, a few milliseconds of a command-line scan's start-up (~0.2 s). The answers change only
when packages are installed or removed, so `seed()` keeps them in the parse cache (parsed_cache.py), keyed
by dnspython's version and the package directories on the import path (an install changes them), and hands
them to `dns._features` before dnspython asks: its own answers, computed by itself the first time. Nothing
happens when dnspython's features module is already loaded (a long-running process).

With the answers cached, `importlib.metadata`, which `dns._features` imports at its top (with `zipfile`, `csv`
and `importlib.resources`, ~5 ms of a fresh process), is loaded only if something reads it.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _compute() -> dict[str, bool]:
    """dnspython's own answers."""
    import dns._features

    return {feature: dns._features.have(feature) for feature in dns._features._requirements}


def seed() -> None:
    """Before dnspython's first import: give it its feature answers from the cache."""
    if "dns._features" in sys.modules:
        return
    from dns import version

    from .parsed_cache import cached

    # Where packages are installed (an install or removal changes the directory); not the working directory,
    # which `python -m` puts first and which changes from one run to the next.
    sources = [Path(entry) for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))]
    sources = [source for source in sources if source.is_dir()]
    answers = cached("dnspython-features", sources, _compute, key=version.version)
    with _metadata_on_first_use():
        import dns._features

    for feature, available in answers.items():
        dns._features._cache.setdefault(feature, available)


class _MetadataOnFirstUse(types.ModuleType):
    """What `import importlib.metadata` gives `dns._features`: the real module, imported when an attribute
    of it is first read (a feature missing from the cache, or anyone's `from importlib import metadata`)."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get("importlib.metadata") is self:  # read while it stands in (another thread): step aside
            del sys.modules["importlib.metadata"]
        return getattr(importlib.import_module("importlib.metadata"), name)


@contextmanager
def _metadata_on_first_use() -> Iterator[None]:
    """`importlib.util.LazyLoader` would not do: the import statement reads the module's `__spec__`, which
    loads it. The stand-in is in `sys.modules` only for this import; the package's attribute keeps it until
    the real module is imported, by it or by anyone, and takes the real one's place."""
    if "importlib.metadata" in sys.modules:
        yield
        return
    stand_in = _MetadataOnFirstUse("importlib.metadata")
    sys.modules["importlib.metadata"] = stand_in
    importlib.metadata = stand_in  # what `import importlib.metadata` binds reads it
    try:
        yield
    finally:
        if sys.modules.get("importlib.metadata") is stand_in:
            del sys.modules["importlib.metadata"]
