"""Plain titles for outcomes (titles.toml): what a non-specialist reads instead of an outcome id.

The PDFs print them; the UI may too. An outcome without a title (a stored report from before a rule
was renamed) falls back to a title derived from its id, never to the id itself.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

_TITLES = Path(__file__).with_name("titles.toml")


@lru_cache(maxsize=1)
def plain_titles() -> dict[str, str]:
    """Outcome id -> plain title, as titles.toml lists them."""
    data = tomllib.loads(_TITLES.read_text("utf-8"))
    return {str(k): str(v) for k, v in data["titles"].items()}


def plain_title(outcome: str) -> str:
    """ "cookie.session_no_secure" -> "Session cookie sent over plain HTTP"."""
    title = plain_titles().get(outcome)
    if title:
        return title
    # Unknown id: "tls.some_new_thing" -> "Some new thing" (readable, and never a dotted id).
    words = outcome.rsplit(".", 1)[-1].replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Finding"


__all__ = ["plain_title", "plain_titles"]
