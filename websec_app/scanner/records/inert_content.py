"""The contents of `<noscript>` and `<template>` found as the HTML tokenizer finds them, before libxml2 parses.

With scripting on, a `<noscript>` holds raw text up to the first `</noscript` end tag (HTML §13.2.6.4.4 and
§13.2.6.4.7, "generic raw text element parsing algorithm"), and `</template>` pops every element up to its
`<template>` (§13.2.6.4.7). libxml2 does neither: it ignores either end tag while a `<div>`, `<table>` or
another element of higher "end priority" is open inside, so an unclosed `<div>` in a `<noscript>` made the
rest of the page look inert, and a script after it unseen (Chromium 156 fetches and runs it).

`set_apart` finds each such content with a small tokenizer and empties it in the text libxml2 parses,
marking the emptied element with an attribute that names the content; records/html.py parses each content
on its own and keeps its elements as inert. The tokenizer follows HTML §13.2.5 where it decides what is a
tag: comments (and bogus ones), attribute values, the raw text of script (with its escaped states), style,
xmp, iframe, noembed, noframes, the RCDATA of textarea and title, plaintext, and CDATA sections in `<svg>`
and `<math>`, where none of these elements is special and neither `<noscript>` nor `<template>` is HTML's.
Foreign content is followed as far as a tokenizer can: `<svg>`/`<math>` open it, their end tags, an HTML
breakout tag (§13.2.6.5; `<font>` only with color, face or size) and an integration point (`integration_point`)
leave it. libxml2 knows no foreign content and keeps a breakout tag, and all that follows, inside the `<svg>`;
so where browsers pop the foreign elements the tokenizer writes their end tags (`</svg>`, `</math>`) into the
text libxml2 parses, and records/html.py sees the elements after it as HTML, as browsers do.

It also follows HTML's "form element pointer" (§13.2.6.4.7): a `<form>` start tag while it is set (from a `<form>`
outside `<template>` until a `</form>` outside one, wherever the first form was closed) is ignored by browsers,
libxml2 nests a second form; such a start tag gets the marker valued DROPPED_FORM, and records/html.py keeps no
such form (its inputs stay). A page with no `<noscript>`, `<template>`, `<svg>`, `<math>` and at most one `<form>`
is handed on as it is.

`document_tags` runs the same tokenizer to list the `<html>` and `<body>` start tags HTML processes (§13.2.6.4.7,
"A start tag whose tag name is html" / "body": outside a template, each one's attributes the element lacks are
added to it), which libxml2 drops once its own element is open: records/html.py merges them back. Runs of ordinary
tags are skipped by one regular expression; the Python loop runs once per special token, with a CPU time check
every 256 of them. Where a tag, a comment or a script's text ends is records/html_tokens.py's, shared with the
`<meta charset>` prescan.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from .html_tokens import ATTRIBUTE, ATTRIBUTES, NAME, TAG, WS, bogus_comment_end, comment_end, end_tag, script_data_end

__all__ = ["DROPPED_FORM", "DocumentTags", "InertContents", "document_tags", "integration_point", "set_apart"]

_RAW_TEXT = ("script", "style", "xmp", "iframe", "noembed", "noframes", "noscript")
_RCDATA = ("textarea", "title")
#: Start tags that leave foreign content (§13.2.6.5, "A start tag whose tag name is one of ...").
_BREAKOUT = (
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed", "h1", "h2",
    "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol", "p", "pre",
    "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var", "font",
)  # fmt: skip
#: `<font>` leaves foreign content only with one of these attributes (§13.2.6.5).
_FONT_BREAKOUT_ATTRIBUTES = frozenset({"color", "face", "size"})
#: The names that may be integration points (`integration_point` says which are), for the regular expressions.
_INTEGRATION = ("foreignobject", "desc", "title", "mi", "mo", "mn", "ms", "mtext", "annotation-xml")
_SVG_INTEGRATION = frozenset({"foreignobject", "desc", "title"})
_MATHML_TEXT_INTEGRATION = frozenset({"mi", "mo", "mn", "ms", "mtext"})
_HTML_ENCODINGS = (b"text/html", b"application/xhtml+xml")
_HTML_SPECIAL = (*_RAW_TEXT, *_RCDATA, "plaintext", "template", "svg", "math", "form", "html", "body")
#: The start tags whose attributes HTML adds to the element already open (`document_tags`).
_DOCUMENT_ELEMENTS = frozenset({"html", "body"})


def _ordinary(special_starts: tuple[str, ...], special_ends: tuple[str, ...]) -> re.Pattern[str]:
    """Text and tags that change nothing here, as one possessive run: it stops at "<!", "<?", "</" and no
    letter, a special start or end tag, or a tag left open at the end of the file."""
    starts = "|".join(sorted(special_starts, key=len, reverse=True))
    ends = "|".join(sorted(special_ends, key=len, reverse=True))
    name_end = f"(?=[{WS}/>])"
    ordinary_tag = rf"<(?!(?i:{starts}){name_end}|/(?i:{ends}){name_end})/?{NAME}{ATTRIBUTES}"
    return re.compile(rf"(?:[^<]++|<(?![A-Za-z/!?])|{ordinary_tag})*+")


#: Per context: HTML, HTML inside an integration point, foreign content. `</form>` counts in all three: in foreign
#: content an end tag no open foreign element has is processed as HTML (§13.2.6.5, "any other end tag").
_ORDINARY_HTML = _ordinary(_HTML_SPECIAL, ("template", "form"))
_ORDINARY_INTEGRATION = _ordinary(_HTML_SPECIAL, ("template", "svg", "math", "form", *_INTEGRATION))
_ORDINARY_FOREIGN = _ordinary((*_BREAKOUT, *_INTEGRATION, "svg", "math"), ("template", "svg", "math", "form"))
#: A page with one of these, or more than one <form>, needs the tokenizer.
_NEEDS_TOKENIZER = re.compile(r"<(?i:noscript|template|svg|math)")
_FORM = re.compile(rf"<(?i:form)(?=[{WS}/>])")
_RAW_TEXT_OR_RCDATA = frozenset((*_RAW_TEXT, *_RCDATA))
_CHECK_EVERY = 256


@dataclass(frozen=True)
class InertContents:
    """`text` with each `<noscript>`/`<template>` content removed and its start tag given `marker`="<index>";
    `contents[index]` is what was removed. A `<form>` start tag browsers ignore (`DROPPED_FORM`) is given
    `marker`="dropped". `complete` is False when the CPU time ran out: the rest of the text was left as it was."""

    text: str
    contents: tuple[str, ...] = ()
    complete: bool = True


@dataclass(frozen=True)
class DocumentTags:
    """The `<html>` and `<body>` start tags HTML processes, in document order: (name, the tag from just after its
    name to its end, attributes as written). `complete` is False when the CPU time ran out before the end."""

    tags: tuple[tuple[str, str], ...]
    complete: bool = True


def integration_point(namespace: str, name: str, encoding: str | None) -> bool:
    """Whether an element of `namespace` ("svg" or "math") holds HTML again (HTML §13.2.6.1: an HTML integration
    point, SVG foreignObject, desc and title, or a MathML annotation-xml whose encoding is text/html or
    application/xhtml+xml, ASCII case-insensitive; a MathML text integration point, mi, mo, mn, ms, mtext)."""
    if namespace == "svg":
        return name in _SVG_INTEGRATION
    if namespace == "math":
        if name == "annotation-xml":
            return encoding is not None and encoding.encode("utf-8", "surrogatepass").lower() in _HTML_ENCODINGS
        return name in _MATHML_TEXT_INTEGRATION
    return False


#: The value of the marker attribute on a `<form>` start tag that browsers ignore.
DROPPED_FORM = "dropped"


def set_apart(text: str, marker: str, max_cpu_seconds: float) -> InertContents:
    """The page's `<noscript>` and `<template>` contents set apart, foreign content closed where browsers leave
    it, and the `<form>` start tags they ignore marked (see the module's docstring)."""
    forms = _FORM.finditer(text)
    if not _NEEDS_TOKENIZER.search(text) and (next(forms, None) is None or next(forms, None) is None):
        return InertContents(text)  # the usual page: nothing to do, nothing spent
    return _Tokenizer(text, marker, max_cpu_seconds).run()


def document_tags(text: str, max_cpu_seconds: float) -> DocumentTags:
    """The page's `<html>` and `<body>` start tags as HTML processes them: neither inside a template's contents
    (§13.2.6.4.7 ignores both while a template is open), nor in raw text, RCDATA or a comment. A `<body>` in
    foreign content leaves it (a breakout tag) and counts; an `<html>` there is an SVG or MathML element and does
    not. Whether the body was replaced by a frameset (which makes HTML ignore `<body>`) is records/html.py's."""
    tokenizer = _Tokenizer(text, "", max_cpu_seconds)
    tokenizer.document_tags = []
    complete = tokenizer.run().complete
    return DocumentTags(tuple(tokenizer.document_tags), complete)


class _Tokenizer:
    def __init__(self, text: str, marker: str, max_cpu_seconds: float) -> None:
        self.text = text
        self.marker = marker
        self.deadline = time.thread_time() + max_cpu_seconds
        self.parts: list[str] = []  # the text handed on, in pieces
        self.copied = 0  # how much of `text` is in `parts`
        self.contents: list[str] = []
        self.foreign: list[str] = []  # open <svg>/<math>, and "html" for an integration point open in them
        self.templates = 0  # <template> elements open
        self.template_tag = self.template_content = 0  # where the outermost one's start tag and content begin
        self.form_pointer = False  # HTML's "form element pointer" is set: a <form> start tag is ignored
        self.document_tags: list[tuple[str, str]] | None = None  # kept by `document_tags` only

    def run(self) -> InertContents:
        text, position, steps = self.text, 0, 0
        while True:
            context = self.foreign[-1] if self.foreign else ""
            ordinary = _ORDINARY_INTEGRATION if context == "html" else _ORDINARY_FOREIGN if context else _ORDINARY_HTML
            match = ordinary.match(text, position)
            position = match.end() if match else position  # it always matches, if only the empty string
            if position >= len(text):
                break
            steps += 1
            if steps % _CHECK_EVERY == 0 and time.thread_time() > self.deadline:
                return self._finish(complete=False)
            position = self._special(position)
        if self.templates:  # a template left open holds the rest of the page
            self._set_apart(self.template_tag, self.template_content, len(text))
        return self._finish(complete=True)

    def _finish(self, complete: bool) -> InertContents:
        self.parts.append(self.text[self.copied :])
        return InertContents("".join(self.parts), tuple(self.contents), complete)

    def _close_before(self, position: int, names: list[str]) -> None:
        """End tags for the foreign elements `names` (innermost first) written before `position`: libxml2 then
        closes them there, as browsers pop them at a breakout tag."""
        self.parts += [self.text[self.copied : position], "".join(f"</{name}>" for name in names)]
        self.copied = position

    def _mark_dropped(self, name_end: int) -> None:
        """The start tag whose name ends at `name_end` gets the marker attribute, valued DROPPED_FORM."""
        self.parts += [self.text[self.copied : name_end], f' {self.marker}="{DROPPED_FORM}"']
        self.copied = name_end

    def _set_apart(self, tag: int, content: int, end: int) -> None:
        """text[content:end] moves to the contents; the start tag at `tag` gets the marker after its name."""
        name_end = TAG.match(self.text, tag).end(2)  # type: ignore[union-attr]  # it matched before
        self.parts += [self.text[self.copied : name_end], f' {self.marker}="{len(self.contents)}"']
        self.parts.append(self.text[name_end:content])
        self.contents.append(self.text[content:end])
        self.copied = end

    def _special(self, position: int) -> int:
        """Read the token at `position` (a "<" the ordinary run stopped at); return where reading goes on."""
        text = self.text
        if text.startswith("<!--", position):
            return comment_end(text, position)
        if text.startswith("<![CDATA[", position) and self.foreign and self.foreign[-1] != "html":
            end = text.find("]]>", position + 9)
            return end + 3 if end >= 0 else len(text)
        if text.startswith(("<!", "<?"), position) or (
            text.startswith("</", position) and not text[position + 2 : position + 3].isalpha()
        ):
            return bogus_comment_end(text, position)  # or a doctype
        tag = TAG.match(text, position)
        if tag is None:  # a tag left open: browsers drop it at the end of the file
            return len(text)
        name = tag.group(2).lower()
        if tag.group(1):
            self._end_tag(name, position)
            return tag.end()
        return self._start_tag(name, position, tag.end(2), tag.end())

    def _end_tag(self, name: str, position: int) -> None:
        if name == "form":  # §13.2.6.4.7 "An end tag whose tag name is form": outside a template, the pointer is
            if not self.templates:  # unset and the form, in scope, popped with the foreign elements open in it
                if self.form_pointer and self.foreign and "html" not in self.foreign:
                    self._close_before(position, self.foreign[::-1])
                    self.foreign.clear()
                self.form_pointer = False
        elif name == "template":  # it pops up to its template, in foreign content too (§13.2.6.5, any other end tag)
            if self.templates == 1:
                self._set_apart(self.template_tag, self.template_content, position)
            self.templates = max(self.templates - 1, 0)
        elif name in self.foreign:
            while self.foreign.pop() != name:
                pass
        elif name in _INTEGRATION and "html" in self.foreign:
            while self.foreign.pop() != "html":
                pass

    def _attributes(self, name_end: int, end: int) -> dict[str, str]:
        """The attributes of the start tag whose name ends at `name_end` (first of duplicates, names lowercased,
        values unquoted, character references left as written)."""
        attributes: dict[str, str] = {}
        for match in ATTRIBUTE.finditer(self.text, name_end, end - 1):
            attributes.setdefault(match.group(1).lower(), (match.group(2) or "").strip("\"'"))
        return attributes

    def _start_tag(self, name: str, position: int, name_end: int, end: int) -> int:
        if self.foreign and self.foreign[-1] != "html":
            namespace = self.foreign[-1]
            if name in _INTEGRATION and integration_point(
                namespace, name, self._attributes(name_end, end).get("encoding") if name == "annotation-xml" else None
            ):
                if not self.text.startswith("/>", end - 2):
                    self.foreign.append("html")
                return end
            breakout = name in _BREAKOUT and (
                name != "font" or not _FONT_BREAKOUT_ATTRIBUTES.isdisjoint(self._attributes(name_end, end))
            )
            if not breakout:
                if name in ("svg", "math") and not self.text.startswith("/>", end - 2):
                    self.foreign.append(name)
                return end  # a foreign <script>, <style>, <noscript>, <template>...: an element like any other
            closed = []
            while self.foreign and self.foreign[-1] != "html":  # back to HTML, or to the integration point
                closed.append(self.foreign.pop())
            if not self.templates:  # a template's content is set apart as written (its elements are inert)
                self._close_before(position, closed)
        if name in ("svg", "math"):
            if not self.text.startswith("/>", end - 2):
                self.foreign.append(name)
            return end
        if name in _DOCUMENT_ELEMENTS:
            if self.document_tags is not None and not self.templates:
                self.document_tags.append((name, self.text[name_end:end]))
            return end
        if name == "form":  # §13.2.6.4.7: ignored while the form element pointer is set, outside a template
            if not self.templates:
                if self.form_pointer:
                    self._mark_dropped(name_end)
                self.form_pointer = True
            return end
        if name == "template":
            self.templates += 1
            if self.templates == 1:
                self.template_tag, self.template_content = position, end
            return end
        if name == "plaintext":
            return len(self.text)
        if name == "script":
            return script_data_end(self.text, end)
        if name in _RAW_TEXT_OR_RCDATA:
            match = end_tag(name).search(self.text, end)
            close = match.start() if match else len(self.text)
            if name == "noscript" and not self.templates:  # a template's content is set apart whole
                self._set_apart(position, end, close)
            return close
        return end
