"""What the dns section's parts (dns.py, dns_mail.py, dns_spf.py, dns_caa.py) share: how a failed lookup, a list of
errors and a series of names are written in a finding."""

from __future__ import annotations

from collections.abc import Iterable

from ..findings import Finding
from ..snapshot import DnsAnswer, DnsSnapshot
from ._shown import listed

# A 64 KB TXT record of "x " holds 32,000 SPF errors (as many again from each record it includes), a DMARC record
# or an MTA-STS policy thousands: ten included records of them made a 12 MB dns section. Each distinct error is
# listed once, the first ten of them, each cut to 500 characters (an error quotes its term, which can be 64 KB).
_MAX_ERRORS_LISTED = 10
_MAX_ERROR_CHARS = 500


def listed_errors(errors: Iterable[str], limit: int = _MAX_ERRORS_LISTED) -> list[str]:
    """The distinct `errors` in order, at most `limit`, then how many more there were, not listed."""
    return listed(errors, limit, each=_MAX_ERROR_CHARS)


def could_not_check(answer: DnsAnswer, *families: str) -> Finding:
    """The failed lookup as a check.error; `families`: the one it leaves unchecked, when not its caller's."""
    note = answer.error or answer.rcode
    return Finding("check.error", subject=f"{answer.name} {answer.rdtype}", note=note, families=families)


def series(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


def addressless(dns: DnsSnapshot, host: str) -> bool:
    """Whether the A and AAAA lookups of `host` were both answered, neither with an address (not whether they
    failed, or were never made)."""
    a, aaaa = dns.get(host, "A"), dns.get(host, "AAAA")
    return a is not None and aaaa is not None and not a.records and not aaaa.records
