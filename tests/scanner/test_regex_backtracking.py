"""Regular expressions over what a site sends must not backtrack: Python's re holds the GIL, so one slow
match freezes the whole server process, its event loop included, not just the scan that ran it.

Each hostile value below is one a site can send (a header, a <meta>, a <style>, security.txt, a DMARC
or SPF TXT record) and is 1 MB: the patterns these replaced were quadratic in it and would take from twenty
minutes to hours here (this file would hang); linear ones take milliseconds. Next to them, a test
checks that on ordinary text each function reads exactly what the pattern it replaced read, against
that old pattern kept here as the reference, over many generated strings.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.fingerprint import (
    _BARE_VERSION,
    _NOT_PRODUCTS,
    _via_comments,
    check_server_fingerprint,
    find_versions,
)
from websec_app.scanner.fixes.csp_proposal import _CSS_URL_RE, propose_policy
from websec_app.scanner.records.dmarc import parse_dmarc
from websec_app.scanner.records.html import parse_page
from websec_app.scanner.records.security_txt import parse_security_txt
from websec_app.scanner.records.spf import _TOPLABEL, parse_spf

MB = 1_000_000
PAGE_URL = "https://www.example.com/"


def fingerprint_details(headers: tuple[tuple[str, str], ...] = (), body: str = "") -> dict[str, object]:
    result = check_server_fingerprint(make_snapshot(PAGE_URL, headers=headers, body=body))
    return {"outcomes": {f.outcome for f in result.findings}, **result.details}


def disclosed(details: dict[str, object]) -> list[tuple[str, str, str]]:
    found = details["disclosures"]
    assert isinstance(found, list)
    return [(d["header"], d["product"], d["version"]) for d in found]


def generated(pieces: list[str], count: int = 20_000, longest: int = 12) -> list[str]:
    rng = random.Random(20240611)  # fixed: the same strings on every run
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def agree(texts: list[str], new: Callable[[str], object], old: Callable[[str], object]) -> None:
    mismatches = [text for text in texts if new(text) != old(text)]
    assert mismatches == []


# --- checks/fingerprint.py: Server, X-Powered-By, Via, X-AspNet-Version, <meta name=generator> --------

# The patterns these replaced, kept as the reference for ordinary text: greedy and backtracking, with the
# trademark sign and the comment that may come between a product and its version (`Passenger(R) 6.0.27`).
_OLD_PRODUCT_VERSION = re.compile(
    r"(?P<product>[A-Za-z][A-Za-z0-9_.+!-]*)(?:\((?:R|TM)\)|\u00c2?\u00ae|\u2122|\u00e2\x84\u00a2)?"
    r"(?: \([^()]*\))?[/ (]v?(?P<version>\d+(?:\.\d+)+[a-z]?)"
)
_OLD_BARE_VERSION = re.compile(r"^\s*v?(?P<version>\d+(?:\.\d+)+[\w.-]*)\s*$")


def test_a_long_run_of_letters_names_no_version_and_does_not_hide_a_later_one() -> None:
    # Was tried as a product from each of its letters, each read to the end and back: 90 KB took 116 s.
    assert find_versions("a" * MB) == []
    assert find_versions("a1" * (MB // 2)) == []
    assert find_versions("a" * MB + " Apache/2.4.41 (Ubuntu)") == [("Apache", "2.4.41")]


def test_marks_and_comments_between_product_and_version_are_read_once() -> None:
    # Each "(" opens at most one comment, read once to its ")"; a mark is a few characters.
    assert find_versions("a (" * (MB // 3)) == []
    assert find_versions("a (" + "b " * (MB // 2)) == []
    assert find_versions("a (" + "b (" * (MB // 3) + "c) 1.2") == [("b", "1.2")]
    assert find_versions("a (" + "x" * MB + ") 1.2.3") == [("a", "1.2.3")]
    assert find_versions("a(R)" * (MB // 4) + " 1.2") == [("a", "1.2")]
    assert find_versions("a\u00ae (" * (MB // 4)) == []
    assert find_versions("x (R) (" * (MB // 7)) == []
    assert find_versions("P (" * (MB // 3) + "Passenger (mod_rails/mod_rack) 3.0.11") == [("Passenger", "3.0.11")]


def test_a_huge_server_header_is_one_product_named() -> None:
    details = fingerprint_details((("Server", "a" * MB), ("X-Powered-By", "b" * MB + " PHP/8.1.2")))

    assert disclosed(details) == [("X-Powered-By", "PHP", "8.1.2")]
    assert "fingerprint.header_version" in details["outcomes"]


def test_a_huge_generator_meta_is_read_in_one_pass() -> None:
    # <meta name="generator" content="a"*256 KB> took 220 s.
    page = f'<html><head><meta name="generator" content="{"a" * MB} WordPress 6.4.2"></head></html>'

    assert disclosed(fingerprint_details(body=page)) == [("meta generator", "WordPress", "6.4.2")]


def test_a_huge_bare_version_header_is_not_a_version() -> None:
    # `\d+` then `[\w.-]*` split a run of digits every way before failing at the end: 16 KB took 2 s.
    assert _BARE_VERSION.match("1." + "1" * MB + " x") is None
    match = _BARE_VERSION.match("4.0." + "1" * MB)
    assert match is not None and match["version"] == "4.0." + "1" * MB

    details = fingerprint_details((("X-AspNet-Version", "1." + "1" * MB + " x"),))

    assert disclosed(details) == [] and details["outcomes"] == {"fingerprint.product_only"}


def test_a_via_header_of_unclosed_comments_is_read_once() -> None:
    # Every "(" was read to the end looking for a ")": 32 K of them took 2.4 s.
    assert _via_comments("(" * MB) == ""
    via = "1.1 proxy (squid/3.5.27)" + " (" * (MB // 2)

    assert disclosed(fingerprint_details((("Via", via),))) == [("Via", "squid", "3.5.27")]


def test_versions_are_found_as_before() -> None:
    pieces = ["Apache", "a", "Z", "1", "2.4", ".", "/", " ", "(", ")", "v", "-", "_", "+", "!", "f", "9", "\t", "x1.2"]

    def old(value: str) -> list[tuple[str, str]]:
        found = [(m["product"].rstrip(".-"), m["version"]) for m in _OLD_PRODUCT_VERSION.finditer(value)]
        return [(product, version) for product, version in found if product.lower() not in _NOT_PRODUCTS]

    texts = generated(pieces) + ["OpenSSL/1.1.1f-fips/2.0", "1abc/1.2", "_mod/1.2 x/1.2.3a/4.5"]
    assert sum(1 for text in texts if old(text)) > 300  # the strings do name versions
    agree(texts, find_versions, old)
    agree(generated(pieces + ["\u0663", "\n", "\u00e9"], longest=25), find_versions, old)
    marked = generated(pieces + ["(R)", "(TM)", "R", "\u00ae", "\u00c2", "\u2122", " (mod_rails/mod_rack)", " (x)"])
    assert sum(1 for text in marked if old(text)) > 100
    agree(marked, find_versions, old)


def test_bare_versions_and_via_comments_are_read_as_before() -> None:
    texts = generated(["1", "2.4", ".", "v", " ", "\t", "\n", "-", "_", "a", "\u0663", "x1.2", "(", ")", "(a)"])

    def group(pattern: re.Pattern[str]) -> Callable[[str], str | None]:
        return lambda text: match["version"] if (match := pattern.match(text)) else None

    assert sum(1 for text in texts if _OLD_BARE_VERSION.match(text)) > 300
    agree(texts, group(_BARE_VERSION), group(_OLD_BARE_VERSION))
    agree(texts, _via_comments, lambda text: " ".join(re.findall(r"\(([^)]*)\)", text)))


# --- records/security_txt.py and records/dmarc.py: `(.*?)\s*$` --------------------------------------

_OLD_FIELD = re.compile(r"^(?P<name>[\x21-\x39\x3b-\x7e]+):(?P<space>[ \t]*)(?P<value>.*?)[ \t]*$")
_OLD_TAG = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*=\s*(.*?)\s*$", re.IGNORECASE)


def test_a_security_txt_value_with_a_long_run_of_spaces_is_parsed() -> None:
    # `(.*?)[ \t]*$` tried each end of the value against the spaces after it: 60 KB froze the loop for 7 s.
    value = "x" + " " * MB + "y"

    parsed = parse_security_txt(f"Contact: mailto:security@example.com\nPolicy: {value}   \n")

    assert [(f.name, f.value) for f in parsed.fields] == [
        ("Contact", "mailto:security@example.com"),
        ("Policy", value),
    ]
    assert parse_security_txt("Policy:" + " " * MB + "\n").fields[0].value == ""


def test_a_dmarc_tag_with_a_long_run_of_spaces_is_parsed() -> None:
    # `\s*(.*?)\s*$` again: 60 KB froze the event loop for 7.9 s while fetching, and again in grading.
    record = parse_dmarc("v=DMARC1; p=reject; x=y" + " " * MB + "z" + " " * MB)

    assert record.tags["p"] == "reject" and record.tags["x"] == "y" + " " * MB + "z"
    assert parse_dmarc("v=DMARC1;" + " " * MB + "p" + " " * MB + "=" + " " * MB + "none").tags["p"] == "none"


def test_security_txt_fields_are_read_as_before() -> None:
    texts = generated(["Policy", ":", " ", "\t", "x y", "\u00a0", "\x0b", "é", "a:b", "#", "\u3000"])

    def old(text: str) -> list[tuple[str, str, bool]]:
        # Lines end at LF (RFC 9116 §4 `eol`), not at every break str.splitlines() knows (\x0b included).
        lines = [line for line in text.removeprefix("\ufeff").split("\n") if line.strip()[:1] not in ("", "#")]
        matches = [_OLD_FIELD.match(line.rstrip("\r")) for line in lines]
        return [(m["name"], m["value"].strip(), m["space"] == " ") for m in matches if m]

    def new(text: str) -> list[tuple[str, str, bool]]:
        return [(f.name, f.value, f.spaced) for f in parse_security_txt(text).fields]

    assert sum(1 for text in texts if old(text)) > 1000
    agree(texts, new, old)


def test_dmarc_tags_are_read_as_before() -> None:
    texts = generated(["p", "=", " ", "\t", "\n", "\r", "\u00a0", "re", "j", "1", "_", "K", "\u212a", "x y", ";"])

    def old(text: str) -> tuple[dict[str, str], int]:
        tags, bad = {}, 0
        for part in text.split(";"):
            if part.strip():
                match = _OLD_TAG.match(part)
                if match:
                    tags[match.group(1).lower()] = match.group(2)
                else:
                    bad += 1
        return tags, bad

    def new(text: str) -> tuple[dict[str, str], int]:
        record = parse_dmarc(text)
        return record.tags, sum(1 for error in record.errors if error.endswith("is not tag=value"))

    assert sum(1 for text in texts if old(text)[0]) > 1000
    agree(texts, new, old)


# --- fixes/csp_proposal.py: url() in inline CSS ------------------------------------------------------

_OLD_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)""", re.IGNORECASE)


@pytest.mark.parametrize(
    "hostile",
    [
        "url(" * (MB // 4),  # 64 KB took 6.3 s, 256 KB 106 s
        "url(" + " " * MB,
        "url('" + "url(" * (MB // 4),
        "url(" + "\\(" * (MB // 2),  # escaped "(" are read on: linear before too, kept linear
    ],
)
def test_a_stylesheet_of_unclosed_urls_still_gets_a_derived_policy(hostile: str) -> None:
    style = f"p{{background:url(https://img.example.net/a.png)}}.x{{{hostile}}}"
    final = make_snapshot(PAGE_URL, body=f"<html><head><style>{style}</style></head></html>").final
    assert final is not None

    proposal = propose_policy(parse_page(final), PAGE_URL, [])

    assert proposal.derived and "img-src 'self' https://img.example.net" in proposal.policy


def test_css_urls_are_read_as_before_unless_one_holds_a_bare_parenthesis() -> None:
    # The one change: an unquoted url() with an unescaped "(" is a bad url (CSS Syntax 4.3.6), no longer read.
    texts = generated(["url(", "URL(", ")", "(", "\\(", "\\", '"', "'", " ", "\n", "a", "x.png", "//h/", ":"])

    def urls(pattern: re.Pattern[str]) -> Callable[[str], list[tuple[int, int]]]:
        return lambda css: [match.span() for match in pattern.finditer(css)]

    def bare_parenthesis(css: str) -> bool:
        return any(m[3] is not None and re.search(r"(?<!\\)\(", m[3]) for m in _OLD_CSS_URL.finditer(css))

    ordinary = [css for css in texts if not bare_parenthesis(css)]
    assert len(ordinary) > 15_000 and sum(1 for css in ordinary if urls(_OLD_CSS_URL)(css)) > 1000
    agree(ordinary, urls(_CSS_URL_RE), urls(_OLD_CSS_URL))
    assert [m.groups() for m in _CSS_URL_RE.finditer("url( a\\(1.png ) url('b') url(\"c\")")] == [
        (None, None, "a\\(1.png"),
        (None, "b", None),
        ("c", None, None),
    ]


# --- records/spf.py: the toplabel of a domain-spec ------------------------------------------------------

_OLD_TOPLABEL = re.compile(r"[0-9A-Za-z]*[A-Za-z][0-9A-Za-z]*|[0-9A-Za-z]+-[0-9A-Za-z-]*[0-9A-Za-z]")


@pytest.mark.parametrize(
    "toplabel",
    [
        "a" * MB + "!",  # tried each letter as the one ALPHA: 32 KB took 2 s, 60 KB 7 s
        "a1" * (MB // 2) + "!",
        "1" * MB + "a!",
        "a" + "-" * MB + "!",
        "a-" * (MB // 2),
    ],
)
def test_a_long_toplabel_that_is_none_is_read_once(toplabel: str) -> None:
    record = parse_spf(f"v=spf1 include:a.{toplabel} include:_spf.example.com -all")

    assert [(t.name, t.value) for t in record.terms] == [("include", "_spf.example.com"), ("all", None)]
    assert record.errors == (f"{'a.' + toplabel!r} is not a domain name",)


def test_spf_toplabels_are_read_as_before() -> None:
    pieces = ["a", "Z", "1", "0", "-", "--", "b9"]
    texts = generated(pieces) + generated(pieces + ["!", "_", ".", "\u212a", "\u00e9", "\u0663", " "], longest=20)

    def matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
        return lambda label: pattern.fullmatch(label) is not None

    assert sum(1 for label in texts if _OLD_TOPLABEL.fullmatch(label)) > 5000
    assert sum(1 for label in texts if "-" in label and _OLD_TOPLABEL.fullmatch(label)) > 1000
    assert sum(1 for label in texts if label.isdigit()) > 100  # all digits: no toplabel
    agree(texts, matches(_TOPLABEL), matches(_OLD_TOPLABEL))


# --- fetch/_h11_field_values.py: every header line of every response the process reads -----------------------

# The pattern it replaced (h11 0.16's `_abnf.header_field`, \f and \v allowed in the value as Chromium reads them):
# its OWS runs on both sides of an optional value meet on a line of spaces; 90 KiB of them then a NUL held the event
# loop for 15.6 s through a real fetch (httpcore reads header blocks up to 100 KiB).
_OLD_HEADER_FIELD = re.compile(
    rb"(?P<field_name>[-!#$%&'*+.^_`|~0-9a-zA-Z]+):[ \t]*"
    rb"(?P<field_value>([^\x00\r\n \t]+(?:[ \t]+[^\x00\r\n \t]+)*)?)[ \t]*"
)


@pytest.mark.parametrize(
    "line",
    [
        b"X:" + b" " * MB + b"\x00",  # 96 KiB took 17 s
        b"X:" + b" \t" * (MB // 2) + b"\x00",
        b"X: a" + b" a" * (MB // 2) + b" \x00",
        b"X: a" + b" " * MB + b"\x00",
    ],
)
def test_a_header_line_of_spaces_ending_in_a_refused_byte_is_refused_in_one_pass(line: bytes) -> None:
    from websec_app.scanner.fetch._h11_field_values import lenient_header_field

    assert re.compile(lenient_header_field()).fullmatch(line) is None


def test_header_lines_are_read_as_before() -> None:
    from websec_app.scanner.fetch._h11_field_values import lenient_header_field

    lenient = re.compile(lenient_header_field())
    pieces = ["X", "x-y", ":", " ", "\t", "a", "\x00", "\f", "\v", "\x7f", "\xff", "\r", ";", "="]
    lines = [text.encode("latin-1") for text in generated(pieces, longest=16)]
    lines += [b"X:" + line for line in lines[:10_000]]

    def read(pattern: re.Pattern[bytes]) -> Callable[[bytes], object]:
        return lambda line: (match := pattern.fullmatch(line)) and match.groupdict()

    assert sum(1 for line in lines if _OLD_HEADER_FIELD.fullmatch(line)) > 2000
    agree(lines, read(lenient), read(_OLD_HEADER_FIELD))  # type: ignore[arg-type]
