# Test cases adapted from the http-state cookie parser suite (Adam Barth, IETF http-state working group), as
# web-platform-tests carries it (cookies/http-state/, BSD-3-Clause) and tough-cookie ships it in one file
# (test/ietf_data/parser.json, MIT: (C) GoInstant, Inc. and other contributors), copied unchanged to
# files/http-state-parser.json, with its licence in files/http-state-parser.LICENSE.
"""Shared pieces of the http-state cookie parser conformance suite (docs/conformance.md).

Each case of files/http-state-parser.json is the Set-Cookie lines a server at http://home.example.org/cookie-parser
sends, and the cookies a browser then sends to http://home.example.org/cookie-parser-result (or the case's
`sent-to`, resolved against http://home.example.org). websec's answer is what its cookie jar (records/cookies.py
parsing and refusing, fetch/http.py ChainCookies storing and sending, the jar the scanner's requests and CORS
probes carry) puts in the Cookie header of that request; the suite's, its `sent` cookies joined as a Cookie header
("name=value; ..."). The suite dates from 2011: where it and Chromium 156 part, Chromium is the truth (RFC 6265bis)
and the case is a documented divergence. test_http_state_browser.py holds websec's answer to Chromium itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urljoin

from tests.factories import make_response
from websec_app.scanner.fetch.http import ChainCookies

HERE = Path(__file__).parent
SUITE = HERE / "files" / "http-state-parser.json"
#: Where every case's lines come from, and where its cookies are read back without a `sent-to`.
ORIGIN = "http://home.example.org"
SET_FROM = ORIGIN + "/cookie-parser?{test}"
SENT_TO = ORIGIN + "/cookie-parser-result?{test}"


@dataclass(frozen=True)
class SuiteCase:
    name: str  # "ATTRIBUTE0001"
    received: tuple[str, ...]  # the Set-Cookie lines, in order
    sent_to: str  # the absolute URL the cookies are read back at
    expected: str  # the Cookie header the suite expects ("" for none)

    @property
    def set_from(self) -> str:
        return SET_FROM.format(test=self.name)


def load_suite() -> dict[str, SuiteCase]:
    cases = {}
    for raw in json.loads(SUITE.read_text(encoding="utf-8")):
        name = raw["test"]
        sent_to = urljoin(ORIGIN, raw["sent-to"]) if "sent-to" in raw else SENT_TO.format(test=name)
        expected = "; ".join(cookie_pair(sent["name"], sent["value"]) for sent in raw["sent"])
        cases[name] = SuiteCase(name, tuple(raw["received"]), sent_to, expected)
    return cases


def cookie_pair(name: str, value: str) -> str:
    """One cookie in a Cookie header: a cookie without a name is sent as its value alone (6265bis 5.8.3)."""
    return f"{name}={value}" if name else value


def http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


def websec_sends(lines: tuple[str, ...], set_from: str, sent_to: str, now: datetime) -> str:
    """The Cookie header websec's jar sends to `sent_to` once a response from `set_from`, dated `now` (the instant
    its Expires dates are judged at, as a browser adjusts them by the server's Date), set `lines`."""
    jar = ChainCookies()
    # as fetch_one reads a response: each header's bytes (UTF-8 for the suite's CHARSET lines) as latin-1 text
    headers = [("Date", http_date(now)), *(("Set-Cookie", on_the_wire(line)) for line in lines)]
    jar.take(make_response(set_from, 200, headers))
    return (jar.header_for(sent_to) or "").encode("latin-1").decode("utf-8")


def on_the_wire(text: str) -> str:
    """`text` sent in UTF-8 and read back as a header value: the latin-1 text of its bytes."""
    return text.encode("utf-8").decode("latin-1")
