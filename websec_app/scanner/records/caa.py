"""CAA (RFC 8659): the names whose CAA records a certificate authority consults for a host."""

from __future__ import annotations

__all__ = ["MAX_CAA_NAMES", "caa_names"]

#: A name rarely has more than 6 labels; past this many, names in the middle of the climb (just below the
#: registrable domain) are left unchecked: a hostile host of a hundred labels must not cost a hundred queries,
#: and the names where CAA records usually are, the registrable domain and its parents, are always asked.
MAX_CAA_NAMES = 10


def caa_names(host: str, domain: str) -> list[str]:
    """RFC 8659 3: the relevant RRset is the first non-empty one climbing from the host "up to but
    not including the DNS root", so past the registrable domain: alice.github.io, github.io, io.

    At most MAX_CAA_NAMES, in climbing order: the host and the names below the registrable `domain`, then
    `domain` and its parents, which are always kept; over the cap, the names just below `domain` are
    dropped. A caller can tell that some were by comparing the count with the host's labels."""
    labels = host.rstrip(".").lower().split(".")
    names = [".".join(labels[start:]) for start in range(len(labels))]
    if len(names) <= MAX_CAA_NAMES:
        return names
    domain = domain.rstrip(".").lower()
    top = names[names.index(domain) :] if domain in names else names[-1:]
    return names[: max(MAX_CAA_NAMES - len(top), 1)] + top
