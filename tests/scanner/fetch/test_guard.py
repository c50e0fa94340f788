"""The SSRF guard refuses every non-public address form, and allows them only when told to."""

import ipaddress
import re

import pytest

from websec_app.scanner.errors import TargetRefused
from websec_app.scanner.fetch.guard import ensure_allowed, is_localhost_name, refusal_reason

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.10", "documentation"),  # TEST-NET-1, RFC 5737
    ("198.51.100.7", "documentation"),  # TEST-NET-2, RFC 5737
    ("203.0.113.9", "documentation"),  # TEST-NET-3, RFC 5737
    ("198.18.0.1", "benchmarking"),  # RFC 2544
    ("198.19.255.254", "benchmarking"),
    ("192.88.99.1", "6to4 relay anycast"),  # RFC 7526 deprecated the range
    ("192.88.99.255", "6to4 relay anycast"),
    ("2002:c058:6301::1", "6to4 form of 192.88.99.1"),
    ("192.0.0.1", "IETF protocol assignment"),  # RFC 6890 2.2.2
    ("192.0.0.9", "IETF protocol assignment"),  # PCP anycast, RFC 7723: a service, not a website
    ("192.0.0.10", "IETF protocol assignment"),  # TURN anycast, RFC 8155
    ("192.0.0.171", "IETF protocol assignment"),  # NAT64 discovery, RFC 7050
    ("100.64.0.0", "carrier-grade NAT"),
    ("240.0.0.0", "reserved"),
    ("254.255.255.255", "reserved"),
    ("0.1.2.3", "this-network"),  # RFC 791, RFC 6890
    ("2001:2::1", "benchmarking"),  # RFC 5180
    ("2001:db8::1", "documentation"),  # RFC 3849
    ("3fff::1", "documentation"),  # RFC 9637
    ("3fff:fff:ffff::1", "documentation"),
    ("5f00::1", "SRv6"),  # RFC 9602
    ("5f00:ffff::1", "SRv6"),
    ("100::1", "discard-only"),  # RFC 6666
    ("100:0:0:1::1", "dummy"),  # RFC 9780
    ("fec0::1", "site-local"),  # RFC 3879
    ("2001:10::1", "ORCHID"),  # RFC 4843, deprecated
    ("2001:20::1", "ORCHID"),  # RFC 7343: identifiers, not routable locators
    ("64:ff9b:1::c000:201", "NAT64"),  # RFC 8215 local-use NAT64, whatever it embeds
    ("64:ff9b:1::808:808", "NAT64"),
    ("169.254.169.254", "cloud metadata"),
    ("100.100.100.200", "Alibaba"),
    ("fd00:ec2::254", "AWS IPv6 metadata"),
    ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"),
    ("::ffff:10.1.2.3", "IPv4-mapped"),
    ("::ffff:169.254.169.254", "metadata"),
    ("2002:7f00:1::", "6to4 form of 127.0.0.1"),
    ("2002:a00:1::1", "6to4 form of 10.0.0.1"),
    ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
    ("64:ff9b:1::a00:1", "NAT64"),
    ("::127.0.0.1", "IPv4-compatible form of 127.0.0.1"),
]


@pytest.mark.parametrize(("address", "words"), REFUSED)
def test_given_non_public_address_when_guarded_then_it_is_refused_with_a_reason(address: str, words: str) -> None:
    reason = refusal_reason(address)
    assert reason is not None
    assert words in reason
    with pytest.raises(TargetRefused, match="Only public addresses"):
        ensure_allowed(address, allow_private=False)


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "2606:4700::1111",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "192.88.98.255",  # either side of the 6to4 relay range
        "192.88.100.0",
        "192.0.1.255",  # either side of 192.0.0.0/24
        "198.17.255.255",  # either side of the benchmarking /15
        "198.20.0.0",
        "3fff:1000::1",  # just past 3fff::/20
        "2a00:1450:4001::1",
        "2001:4860:4860::8888",
    ],
)
def test_given_public_address_when_guarded_then_it_is_allowed(address: str) -> None:
    assert refusal_reason(address) is None


@pytest.mark.parametrize("address", ["127.0.0.2", "10.0.0.1", "::1", "169.254.169.254", "::ffff:127.0.0.1"])
def test_given_private_targets_allowed_when_guarded_then_loopback_and_private_pass(address: str) -> None:
    assert refusal_reason(address, allow_private=True) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "224.0.0.1"])
def test_given_private_targets_allowed_then_unspecified_and_multicast_are_still_refused(address: str) -> None:
    assert refusal_reason(address, allow_private=True) is not None


@pytest.mark.parametrize(
    "address", ["10.0.0.5", "127.0.0.1", "169.254.169.254", "::ffff:10.0.0.5", "2002:a00:5::1", "fd00:ec2::254"]
)
def test_given_a_name_that_resolves_privately_then_the_message_never_reveals_the_address(address: str) -> None:
    with pytest.raises(TargetRefused) as refused:
        ensure_allowed(address, allow_private=False, host="tenpriv.test")
    message = str(refused.value)
    assert message == (
        "Refusing to scan: tenpriv.test resolves to a private or reserved address."
        " Only public addresses can be scanned."
    )
    embedded = ipaddress.ip_address(address)
    for form in {address, str(embedded), "10.0.0.5", "a00:5", "metadata", "loopback", "link-local"}:
        assert form not in message


@pytest.mark.parametrize(("address", "shown"), [("10.0.0.5", "10.0.0.5"), ("::ffff:127.0.0.1", "127.0.0.1")])
def test_given_an_address_the_user_typed_then_the_message_names_it(address: str, shown: str) -> None:
    with pytest.raises(TargetRefused, match=re.escape(shown)):
        ensure_allowed(address, allow_private=False)
    with pytest.raises(TargetRefused, match=re.escape(shown)):
        ensure_allowed(address, allow_private=False, host=address)


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.", "app.localhost"])
def test_localhost_names_are_loopback_by_definition(host: str) -> None:
    assert is_localhost_name(host)
    assert not is_localhost_name("localhost.example.com")
