"""dnspython's optional-feature checks answered from the parse cache (issue 14).

dnspython decides at import whether its optional features are usable (IDNA 2008 through `idna`, DNSSEC
through `cryptography`, ...): `dns._features.have()` reads the installed packages' metadata through
`importlib.metadata`, a few milliseconds of a command-line scan's start-up (~0.2 s). The answers change only
when packages are installed or removed, so `seed()` keeps them in the parse cache (parsed_cache.py), keyed
by dnspython's version and the package directories on the import path (an install changes them), and hands
them to `dns._features` before dnspython asks: its own answers, computed by itself the first time. Nothing
happens when dnspython's features module is already loaded (a long-running process).
"""

from __future__ import annotations

import sys
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
    import dns._features

    for feature, available in answers.items():
        dns._features._cache.setdefault(feature, available)
