"""MTA-STS (RFC 8461): the `_mta-sts` TXT record and the policy file, parsed as a sending server would.

Both are read by their grammar (3.1, 3.2), as senders that parse it do (mox): the names, values and separators
it allows and nothing else, case-sensitive, since a record or policy outside it leaves the domain without a
policy ("senders MUST assume the recipient domain does not have an available MTA-STS Policy", 3.1). A field
given twice counts once, at its first occurrence, but for `mx` ("If any non-repeated field ... is duplicated,
all entries except for the first SHALL be ignored", 3.2); fields the RFC does not define are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .dns_text import EXTENSION_VALUE, begins_versioned, looks_versioned, versioned_fields

__all__ = [
    "MAX_AGE_LIMIT",
    "MAX_POLICY_BYTES",
    "StsPolicy",
    "parse_sts_policy",
    "sts_near_misses",
    "sts_record_problem",
    "sts_records",
    "uncovered_mx",
]

MAX_AGE_LIMIT = 31557600  # RFC 8461 3.2: at most one year
#: RFC 8461 3.3: senders may cap the policy's size; 64 KiB is what mox reads, and what the scan fetches.
MAX_POLICY_BYTES = 64 * 1024
_VERSION = "v=STSv1"
_STS_ID = re.compile(r"[A-Za-z0-9]{1,32}")  # 3.1: sts-id = %s"id=" 1*32(ALPHA / DIGIT)
# 3.2: sts-policy-ext-name, which the defined field names match too; then sts-policy-field-delim, ":" *WSP
_POLICY_FIELD = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]{0,31}):[ \t]*")
# 3.2: sts-policy-mx-value = ["*."] Domain, RFC 5321 4.1.2's Domain: labels of letters, digits and inner
# hyphens, no final dot, in A-labels ("the Punycode-encoded A-label ... and not the Unicode-encoded U-label")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_MX_PATTERN = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*")
_MAX_AGE = re.compile(r"[0-9]{1,10}")  # 3.2: sts-policy-max-age-value = 1*10(DIGIT)
# 3.2: sts-policy-ext-value = sts-policy-vchar [*(%x20 / sts-policy-vchar) sts-policy-vchar], vchar being
# printable ASCII or non-ASCII UTF-8: no control character, no tab, no space at either end
_POLICY_EXTENSION_VALUE = re.compile(r"[^\x00-\x20\x7f](?:[^\x00-\x1f\x7f]*[^\x00-\x20\x7f])?")
_MODES = ("enforce", "testing", "none")
_DEFINED = ("version", "mode", "max_age", "mx")


def sts_records(txt_values: list[str]) -> list[str]:
    """RFC 8461 3.1: records not beginning with "v=STSv1;" are discarded (then more than one is none)."""
    return [t for t in txt_values if begins_versioned(t, _VERSION)]


def sts_near_misses(txt_values: list[str]) -> list[str]:
    """The records discarded although they look like MTA-STS ("v=STSv1" alone, "v=STSv1 id=...", "V=STSv1;")."""
    return [t for t in txt_values if looks_versioned(t, _VERSION)]


def sts_record_problem(text: str) -> str | None:
    """RFC 8461 3.1: v=STSv1, then fields separated by ";", among them an id of 1 to 32 letters and digits (the
    first id, should there be several); other fields are `name=value` with no space, "=" or ";" in the value."""
    fields, problem = versioned_fields(text, _VERSION)
    if problem is not None:
        return problem
    seen = set()
    for name, value in fields:
        if name == "id" and name not in seen and not _STS_ID.fullmatch(value):
            return f"id={value} is not 1 to 32 letters and digits"
        if name != "id" and not EXTENSION_VALUE.fullmatch(value):
            return f"{name}={value} is not a field value (printable, without space, '=' or ';')"
        seen.add(name)
    if "id" not in seen:
        hint = " (field names are case-sensitive)" if any(n.lower() == "id" for n in seen) else ""
        return f"the record has no id field{hint}"
    return None


@dataclass
class StsPolicy:
    fields: dict[str, str] = field(default_factory=dict)  # each field's first value; mx's are in `mx`
    mx: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def mode(self) -> str | None:
        return self.fields.get("mode")

    @property
    def max_age(self) -> int | None:
        value = self.fields.get("max_age", "")
        # 1*10DIGIT, ASCII: str.isdigit alone takes "²", which int() refuses, and int() refuses past 4300 digits
        return int(value) if _MAX_AGE.fullmatch(value) else None


def _policy_lines(text: str) -> list[str]:
    """The lines of a policy: each ends with sts-policy-term, LF or CRLF, the last one optionally (RFC 8461 3.2)."""
    lines = text.split("\n")
    last = lines.pop()  # "" when the text ends with its last line's terminator
    lines = [line.removesuffix("\r") for line in lines]
    return [*lines, last] if last else lines


def parse_sts_policy(text: str) -> StsPolicy:
    """RFC 8461 3.2: `key: value` lines, each ended by LF or CRLF; version, mode and max_age required once, mx for
    enforce and testing; unknown fields ignored. A line outside the grammar is an error: a space before the ":"
    or at the start of a line, a value with control characters. Empty lines are skipped: the grammar has none,
    but senders skip them (postfix-mta-sts-resolver reads one as nothing), and policy files often end with one,
    so calling the policy invalid for it would tell the owner senders ignore a policy they enforce."""
    policy = StsPolicy()
    for line in _policy_lines(text):
        if not line.strip(" \t"):
            continue
        match = _POLICY_FIELD.match(line)
        if match is None:
            policy.errors.append(f"{line!r} is not 'key: value'")
            continue
        key, value = match.group(1), line[match.end() :].rstrip(" \t")  # *WSP may end a line
        if key == "mx":
            if not _MX_PATTERN.fullmatch(value) or len(value.removeprefix("*.")) > 253:
                policy.errors.append(f"mx {value!r} is not a host name or *.domain pattern (A-labels, no final dot)")
            policy.mx.append(value.lower())
        elif key not in policy.fields:  # 3.2: "all entries except for the first SHALL be ignored"
            if key not in _DEFINED and not _POLICY_EXTENSION_VALUE.fullmatch(value):
                policy.errors.append(f"{line!r} is not 'key: value' (an empty value, or control characters)")
            policy.fields[key] = value

    def unless_misspelt(name: str) -> str:
        variants = [key for key in policy.fields if key.lower() == name and key != name]
        return f" (field names are case-sensitive: {variants[0]!r} is not {name!r})" if variants else ""

    version = policy.fields.get("version")
    if version is None:
        policy.errors.append("version must be STSv1" + unless_misspelt("version"))
    elif version != "STSv1":
        policy.errors.append(f"version must be STSv1, not {version!r}")
    if policy.mode not in _MODES:
        policy.errors.append(f"mode must be enforce, testing or none, not {policy.mode!r}" + unless_misspelt("mode"))
    max_age = policy.max_age
    if max_age is None or max_age > MAX_AGE_LIMIT:
        policy.errors.append(f"max_age must be a number of seconds up to {MAX_AGE_LIMIT}" + unless_misspelt("max_age"))
    if policy.mode in ("enforce", "testing") and not policy.mx:
        policy.errors.append("no mx line: the policy allows no mail server" + unless_misspelt("mx"))
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
