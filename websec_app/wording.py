"""Counted nouns in messages: "1 day", "2 days" (the UI, CLI, emails, PDFs and API errors all say it this way)."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """ "1 check", "3 checks", "0 checks"; `plural` for nouns that do not just take an s ("1 match", "2 matches")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


__all__ = ["counted"]
