"""With WEBSEC_ALLOW_PRIVATE_TARGETS=1, `localhost` and hosts-file names resolve as the system would;
without it nothing changes and the guard refuses them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.fixtures.sites import Site, html
from websec_app.scanner import TargetRefused, TargetUnreachable, scan
from websec_app.scanner.fetch.resolve import Pinner, Resolver, parse_hosts
from websec_app.settings import Settings

HOSTS = """\
# /etc/hosts of a developer machine
127.0.0.1\tlocalhost
127.0.1.1   devbox.example devbox   # the machine itself
10.20.30.40 MyApp.Internal  api.myapp.internal
::1     ip6-localhost ip6-loopback
fe00::0 ip6-localnet
fd12:3456::7 v6only.internal
192.168.7.7 twice.internal
fd00::7 twice.internal
not-an-address broken.internal
fe80::1%eth0 zoned.internal
   # an indented comment line

10.9.9.9
"""


def test_parse_hosts_reads_comments_aliases_ipv6_and_skips_junk() -> None:
    table = parse_hosts(HOSTS)
    assert table["devbox.example"] == ("127.0.1.1",) and table["devbox"] == ("127.0.1.1",)
    assert table["myapp.internal"] == ("10.20.30.40",)  # names compare case-insensitively
    assert table["api.myapp.internal"] == ("10.20.30.40",)
    assert table["v6only.internal"] == ("fd12:3456::7",)
    assert table["twice.internal"] == ("192.168.7.7", "fd00::7")  # every line, in file order
    assert "broken.internal" not in table and "zoned.internal" not in table
    assert "#" not in table and "the" not in table and "machine" not in table


@pytest.fixture
def hosts_file(tmp_path: Path) -> Path:
    path = tmp_path / "hosts"
    path.write_text(HOSTS, encoding="utf-8")
    return path


@pytest.fixture
def guarded(scan_settings: Settings) -> Settings:
    return dataclasses.replace(scan_settings, allow_private_targets=False)


async def test_given_private_targets_allowed_when_a_hosts_name_is_pinned_then_the_file_answers(
    scan_settings, hosts_file
) -> None:
    pinner = Pinner(Resolver(scan_settings, hosts_file=hosts_file), scan_settings)
    assert await pinner.pin("myapp.internal") == "10.20.30.40"
    assert await pinner.pin("API.MyApp.Internal.") == "10.20.30.40"
    assert await pinner.pin("v6only.internal") == "fd12:3456::7"
    assert await pinner.pin("twice.internal") == "192.168.7.7"  # IPv4 first, as for DNS answers


async def test_given_private_targets_allowed_localhost_is_always_loopback(scan_settings, tmp_path) -> None:
    # RFC 6761 6.3: even a hosts file that says otherwise (or none at all) cannot move localhost
    odd = tmp_path / "hosts"
    odd.write_text("10.1.1.1 localhost app.localhost\n", encoding="utf-8")
    for hosts in (odd, tmp_path / "missing"):
        pinner = Pinner(Resolver(scan_settings, hosts_file=hosts), scan_settings)
        assert await pinner.pin("localhost") == "127.0.0.1"
        assert await pinner.pin("app.localhost") == "127.0.0.1"


async def test_given_private_targets_refused_then_hosts_names_are_not_read_and_localhost_is_refused(
    guarded, hosts_file
) -> None:
    pinner = Pinner(Resolver(guarded, hosts_file=hosts_file), guarded)
    with pytest.raises(TargetRefused) as refused:
        await pinner.pin("localhost")
    assert "loopback" in str(refused.value)
    # Not in the fixture DNS: the hosts file is not consulted, so the name does not exist
    with pytest.raises(TargetUnreachable) as missing:
        await pinner.pin("myapp.internal")
    assert "10.20.30.40" not in str(missing.value)


async def test_given_private_targets_allowed_when_localhost_is_scanned_then_a_report(
    site_factory, scan_settings
) -> None:
    # Given a plain-HTTP site on 127.0.0.1 (what `localhost` means)
    site = site_factory(
        Site(
            names=(site_factory.unique_host("localhost-app"),),
            ip="127.0.0.1",
            tls=None,
            http={"/": html("<title>local</title>")},
            http_port=0,
            https_port=0,
        )
    )
    url = f"http://localhost:{site.http_port}/"
    report = await scan(url, scan_settings)
    assert report.status_code == 200 and report.final_url == url


async def test_given_private_targets_refused_when_localhost_is_scanned_then_refused(guarded) -> None:
    with pytest.raises(TargetRefused) as refused:
        await scan("http://localhost:8080/", guarded)
    assert "loopback" in str(refused.value)
