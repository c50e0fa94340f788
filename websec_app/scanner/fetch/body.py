"""Decoding a response body within hard limits, step by step, as its bytes arrive.

httpx (0.28) decodes a whole network chunk at once with no bound on the output, and follows any
chain of content codings: 1.8 KB sent as `Content-Encoding: gzip, gzip` became 1 GiB in memory
(issue 12). So the fetch layer reads the raw stream and decodes it here:

- Only the codings the scanner asks for (`ACCEPT_ENCODING`) are decoded, in a chain of at most
  `MAX_CODINGS` (RFC 9110 8.4 allows a list, and Chromium decodes `gzip, gzip`). A longer chain or an
  unknown coding leaves the body as sent, cut at the size limit, with a note.
- A chain is decoded through one bounded decompressor per coding: each step of each one produces at
  most what is left of the budget (zlib's `max_length`), and a coding feeds the next at most
  `_STEP` bytes at a time, so no step can produce more than the limit, whatever one network chunk holds.
- Every coding's output shares the same budget: past `RATIO_FLOOR` decoded bytes, a coding whose
  output grows to more than `MAX_RATIO` times the bytes received is a decompression bomb, and decoding
  stops (real pages compress 3-15 times; zeros, 1,000 times; a chain of two, a million times).
"""

from __future__ import annotations

import zlib

#: What the scanner sends as Accept-Encoding: the codings decoded here, and no others.
ACCEPT_ENCODING = "gzip, deflate"
MAX_RATIO = 100
RATIO_FLOOR = 256 * 1024  # a small page may compress very well; below this it costs nothing anyway
MAX_CODINGS = 3

_GZIP = ("gzip", "x-gzip")  # RFC 9110 8.4.1.3: x-gzip is the same coding
_DEFLATE = "deflate"
_STEP = 64 * 1024  # what one coding of a chain hands the next at a time


def content_codings(header: str | None) -> list[str]:
    """The codings of a Content-Encoding value in the order applied, lowercase, `identity` dropped."""
    if not header:
        return []
    codings = [c.strip().lower() for c in header.split(",")]
    return [c for c in codings if c and c != "identity"]


def _zlib_wrapped(head: bytes) -> bool:
    """Whether a deflate body starts with a zlib header (RFC 1950 2.2) rather than raw deflate."""
    return head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


class _Coding:
    """One content coding of the body being undone: its decompressor, the input it has not decoded yet, and
    how much it has produced."""

    __slots__ = ("_decompressor", "name", "pending", "produced", "stopped")

    def __init__(self, name: str) -> None:
        self.name = name
        self.pending = b""
        self.produced = 0
        self.stopped = False  # its output reached the budget: it decodes no more
        # deflate waits for its first two bytes: zlib-wrapped (RFC 9110 8.4.1.2) or raw, as some servers send
        self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS) if name in _GZIP else None

    @property
    def ended(self) -> bool:
        """The end of its (first) member: what follows is not content."""
        return self._decompressor is not None and self._decompressor.eof

    def can_step(self, *, final: bool) -> bool:
        if not self.pending or self.ended or self.stopped:
            return False
        return self._decompressor is not None or len(self.pending) >= 2 or final

    def step(self, max_length: int) -> bytes:
        """At most `max_length` bytes decoded from what is pending; raises zlib.error on a corrupt stream."""
        if self._decompressor is None:
            wrapped = len(self.pending) >= 2 and _zlib_wrapped(self.pending)
            self._decompressor = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        out = self._decompressor.decompress(self.pending, max_length)
        self.pending = self._decompressor.unconsumed_tail
        self.produced += len(out)
        return out


class BodyDecoder:
    """Collects at most `max_body` bytes of a body's content, undoing at most MAX_CODINGS codings.

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
        self._codings: list[_Coding] = []  # the last one applied first: it is undone first
        self._over_budget: _Coding | None = None  # the first coding whose output reached the budget
        codings = content_codings(content_encoding)
        unknown = [c for c in codings if c not in (*_GZIP, _DEFLATE)]
        if unknown:
            used = (
                f"the {codings[0]!r} content coding"
                if len(codings) == 1
                else f"the content codings {', '.join(codings)}"
            )
            self.note = (
                f"the body uses {used}; the scanner does not ask for {', '.join(map(repr, unknown))} "
                f"(Accept-Encoding: {ACCEPT_ENCODING}) and does not decode it, so the body was kept as sent"
            )
        elif len(codings) > MAX_CODINGS:
            self.note = (
                f"the body is sent with {len(codings)} content codings ({', '.join(codings)}); the scanner decodes "
                f"at most {MAX_CODINGS}, so the body was kept as sent"
            )
        else:
            self._codings = [_Coding(c) for c in reversed(codings)]

    def feed(self, data: bytes) -> bool:
        """Take one raw chunk; True when nothing more should be read."""
        if self.done or not data:
            return self.done
        self._encoded += len(data)
        if not self._codings:
            self._keep(data)
        else:
            self._codings[0].pending += data
            self._decode(final=False)
        return self.done

    def finish(self) -> None:
        """The stream ended: decode what a short deflate body left waiting for its header."""
        if not self.done and self._codings:
            self._decode(final=True)
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

    def _decode(self, *, final: bool) -> None:
        """Decode as far as the input received and the budget allow. The innermost coding that can go on goes
        first, so what one coding hands the next stays small."""
        codings = self._codings
        while not self.done:
            index = next((i for i in reversed(range(len(codings))) if codings[i].can_step(final=final)), None)
            if index is None:  # everything received was decoded: wait for more, unless the body can grow no more
                if self._over_budget is not None:
                    self._stop_over_budget(self._over_budget)
                elif any(c.ended for c in codings):  # what follows a member is not content: the body is whole
                    self.done = True
                return
            coding, innermost = codings[index], index == len(codings) - 1
            # What the size and the ratio cap still allow this coding's output: no step decodes past it.
            budget = max(min(self.max_body, max(RATIO_FLOOR, MAX_RATIO * self._encoded)) - coding.produced, 0)
            step = budget if innermost else min(budget, _STEP)
            try:
                # One byte more than the step: to tell "exactly full" from "more to come".
                out = coding.step(step + 1)
            except zlib.error as exc:
                self.cut(f"the {coding.name} body could not be decoded ({exc}); only what was decoded before was kept")
                return
            over = len(out) > budget
            if over:  # keep (or hand on) what fits; the codings inside decode that much, then decoding stops
                coding.produced -= len(out) - budget
                coding.stopped = True
                out = out[:budget]
                self._over_budget = self._over_budget or coding
            if not innermost:
                codings[index + 1].pending += out
                continue
            self.body += out
            if over:
                self._stop_over_budget(coding)
            elif coding.ended:
                self.done = True

    def _stop_over_budget(self, coding: _Coding) -> None:
        consumed = self._encoded - len(self._codings[0].pending)
        # `produced` is what fit; there was more (the probe byte), hence >=.
        if coding.produced >= RATIO_FLOOR and coding.produced >= MAX_RATIO * consumed:
            self.cut(
                f"the body expands more than {MAX_RATIO} times when decompressed ({consumed:,} bytes gave "
                f"{coding.produced:,} and more): a decompression bomb, so decoding stopped there"
            )
        else:
            self._stop_at_size(" (decompressed)")
