"""Where DANE for SMTP puts an MX host's TLSA records (RFC 7672), and which zone signs them: read by the fetch,
which asks for them, and by the check, which validates them."""

from __future__ import annotations

from ..registrable import registrable_domain
from ..snapshot import DnsAnswer


def dane_name(exchange: str) -> str:
    """Where an MX host's TLSA records are (RFC 7672 2.2.3: port 25 over TCP)."""
    return f"_25._tcp.{exchange}"


def dane_zone(exchange: str, domain: str, tlsa: DnsAnswer | None = None) -> str:
    """The zone that signs an MX host's TLSA records: the signer their RRSIGs name, when it is a name above them (a
    subdomain delegated as a zone of its own, mail.example.com); else the domain's own zone for its names, or the
    host's registrable domain (a provider's MX, mx1.mail.example.net: example.net). A name that is not a zone apex
    there is judged unknown by the check (that zone's SOA says so), never validated against the wrong keys."""
    signer = _signer(tlsa) if tlsa is not None else None
    if signer is not None and dane_name(exchange).endswith("." + signer):
        return signer
    return domain if exchange == domain or exchange.endswith("." + domain) else registrable_domain(exchange)


def _signer(answer: DnsAnswer) -> str | None:
    """The signer name of the answer's first RRSIG (RFC 4034 3.2 presentation: type, algorithm, labels, TTL,
    expiration, inception, key tag, signer, signature)."""
    for text in answer.signatures[:1]:
        fields = text.split()
        if len(fields) > 8:
            return fields[7].rstrip(".").lower() or None
    return None
