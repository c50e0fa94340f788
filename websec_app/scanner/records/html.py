"""A fetched HTML page, parsed once, within work budgets, into the elements the checks read.

Issue 12: a hostile page must not stall the scan. The old BeautifulSoup analysis walked up the
tree for every tag (10,000 nested `<div>` took 33 s; a 1 MB page of nested tags kept a worker
busy past 180 s). Now:

- the parser is libxml2's HTML parser (lxml): C, linear in the input, with its own nesting limit
  (2048 levels with `huge_tree`; without it 256, below what real pages use). lexbor (selectolax),
  the HTML5-exact alternative, went quadratic on deep nesting (1 MB of nested tags: 23 s) and
  html5-parser needs lxml built from source against the same libxml2. Figures: bench/html_bench.py.
- one walk (`iterwalk`, start/end events) counts every element and keeps only those the checks
  read (`KEPT`), each with what it needs from its ancestors (inside `<noscript>`/`<template>`, kept
  as a counter instead of a walk up the tree per element) and whether `<body>` had begun before it;
- `<noscript>` and `<template>` contents are found before libxml2 parses, as the HTML tokenizer finds
  them (records/inert_content.py), and parsed apart, their elements inert: libxml2 ignores either end tag
  while an element such as `<div>` is open inside, which hid the rest of the page;
- `Budget` bounds the bytes read, the elements examined, the nesting depth descended and the CPU
  time of the walk. Past one, the walk stops (or skips the too-deep subtree) and `HtmlPage.exhausted`
  names it: checks use what was read and report `page.analysis_limited`.
- where libxml2's tree is not HTML's, the walk keeps what browsers build: no `<form>` opened inside another
  (records/inert_content.py marks it), no `<frame>` outside a `<frameset>` standing for the body, nor any
  attribute of theirs, nor a `<body>` once a `<frameset>` stands for it, `<image>` as a void `<img>`; a second
  `<html>` or `<body>` start tag adds the attributes the element lacks to it (`_merged_attributes`), where
  libxml2 drops them; SVG and MathML elements named like HTML ones fetch nothing
  (`raw_resources`). A `<select>` needs nothing: Chromium 156 keeps its content (customizable select), as
  libxml2 does;
- the bytes are decoded in the encoding Chromium picks for them (records/html_encoding.py): a byte order
  mark, the Content-Type charset, an XML declaration, a `<meta charset>` found as Blink's prescan finds
  it, else windows-1252;
- `parse_page` is memoised per response, so the checks of one scan (page analysis, the `<meta>`
  elements of the headers check, the generator of the fingerprint check) share one parse.
- the same walk keeps what a Content Security Policy for the page must allow (issue 15,
  fixes/csp_proposal.py): the text of `<script>` and `<style>` elements (as browsers hash it:
  libxml2 already turns CR LF and CR into LF and NUL into U+FFFD, like the HTML tokenizer), the
  distinct `style=""` attribute values, and how many inline event handlers (`on*=`) and
  `javascript:` links there are. Bounded: the text by the bytes read, the style values by
  `MAX_STYLE_ATTRIBUTES`. What the page loads or posts to (`raw_resources`, with the URL helpers
  `base_url`, `clean_url`, `srcset_urls`, `origin_of`) is listed here for page analysis and the
  CSP proposal alike.

HTML details kept from the previous parser: on a duplicated attribute the FIRST one counts (HTML
§13.2.5.33, "duplicate attribute" parse error; libxml2 does the same), and `rel`/`class` are plain
strings so callers split tokens themselves.
"""

from __future__ import annotations

import dataclasses
import html
import re
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

from lxml import etree

from ..snapshot import HttpResponse
from .html_encoding import decode_page
from .html_sniff import is_html_type, sniffs_as_html  # re-exported; the fetch imports it from there, not lxml
from .html_tokens import WS, ascii_lower
from .inert_content import DROPPED_FORM, document_tags, integration_point, set_apart
from .urls import URL_DROPPED, join_url  # join_url re-exported, as above

__all__ = [
    "JS_TYPES", "Budget", "Element", "HtmlPage", "MetaElement", "ascii_lower", "base_element", "base_url",
    "clean_url", "is_html",
    "is_html_type", "link_rel", "join_url", "meta_elements", "meta_elements_of", "origin_of", "parse_page",
    "raw_resources", "script_kind", "script_type", "sniffs_as_html", "split_url", "srcset_urls",
]  # fmt: skip

#: The elements checks read (page.py: everything that loads or posts; headers.py, fingerprint.py: <meta>).
KEPT = frozenset(
    {
        "audio", "base", "button", "embed", "form", "frame", "iframe", "image", "img", "input", "link", "meta",
        "object", "script", "source", "style", "track", "video",
    }
)  # fmt: skip
#: Elements whose text is kept: inline code a CSP allows by its hash.
_TEXT_KEPT = frozenset({"script", "style"})
#: Distinct `style=""` values kept: more than the CSP proposal hashes (fixes/csp_proposal.py), so it can tell.
MAX_STYLE_ATTRIBUTES = 64
_SCRIPT_URL_ELEMENTS = frozenset({"a", "area"})
#: With scripting on, browsers fetch nothing inside these (HTML §4.3.2 noscript, §4.12.3 template).
_INERT = frozenset({"noscript", "template"})
_TIME_CHECK_EVERY = 256  # elements between two looks at the CPU clock
#: Foreign content (HTML §13.2.6.5): inside <svg> or <math> a <script> or <style> is tokenized as ordinary
#: text, character references decoded, where libxml2 keeps it raw as in HTML. Browsers hash the decoded text.
#: A `<![CDATA[...]]>` section there is taken literally (§13.2.5.69 "CDATA section state"): no markers, no
#: decoding inside it; libxml2 keeps the markers in the text (see `_foreign_text`).
_FOREIGN = frozenset({"svg", "math"})
_CDATA_OPEN, _CDATA_CLOSE = "<![CDATA[", "]]>"
#: Void elements of HTML (§13.1.2) that libxml2 leaves open, nesting what follows inside them: `<picture><source
#: srcset=...><img>` puts the <img> in the <source>. `<image>` too: libxml2 does not know it, and the HTML parser
#: makes it an `<img>` (§13.2.6.4.7). They are no one's parent in HTML, and add no level of nesting.
_LIBXML2_OPEN_VOIDS = frozenset({"embed", "image", "keygen", "source", "track", "wbr"})
#: The elements a later start tag of theirs adds attributes to (HTML §13.2.6.4.7), per name: any start tag of that
#: name, and one with an attribute (whitespace or "/" after the name, then an attribute's first character).
_MERGED = ("html", "body")
_MERGED_TAG = {name: re.compile(rf"<(?i:{name})(?=[{WS}/>])") for name in _MERGED}
_MERGED_TAG_WITH_ATTRIBUTE = {name: re.compile(rf"<(?i:{name})[{WS}/]++[^{WS}/>]") for name in _MERGED}


@dataclass(frozen=True)
class Budget:
    """How much work one page may cost. The defaults leave every real page whole: the HTTP Archive's
    90th percentile page has about 3,000 elements and a nesting depth under 40."""

    max_bytes: int = 2 * 1024 * 1024  # the fetch's own body limit (WEBSEC_MAX_BODY_BYTES)
    max_elements: int = 10_000  # Lighthouse calls more than 1,400 excessive
    max_depth: int = 512  # Blink flattens deeper trees (kMaximumHTMLParserDOMTreeDepth)
    # CPU time of this thread for the walk, again for resolving URLs, again for finding <noscript> and
    # <template> contents and where foreign content ends (records/inert_content.py) on a page that has any, and
    # again for the <meta charset> prescan of a page without a charset (records/html_encoding.py)
    max_cpu_seconds: float = 0.5

    def describe(self, name: str) -> str:
        """The budget called `name`, in words, for the report."""
        return {
            "bytes": f"size budget (the first {self.max_bytes // 1024:,} KiB)",
            "elements": f"elements budget ({self.max_elements:,} elements)",
            "depth": f"nesting depth budget ({self.max_depth:,} levels)",
            "time": f"CPU time budget ({self.max_cpu_seconds:g} s)",
        }[name]


@dataclass(frozen=True, eq=False)
class Element:
    """One kept element: its lowercased name, its attributes (first of duplicates) and context."""

    name: str
    attrs: Mapping[str, str]
    inert: bool  # inside <noscript> or <template>: browsers with scripting on do not fetch it
    # After <body> began, in document order: HTML puts it in <body> (also what follows </body>, which
    # libxml2 leaves beside it: "after body" mode reprocesses it "in body", and what follows </html>, see
    # `_walk`); a <meta> there is not in <head>.
    in_body: bool
    text: str | None = None  # <script> and <style> only: the element's text, as browsers hash it
    parent: str = ""  # the parent element's name as HTML builds the tree (see `_LIBXML2_OPEN_VOIDS`)
    position: int = 0  # its index in `HtmlPage.elements`: document order, what a <meta> policy or <base> precedes
    namespace: str = ""  # "svg" or "math" in foreign content (HTML §13.2.6.5), "" for an HTML element

    def get(self, attribute: str, default: str | None = None) -> str | None:
        return self.attrs.get(attribute, default)


@dataclass(frozen=True, eq=False)
class HtmlPage:
    """The kept elements in document order, as far as the budgets allowed."""

    elements: tuple[Element, ...] = ()
    examined: int = 0  # elements walked, kept or not
    exhausted: tuple[str, ...] = ()  # budgets that ran out: "bytes", "elements", "depth", "time"
    budget: Budget = field(default_factory=Budget)
    style_attributes: tuple[str, ...] = ()  # distinct non-empty `style=""` values, at most MAX_STYLE_ATTRIBUTES
    style_attribute_count: int = 0  # every non-empty `style=""`, beyond the cap too
    inline_handlers: int = 0  # `on*=` event handler attributes and `javascript:` links (a, area)

    def find_all(self, name: str) -> list[Element]:
        return [element for element in self.elements if element.name == name]


def is_html(response: HttpResponse) -> bool:
    """HTML by its Content-Type, or, when there is none, by what browsers would sniff (`sniffs_as_html`)."""
    if is_html_type(response.content_type):
        return True
    if response.content_type:
        return False
    return sniffs_as_html(response.body)


@lru_cache(maxsize=8)
def parse_page(response: HttpResponse, budget: Budget = Budget()) -> HtmlPage:  # noqa: B008 - frozen, shared
    """The page of an HTML response, parsed once per response (memoised: the checks of a scan share it)."""
    return _parse(response, budget)


def _parse(response: HttpResponse, budget: Budget) -> HtmlPage:
    exhausted: list[str] = []
    if len(response.body) > budget.max_bytes:  # a body the fetch cut has its own finding, page.body_incomplete
        exhausted.append("bytes")
        response = dataclasses.replace(response, body=response.body[: budget.max_bytes])
    # <noscript> and <template> contents read apart (records/inert_content.py), each start tag marked with an
    # attribute named afresh per page, so that the page cannot write one
    marker = f"data-websec-inert-{secrets.token_hex(6)}"
    decoded = decode_page(response.body, response.content_type, response.charset, budget.max_cpu_seconds)
    inert_contents = set_apart(decoded.text, marker, budget.max_cpu_seconds)
    if not (decoded.complete and inert_contents.complete):
        exhausted.append("time")
    started = time.thread_time()
    parser = _parser()
    root = _html_tree(inert_contents.text, parser)
    if any("Excessive depth" in entry.message for entry in parser.error_log):
        exhausted.append("depth")  # libxml2 stopped reading at its own limit, deeper than ours
    if root is None:
        return HtmlPage(exhausted=tuple(exhausted), budget=budget)
    merged: dict[str, dict[str, str]] | None = None  # by element name: its attributes as HTML merges them
    if _attributes_may_be_lost(decoded.text, root):
        tags = document_tags(decoded.text, budget.max_cpu_seconds)
        if not tags.complete and "time" not in exhausted:
            exhausted.append("time")
        merged = _merged_attributes(tags.tags)

    kept: list[Element] = []
    styles: dict[str, None] = {}
    style_count = handlers = 0
    examined = depth = inert = 0
    body_begun = framed = False  # framed: a <frameset> stands for the body
    #: per open element: the namespace its children are in: "svg" or "math" inside <svg> or <math>, "" (HTML)
    #: there and inside an integration point
    spaces: list[str] = []
    parents: list[str] = []  # per open element: the name its children have as parent (`_LIBXML2_OPEN_VOIDS`)
    hiding: list[bool] = []  # per open element: an HTML <noscript> or <template> (an SVG one hides nothing)
    levels: list[int] = []  # per open element: the nesting levels it adds, 0 for a void libxml2 left open
    for event, node, walk in _walk(root, inert_contents.contents, marker):
        name = node.tag if isinstance(node.tag, str) else ""
        if event == "end":
            depth -= levels.pop()
            inert -= hiding.pop()
            spaces.pop()
            parents.pop()
            continue
        namespace = name if name in _FOREIGN else spaces[-1] if spaces else ""
        void = name in _LIBXML2_OPEN_VOIDS and not namespace  # in SVG a <source> or an <image> holds what follows
        if name == "image" and not namespace:  # §13.2.6.4.7: the parser makes an <image> start tag an <img>
            name = "img"
        levels.append(0 if void else 1)
        depth += levels[-1]
        hiding.append(name in _INERT and not namespace)
        inert += hiding[-1]
        spaces.append("" if integration_point(namespace, name, node.get("encoding")) else namespace)
        parent = parents[-1] if parents else ""
        parents.append(parent if void else name)
        # What follows </html> is in <body> (HTML §13.2.6.4.23 "after after body": reprocessed "in body").
        body_begun = body_begun or name == "body" or node is not root and node.getparent() is None
        if examined % _TIME_CHECK_EVERY == 0 and time.thread_time() - started >= budget.max_cpu_seconds:
            exhausted.append("time")
            break
        if examined >= budget.max_elements:
            exhausted.append("elements")
            break
        examined += 1
        if depth > budget.max_depth:
            if "depth" not in exhausted:
                exhausted.append("depth")
            walk.skip_subtree()  # its "end" event still comes and restores the counters
            continue
        if not namespace and _dropped(name, node.get(marker), parent, body_begun, framed):
            continue  # never built: no element, and none of its attributes is anywhere in the document
        framed = framed or (name == "frameset" and not namespace)
        if name in KEPT:
            text = (node.text or "") if name in _TEXT_KEPT else None
            if text and spaces[-1]:  # linear in the text, which the byte budget bounds
                text = _foreign_text(text)
            attrs = dict(node.attrib)
            kept.append(Element(name, attrs, inert > 0, body_begun, text, parent, len(kept), namespace))
        if inert:
            continue
        attributes = node.items()
        if merged is not None and name in merged and not namespace:
            # HTML's one element of that name: the first libxml2 built carries every merged attribute, the others
            # (libxml2 opens a new <html> after </html>, a new <body> after </body>) none
            attributes, merged[name] = list(merged[name].items()), {}
        for key, value in attributes:  # inline code in attributes (a CSP treats it as inline)
            if key == "style":
                if value.strip():
                    style_count += 1
                    if len(styles) < MAX_STYLE_ATTRIBUTES:
                        styles.setdefault(value)
            elif key.startswith("on") or (
                key == "href" and name in _SCRIPT_URL_ELEMENTS and value.lstrip().lower().startswith("javascript:")
            ):
                handlers += 1
    return HtmlPage(tuple(kept), examined, tuple(exhausted), budget, tuple(styles), style_count, handlers)


def _dropped(name: str, marker_value: str | None, parent: str, body_begun: bool, framed: bool) -> bool:
    """Whether browsers drop an HTML element libxml2 keeps: a `<form>` opened while another is (the "form element
    pointer", found by records/inert_content.py), a `<frame>` outside a `<frameset>` that replaced the body, or
    that `<frameset>` once the body began (§13.2.6.4.7: "in body" ignores a frame, and a frameset once `<body>` or
    its content came: "frameset-ok"; only "in frameset" inserts a frame), or a `<body>` once such a frameset
    (`framed`) stands for it ("in frameset" and "after frameset" ignore it). Browsers ignore the start tag, its
    attributes with it (an `onsubmit` there is no inline handler); its contents stay: a nested form's inputs are
    the outer one's. An SVG or MathML element of such a name is built, its event handlers with it."""
    if name == "form":
        return marker_value == DROPPED_FORM
    if name == "frameset":
        return body_begun
    if name == "body":
        return framed
    return name == "frame" and (parent != "frameset" or body_begun)


def _attributes_may_be_lost(text: str, root: etree._Element) -> bool:
    """Whether libxml2's `<html>` and `<body>` may not carry the attributes HTML gives them (`_merged_attributes`):
    libxml2 drops a start tag of either while its element is open, attributes and all (`<body><body onload=...>`,
    or `<p>x</p><body onload=...>` once the `<p>` opened the body), and opens a second element after `</body>` or
    `</html>`. Only a page with an attribute on such a tag can lose any: one with two tags of that name, or with one
    whose attributes libxml2's elements lack. Three regular expression searches per name, where reading the
    tags as the tokenizer does (`document_tags`) costs as much as the parse on some pages."""
    roots = [root, *root.itersiblings()]
    for name in _MERGED:
        if _MERGED_TAG_WITH_ATTRIBUTE[name].search(text) is None:
            continue
        tags = _MERGED_TAG[name].finditer(text)
        if next(tags, None) is not None and next(tags, None) is not None:
            return True
        elements = roots if name == "html" else [child for top in roots for child in top if child.tag == name]
        if not any(element.attrib for element in elements):
            return True
    return False


def _merged_attributes(tags: Sequence[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """The attributes of HTML's `<html>` and `<body>` given their start tags in document order (`document_tags`):
    the first tag's, then each later tag's that the element lacks (§13.2.6.4.7, "A start tag whose tag name is
    html" / "body": "if it is not, add the attribute"), so the first value of an attribute stays. Each tag's
    attributes are read by libxml2 as an element's (`<br>`, void: no nesting), character references and duplicates
    as for every other element."""
    merged: dict[str, dict[str, str]] = {name: {} for name in _MERGED}
    if not tags:
        return merged
    # Each piece is a whole tag as the HTML tokenizer reads it, so it ends where libxml2's (HTML5) tokenizer ends it
    markup = "".join(f"<br{attributes}" for _, attributes in tags)
    read = etree.HTML(markup, _parser())
    elements = read.iter("br") if read is not None else iter(())
    for (name, _), element in zip(tags, elements, strict=False):
        for key, value in element.items():
            merged[name].setdefault(key, value)
    return merged


def _foreign_text(raw: str) -> str:
    """A foreign-content script's or style's text as browsers read it (HTML §13.2.6.5): each CDATA section
    replaced by its characters, taken literally (`&lt;` in one stays `&lt;`); character references decoded
    only outside them. A section left open runs to the end of the text (the tokenizer's runs to the end of
    the file). Linear: each `str.find` starts where the previous one ended."""
    parts: list[str] = []
    position = 0
    while (start := raw.find(_CDATA_OPEN, position)) != -1:
        parts.append(html.unescape(raw[position:start]))
        content = start + len(_CDATA_OPEN)
        end = raw.find(_CDATA_CLOSE, content)
        if end == -1:
            parts.append(raw[content:])
            return "".join(parts)
        parts.append(raw[content:end])
        position = end + len(_CDATA_CLOSE)
    parts.append(html.unescape(raw[position:]))
    return "".join(parts)


def _parser() -> etree.HTMLParser:
    return etree.HTMLParser(huge_tree=True, no_network=True, remove_comments=True, remove_pis=True, collect_ids=False)


def _html_tree(text: str, parser: etree.HTMLParser) -> etree._Element | None:
    """libxml2's tree of `text`. lxml refuses a str opening with an XML declaration that names an encoding
    (ValueError): a page opening with `<?xml version="1.0" encoding="utf-8"?>` crashed the headers, fingerprint and
    page checks (check.crashed, the grade capped at F). The HTML tokenizer reads the declaration as a bogus comment
    up to its first `>` (§13.2.5.41), which the parser drops anyway (`remove_pis`), so it is dropped here."""
    if text.startswith("<?xml"):
        end = text.find(">")
        text = text[end + 1 :] if end >= 0 else ""
    return etree.HTML(text, parser)


def _walk(
    root: etree._Element, inert_contents: Sequence[str], marker: str
) -> Iterator[tuple[str, etree._Element, etree.iterwalk]]:
    """iterwalk's (event, element) over the whole document, with the walk (to skip a subtree).

    libxml2 ends the root `<html>` at `</html>`, and puts what follows in a new `<html>` beside it (one per
    further `</html>`); `etree.HTML` returns only the first. Browsers put it all in `<body>` (HTML §13.2.6.4.23
    "after after body": a start tag is reprocessed "in body"), and its scripts run: injected analytics, a
    Magecart skimmer. So every top-level element is walked, in document order. Nothing is rewritten: the text
    of a script holding `"</html>"` stays as browsers hash it (the tokenizer never saw an end tag there).

    A `<noscript>` or `<template>` whose content was set apart (`marker`) gets it back here: parsed on its own,
    its elements walked inside it, where the counters make them inert."""
    for tree in (root, *root.itersiblings()):
        walk = etree.iterwalk(tree, events=("start", "end"))
        for event, node in walk:
            yield event, node, walk
            index = node.get(marker) if event == "start" else None
            if index is not None and index.isdigit() and int(index) < len(inert_contents):
                yield from _inert_content(inert_contents[int(index)])


def _inert_content(content: str) -> Iterator[tuple[str, etree._Element, etree.iterwalk]]:
    """The events of a set-apart content's elements, without the <html>, <head> and <body> libxml2 puts around
    them."""
    fragment = _html_tree(content, _parser()) if content.strip() else None
    for part in fragment if fragment is not None else ():
        for child in part if part.tag in ("head", "body") else (part,):
            walk = etree.iterwalk(child, events=("start", "end"))
            for event, node in walk:
                yield event, node, walk


# --- What the page loads (page analysis, and the CSP proposal of issue 15) ------------------------

#: HTML §4.12.1.1 / MIME Sniffing §4.6: the script types browsers execute (others are data blocks).
JS_TYPES = frozenset(
    {
        "", "module", "application/ecmascript", "application/javascript", "application/x-ecmascript",
        "application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
        "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
        "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript",
    }
)  # fmt: skip
#: `<link rel=preload as=...>`: the resource kind each `as` value fetches, for the values Chromium 156 preloads
#: ("preload" for fetch: connect-src). With another `as` (audio, video, document, worker...), none, or one
#: browsers do not know, nothing is fetched (HTML §4.6.7.12: the "as" must be a potential destination).
_PRELOAD_AS = {
    "image": "image", "style": "stylesheet", "script": "script", "font": "font", "fetch": "preload", "track": "track",
}  # fmt: skip
_CSS_TYPES = frozenset({"", "text/css"})
_ASCII_WHITESPACE = " \t\n\r\f"


def clean_url(value: object) -> str:
    """HTML URL attributes: strip ASCII whitespace, drop tabs and newlines (URL Standard §4.4)."""
    return str(value).translate(URL_DROPPED).strip(" \t\n\r\f")


def srcset_urls(value: str) -> list[str]:
    """HTML §4.8.4.3.9 "parse a srcset attribute": URLs may contain commas (`w_100,h_100`)."""
    urls, pos, size = [], 0, len(value)
    while pos < size:
        while pos < size and (value[pos].isspace() or value[pos] == ","):
            pos += 1
        start = pos
        while pos < size and not value[pos].isspace():
            pos += 1
        url = value[start:pos]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0  # skip the descriptors up to the next top-level comma
            while pos < size:
                char = value[pos]
                depth += {"(": 1, ")": -1}.get(char, 0)
                pos += 1
                if char == "," and depth <= 0:
                    break
        if url:
            urls.append(url)
    return urls


def link_rel(tag: Element) -> set[str]:
    return {token.lower() for token in str(tag.get("rel", "")).split()}


def script_kind(tag: Element) -> str | None:
    """What a <script> is fetched and run as: "classic", "module", or None for a data block, an import map or
    speculation rules, which are not fetched as a script (see `script_type`)."""
    kind = script_type(tag)
    return kind if kind in ("classic", "module") else None


def script_type(tag: Element) -> str | None:
    """The script's type (HTML §4.12.1.1 "prepare the script element", steps 8-12): "classic", "module",
    "importmap", "speculationrules", or None for a data block, which is neither run nor checked against a CSP.

    The type, stripped of ASCII whitespace, is compared whole, ASCII case-insensitively: a JavaScript MIME type
    essence match allows no parameters (`text/javascript; charset=utf-8` is data; Chromium 156 neither fetches
    nor runs it). Without a type, a non-empty `language` makes it "text/<language>" (`vbscript` is data). An
    empty type is classic JavaScript. An SVG script has no `language` (Chromium ignores it there). The HTML
    reading is kept for " module " too, which Chromium 156 alone does not run."""
    kind = tag.get("type")
    if kind is None:
        language = tag.get("language") if not tag.namespace else None
        kind = f"text/{language}" if language else ""
    if kind == "":
        return "classic"
    kind = ascii_lower(kind.strip(_ASCII_WHITESPACE))  # a blank type is no JavaScript type: data
    if kind in ("module", "importmap", "speculationrules"):
        return kind
    return "classic" if kind and kind in JS_TYPES else None


def _script_src(tag: Element) -> str | None:
    """The URL attribute a <script> fetches: `src` in HTML, unless `nomodule` tells module-supporting browsers to
    skip a classic script (HTML §4.12.1); `href`, or `xlink:href` without it, in SVG (SVG 2 §15.2, where `src` and
    `nomodule` mean nothing: Chromium 156 runs `<svg><script href>` and ignores `<svg><script src>`); nothing in
    MathML, which has no script element."""
    kind = script_kind(tag)
    if kind is None or tag.namespace == "math":
        return None
    if tag.namespace == "svg":
        return tag.get("href", tag.get("xlink:href"))
    if kind == "classic" and tag.get("nomodule") is not None:
        return None
    return tag.get("src")


def _fetches_stylesheet(tag: Element) -> bool:
    """HTML §4.2.4 (the link element's "fetch and process the linked resource"): a `disabled` stylesheet is not
    fetched, nor one whose `type` is not CSS. Chromium 156 compares the type's essence, parameters and spaces
    left out, ASCII case-insensitively: `text/css; charset=utf-8` loads, `text/less` does not."""
    kind = str(tag.get("type", "")).partition(";")[0].strip(_ASCII_WHITESPACE)
    return tag.get("disabled") is None and ascii_lower(kind) in _CSS_TYPES


def raw_resources(page: HtmlPage) -> Iterator[tuple[str, str, Element]]:
    """(attribute value, resource kind, element) for everything the page loads or posts to.

    In SVG and MathML only a script and an SVG `<image>` fetch (by `href`, or `xlink:href` without it: SVG 2
    §5.9.1, §16.2): `<svg><iframe src>` or `<svg><form action>` are elements of another namespace, which
    Chromium 156 neither loads nor submits. Its preload scanner does request `<svg><link rel=stylesheet>`, but
    the sheet is never applied (no `document.styleSheets` entry), so it is not listed either."""
    for tag in page.elements:
        if tag.inert:
            continue
        name = tag.name
        if name == "script":
            if (src := _script_src(tag)) is not None:
                yield src, "script", tag
        elif tag.namespace:
            if name == "image" and tag.namespace == "svg" and (href := tag.get("href", tag.get("xlink:href"))):
                yield href, "image", tag
        elif name == "link" and tag.get("href") is not None:
            rel = link_rel(tag)
            if "stylesheet" in rel:
                if _fetches_stylesheet(tag):
                    yield str(tag.attrs["href"]), "stylesheet", tag
            elif "modulepreload" in rel:
                yield str(tag.attrs["href"]), "script", tag
            elif "preload" in rel:
                # An enumerated attribute: ASCII case-insensitive, not trimmed (Chromium 156 skips as=" script").
                if (kind := _PRELOAD_AS.get(ascii_lower(str(tag.get("as", ""))))) is not None:
                    yield str(tag.attrs["href"]), kind, tag
            elif rel & {"icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"}:
                yield str(tag.attrs["href"]), "icon", tag
            elif "manifest" in rel:
                yield str(tag.attrs["href"]), "manifest", tag
        elif name in ("iframe", "frame") and tag.get("src") is not None:
            yield str(tag.attrs["src"]), "frame", tag
        elif name == "object" and tag.get("data") is not None:
            yield str(tag.attrs["data"]), "object", tag
        elif name == "embed" and tag.get("src") is not None:
            yield str(tag.attrs["src"]), "object", tag
        elif name == "img":
            # HTML §4.8.4.3.5 "update the image data": an img that "uses srcset or picture" (a srcset attribute,
            # even empty, or a <picture> parent) fetches with initiator "imageset", which Mixed Content §4.3
            # does not upgrade: Chromium 156 blocks such http:// images, its src among them.
            kind = "imageset" if tag.get("srcset") is not None or tag.parent == "picture" else "image"
            if tag.get("src") is not None:
                yield str(tag.attrs["src"]), kind, tag
            for url in srcset_urls(str(tag.get("srcset", ""))):
                yield url, kind, tag
        elif name == "input" and ascii_lower(str(tag.get("type", ""))) == "image":
            if tag.get("src") is not None:
                yield str(tag.attrs["src"]), "image", tag
        elif name in ("audio", "video"):
            if tag.get("src") is not None:
                yield str(tag.attrs["src"]), "media", tag
            if name == "video" and tag.get("poster") is not None:
                yield str(tag.attrs["poster"]), "image", tag
        elif name == "source":
            # A <source> gives <audio>/<video> a src, and <picture> a srcset (HTML §4.8.2, §4.8.9), nothing else.
            if tag.get("src") is not None and tag.parent in ("audio", "video"):
                yield str(tag.attrs["src"]), "media", tag
            if tag.parent == "picture":
                for url in srcset_urls(str(tag.get("srcset", ""))):
                    yield url, "imageset", tag
        elif name == "track" and tag.get("src") is not None:
            yield str(tag.attrs["src"]), "track", tag
        elif name == "form" and tag.get("action") is not None:
            yield str(tag.attrs["action"]), "form", tag
        elif name in ("button", "input") and tag.get("formaction") is not None:
            yield str(tag.attrs["formaction"]), "form", tag


def split_url(url: str) -> SplitResult | None:
    """The URL's parts, or None where a browser's URL parser fails too: an unclosed IPv6 bracket, or a port
    that is not a number from 0 to 65535. Such a URL loads nothing, so there is nothing to grade in it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - read to validate: urlsplit defers the port's check to this property
    except ValueError:
        return None
    return parts


def base_element(page: HtmlPage) -> Element | None:
    """The `<base href>` that sets the base URL (see `base_url`). What the page fetched before it was resolved
    against the document's URL: HTML §4.2.3 sets the base when the element is inserted, and a `<script>` or
    `<img>` parsed earlier has already been fetched (Chromium 156 loads `<script src=app.js>` placed before
    `<base href=http://...>` from the page's own origin). A form's action is resolved when it is submitted. An
    SVG `<base>` is no base element."""
    return next(
        (
            tag
            for tag in page.elements
            if tag.name == "base" and tag.get("href") is not None and not tag.inert and not tag.namespace
        ),
        None,
    )


def base_url(page: HtmlPage, page_url: str) -> tuple[str, str | None]:
    """HTML §4.2.3: the first `<base href>` sets the base URL, unless it is data: or javascript:, or does not
    parse (then the document's URL stays the base: "if urlRecord is failure", the fallback base URL).
    "First ... in tree order" counts elements of the document: one inside `<template>` sits in the template's
    content (a separate fragment, §4.12.3) and one inside `<noscript>` in the head is raw text with scripting
    on (§13.2.6.4.4), so inert ones are skipped."""
    base = base_element(page)
    if base is None:
        return page_url, None
    resolved = join_url(page_url, clean_url(base.attrs["href"]))
    parts = split_url(resolved) if resolved is not None else None
    if resolved is None or parts is None:
        return page_url, None
    if parts.scheme in ("data", "javascript"):
        return page_url, resolved
    return resolved, resolved


def origin_of(url: str | SplitResult) -> str:
    parts = url if isinstance(url, SplitResult) else urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # callers pass URLs split_url accepted; a bad port here means no port was meant
        port = None
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


@dataclass(frozen=True)
class MetaElement:
    """`http_equiv` and `name` are ASCII-lowercased and NOT trimmed: HTML matches both ASCII
    case-insensitively against whole keywords (§4.2.5.3 http-equiv is an enumerated attribute, §4.2.5.1
    "Standard metadata names"), so Chromium ignores `http-equiv=" Content-Security-Policy"` (the auditor's
    check in Chromium 156: the page's inline script runs)."""

    http_equiv: str  # ASCII-lowercased, "" when absent
    name: str  # ASCII-lowercased, "" when absent
    content: str | None
    in_head: bool  # False when the element sits inside <body>
    inert: bool  # inside <noscript> or <template>: not an element of the document for browsers with scripting on


def meta_elements_of(page: HtmlPage) -> tuple[MetaElement, ...]:
    """Every <meta> of a parsed page, in document order."""
    return tuple(
        MetaElement(
            http_equiv=_attr(meta.get("http-equiv")),
            name=_attr(meta.get("name")),
            content=meta.get("content"),
            in_head=not meta.in_body,
            inert=meta.inert,
        )
        for meta in page.find_all("meta")
    )


def meta_elements(response: HttpResponse) -> tuple[MetaElement, ...]:
    """Every <meta> of an HTML response, in document order (empty for other content types)."""
    if not response.body or not is_html(response):
        return ()
    return meta_elements_of(parse_page(response))


def _attr(value: object) -> str:
    return ascii_lower(value) if isinstance(value, str) else ""
