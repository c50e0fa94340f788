"""The encoding a fetched page is decoded in, decided as Chromium 156 decides it for a top-level page (HTML
§13.2.3.1 "determining the character encoding", as Blink's TextResourceDecoder and HTMLMetaCharsetParser do it),
and the decoding itself.

Markup read in the wrong encoding hides elements or invents them. In ISO-2022-JP, `ESC $ B` turns the ASCII that
follows into two-byte characters: `ESC$B<!--ESC(B<script src=...>` is a script Chromium runs behind what reads as
an HTML comment in UTF-8, and `ESC$B<script src=...>` a script that is only text to Chromium. In order:

1. A byte order mark (UTF-8, UTF-16BE, UTF-16LE) decides, and is dropped (§13.2.3.1 step 1).
2. The Content-Type charset, when the Encoding Standard knows the label (§4.2 "get an encoding"; webencodings
   holds the table): `latin1` is windows-1252, `utf-16` UTF-16LE, `iso-2022-kr` the replacement encoding (the
   page is one U+FFFD). A label it does not know (`cp037`, `utf-32`, `utf-7`) is ignored.
3. Chromium's own step, not the standard's: an XML declaration opening the body (`<?xml`, case-sensitive, up to
   its first `>`) names an encoding in `encoding="..."`, for HTML too; `<\\0?\\0x\\0` (or its big-endian form) is
   UTF-16 without a byte order mark, and then no `<meta>` is looked for.
4. For HTML, not XHTML: the first `<meta charset>` or `<meta http-equiv=Content-Type content="...charset=...">`
   with a known label (`_meta_charset`), over the XML declaration. A UTF-16 label there (or in the declaration)
   is UTF-8, x-user-defined in a meta windows-1252 (§13.2.3.2 step "Processing").
5. Otherwise windows-1252 for HTML, UTF-8 for XHTML. Chromium then guesses from the bytes (its detector, CED: a
   Shift_JIS, EUC-KR, GBK or KOI8-R page without a label is read in it), never UTF-8 for an http(s) page and
   never a 7-bit encoding such as ISO-2022-JP (Chromium 156 reads such a page as windows-1252). Every encoding it
   guesses reads ASCII bytes as ASCII, so every tag and attribute the checks read is the same as in windows-1252;
   only non-ASCII text can differ. websec does not guess.

Blink's prescan differs from §13.2.3.2, and websec follows Blink: it runs the HTML tokenizer with scripting off (a
`<meta>` inside `<title>`, `<script>`, `<style>` or `<textarea>` is text, one inside `<noscript>` counts), it goes
on past the first 1,024 bytes while only head elements came (Blink's list: script, noscript, style, link, meta,
object, title, base, and the start tags of html and head; any other tag ends the head, `</head>` too), and among
one meta's attributes the last `charset` counts, and a `content` only before any `charset`.

The decoders are webencodings' (Python's codecs, which read ASCII markup as the Encoding Standard's decoders do),
but windows-1252, the default, is decoded exactly: the five bytes Python's cp1252 leaves undefined (0x81, 0x8D,
0x8F, 0x90, 0x9D) are U+0081, U+008D ... as in the standard, where Python gave U+FFFD, which changed the hash of
an inline script holding one.
"""

from __future__ import annotations

import codecs
import re
import time
from dataclasses import dataclass

from .html_tokens import (
    ATTRIBUTES,
    TAG,
    WS,
    ascii_lower,
    attributes,
    bogus_comment_end,
    comment_end,
    end_tag,
    script_data_end,
)

__all__ = ["DecodedPage", "decode_page", "page_encoding"]

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16be"), (codecs.BOM_UTF16_LE, "utf-16le"))
#: The spellings of the usual label, known without looking the label up (nor importing webencodings).
_UTF8_LABELS = frozenset({"utf-8", "utf8"})
_XML_DECLARATION = b"<?xml"
_UTF16_XML_DECLARATIONS = ((b"<\0?\0x\0", "utf-16le"), (b"\0<\0?\0x", "utf-16be"))
#: Blink's kBytesToCheckUnconditionally: the prescan reads this far even after the head ended.
_UNCONDITIONAL = 1024
#: The elements whose tags, start or end, leave Blink's prescan in the head; <html> and <head> by their start tags.
_HEAD = frozenset({"script", "noscript", "style", "link", "meta", "object", "title", "base"})
_HEAD_STARTS = _HEAD | {"html", "head"}
#: What the prescan's tokenizer reads as raw text or RCDATA (HTMLTokenizer::UpdateStateFor, scripting off).
_RAW = frozenset({"title", "textarea", "style", "iframe", "xmp", "noembed", "noframes"})
_NAME_END = f"(?=[{WS}/>])"


def _plain(excluded: str, run: str = "++") -> str:
    """A run of characters other than `excluded` (one character with `run` ""), where no `charset` (ASCII
    case-insensitive) begins and no `&`, which may begin a character reference that spells it."""
    return rf"(?:[^{excluded}&cC]{run}|[cC](?![hH][aA][rR][sS][eE][tT]))"


#: A `<meta>` start tag that cannot name an encoding: no attribute is `charset` and no value can hold it, for its
#: text holds neither `charset` nor `&`. ATTRIBUTES, with such characters only, and where a value is never left
#: out: an `=` after a name must begin a value, and an unquoted value cannot begin with a quote. So this matches
#: only where TAG matches and ends where TAG ends; on any other `<meta>` it fails (the prescan's loop reads it).
_DOUBLE_QUOTED = '"' + _plain('"') + '*+"'
_SINGLE_QUOTED = "'" + _plain("'") + "*+'"
_META_NAMING_NOTHING = (
    rf"<(?i:meta){_NAME_END}(?:[{WS}/]++|{_plain(WS + '/>', run='')}{_plain(WS + '/>=')}*+"
    rf"(?:[{WS}]*+=[{WS}]*+(?:{_DOUBLE_QUOTED}|{_SINGLE_QUOTED}|(?![\"']){_plain(WS + '>')}*+)|(?![{WS}]*+=)))*+>"
)
#: Text and tags that neither end the head nor matter in it, as one possessive run: the prescan's loop runs once
#: per `<meta>` that may name an encoding, raw text element, comment or other tag, not per `<link>` or other
#: `<meta>` (2 MiB of bare `<meta>` tags: 645 ms of CPU a step each, past the budget; 29 ms in one run).
_HEAD_RUN = re.compile(
    rf"(?:[^<]++|<(?![A-Za-z/!?])|<(?i:link|base|object|html|head){_NAME_END}{ATTRIBUTES}|{_META_NAMING_NOTHING}"
    rf"|</(?i:link|base|object|meta|title|script|style|noscript){_NAME_END}{ATTRIBUTES})*+"
)
_CHECK_EVERY = 256  # tokens between two looks at the CPU clock
#: windows-1252 as the Encoding Standard decodes it: cp1252, and the five bytes it leaves undefined as U+0080-U+009F.
_WINDOWS_1252 = "".join(
    char if (char := bytes([byte]).decode("cp1252", "replace")) != "\ufffd" else chr(byte) for byte in range(256)
)


@dataclass(frozen=True)
class DecodedPage:
    """The page's text, and whether the `<meta>` prescan ran to its end (False: its CPU time ran out, and the
    encoding the page had without a `<meta>` was used)."""

    text: str
    complete: bool = True


def decode_page(body: bytes, media_type: str, charset: str | None, max_cpu_seconds: float) -> DecodedPage:
    """`body` decoded as Chromium decodes a page served as `media_type` (lowercase, "" when sniffed) with the
    Content-Type `charset`; the prescan for a `<meta>` takes at most `max_cpu_seconds` of CPU time."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return DecodedPage(_decoded(body[len(bom) :], encoding))
    encoding, complete = page_encoding(body, media_type, charset, max_cpu_seconds)
    return DecodedPage(_decoded(body, encoding), complete)


def page_encoding(body: bytes, media_type: str, charset: str | None, max_cpu_seconds: float) -> tuple[str, bool]:
    """The Encoding Standard's name of the encoding a body without a byte order mark is decoded in (steps 2-5 of
    the module's docstring), and whether the `<meta>` prescan ran to its end."""
    if charset is not None and (labelled := _encoding_named(charset)) is not None:
        return labelled, True
    declared = None
    if body.startswith(_XML_DECLARATION):
        declared = _byte_based(_xml_declared(body))
    for opening, encoding in _UTF16_XML_DECLARATIONS:
        if body.startswith(opening):
            return encoding, True
    if media_type == "application/xhtml+xml":  # XML: no <meta> prescan (Blink runs it for HTML only)
        return declared or "utf-8", True
    meta, complete = _meta_charset(body, time.thread_time() + max_cpu_seconds)
    if meta == "x-user-defined":
        meta = "windows-1252"
    return _byte_based(meta) or declared or "windows-1252", complete


def _decoded(body: bytes, encoding: str) -> str:
    if encoding == "utf-8":
        return body.decode("utf-8", errors="replace")
    if encoding == "windows-1252":
        return codecs.charmap_decode(body, "strict", _WINDOWS_1252)[0]
    if encoding == "replacement":  # iso-2022-kr and the like: one U+FFFD, a page that loads nothing
        return "\ufffd" if body else ""
    import webencodings  # only for a page in another encoding than UTF-8 or windows-1252

    return str(webencodings.lookup(encoding).codec_info.decode(body, "replace")[0])  # type: ignore[union-attr]


def _encoding_named(label: str) -> str | None:
    """The Encoding Standard's name for the encoding `label` names ("get an encoding": ASCII whitespace stripped,
    ASCII case-insensitive), or None for a label it does not know."""
    if ascii_lower(label.strip(WS)) in _UTF8_LABELS:
        return "utf-8"
    import webencodings  # only for a page that names another encoding than UTF-8

    encoding = webencodings.lookup(label)
    return encoding.name if encoding is not None else None


def _byte_based(encoding: str | None) -> str | None:
    """A `<meta>` or an XML declaration cannot name UTF-16: the page is in a byte-based encoding to have been read
    at all (§13.2.3.2; Blink's TextEncoding::ClosestByteBasedEquivalent)."""
    return "utf-8" if encoding in ("utf-16le", "utf-16be") else encoding


def _xml_declared(body: bytes) -> str | None:
    """The encoding an XML declaration opening the body names (Blink's FindXMLEncoding): in the declaration up to
    its first `>`, the first `encoding`, then `=` and a quoted label, control characters and spaces around `=`."""
    end = body.find(b">")
    if end < 0:
        return None
    declaration = body[:end].decode("latin-1")
    found = declaration.find("encoding")
    if found < 0:
        return None
    position = _skip_controls(declaration, found + len("encoding"))
    if declaration[position : position + 1] != "=":
        return None
    position = _skip_controls(declaration, position + 1)
    quote = declaration[position : position + 1]
    if quote not in ('"', "'"):
        return None
    close = declaration.find(quote, position + 1)
    return _encoding_named(declaration[position + 1 : close]) if close >= 0 else None


def _skip_controls(text: str, position: int) -> int:
    """Past the spaces and control characters at `position` (Blink skips every character up to U+0020)."""
    while position < len(text) and text[position] <= " ":
        position += 1
    return position


def _meta_charset(body: bytes, deadline: float) -> tuple[str | None, bool]:
    """The encoding of the first `<meta>` that names a known one, found as Blink's HTMLMetaCharsetParser finds it
    (see the module's docstring), and False if the CPU time ran out first.

    Blink reads the bytes as Latin-1 for this: every byte one character, ASCII as ASCII. Linear: runs of ordinary
    head content are one regular expression (`_HEAD_RUN`), raw text is skipped by a search for its end tag."""
    text = body.decode("latin-1")
    position, in_head, tokens = 0, True, 0
    while position < len(text):
        if in_head:
            position = _HEAD_RUN.match(text, position).end()  # type: ignore[union-attr]  # matches, if empty
        else:
            if position >= _UNCONDITIONAL:
                return None, True
            position = text.find("<", position)  # text: a character token, then the check above again
            if position < 0 or position >= _UNCONDITIONAL:
                return None, True
        if position >= len(text):
            break
        tokens += 1
        if tokens % _CHECK_EVERY == 0 and time.thread_time() > deadline:
            return None, False
        if text.startswith("<!--", position):
            position = comment_end(text, position)
            continue
        if text.startswith(("<!", "<?"), position) or (
            text.startswith("</", position) and not text[position + 2 : position + 3].isalpha()
        ):
            position = bogus_comment_end(text, position)
            continue
        tag = TAG.match(text, position)
        if tag is None:
            if text[position + 1 : position + 2].isalpha() or text.startswith("</", position):
                return None, True  # a tag left open at the end of the file: dropped, and nothing follows
            position += 1  # "<" and something else: text
            continue
        name = ascii_lower(tag.group(2))
        position = tag.end()
        if tag.group(1):
            in_head = in_head and name in _HEAD
            continue
        if name == "meta" and (encoding := _declared_by(attributes(text, tag.end(2), tag.end()))) is not None:
            return encoding, True
        in_head = in_head and name in _HEAD_STARTS
        if not in_head and position >= _UNCONDITIONAL:
            return None, True
        if name == "plaintext":
            return None, True
        if name == "script":
            position = script_data_end(text, position)
        elif name in _RAW:
            match = end_tag(name).search(text, position)
            position = match.start() if match else len(text)
    return None, True


def _declared_by(meta_attributes: list[tuple[str, str]]) -> str | None:
    """The known encoding a `<meta>` names (Blink's EncodingFromMetaAttributes): the last `charset` attribute; else
    with `http-equiv=content-type` (any of them, ASCII case-insensitive), the charset of the last `content` that has
    one, if no `charset` came before it."""
    pragma = has_charset = False
    mode, charset = "", ""
    for name, value in meta_attributes:
        if name == "http-equiv":
            pragma = pragma or ascii_lower(value) == "content-type"
        elif name == "charset":
            has_charset, charset, mode = True, value, "charset"
        elif name == "content" and not has_charset:
            charset = _charset_in_content(value)
            mode = "pragma" if charset else mode
    if mode == "charset" or (mode == "pragma" and pragma):
        return _encoding_named(charset)
    return None


def _charset_in_content(value: str) -> str:
    """HTML §2.5.5 "extracting a character encoding from a meta element", as Blink's ExtractCharset writes it: after
    the first `charset` (ASCII case-insensitive, even inside another word) followed by `=`, a quoted value up to its
    closing quote (none: no charset), or an unquoted one up to a space, a quote or `;`."""
    lowered = ascii_lower(value)
    position = 0
    while (found := lowered.find("charset", position)) >= 0:
        position = _skip_controls(value, found + len("charset"))
        if value[position : position + 1] != "=":
            continue
        position = _skip_controls(value, position + 1)
        quote = value[position : position + 1]
        if quote in ('"', "'"):
            close = value.find(quote, position + 1)
            return value[position + 1 : close] if close >= 0 else ""
        end = position
        while end < len(value) and value[end] > " " and value[end] not in "\"';":
            end += 1
        return value[position:end]
    return ""
