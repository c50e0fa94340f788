"""Which cookies Chromium's cookie store keeps when a site sets more than it holds.

net/cookies/cookie_monster.cc (Chromium 156), as tests/scanner/test_cookie_jar_browser.py checks it:

- Cookies are counted per site: the registrable domain of the cookie's domain (`GetKey`), host-only and
  Domain cookies together. Past 180 (`kDomainMaxCookies`) the store evicts down to 150
  (`kDomainPurgeCookies` = 30 below the bound) at once, least recently used first (the last time a cookie was
  set or replaced; sending it refreshes that only after a minute, which a scan never lasts).
- It evicts in six rounds (`GarbageCollect`): Low-priority cookies without Secure, then Low with Secure, then
  Medium without, High without, Medium with, High with (the `Priority` attribute, Medium by default). Each round
  spares the 30 Low, 50 Medium or 70 High most recent cookies of its priority (`kDomainCookiesQuota*`), and
  a round without Secure also spares as many as there are Secure cookies of that priority
  (`PurgeLeastRecentMatches`). So 180 Secure cookies and a session cookie without Secure after them leave the
  session cookie out, while 180 cookies without Secure before it keep it and drop the 31 oldest.
- Partitioned cookies (CHIPS) are kept apart, per top-level site and site, at most 180 and 10,240 bytes of
  names and values (`kPerPartitionDomainMaxCookies`, `kPerPartitionDomainMaxCookieBytes`), least recently used
  out first, down to the bounds only.
- A cookie set again (same name, domain, host-only flag and path: `records.cookies.storage_key`) replaces the
  one stored and becomes the most recent; a line whose expiry is past deletes it.

The store knows each cookie only by the token its caller gives; `set` and `delete` return the tokens that
left it, so a caller learns which lines were evicted and which were replaced.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, NamedTuple, TypeVar

__all__ = ["DOMAIN_MAX_COOKIES", "ChromiumCookieJar", "Departure", "StoredCookie"]

T = TypeVar("T")

#: kDomainMaxCookies: past this many cookies for a site, the store evicts.
DOMAIN_MAX_COOKIES = 180
#: kDomainPurgeCookies: it evicts this many below the bound at once (to 150).
_DOMAIN_PURGE_COOKIES = 30
#: kDomainCookiesQuotaLow / Medium / High: the most recent cookies of each priority a round spares.
_QUOTAS = {"Low": 30, "Medium": 50, "High": DOMAIN_MAX_COOKIES - _DOMAIN_PURGE_COOKIES - 30 - 50}
#: The rounds of GarbageCollect: (priority, whether Secure cookies are spared).
_PURGE_ROUNDS = (
    ("Low", True),
    ("Low", False),
    ("Medium", True),
    ("High", True),
    ("Medium", False),
    ("High", False),
)
#: kPerPartitionDomainMaxCookies and kPerPartitionDomainMaxCookieBytes, for partitioned cookies.
_PARTITION_MAX_COOKIES = 180
_PARTITION_MAX_BYTES = 10_240


class StoredCookie(NamedTuple, Generic[T]):
    """What the store weighs of a cookie: its Secure flag, its Priority, the bytes of its name and value (a tuple:
    one is made for every line of a flood)."""

    token: T
    secure: bool
    priority: str  # "Low" | "Medium" | "High"
    size: int


class Departure(NamedTuple, Generic[T]):
    """The cookies that left the store on one `set` or `delete`: the one it replaced and those it evicted."""

    replaced: T | None
    evicted: tuple[T, ...]


class ChromiumCookieJar(Generic[T]):
    """One browser context's cookie store over one visit, empty at the start.

    `site` is the registrable domain of the cookie's domain (the store's key); `partition` the top-level site of
    a partitioned cookie, None for the others; `key` the cookie's identity (a later cookie of the same key in the
    same place replaces it).
    """

    def __init__(self) -> None:
        self._places: dict[tuple[str, str | None], _Place[T]] = {}

    def set(self, site: str, partition: str | None, key: Hashable, cookie: StoredCookie[T]) -> Departure[T]:
        place = self._places.get((site, partition))
        if place is None:
            place = self._places[site, partition] = _Place()
        old = place.pop(key)
        place.put(key, cookie)
        if partition is not None:
            evicted = place.evict_partitioned()
        else:
            evicted = place.evict() if len(place.cookies) > DOMAIN_MAX_COOKIES else ()
        return Departure(old.token if old else None, evicted)

    def delete(self, site: str, partition: str | None, key: Hashable) -> Departure[T]:
        place = self._places.get((site, partition))
        old = place.pop(key) if place is not None else None
        return Departure(old.token if old else None, ())


class _Place(Generic[T]):
    """The cookies of one site (and partition), least recently set first; how many of each priority there are, and
    of those how many Secure; the bytes of their names and values."""

    def __init__(self) -> None:
        self.cookies: dict[Hashable, StoredCookie[T]] = {}
        self.count = {"Low": 0, "Medium": 0, "High": 0}
        self.secure = {"Low": 0, "Medium": 0, "High": 0}
        self.size = 0

    def put(self, key: Hashable, cookie: StoredCookie[T]) -> None:
        self.cookies[key] = cookie  # a new key goes last: the most recently set
        self._tally(cookie, 1)

    def pop(self, key: Hashable) -> StoredCookie[T] | None:
        cookie = self.cookies.pop(key, None)
        if cookie is not None:
            self._tally(cookie, -1)
        return cookie

    def _tally(self, cookie: StoredCookie[T], step: int) -> None:
        self.count[cookie.priority] += step
        if cookie.secure:
            self.secure[cookie.priority] += step
        self.size += step * cookie.size

    def evict(self) -> tuple[T, ...]:
        """GarbageCollect for one site: past 180 cookies, evict down to 150 in its six rounds."""
        if len(self.cookies) <= DOMAIN_MAX_COOKIES:
            return ()
        goal = len(self.cookies) - (DOMAIN_MAX_COOKIES - _DOMAIN_PURGE_COOKIES)
        evicted: list[T] = []
        for priority, spare_secure in _PURGE_ROUNDS:
            quota, at_priority = _QUOTAS[priority], self.count[priority]
            if goal == 0 or at_priority <= quota:
                continue
            spared = max(self.secure[priority], quota) if spare_secure else quota
            deletable = min(goal, at_priority - spared)
            going: list[Hashable] = []
            for key, cookie in self.cookies.items():  # the least recently set first
                if len(going) == deletable:
                    break
                if cookie.priority == priority and not (spare_secure and cookie.secure):
                    going.append(key)
            for key in going:
                evicted.append(self.cookies[key].token)
                self.pop(key)
            goal -= len(going)
        return tuple(evicted)

    def evict_partitioned(self) -> tuple[T, ...]:
        """GarbageCollectPartitionedCookies: the least recently set out until 180 cookies and 10,240 bytes."""
        evicted: list[T] = []
        while len(self.cookies) > _PARTITION_MAX_COOKIES or self.size > _PARTITION_MAX_BYTES:
            key, cookie = next(iter(self.cookies.items()))
            self.pop(key)
            evicted.append(cookie.token)
        return tuple(evicted)
