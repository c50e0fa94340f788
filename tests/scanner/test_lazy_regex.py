"""cryptography's RFC 4514 name parser compiles its patterns on first use once the scanner is imported
(scanner/lazy_regex.py, issue 14), and parses exactly as before."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import cryptography.x509.name

from websec_app.scanner.lazy_regex import LazyPattern, lazy_patterns_of

ROOT = Path(__file__).resolve().parents[2]

NAMES = [
    "CN=example.test",
    "CN=a\\,b,O=Example\\+Co,C=IN",
    "CN=#0c0b6578616d706c652e7465737",
    "CN=#0c0b6578616d706c652e74657374",
    "2.5.4.3=café,O=\\E2\\82\\AC uro",
    "CN=x+OU=y,O= lead\\ ",
    "CN=\\ spaced\\ ",
    "not a name",
]

_PARSE = """
import json, sys
if sys.argv[1] == "scanner":
    import websec_app.scanner
from cryptography.x509 import Name
out = []
for text in json.loads(sys.argv[2]):
    try:
        out.append(Name.from_rfc4514_string(text).rfc4514_string())
    except ValueError as exc:
        out.append(f"ValueError: {exc}")
import cryptography.x509.name as n
print(json.dumps({"parsed": out, "lazy": type(n._RFC4514NameParser.__dict__["_STRING_RE"]).__name__}))
"""


def _parse_in_fresh_process(first: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PARSE, first, json.dumps(NAMES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_names_parse_the_same_with_the_scanner_s_lazy_patterns() -> None:
    plain = _parse_in_fresh_process("cryptography")
    lazy = _parse_in_fresh_process("scanner")

    assert plain["lazy"] == "Pattern" and lazy["lazy"] == "LazyPattern"
    assert lazy["parsed"] == plain["parsed"]


def test_the_parser_uses_its_patterns_only_through_methods() -> None:
    # A LazyPattern is not a re.Pattern: passed to re.match() or isinstance() it would not work. Guard against a
    # cryptography release that starts doing that in the module the scanner makes lazy.
    source = Path(cryptography.x509.name.__file__).read_text("utf-8")
    uses = re.findall(r"(\w+_RE)\b(.{0,14})", source)
    assert uses
    for name, after in uses:
        assert after.startswith((".match(", ".sub(", " = re.compile(", ")")), (name, after)
    read_re = source[source.index("def _read_re") :][:300]
    assert "pat.match(" in read_re


def test_only_the_named_modules_get_lazy_patterns_and_only_inside_the_block() -> None:
    namespace: dict[str, object] = {"__name__": "lazy.module", "re": re}
    with lazy_patterns_of(frozenset({"lazy.module"})):
        exec("pattern = re.compile('a+', re.I)", namespace)  # noqa: S102 - code of a "module" named in the set
        other = re.compile("b+")
    after = re.compile("c+")

    lazy = namespace["pattern"]
    assert isinstance(lazy, LazyPattern)
    assert isinstance(other, re.Pattern) and isinstance(after, re.Pattern)
    assert lazy.fullmatch("AaA") is not None
    assert lazy.compiled() is re.compile("a+", re.I)  # the same object re's own cache holds
