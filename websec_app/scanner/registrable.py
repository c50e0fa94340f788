"""The registrable domain (eTLD+1) of a host, from the Public Suffix List bundled with `publicsuffixlist`.

The package ships the list and reads it from disk; it never downloads one, so a scan needs no network
beyond the target. It replaced tldextract (issue 14): same answers (tests/scanner/test_registrable.py
compares them), but tldextract imports `requests`, `filelock` and friends for its list updater, which
cost the command line ~0.09 s of start-up before a scan began (docs/performance.md).

The list (~10,000 rules) is parsed on the first lookup, not at import; the parsed list is cached beside the
byte-code (parsed_cache.py), so a fresh process loads it in ~1 ms instead of parsing it in ~12 ms (issue 14).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .parsed_cache import cached
from .target import ip_literal

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

#: RFC 6761 reserves `.test` for testing; treating it as a public suffix lets the test zones
#: (www.good.test -> good.test) behave like real ones.
EXTRA_SUFFIXES = ("test",)


@lru_cache(maxsize=1)
def _suffix_list() -> PublicSuffixList:
    """The bundled list with its private section (`alice.github.io` is Alice's site, not GitHub's, so
    its mail and DNSSEC records are its own, and `bob.github.io` is not same-site with it).

    An unknown top-level name is not a suffix (`accept_unknown=False`): `printer.internal` has no
    registrable domain, as with tldextract. Rules are matched in Unicode (`accept_encoded_idn=False`
    skips IDNA-encoding each of the ~10,000 rules, two thirds of the parse); `registrable_domain`
    decodes a punycoded host's labels first.
    """
    return _load_suffix_list(only_icann=False)


@lru_cache(maxsize=1)
def _icann_suffix_list() -> PublicSuffixList:
    """The list's ICANN section only (the registry-controlled domains, `co.uk`, not `github.io`)."""
    return _load_suffix_list(only_icann=True)


def _load_suffix_list(*, only_icann: bool) -> PublicSuffixList:
    import publicsuffixlist
    from publicsuffixlist import PSLFILE, PublicSuffixList

    def parse() -> dict[str, object]:
        with open(PSLFILE, encoding="utf-8") as source:
            rules = [*source.read().splitlines(), *EXTRA_SUFFIXES]
        return vars(PublicSuffixList(rules, accept_unknown=False, accept_encoded_idn=False, only_icann=only_icann))

    # The parsed list's state (a frozenset of rules and two numbers), restored as pickle restores a plain
    # object (`__new__`, then its `__dict__`); keyed by the package's code and version as well as its list.
    sources = [Path(PSLFILE), Path(str(publicsuffixlist.__file__))]
    version = getattr(publicsuffixlist, "__version__", None)
    name = "public-suffix-list-icann" if only_icann else "public-suffix-list"
    state = cached(name, sources, parse, key=(version, EXTRA_SUFFIXES))
    suffixes = PublicSuffixList.__new__(PublicSuffixList)
    vars(suffixes).update(state)
    return suffixes


def _unicode_label(label: str) -> str:
    """`xn--55qx5d` -> `公司` (IDNA 2003, Python's codec); a label that does not decode stays as is."""
    if not label.startswith("xn--"):
        return label
    try:
        return label.encode("ascii").decode("idna")
    except UnicodeError:
        return label


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """`www.example.co.uk` -> `example.co.uk`; an IP literal or bare suffix is returned as is."""
    host = host.rstrip(".").lower()
    if ip_literal(host) is not None:
        return host
    labels = host.split(".")
    private = _suffix_list().privatesuffix(".".join(_unicode_label(label) for label in labels))
    if private is None:
        return host
    return ".".join(labels[-(private.count(".") + 1) :])  # the host's own spelling (punycode stays punycode)


def is_known_public_suffix(domain: str) -> bool:
    """True for a name the Public Suffix List names, in either section (`com`, `co.uk`, `in-addr.arpa`, `duckdns.org`):
    anyone may hold a name one label under it. False for a registrable name, a name under one, an IP literal, and a
    name under a top-level name the list does not know (`internal`), which no public zone answers for."""
    domain = domain.rstrip(".").lower()
    if not domain or ip_literal(domain) is not None:
        return False
    probe = ".".join(_unicode_label(label) for label in f"websec-probe.{domain}".split("."))
    return _suffix_list().privatesuffix(probe) == probe


def is_registry_suffix(domain: str) -> bool:
    """True for a registry-controlled public suffix (`com`, `co.uk`: the ICANN section of the list), False for
    a private one (`github.io`), a registrable name or an IP literal. What Chrome refuses a certificate
    wildcard directly under (`*.co.uk`); the private section is consulted first, so the ICANN-only list is
    parsed only for a name that is a public suffix of some kind."""
    if not is_known_public_suffix(domain):
        return False  # a public suffix of neither section
    probe = ".".join(_unicode_label(label) for label in f"websec-probe.{domain.rstrip('.').lower()}".split("."))
    return _icann_suffix_list().privatesuffix(probe) == probe
