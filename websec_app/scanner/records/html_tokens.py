"""The HTML tokenizer's lexical rules (HTML §13.2.5), shared by the two small tokenizers that read a page before
libxml2 does: records/inert_content.py (where `<noscript>` and `<template>` contents and foreign content end)
and records/html_encoding.py (the `<meta charset>` Chromium finds before it decodes the page).

Each rule finds where one token ends, with possessive regular expressions: linear however the token is written.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

__all__ = [
    "ATTRIBUTE", "ATTRIBUTES", "NAME", "TAG", "WS", "ascii_lower", "attributes", "bogus_comment_end", "comment_end",
    "end_tag", "script_data_end",
]  # fmt: skip

WS = "\t\n\f\r "
# A start or end tag from its "<" (§13.2.5.6-13.2.5.40): the name, then attributes, values quoted or not.
NAME = rf"[A-Za-z][^{WS}/>]*+"
ATTRIBUTES = rf"(?:[{WS}/]++|[^{WS}/>][^{WS}/>=]*+(?:[{WS}]*+=[{WS}]*+(?:\"[^\"]*+\"|'[^']*+'|[^{WS}>]*+))?)*+>"
TAG = re.compile(rf"<(/?)({NAME}){ATTRIBUTES}")
#: One attribute of a tag matched by TAG: its name, and its value with the quotes it was written in.
ATTRIBUTE = re.compile(rf"([^{WS}/>][^{WS}/>=]*+)(?:[{WS}]*+=[{WS}]*+(\"[^\"]*+\"|'[^']*+'|[^{WS}>]*+))?")
_COMMENT_END = re.compile(r"--!?>")
_SCRIPT_TOKEN = re.compile(r"<!--|-->|</?script(?=[\t\n\f\r />])", re.IGNORECASE)


@lru_cache(maxsize=32)
def end_tag(name: str) -> re.Pattern[str]:
    """Where the raw text or RCDATA of element `name` ends: its first "appropriate end tag"."""
    return re.compile(rf"</{name}(?=[{WS}/>])", re.IGNORECASE)


def comment_end(text: str, position: int) -> int:
    """Past the comment whose "<!--" is at `position` (§13.2.5.43-52): `-->` or `--!>` ends it, `<!-->` and
    `<!--->` are empty comments closed abruptly; one left open runs to the end of the file."""
    if text.startswith(("<!-->", "<!--->"), position):
        return text.index(">", position) + 1
    match = _COMMENT_END.search(text, position + 4)
    return match.end() if match else len(text)


def bogus_comment_end(text: str, position: int) -> int:
    """Past the bogus comment (or doctype) at `position`: `<!`, `<?` or `</` not followed by a letter, up to the
    first ">" (§13.2.5.41, "bogus comment state"); `</>` is nothing at all."""
    if text.startswith("</>", position):
        return position + 3
    end = text.find(">", position + 2)
    return end + 1 if end >= 0 else len(text)


def script_data_end(text: str, position: int) -> int:
    """Past the end tag of a script whose text starts at `position` (§13.2.5.4 and the script data escaped
    states): after `<!--`, a `<script` hides the next `</script`; `-->` ends both."""
    escaped = double = False
    for match in _SCRIPT_TOKEN.finditer(text, position):
        token = match.group().lower()
        if token == "<!--":
            escaped = True
        elif token == "-->":
            escaped = double = False
        elif token == "<script":
            double = double or escaped
        elif double:  # "</script" ends only the double-escaped part
            double = False
        else:
            tag = TAG.match(text, match.start())
            return tag.end() if tag else len(text)
    return len(text)


def attributes(text: str, name_end: int, end: int) -> list[tuple[str, str]]:
    """Every attribute of the tag whose name ends at `name_end` and which ends at `end`, in order, duplicates
    kept: the name ASCII-lowercased, the value unquoted with its character references decoded (§13.2.5.38)."""
    found = []
    for match in ATTRIBUTE.finditer(text, name_end, end - 1):
        value = match.group(2) or ""
        if value[:1] in ("'", '"'):
            value = value[1:-1]
        found.append((ascii_lower(match.group(1)), html.unescape(value) if "&" in value else value))
    return found


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(value: str) -> str:
    """Infra "ASCII lowercase", what HTML compares keywords by: str.lower() would also fold non-ASCII
    letters (the Kelvin sign K to k), which browsers leave alone."""
    return value.translate(_ASCII_LOWER)
