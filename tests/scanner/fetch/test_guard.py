"""The SSRF guard refuses every non-public address form, and allows them only when told to."""

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
    ("192.0.2.10", "private"),  # TEST-NET-1 documentation range
    ("198.18.0.1", "private"),  # benchmarking
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
    "address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"]
)
def test_given_public_address_when_guarded_then_it_is_allowed(address: str) -> None:
    assert refusal_reason(address) is None


@pytest.mark.parametrize("address", ["127.0.0.2", "10.0.0.1", "::1", "169.254.169.254", "::ffff:127.0.0.1"])
def test_given_private_targets_allowed_when_guarded_then_loopback_and_private_pass(address: str) -> None:
    assert refusal_reason(address, allow_private=True) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "224.0.0.1"])
def test_given_private_targets_allowed_then_unspecified_and_multicast_are_still_refused(address: str) -> None:
    assert refusal_reason(address, allow_private=True) is not None


def test_given_a_name_that_resolves_privately_then_the_message_names_both() -> None:
    with pytest.raises(TargetRefused, match=r"internal\.test resolves to 10\.0\.0\.1, which is a private address"):
        ensure_allowed("10.0.0.1", allow_private=False, host="internal.test")


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.", "app.localhost"])
def test_localhost_names_are_loopback_by_definition(host: str) -> None:
    assert is_localhost_name(host)
    assert not is_localhost_name("localhost.example.com")
