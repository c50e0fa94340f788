"""Words every renderer shares (the UI, CLI, emails, PDFs and API errors say them the same way): counted nouns
("1 day", "2 days") and the names of TLS protocol versions."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """ "1 check", "3 checks", "0 checks"; `plural` for nouns that do not just take an s ("1 match", "2 matches")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


#: TLS protocol versions as OpenSSL reports them -> as a reader names them.
PROTOCOL_LABELS = {
    "TLSv1.3": "TLS 1.3",
    "TLSv1.2": "TLS 1.2",
    "TLSv1.1": "TLS 1.1",
    "TLSv1": "TLS 1.0",
    "SSLv3": "SSL 3.0",
    "SSLv2": "SSL 2.0",
}


__all__ = ["PROTOCOL_LABELS", "counted"]
