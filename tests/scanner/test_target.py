"""Parsing user input into the URL we scan (WHATWG host canonicalisation)."""

import re

import pytest

from websec_app.scanner.errors import InvalidTarget
from websec_app.scanner.target import _DNS_NAME_CHARACTERS, FORBIDDEN_DOMAIN_CODE_POINTS, parse_target


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("example.com", "https://example.com/"),
        ("  Example.COM./path?q=1#frag ", "https://example.com/path?q=1"),
        ("http://example.com:80/", "http://example.com/"),
        ("https://example.com:8443", "https://example.com:8443/"),
        ("bücher.example", "https://xn--bcher-kva.example/"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("example.com:8443/a", "https://example.com:8443/a"),
        # WHATWG: after a special scheme, any run of slashes and backslashes is skipped, as browsers do.
        ("https:example.com", "https://example.com/"),
        ("HTTP:/Example.com/a", "http://example.com/a"),
        ("https:\\\\example.com", "https://example.com/"),
        ("https:///example.com", "https://example.com/"),
    ],
)
def test_given_user_input_when_parsed_then_url_is_normalised(typed: str, url: str) -> None:
    assert parse_target(typed).url == url


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("a_b.example.com", "a_b.example.com"),
        ("_sip._tcp.example.com", "_sip._tcp.example.com"),
        ("r3---sn-4g5e6nsz.googlevideo.com", "r3---sn-4g5e6nsz.googlevideo.com"),
        ("-edge-.example.com", "-edge-.example.com"),
        ("ab--cd.example.com", "ab--cd.example.com"),
        ("A_B.Example.COM", "a_b.example.com"),
        ("ａ＿ｂ.example.com", "a_b.example.com"),  # fullwidth, mapped to ASCII first (UTS #46)
        ("a_b.bücher.example", "a_b.xn--bcher-kva.example"),
        ("XN--BCHER-KVA.example", "xn--bcher-kva.example"),
    ],
)
def test_given_a_name_browsers_accept_when_parsed_then_it_is_kept(host: str, canonical: str) -> None:
    """WHATWG URL "domain to ASCII": UTS #46 with CheckHyphens and UseSTD3ASCIIRules false, so an underscore
    or a hyphen at a label's edges or in its 3rd and 4th places is a name, as in Chromium and Firefox."""
    assert parse_target(f"https://{host}/").host == canonical


@pytest.mark.parametrize(
    "host",
    [
        "a<b.example.com",
        "a>b.example.com",
        "a^b.example.com",
        "a|b.example.com",
        # allowed by the URL Standard, but looked up by no browser (Chromium: letters, digits, - and _ only)
        *(f"a{c}b.example" for c in "!$&'()*+,;=~\"{}`"),
        "a%41.example.com",
        "a\x7fb.example.com",
        "ａ％ｂ.example.com",  # fullwidth percent sign, mapped to a forbidden one
        "xn---bbk.example",  # not the canonical Punycode of its label
        "xn--.example",
        "a" * 64 + ".example",
        ".".join(["a" * 63] * 4) + ".example",  # 261 characters: over DNS's 253
    ],
)
def test_given_a_host_with_a_forbidden_code_point_or_a_bad_label_when_parsed_then_it_is_invalid(host: str) -> None:
    """WHATWG URL's forbidden domain code points, characters no browser looks up, a malformed A-label, and
    DNS's label and name lengths."""
    with pytest.raises(InvalidTarget, match="is not a valid host name"):
        parse_target(f"https://{host}/")


@pytest.mark.parametrize(
    ("host", "named"),
    [
        ("a%41.example.com", "'%'"),
        ("ａ％ｂ.example.com", "'%'"),  # fullwidth, mapped to ASCII first (UTS #46)
        ("%31.0.0.1", "'%'"),
        ("a&b.1", "'&'"),  # ends in a number, so the URL Standard would try it as an IPv4 address
    ],
)
def test_given_a_host_with_a_character_no_name_holds_when_parsed_then_the_message_names_it(
    host: str, named: str
) -> None:
    """The characters are checked before the IPv4 number parse: the message names the character, not a bad
    IPv4 address."""
    with pytest.raises(InvalidTarget, match=re.escape(f"is not a valid host name (it contains {named})")):
        parse_target(f"https://{host}/")


def test_a_numeric_host_out_of_range_is_still_a_bad_ipv4_address() -> None:
    with pytest.raises(InvalidTarget, match="is not a valid IPv4 address"):
        parse_target("https://1.2.3.256/")


def test_no_forbidden_domain_code_point_is_a_dns_name_character() -> None:
    # records/location.py refuses a Location's host by the URL Standard's set; a target's host by the stricter one
    assert FORBIDDEN_DOMAIN_CODE_POINTS.isdisjoint(_DNS_NAME_CHARACTERS)


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("2130706433", "127.0.0.1"),  # one 32-bit decimal number
        ("0x7f.1", "127.0.0.1"),  # hex first part, last part fills three bytes
        ("017700000001", "127.0.0.1"),  # octal
        ("0x7f000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("3232235777", "192.168.1.1"),
        ("134744072", "8.8.8.8"),
        ("１２７.０.０.１", "127.0.0.1"),  # fullwidth digits map to ASCII first (UTS #46)
        ("²", "0.0.0.2"),
    ],
)
def test_given_numeric_host_forms_when_parsed_then_they_become_dotted_quads(host: str, canonical: str) -> None:
    assert parse_target(f"http://{host}/").host == canonical


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "   ",
        "ftp://example.com/",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://user:pw@example.com/",
        "https://example.com:99999/",
        "https://256.256.256.256.256/",
        "http://0x100000000/",
        "https://exa mple.com/",
        "https://",
        "https:",
        "https://" + "a" * 64 + ".com/",
    ],
)
def test_given_invalid_input_when_parsed_then_invalid_target_is_raised(typed: str) -> None:
    with pytest.raises(InvalidTarget):
        parse_target(typed)
