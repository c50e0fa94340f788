"""Bearer secrets (API keys, tokens): generated here, stored only as SHA-256 hashes.

The secrets carry 256 bits of randomness, so an unsalted SHA-256 is enough to make a
stolen database useless for authenticating (there is nothing to brute-force), and it
keeps lookups a single indexed equality on the hash.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: Longer input is rejected before hashing: no real key or token is anywhere near this.
MAX_SECRET_LENGTH = 200


def new_secret(prefix: str) -> str:
    """`<prefix><43 URL-safe characters>` (32 random bytes)."""
    return prefix + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def hashes_match(stored_hash: str, candidate_hash: str) -> bool:
    """Constant-time comparison (the row was found by hash; this guards against a sloppy index)."""
    return hmac.compare_digest(stored_hash.encode(), candidate_hash.encode())


def plausible(secret: str) -> bool:
    return 0 < len(secret) <= MAX_SECRET_LENGTH
