"""Which cookies Chromium's cookie store evicts past 180 for a site (records/cookie_jar.py), case by case; the same
cases and seeded mixes are held to Chromium 156 itself in tests/scanner/test_cookie_jar_browser.py."""

from __future__ import annotations

from websec_app.scanner.records.cookie_jar import ChromiumCookieJar, StoredCookie


def kept(*cookies: tuple[str, bool, str], partitioned: bool = False, size: int = 2) -> list[str]:
    """What a fresh store keeps of these (name, Secure, Priority) cookies of one site, set in this order."""
    jar: ChromiumCookieJar[str] = ChromiumCookieJar()
    partition = "example.com" if partitioned else None
    names = [name for name, _, _ in cookies]
    for name, secure, priority in cookies:
        departure = jar.set("example.com", partition, name, StoredCookie(name, secure, priority, size))
        for gone in departure.evicted:
            names.remove(gone)
    return names


def numbered(prefix: str, count: int, secure: bool = False, priority: str = "Medium") -> list[tuple[str, bool, str]]:
    return [(f"{prefix}{i:03d}", secure, priority) for i in range(count)]


def test_past_180_the_31_least_recently_set_go_at_once() -> None:
    assert kept(*numbered("c", 180)) == [f"c{i:03d}" for i in range(180)]
    assert kept(*numbered("c", 181)) == [f"c{i:03d}" for i in range(31, 181)]
    assert kept(*numbered("c", 200)) == [f"c{i:03d}" for i in range(31, 200)]


def test_secure_cookies_are_spared_while_others_of_their_priority_can_go() -> None:
    # 180 Secure cookies, then one without: that one goes, then the 30 oldest Secure ones
    assert kept(*numbered("c", 180, secure=True), ("sessionid", False, "Medium")) == [
        f"c{i:03d}" for i in range(30, 180)
    ]


def test_low_priority_goes_first_however_recent_and_low_with_secure_before_medium_without() -> None:
    assert kept(*numbered("h", 100, priority="High"), *numbered("l", 81, priority="Low")) == [
        *(f"h{i:03d}" for i in range(100)),
        *(f"l{i:03d}" for i in range(31, 81)),
    ]
    # round 2 (Low, Secure) spares its 30 most recent, and round 3 (Medium without Secure) takes the last one
    assert kept(*numbered("l", 60, secure=True, priority="Low"), *numbered("m", 121)) == [
        *(f"l{i:03d}" for i in range(30, 60)),
        *(f"m{i:03d}" for i in range(1, 121)),
    ]


def test_a_cookie_set_again_is_the_most_recent() -> None:
    jar: ChromiumCookieJar[str] = ChromiumCookieJar()
    for name in [f"c{i:03d}" for i in range(180)] + ["c000"]:
        assert jar.set("example.com", None, name, StoredCookie(name, False, "Medium", 2)).evicted == ()
    departure = jar.set("example.com", None, "c180", StoredCookie("c180", False, "Medium", 2))
    assert departure.evicted == tuple(f"c{i:03d}" for i in range(1, 32))


def test_sites_and_partitions_are_counted_apart() -> None:
    jar: ChromiumCookieJar[str] = ChromiumCookieJar()
    for i in range(180):
        jar.set("example.com", None, f"a{i}", StoredCookie(f"a{i}", False, "Medium", 2))
        jar.set("example.org", None, f"b{i}", StoredCookie(f"b{i}", False, "Medium", 2))
        jar.set("example.com", "example.com", f"p{i}", StoredCookie(f"p{i}", True, "Medium", 2))
    assert jar.set("example.com", None, "a180", StoredCookie("a180", False, "Medium", 2)).evicted[0] == "a0"


def test_partitioned_cookies_go_one_by_one_past_180_or_10240_bytes() -> None:
    assert kept(*numbered("p", 200, secure=True), partitioned=True) == [f"p{i:03d}" for i in range(20, 200)]
    assert kept(*numbered("p", 120, secure=True), partitioned=True, size=104) == [f"p{i:03d}" for i in range(22, 120)]
