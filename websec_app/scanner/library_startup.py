"""Imported first by the scanner package: two libraries made cheaper to start (issue 14).

Before the fetch layer imports them: dnspython's optional features are answered from the parse cache
(dnspython_features.py), and cryptography's RFC 4514 name parser, whose patterns take ~10 ms to compile
and which a scan never uses, compiles them only if something parses a name from a string (lazy_regex.py).
"""

from __future__ import annotations

from . import dnspython_features
from .lazy_regex import lazy_patterns_of

dnspython_features.seed()
with lazy_patterns_of(frozenset({"cryptography.x509.name"})):
    import cryptography.x509  # noqa: F401
