"""Decoding a response body within hard limits, step by step, as its bytes arrive.

httpx (0.28) decodes a whole network chunk at once with no bound on the output, and follows any
chain of content codings: 1.8 KB sent as `Content-Encoding: gzip, gzip` became 1 GiB in memory
(issue 12). So the fetch layer reads the raw stream and decodes it here:

- Only the codings the scanner asks for (`ACCEPT_ENCODING`) are decoded, and at most one of them
  (RFC 9110 8.4 allows a list; browsers accept one in practice, and a chain only serves a bomb).
  A chained or unknown coding leaves the body as sent, cut at the size limit, with a note.
- zlib's `max_length` bounds every step by what is left of the budget, so no step can produce
  more than the limit, whatever one network chunk holds.
- Past `RATIO_FLOOR` decoded bytes, a body that expands more than `MAX_RATIO` times is a
  decompression bomb: decoding stops (real pages compress 3-15 times; zeros, 1,000 times).
"""

from __future__ import annotations

import zlib

#: What the scanner sends as Accept-Encoding: the codings decoded here, and no others.
ACCEPT_ENCODING = "gzip, deflate"
MAX_RATIO = 100
RATIO_FLOOR = 256 * 1024  # a small page may compress very well; below this it costs nothing anyway

_GZIP = ("gzip", "x-gzip")  # RFC 9110 8.4.1.3: x-gzip is the same coding
_DEFLATE = "deflate"


def content_codings(header: str | None) -> list[str]:
    """The codings of a Content-Encoding value in the order applied, lowercase, `identity` dropped."""
    if not header:
        return []
    codings = [c.strip().lower() for c in header.split(",")]
    return [c for c in codings if c and c != "identity"]


def _zlib_wrapped(head: bytes) -> bool:
    """Whether a deflate body starts with a zlib header (RFC 1950 2.2) rather than raw deflate."""
    return head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


class BodyDecoder:
    """Collects at most `max_body` bytes of a body's content, decoding at most one coding.

    `feed()` each raw chunk until it returns True (the body is complete or was cut), then call
    `finish()`. `body` holds the content, `truncated` says it was cut, `note` why the body is
    incomplete or not decoded (None when it is whole).
    """

    def __init__(self, content_encoding: str | None, *, max_body: int) -> None:
        self.max_body = max_body
        self.body = bytearray()
        self.truncated = False
        self.note: str | None = None
        self.done = False
        self._encoded = 0
        self._head = b""  # deflate only: the first bytes, until the wrapper is known
        self._decompressor: zlib._Decompress | None = None
        self._coding: str | None = None
        codings = content_codings(content_encoding)
        if len(codings) > 1:
            self.note = (
                f"the body is sent with several content codings ({', '.join(codings)}); the scanner decodes at "
                "most one, so the body was kept as sent"
            )
        elif codings and codings[0] in (*_GZIP, _DEFLATE):
            self._coding = codings[0]
            if self._coding in _GZIP:
                self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif codings:
            self.note = (
                f"the body uses the {codings[0]!r} content coding, which the scanner does not ask for "
                f"(Accept-Encoding: {ACCEPT_ENCODING}) and does not decode, so the body was kept as sent"
            )

    def feed(self, data: bytes) -> bool:
        """Take one raw chunk; True when nothing more should be read."""
        if self.done or not data:
            return self.done
        self._encoded += len(data)
        if self._coding is None:
            self._keep(data)
        else:
            self._decode(data)
        return self.done

    def finish(self) -> None:
        """The stream ended: decode what a short deflate body left waiting for its header."""
        if not self.done and self._coding == _DEFLATE and self._decompressor is None and self._head:
            self._decode(b"")
        self.done = True

    def cut(self, note: str) -> None:
        """Stop here for a reason outside the decoder (time budget, broken connection)."""
        self.truncated = True
        self.note = self.note or note
        self.done = True

    def _keep(self, data: bytes) -> None:
        room = self.max_body - len(self.body)
        self.body += data[:room]
        if len(data) > room:
            self._stop_at_size("")

    def _stop_at_size(self, how: str) -> None:
        self.truncated = True
        self.note = self.note or (
            f"the body{how} is larger than the {self.max_body:,} bytes the scanner reads; only its beginning was kept"
        )
        self.done = True

    def _decode(self, data: bytes) -> None:
        if self._decompressor is None:  # deflate: zlib-wrapped (RFC 9110 8.4.1.2) or raw, as some servers send
            self._head += data
            if len(self._head) < 2 and data:
                return
            wrapped = len(self._head) >= 2 and _zlib_wrapped(self._head)
            self._decompressor = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        decompressor = self._decompressor
        pending = data
        while pending and not self.done:
            room = self.max_body - len(self.body)
            # What the ratio cap still allows for the bytes received so far: no step decodes past it.
            ratio_room = max(RATIO_FLOOR, MAX_RATIO * self._encoded) - len(self.body)
            step = max(min(room, ratio_room), 0)
            try:
                # One byte more than the step: to tell "exactly full" from "more to come".
                out = decompressor.decompress(pending, step + 1)
            except zlib.error as exc:
                self.cut(f"the {self._coding} body could not be decoded ({exc}); only what was decoded before was kept")
                return
            pending = decompressor.unconsumed_tail
            self.body += out[:step]
            if len(out) > step:
                consumed = self._encoded - len(pending)
                if len(self.body) > RATIO_FLOOR and len(self.body) > MAX_RATIO * consumed:
                    self.cut(
                        f"the body expands more than {MAX_RATIO} times when decompressed ({consumed:,} bytes gave "
                        f"{len(self.body):,} and more): a decompression bomb, so decoding stopped there"
                    )
                else:
                    self._stop_at_size(" (decompressed)")
                return
            if decompressor.eof:  # the end of the (first) member: what follows is not content
                self.done = True
