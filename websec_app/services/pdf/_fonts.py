"""Fonts for text in any script: Noto Sans for the body, and per-character fallbacks for what it lacks.

reportlab has no font fallback of its own: a glyph missing from a paragraph's font prints as a box.
So text is cut into runs, each run in the first font that has its characters (`markup`), and reportlab
shapes each run with HarfBuzz (uharfbuzz: Devanagari conjuncts, Arabic joining; a right-to-left run
comes out in visual order). reportlab's own bidi needs `rlbidi`, which is not on PyPI, so a paragraph
is always laid out left to right: an Arabic name inside an English sentence reads correctly, an
Arabic sentence with embedded Latin words would not (the PDFs only carry names and site strings).

Emoji: reportlab draws outline (TrueType glyf) fonts only, not colour bitmap emoji (CBDT), so emoji
come out in black and white from Symbola. A character no installed font has prints as "?".

Every font is optional (Debian packages in the Makefile's RUN_APT_PACKAGES): without Noto Sans the
body falls back to DejaVu, then to the PDF's built-in Helvetica/Courier (Latin-1 only, no shaping);
a missing fallback font only means its characters print as "?". Nothing here raises.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib.fonts import addMapping
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

_log = logging.getLogger(__name__)

_NOTO = Path("/usr/share/fonts/truetype/noto")
_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")

# (reportlab name, candidate files): the first file that exists and loads is used.
_SANS = (("WsSans", _NOTO / "NotoSans-Regular.ttf"), ("WsSans", _DEJAVU / "DejaVuSans.ttf"))
_SANS_BOLD = (("WsSansBold", _NOTO / "NotoSans-Bold.ttf"), ("WsSansBold", _DEJAVU / "DejaVuSans-Bold.ttf"))
_MONO = (("WsMono", _NOTO / "NotoSansMono-Regular.ttf"), ("WsMono", _DEJAVU / "DejaVuSansMono.ttf"))
# Fallbacks in the order they are tried for a character the body font lacks. Noto Sans has Latin, Greek and
# Cyrillic; each other script a client's name may be written in has its own file (loading one costs ~4 ms,
# measured: the first fonts() call went from 138 to 205 ms with them).
_FALLBACKS = (
    ("WsDevanagari", _NOTO / "NotoSansDevanagari-Regular.ttf"),
    ("WsBengali", _NOTO / "NotoSansBengali-Regular.ttf"),
    ("WsGurmukhi", _NOTO / "NotoSansGurmukhi-Regular.ttf"),
    ("WsGujarati", _NOTO / "NotoSansGujarati-Regular.ttf"),
    ("WsOriya", _NOTO / "NotoSansOriya-Regular.ttf"),
    ("WsTamil", _NOTO / "NotoSansTamil-Regular.ttf"),
    ("WsTelugu", _NOTO / "NotoSansTelugu-Regular.ttf"),
    ("WsKannada", _NOTO / "NotoSansKannada-Regular.ttf"),
    ("WsMalayalam", _NOTO / "NotoSansMalayalam-Regular.ttf"),
    ("WsSinhala", _NOTO / "NotoSansSinhala-Regular.ttf"),
    ("WsArabic", _NOTO / "NotoSansArabic-Regular.ttf"),
    ("WsHebrew", _NOTO / "NotoSansHebrew-Regular.ttf"),
    ("WsArmenian", _NOTO / "NotoSansArmenian-Regular.ttf"),
    ("WsGeorgian", _NOTO / "NotoSansGeorgian-Regular.ttf"),
    ("WsEthiopic", _NOTO / "NotoSansEthiopic-Regular.ttf"),
    ("WsThai", _NOTO / "NotoSansThai-Regular.ttf"),
    ("WsLao", _NOTO / "NotoSansLao-Regular.ttf"),
    ("WsKhmer", _NOTO / "NotoSansKhmer-Regular.ttf"),
    ("WsMyanmar", _NOTO / "NotoSansMyanmar-Regular.ttf"),
    # Droid Sans Fallback has Chinese and Japanese but no Hangul syllables: Korean comes from Nanum Gothic.
    ("WsCjk", Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")),
    ("WsHangul", Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")),
    ("WsSymbols2", _NOTO / "NotoSansSymbols2-Regular.ttf"),
    ("WsSymbols", _NOTO / "NotoSansSymbols-Regular.ttf"),
    ("WsEmoji", Path("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf")),
    ("WsDejaVu", _DEJAVU / "DejaVuSans.ttf"),
)
#: Where each font comes from, for the Makefile and the report of a missing one.
FONT_PACKAGES = {
    "fonts-noto-core": "Noto Sans; the scripts of India (Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, "
    "Telugu, Kannada, Malayalam), Sinhala, Arabic, Hebrew, Armenian, Georgian, Ethiopic, Thai, Lao, Khmer, "
    "Myanmar; Symbols",
    "fonts-noto-mono": "Noto Sans Mono",
    "fonts-droid-fallback": "Chinese, Japanese",
    "fonts-nanum": "Korean",
    "fonts-symbola": "emoji (black and white)",
    "fonts-dejavu-core": "DejaVu Sans (last resort)",
}

# Characters that belong to the run they follow: combining marks, joiners, variation selectors, spaces.
_JOINERS = {"\u200c", "\u200d", "\ufe0e", "\ufe0f"}


@dataclass(frozen=True)
class FontSet:
    sans: str
    bold: str
    mono: str
    shaping: bool  # the body font is a TrueType font reportlab can shape with uharfbuzz


def _load(name: str, path: Path) -> str | None:
    if name in pdfmetrics.getRegisteredFontNames():
        return name
    if not path.is_file():
        return None
    try:
        pdfmetrics.registerFont(TTFont(name, str(path)))
    except Exception as exc:  # noqa: BLE001 - a broken font file must not break the PDF
        _log.warning("PDF font %s (%s) could not be loaded: %s", name, path, exc)
        return None
    return name


def _first(candidates: tuple[tuple[str, Path], ...]) -> str | None:
    for name, path in candidates:
        if (loaded := _load(name, path)) is not None:
            return loaded
    return None


@lru_cache(maxsize=1)
def fonts() -> FontSet:
    """The fonts the PDFs use, registered once per process."""
    sans, bold, mono = _first(_SANS), _first(_SANS_BOLD), _first(_MONO)
    if sans is None:
        _log.warning("PDF: no TrueType body font (install fonts-noto-core); using Helvetica, Latin-1 only")
    body, body_bold = sans or "Helvetica", bold or sans or "Helvetica-Bold"
    addMapping(body, 0, 0, body)
    addMapping(body, 1, 0, body_bold)
    addMapping(body, 0, 1, body)
    addMapping(body, 1, 1, body_bold)
    if mono:
        addMapping(mono, 0, 0, mono)
        addMapping(mono, 1, 0, mono)
        addMapping(mono, 0, 1, mono)
        addMapping(mono, 1, 1, mono)
    shaping = sans is not None and bool(getattr(pdfmetrics.getFont(sans), "shapable", False))
    return FontSet(body, body_bold, mono or "Courier", shaping)


@cache
def _fallback(name: str, path: Path) -> str | None:
    """The fallback font, registered the first time a character needs it (25 fonts at ~4 ms each would
    otherwise be every process's first PDF's cost, for text that is Latin almost always)."""
    loaded = _load(name, path)
    if loaded is not None:  # <b> inside a fallback run keeps the fallback font
        addMapping(loaded, 0, 0, loaded)
        addMapping(loaded, 1, 0, loaded)
        addMapping(loaded, 0, 1, loaded)
        addMapping(loaded, 1, 1, loaded)
    return loaded


def _fallbacks() -> Iterator[str]:
    """The fallback fonts that load, in _FALLBACKS's order, each loaded when the search reaches it."""
    for name, path in _FALLBACKS:
        if (loaded := _fallback(name, path)) is not None:
            yield loaded


@lru_cache(maxsize=64)
def _covers_fn(font_name: str) -> frozenset[int] | None:
    """The code points a TrueType font has glyphs for (None: a built-in font, WinAnsi only)."""
    font = pdfmetrics.getFont(font_name)
    face = getattr(font, "face", None)
    char_to_glyph = getattr(face, "charToGlyph", None)
    if char_to_glyph is None:
        return None
    return frozenset(int(c) for c in char_to_glyph if char_to_glyph[c])


def has_glyph(font_name: str, char: str) -> bool:
    covered = _covers_fn(font_name)
    if covered is None:
        try:
            char.encode("cp1252")
        except UnicodeEncodeError:
            return False
        return True
    return ord(char) in covered


def _attaches(char: str) -> bool:
    return char in _JOINERS or char.isspace() or unicodedata.category(char).startswith("M")


def runs(value: str, base: str) -> list[tuple[str | None, str]]:
    """`value` cut into (font, text) runs: None for the base font, else the first fallback with the glyph."""
    fonts()  # the body fonts registered (`base` is one of them)
    covered = _covers_fn(base)
    if covered is not None and not {ord(c) for c in value} - covered:
        return [(None, value)] if value else []  # the common case: all in the body font
    result: list[tuple[str | None, str]] = []
    current: str | None = None
    for char in value:
        if _attaches(char) and result:
            if not char.isspace() and not has_glyph(current or base, char):
                continue  # a mark or joiner its run's font cannot draw (its letter became "?"): drop it
            font = current
        elif has_glyph(base, char):
            font = None
        else:
            font = next((f for f in _fallbacks() if has_glyph(f, char)), None)
            if font is None:
                char, font = "?", None
        if result and font == current:
            result[-1] = (current, result[-1][1] + char)
        else:
            result.append((font, char))
            current = font
    return result


def markup(value: str, base: str | None = None) -> str:
    """Escaped reportlab mini-markup of `value`, each run outside the base font in a <font face>."""
    parts: list[str] = []
    previous = ""
    for font, chunk in runs(value, base or fonts().sans):
        if parts and not previous[-1:].isspace() and not chunk[:1].isspace():
            # reportlab shapes a word with its first font only (a glyph of another font becomes .notdef
            # and fails), so a font change inside a word gets a thin space: a word boundary.
            parts.append("\u2009")
        parts.append(escape(chunk) if font is None else f'<font face="{font}">{escape(chunk)}</font>')
        previous = chunk
    return "".join(parts)


__all__ = ["FONT_PACKAGES", "FontSet", "fonts", "has_glyph", "markup", "runs"]
