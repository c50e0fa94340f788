"""MTA-STS (RFC 8461): the `_mta-sts` TXT record and the policy file, parsed as a sending server would."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .dns_text import is_domain_name, tag_list

__all__ = [
    "MAX_AGE_LIMIT",
    "StsPolicy",
    "parse_sts_policy",
    "sts_record_problem",
    "sts_records",
    "uncovered_mx",
]

MAX_AGE_LIMIT = 31557600  # RFC 8461 3.2: at most one year
_STS_ID = re.compile(r"^[A-Za-z0-9]{1,32}$")


def sts_records(txt_values: list[str]) -> list[str]:
    """RFC 8461 3.1: records not beginning with "v=STSv1;" are discarded."""
    return [t for t in txt_values if re.match(r"^v=STSv1\s*(;|$)", t)]


def sts_record_problem(text: str) -> str | None:
    """RFC 8461 3.1: v=STSv1 first, then an id of 1 to 32 letters and digits."""
    fields = tag_list(text)
    ids = [value for key, value in fields if key == "id"]
    if not ids:
        return "the record has no id field"
    if not _STS_ID.match(ids[0]):
        return f"id={ids[0]} is not 1 to 32 letters and digits"
    return None


@dataclass
class StsPolicy:
    fields: dict[str, str] = field(default_factory=dict)
    mx: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def mode(self) -> str | None:
        return self.fields.get("mode")

    @property
    def max_age(self) -> int | None:
        value = self.fields.get("max_age", "")
        # RFC 8461 3.2: 1*10DIGIT. str.isdigit alone takes "²", which int() refuses, and int() refuses past
        # 4300 digits: either would crash the check.
        return int(value) if value.isascii() and value.isdigit() and len(value) <= 10 else None


def parse_sts_policy(text: str) -> StsPolicy:
    """RFC 8461 3.2: "key: value" lines (CRLF or LF); version, mode and max_age required, mx for
    enforce and testing; unknown keys ignored."""
    policy = StsPolicy()
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon:
            policy.errors.append(f"{line.strip()!r} is not 'key: value'")
            continue
        key, value = key.strip(), value.strip()
        if key == "mx":
            policy.mx.append(value.lower())
        elif key in policy.fields:
            policy.errors.append(f"{key} appears twice")
        else:
            policy.fields[key] = value
    if policy.fields.get("version") != "STSv1":
        policy.errors.append("version must be STSv1")
    if policy.mode not in ("enforce", "testing", "none"):
        policy.errors.append(f"mode must be enforce, testing or none, not {policy.mode!r}")
    max_age = policy.max_age
    if max_age is None or max_age > MAX_AGE_LIMIT or len(policy.fields.get("max_age", "")) > 10:
        policy.errors.append(f"max_age must be a number of seconds up to {MAX_AGE_LIMIT}")
    if policy.mode in ("enforce", "testing") and not policy.mx:
        policy.errors.append("no mx line: the policy allows no mail server")
    for pattern in policy.mx:
        bare = pattern[2:] if pattern.startswith("*.") else pattern
        if not is_domain_name(bare):
            policy.errors.append(f"mx {pattern!r} is not a host name or *.domain pattern")
    return policy


def uncovered_mx(exchanges: Iterable[str], patterns: Iterable[str]) -> list[str]:
    """The MX hosts no mx pattern of the policy matches, each once, in order. RFC 8461 4.1: a pattern is an
    exact name, or "*.example.com" for exactly one more label. The patterns go into two sets, the exact
    names and the parents of the "*." ones, so a host costs two lookups: an MX RRset of thousands of
    records (over TCP) against a 64 KiB policy of thousands of patterns, compared pair by pair, was
    millions of comparisons, seconds of CPU."""
    exact: set[str] = set()
    parents: set[str] = set()
    for pattern in patterns:
        pattern = pattern.rstrip(".").lower()
        if pattern.startswith("*."):
            parents.add(pattern[2:])
        else:
            exact.add(pattern)
    uncovered = []
    for host in dict.fromkeys(h.rstrip(".").lower() for h in exchanges):
        label, _, parent = host.partition(".")
        if host not in exact and not (label and parent in parents):
            uncovered.append(host)
    return uncovered
