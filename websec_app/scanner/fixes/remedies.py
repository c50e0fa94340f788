"""The remedy table (remedies.toml): what each outcome with a `fix` asks of the user's server.

The snippets are written from it (snippets.py); this module only loads and checks the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .servers import SERVERS

_TABLE = Path(__file__).with_name("remedies.toml")

#: Kinds written by code (the rest are [templates.<kind>] tables of fixed texts).
CODE_KINDS = ("header", "remove_header", "hide_versions", "cookie")
_MODES = ("set", "add")


class RemedyTableError(ValueError):
    """remedies.toml is inconsistent (caught by tests and at first use)."""


@dataclass(frozen=True)
class Remedy:
    outcome: str
    kind: str
    header: str | None = None  # kind header: the header to set, when the fix does not name it
    value: str | None = None  # kind header: a fixed value, instead of the fix's
    mode: str = "set"  # kind header: "set" replaces the site's own header, "add" sends one beside it
    headers: tuple[str, ...] = ()  # kinds remove_header / hide_versions
    attributes: tuple[str, ...] = ()  # kind cookie: Set-Cookie attributes to add
    #: kind header, for Content-Security-Policy: the fix is already tried (the site's own Report-Only policy),
    #: so it is deployed enforcing rather than as Report-Only first
    enforce: bool = False
    #: kind cookie: the template written instead when the scanned page is plain HTTP, for a remedy that is
    #: about Secure (browsers refuse a Secure cookie over HTTP, so adding it there would lose the cookie)
    on_plain_http: str | None = None


@dataclass(frozen=True)
class RemedyTable:
    remedies: dict[str, Remedy]
    #: kind -> server -> text, `{fix}` standing for the rendered fix
    templates: dict[str, dict[str, str]]

    def remedy(self, outcome: str) -> Remedy | None:
        return self.remedies.get(outcome)


def _remedy(outcome: str, row: dict[str, object], templates: dict[str, dict[str, str]]) -> Remedy:
    known = {"kind", "header", "value", "mode", "headers", "attributes", "enforce", "on_plain_http"}
    if unknown := set(row) - known:
        raise RemedyTableError(f"remedy {outcome!r} has unknown fields {sorted(unknown)}")
    kind = str(row.get("kind", ""))
    if kind not in CODE_KINDS and kind not in templates:
        raise RemedyTableError(f"remedy {outcome!r}: kind {kind!r} is neither written by code nor a template")
    mode = str(row.get("mode", "set"))
    if mode not in _MODES:
        raise RemedyTableError(f"remedy {outcome!r}: mode {mode!r} is not one of {_MODES}")
    headers = row.get("headers", [])
    attributes = row.get("attributes", [])
    if not isinstance(headers, list) or not isinstance(attributes, list):
        raise RemedyTableError(f"remedy {outcome!r}: headers and attributes are lists")
    if kind == "cookie" and not attributes:
        raise RemedyTableError(f"remedy {outcome!r}: a cookie remedy names the attributes to add")
    on_plain_http = row.get("on_plain_http")
    if on_plain_http is not None and (kind != "cookie" or on_plain_http not in templates):
        raise RemedyTableError(f"remedy {outcome!r}: on_plain_http names a template, for a cookie remedy")
    header, value = row.get("header"), row.get("value")
    return Remedy(
        outcome=outcome,
        kind=kind,
        header=str(header) if header is not None else None,
        value=str(value) if value is not None else None,
        mode=mode,
        headers=tuple(map(str, headers)),
        attributes=tuple(map(str, attributes)),
        enforce=bool(row.get("enforce", False)),
        on_plain_http=str(on_plain_http) if on_plain_http is not None else None,
    )


def _parsed(path: Path) -> dict[str, Any]:
    """The TOML, parsed once per version of the file (parsed_cache: tomllib stays out of a cached scan)."""
    from ..parsed_cache import cached

    def parse() -> dict[str, Any]:
        import tomllib

        return tomllib.loads(path.read_text("utf-8"))

    return cached(f"remedies-{path.stem}", [path], parse)


def load_remedies(path: Path = _TABLE) -> RemedyTable:
    data = _parsed(path)
    templates: dict[str, dict[str, str]] = {}
    for kind, texts in data.get("templates", {}).items():
        if kind in CODE_KINDS:
            raise RemedyTableError(f"template {kind!r} has the name of a kind written by code")
        if set(texts) != set(SERVERS):
            raise RemedyTableError(f"template {kind!r} must have exactly the servers {SERVERS}")
        templates[kind] = {server: str(texts[server]) for server in SERVERS}
    remedies = {outcome: _remedy(outcome, row, templates) for outcome, row in data.get("outcomes", {}).items()}
    return RemedyTable(remedies, templates)


@lru_cache(maxsize=1)
def remedy_table() -> RemedyTable:
    return load_remedies()
