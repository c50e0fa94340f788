"""The TOML files of `rules/` (the rule rows, the grade bands, the section table), parsed once per install.

A module beside `rules/` rather than in it: `sections.py` reads its table at import, and `rules/__init__.py`
imports `sections.py`. The parse is cached (parsed_cache.py): a fresh process loads the tables without
importing tomllib (issue 14).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .parsed_cache import cached

RULES_DIR = Path(__file__).parent / "rules"


class RuleFileError(ValueError):
    """A TOML file of the rules directory does not parse."""


def parse_rule_files(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """File name -> parsed TOML; RuleFileError names the file that does not parse."""
    import tomllib

    tables = {}
    for path in paths:
        try:
            tables[path.name] = tomllib.loads(path.read_text("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise RuleFileError(f"{path.name}: {exc}") from exc
    return tables


def rule_tables() -> dict[str, dict[str, Any]]:
    """File name -> parsed TOML, for every `*.toml` of the package's rules directory. Each call returns a
    new value (callers may keep what they read); a malformed file raises RuleFileError."""
    paths = sorted(RULES_DIR.glob("*.toml"))
    return cached("rule-tables", paths, lambda: parse_rule_files(paths))
