"""CAA (RFC 8659): the names whose CAA records a certificate authority consults for a host."""

from __future__ import annotations

__all__ = ["MAX_CAA_NAMES", "caa_names"]

#: A name rarely has more than 6 labels; past this many, the farthest parents are left unchecked
#: (a hostile host of a hundred labels must not cost a hundred queries).
MAX_CAA_NAMES = 10


def caa_names(host: str) -> list[str]:
    """RFC 8659 3: the relevant RRset is the first non-empty one climbing from the host "up to but
    not including the DNS root", so past the registrable domain: alice.github.io, github.io, io."""
    labels = host.rstrip(".").lower().split(".")
    return [".".join(labels[start:]) for start in range(len(labels))][:MAX_CAA_NAMES]
