"""Parsing user input into the URL we scan (WHATWG host canonicalisation)."""

import pytest

from websec_app.scanner.errors import InvalidTarget
from websec_app.scanner.target import parse_target


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
