"""h11 reads a response header value holding a form feed or vertical tab, as Chromium does, instead of refusing it.

h11 (0.16) matches each header line against `_readers.header_field_re`, whose field-vchar is `[^\\x00\\s]`: in a
bytes pattern `\\s` holds \\f and \\v, so a line such as `X-Content-Type-Options: nosniff\\v` made the whole response
a RemoteProtocolError and the site could not be scanned at all, where Chromium 156 loads the page and reads the
value as sent (it applies no nosniff there: tests/conformance/test_wpt_headers_browser.py, web-platform-tests'
x-content-type-options.json). h11 already takes every other control character in a value (its issue #57: real
sites send them) and refuses NUL, CR and LF, which Chromium refuses or ends the line at too; those stay refused.

`install()` puts in its place the same pattern with \\f and \\v among the field-vchars. OWS stays spaces and tabs, so
both are kept in the value, where Chromium keeps them (`nosniff\\f` is not nosniff to it). Only receiving changes:
h11 still validates the header values websec sends. The replacement is process-wide (every h11 connection in the
process reads such a line), and made only for the h11 versions it was checked against, whose pattern is still
the one built from `_abnf` (tests/scanner/fetch/test_header_control_characters.py fails when the installed one
is not).
"""

from __future__ import annotations

import re

#: h11 versions whose `_readers.header_field_re` this was checked against.
SUPPORTED = ("0.16.",)
#: RFC 9110 5.5's field-vchar as Chromium reads it: any byte but NUL, CR, LF and the OWS around values.
_FIELD_VCHAR = r"[^\x00\r\n \t]"


def lenient_header_field() -> bytes:
    """h11's header-line pattern (`_abnf.header_field`) with \\f and \\v allowed in the value, and its runs matched
    possessively. h11's own backtracks: its OWS runs on both sides of an optional value meet on a line of spaces,
    and a line of 90 KiB of spaces ending in a NUL (httpcore reads header blocks up to 100 KiB) held the whole
    process's event loop for 15.6 s. A run of spaces or of value characters has one reading here (the value
    neither starts nor ends with OWS), so taking each run whole matches exactly the lines h11's pattern
    matches, with the same groups, in one pass (tests/scanner/test_regex_backtracking.py)."""
    from h11 import _abnf

    field_content = rf"{_FIELD_VCHAR}++(?:[ \t]++{_FIELD_VCHAR}++)*+"
    ows = r"[ \t]*+"
    return rf"(?P<field_name>{_abnf.field_name}):{ows}(?P<field_value>({field_content})?){ows}".encode("ascii")


def install() -> bool:
    """Give h11's reader the lenient header-line pattern; False, with h11 left as it is, for a version this was not
    written against."""
    from h11 import _abnf, _readers
    from h11._version import __version__

    current = getattr(_readers, "header_field_re", None)
    if not __version__.startswith(SUPPORTED) or not isinstance(current, re.Pattern):
        return False
    if current.pattern != _abnf.header_field.encode("ascii"):
        return False
    _readers.header_field_re = re.compile(lenient_header_field())
    return True


INSTALLED = install()
