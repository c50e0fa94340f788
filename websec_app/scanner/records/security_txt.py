"""Parsing a security.txt file (RFC 9116 §4 grammar) without judging it (the `security_txt` check does).

Tolerant where readers must be (a byte-order mark, CRLF line ends, any case in field
names, a missing space after the colon), and precise about what the grammar says:
one `field-name ":" value` per line, `#` comments, and an optional OpenPGP cleartext
signature around the whole file (RFC 9116 §2.3, RFC 4880 §7).

A file the fetch cut (at its size limit, `MAX_FILE_BYTES`, or its time budget) is parsed as far as its last whole
line (`ParsedSecurityTxt.cut`): a field on the cut line would be read with a cut value, and what follows is unknown.

It also says whether a response is a security.txt at all: many sites answer every path with
an HTML page or a "Page not found" text and status 200. The fetch layer needs the answer to
know whether to fall back to the legacy /security.txt (RFC 9116 §3), the check to grade.
"""

from __future__ import annotations

import binascii
import codecs
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone

from ..snapshot import HttpResponse
from .html_sniff import is_html_type, sniffs_as_html

__all__ = [
    "KNOWN_FIELDS",
    "MAX_FILE_BYTES",
    "ParsedSecurityTxt",
    "SecurityTxtLine",
    "is_security_txt",
    "not_security_txt",
    "parse_rfc3339",
    "parse_security_txt",
    "read_security_txt",
]

#: RFC 9116 §2.5 (and the IANA registry of §6.4): the fields a security.txt is made of.
KNOWN_FIELDS = frozenset(
    {"acknowledgments", "canonical", "contact", "csaf", "encryption", "expires", "hiring", "policy",
     "preferred-languages"}
)  # fmt: skip

#: What the fetch reads of a security.txt (settings.ScanLimits.max_security_txt_bytes). RFC 9116 sets no limit.
MAX_FILE_BYTES = 64 * 1024

# RFC 5322 §3.6.8 (imported by RFC 9116 §4): a field name is printable ASCII except ":".
# The value is taken whole and stripped by the caller: a lazy `(?P<value>.*?)[ \t]*$` tried every end of
# the value against the run of blanks after it, quadratic in a long one (`Policy: x` + 60 KB of spaces +
# `y`: 7 s with the event loop frozen). Possessive quantifiers: nothing is read twice.
_FIELD = re.compile(r"^(?P<name>[\x21-\x39\x3b-\x7e]++):(?P<space>[ \t]*+)(?P<value>.*+)$")
# RFC 3339 §5.6 date-time; "T" and "Z" may be lowercase (§5.6 NOTE), the fraction is optional. Its DIGIT is
# ASCII 0-9 (RFC 5234 B.1): `\d` would also take Arabic-Indic and other Unicode digits.
_DATE_TIME = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:(?P<z>[Zz])|(?P<sign>[+-])([0-9]{2}):([0-9]{2}))$"
)
_LEAP_SECOND = 60  # §5.6 time-second = 2DIGIT ; 00-58, 59, 60 based on leap second rules
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)
_BEGIN_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_BEGIN_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_END_SIGNATURE = "-----END PGP SIGNATURE-----"
# RFC 4880 §6.2: an armor header line is `Key: Value`; the armored data is radix-64 (§6.3), its last line may be the
# CRC-24 checksum, "=" and four radix-64 characters (§6.1).
_ARMOR_HEADER = re.compile(r"[\x21-\x39\x3b-\x7e]++: .*+")
_RADIX64_LINE = re.compile(r"[A-Za-z0-9+/]*+=*+")
_ARMOR_CHECKSUM = re.compile(r"=[A-Za-z0-9+/]{4}")
_CRC24_INIT = 0xB704CE
_CRC24_POLY = 0x1864CFB


def _crc24_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= _CRC24_POLY
        table.append(crc & 0xFFFFFF)
    return tuple(table)


_CRC24_TABLE = _crc24_table()


def _crc24(data: bytes) -> int:
    """RFC 4880 §6.1's CRC-24, a byte at a time from a table (a 64 KiB signature block costs milliseconds)."""
    crc = _CRC24_INIT
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFF) ^ _CRC24_TABLE[((crc >> 16) ^ byte) & 0xFF]
    return crc


@dataclass(frozen=True)
class SecurityTxtLine:
    number: int  # 1-based, in the file as served
    name: str  # as written
    value: str
    spaced: bool  # RFC 9116 §4: `fs SP`: one space after the colon


@dataclass(frozen=True)
class ParsedSecurityTxt:
    fields: tuple[SecurityTxtLine, ...] = ()
    invalid_lines: tuple[int, ...] = ()  # neither a field, a comment nor blank
    signed: bool = False
    signature_complete: bool = True  # a signed file that also has its signature block
    problems: tuple[str, ...] = field(default=())
    comments: int = 0  # `#` comment lines
    cut: bool = False  # the file was not read whole: these are the lines before the cut, the cut one left out

    def values(self, name: str) -> list[str]:
        """All values of a field, in file order (field names are case-insensitive)."""
        wanted = name.lower()
        return [f.value for f in self.fields if f.name.lower() == wanted]


def _armor_problem(block: list[str]) -> str | None:
    """Why the lines between a signature's BEGIN and END lines are no ASCII armor (RFC 4880 §6.2): `Key: Value`
    headers, an empty line, radix-64 data, an optional CRC-24 checksum that matches the data. None when they are.
    Not a verification: the scanner has no trusted key for the site. GnuPG cannot read such a block (a CRC-24 that
    does not match included: "CRC error"; RFC 9580 §6.1 has newer readers ignore the checksum)."""
    index = 0
    while index < len(block) and block[index].strip():
        if not _ARMOR_HEADER.fullmatch(block[index].rstrip()):
            return f"{block[index].strip()[:40]!r} is no `Key: Value` armor header"
        index += 1
    if index == len(block):
        return "no empty line ends its armor headers"
    data = [line.strip() for line in block[index + 1 :] if line.strip()]
    checksum = data.pop() if data and _ARMOR_CHECKSUM.fullmatch(data[-1]) else None
    if not data or not all(_RADIX64_LINE.fullmatch(line) for line in data):
        return "its data is not radix-64 (base64)"
    try:
        decoded = binascii.a2b_base64("".join(data), strict_mode=True)
    except binascii.Error:
        return "its radix-64 data is cut or padded wrongly"
    if checksum is not None and _crc24(decoded) != int.from_bytes(binascii.a2b_base64(checksum[1:])):
        return "its CRC-24 checksum does not match its data (GnuPG refuses it; RFC 9580 readers ignore the checksum)"
    return None


def _unsign(lines: list[str], cut: bool) -> tuple[list[tuple[int, str]], bool, bool, list[str]]:
    """Strip an OpenPGP cleartext signature (RFC 4880 §7): (numbered body lines, signed, complete, problems). In a
    file that was `cut`, a signature block not read may follow: its absence is no problem."""
    numbered = list(enumerate(lines, start=1))
    first = next((i for i, (_, text) in enumerate(numbered) if text.strip()), None)
    if first is None or numbered[first][1].strip() != _BEGIN_SIGNED:
        return numbered, False, True, []
    problems: list[str] = []
    if first:  # §4's `signed` (and RFC 4880 §7) begins with the header: a reader may not take it for a signed file
        problems.append(f"the PGP signed message starts on line {first + 1}, not line 1: nothing may come before it")
    index = first + 1
    # Armor headers ("Hash: SHA256") run up to the first empty line.
    while index < len(numbered) and numbered[index][1].strip():
        index += 1
    body: list[tuple[int, str]] = []
    complete = False
    signature = len(numbered)
    for position, (number, text) in enumerate(numbered[index + 1 :], start=index + 1):
        if text.strip() == _BEGIN_SIGNATURE:
            complete, signature = True, position
            break
        # §7.1 dash-escaping: "- " is removed from lines that begin with it.
        body.append((number, text[2:] if text.startswith("- ") else text))
    if not complete and not cut:
        problems.append("the file starts a PGP signed message but has no signature block")
    else:
        end = next((i for i, (_, text) in enumerate(numbered) if text.strip() == _END_SIGNATURE), None)
        after = [text for _, text in numbered[end + 1 :]] if end is not None else []
        if any(text.strip() for text in after):
            problems.append("there is text after the PGP signature, outside what the signature covers")
        elif len(after) > 1:  # the LF ending the END line leaves one empty string; §4's `sign-footer` ends the file
            problems.append("there are blank lines after the PGP signature, where RFC 9116's grammar ends the file")
        if (
            end is not None
            and end > signature
            and (problem := _armor_problem([t for _, t in numbered[signature + 1 : end]]))
        ):
            problems.append(f"the PGP signature block is not well-formed ASCII armor (RFC 4880 6.2): {problem}")
    return body, True, complete, problems


def parse_security_txt(text: str, *, cut: bool = False) -> ParsedSecurityTxt:
    """The fields of a security.txt. When the file was `cut`, the text after its last line feed is the start of a
    line read in part (`Expires: 2026-0`, `Contact: mailto:sec`): it is left out, and so is what follows."""
    if cut:
        text = text[: text.rfind("\n") + 1]
    problems: list[str] = []
    if text.startswith("\ufeff"):
        # Read past, as most readers do; but §4's grammar has no place for it, and a reader that keeps it sees the
        # first line's field name as "\ufeffContact", a field it does not know (internet.nl's sectxt does)
        problems.append("the file starts with a byte order mark (U+FEFF), which RFC 9116's grammar has no place for")
    text = text.removeprefix("\ufeff")
    # §4: `eol = *WSP [CR] LF`. str.splitlines() also splits at form feeds, \x1c-\x1e, NEL, U+2028 and
    # U+2029, which are line content here: splitting there would shift the line numbers lint reports.
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    bare_cr = [number for number, line in enumerate(lines, start=1) if "\r" in line]
    if bare_cr:  # a lone CR ends no line (old Mac line ends): what follows it is read as the same line
        numbers = ", ".join(str(n) for n in bare_cr[:10])
        problems.append(f"line(s) {numbers} hold a carriage return not followed by a line feed: lines end at LF")
    # §4: `line = [ (field / comment) ] eol`, every line, the last one too; but a signed file ends with RFC 4880 §7's
    # signature, whose END line may end the file without a line feed (Go's openpgp armor writer ends it so)
    if not cut and lines[-1] and lines[-1].strip() != _END_SIGNATURE:
        problems.append(
            f"the last line (line {len(lines)}) does not end with a line feed: RFC 9116 ends every line with CRLF or LF"
        )
    body, signed, complete, unsign_problems = _unsign(lines, cut)
    problems += unsign_problems
    fields: list[SecurityTxtLine] = []
    invalid: list[int] = []
    comments = 0
    for number, raw in body:
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            comments += stripped.startswith("#")
            continue
        match = _FIELD.match(raw)
        if match is None:
            invalid.append(number)
            continue
        fields.append(SecurityTxtLine(number, match["name"], match["value"].strip(), match["space"] == " "))
    return ParsedSecurityTxt(tuple(fields), tuple(invalid), signed, complete, tuple(problems), comments, cut)


def parse_rfc3339(value: str) -> datetime | None:
    """An RFC 3339 §5.6 date-time as an aware datetime in UTC, or None."""
    match = _DATE_TIME.match(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if second > _LEAP_SECOND:
        return None
    second = min(second, 59)  # a leap second (":60", §5.7) is the last second of its minute to datetime
    if match["z"]:
        offset = UTC
    else:
        hours, minutes = int(match.group(9)), int(match.group(10))
        if hours > 23 or minutes > 59:
            return None
        delta = timedelta(hours=hours, minutes=minutes)
        offset = timezone(delta if match["sign"] == "+" else -delta)
    # §5.6 allows years 0000 to 9999; datetime holds 0001 to 9999. Year 0 (a leap year, like 2000) is long
    # past, and so is a moment that UTC would put before year 1; one UTC would put past 9999 is far ahead.
    # Both stay dates (expired, or far in the future), not a crash (OverflowError) or a parse failure.
    try:
        moment = datetime(year or 2000, month, day, hour, minute, second, tzinfo=offset)
    except ValueError:  # 30 February and the like
        return None
    if year == 0:
        return _EARLIEST
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return _LATEST if year == 9999 else _EARLIEST


def _looks_like_html(body: bytes) -> bool:
    """An HTML page as browsers sniff one (records/html_sniff.py), or an XML document: no security.txt either way.
    A UTF-8 byte order mark is skipped first: browsers show a page behind one as text, but it is no file."""
    body = body.removeprefix(codecs.BOM_UTF8)
    return sniffs_as_html(body) or body[:512].lstrip(b"\t\n\x0c\r ")[:5].lower() == b"<?xml"


def read_security_txt(response: HttpResponse) -> ParsedSecurityTxt:
    """The response's body parsed as a security.txt (UTF-8, RFC 9116 §4; undecodable bytes replaced, and said), as
    far as its last whole line when the fetch cut it."""
    parsed = parse_security_txt(response.body.decode("utf-8", errors="replace"), cut=response.body_truncated)
    try:
        response.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not (response.body_truncated and exc.start >= len(response.body) - 3):  # a character cut by the limit
            problem = f"byte {exc.start + 1} is not UTF-8 (RFC 9116 3: charset=utf-8): it is read as U+FFFD"
            return replace(parsed, problems=(*parsed.problems, problem))
    return parsed


def not_security_txt(response: HttpResponse, parsed: ParsedSecurityTxt) -> str | None:
    """Why a 200 response is not a security.txt at all, or None when it is one (however flawed).

    The body decides, not the Content-Type: a real file served as text/html is a security.txt with a
    wrong Content-Type, and an HTML page served as text/plain is still an HTML page.

    A file cut before its first field (70 KiB of comments, then the fields) is one when every line read is a
    comment or a field: its fields may follow the cut."""
    if _looks_like_html(response.body):
        return "it is an HTML page"
    if not any(f.name.lower() in KNOWN_FIELDS for f in parsed.fields):
        if is_html_type(response.content_type):
            return "it is an HTML page"
        if not (parsed.cut and (parsed.comments or parsed.fields) and not parsed.invalid_lines):
            return "it contains no security.txt fields"
    if len(parsed.invalid_lines) > len(parsed.fields) and not parsed.values("expires"):
        return "most of its lines are not `Field: value` lines, so it is some other text"
    return None


def is_security_txt(response: HttpResponse) -> bool:
    """Whether the response is a security.txt file, valid or not: RFC 9116 §3 takes the well-known location's
    file over the legacy one only when there is a file there."""
    if response.status_code != 200 or _looks_like_html(response.body):
        return False  # no parse: an app's 64 KB HTML shell would cost ~2 ms
    return not_security_txt(response, read_security_txt(response)) is None
