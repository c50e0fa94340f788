"""Where DANE for SMTP puts an MX host's TLSA records (RFC 7672), and which zone signs them: read by the fetch,
which asks for them, and by the check, which validates them."""

from __future__ import annotations

from ..registrable import registrable_domain


def dane_name(exchange: str) -> str:
    """Where an MX host's TLSA records are (RFC 7672 2.2.3: port 25 over TCP)."""
    return f"_25._tcp.{exchange}"


def dane_zone(exchange: str, domain: str) -> str:
    """The zone taken to hold an MX host's TLSA records: the domain's own for its names, else the host's registrable
    domain (a provider's MX, mx1.mail.example.net: example.net). A name that is not a zone apex there is judged
    unknown by the check (that zone's SOA says so), never validated against the wrong keys."""
    return domain if exchange == domain or exchange.endswith("." + domain) else registrable_domain(exchange)
