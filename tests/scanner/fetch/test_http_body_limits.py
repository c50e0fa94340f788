"""Decompression bombs against the fetch layer: the body is cut while it is decoded, the process
memory stays bounded, and the snapshot says why the body was cut (issue 12).

Memory is measured as the growth of the process's peak resident set (VmHWM, reset through
/proc/self/clear_refs, proc(5)) over its resident set before the fetch: a ceiling, not a timing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import zlib
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from tests.fixtures.bombs import GIB, bomb_site, chained_gzip_bomb, deflate_bomb, gzip_bomb, gzip_page
from tests.fixtures.sites import RunningSite, SiteFactory
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import HttpResponse
from websec_app.settings import ScanLimits, Settings

if TYPE_CHECKING:
    from websec_app.scanner.fetch.body import BodyDecoder

RATIO_FLOOR = 256 * 1024  # body.py's: the ratio cap allows this much however small the body

T = TypeVar("T")
MIB = 1024 * 1024
MEMORY_CEILING = 100 * MIB  # growth allowed around one fetch; the old code grew by 2.8 GB
FAILSAFE_SECONDS = 60  # only so a regression fails instead of hanging the suite


def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


async def peak_growth(work: Awaitable[T]) -> tuple[T, int]:
    """`work`'s result and how far the process's peak RSS rose above its RSS before it."""
    Path("/proc/self/clear_refs").write_text("5")  # proc(5): resets VmHWM to the current RSS
    before = _status_bytes("VmRSS")
    result = await asyncio.wait_for(work, FAILSAFE_SECONDS)
    return result, _status_bytes("VmHWM") - before


@pytest.fixture(scope="module")
def bombs(site_factory: SiteFactory) -> RunningSite:
    for build in (gzip_bomb, deflate_bomb, chained_gzip_bomb):
        build()  # compress before any measurement
    deflate_bomb(raw=True)
    gzip_bomb(64 * MIB)
    return site_factory(bomb_site(site_factory.unique_host("bombs")))


def limited(settings: Settings, **limits: float) -> Settings:
    return dataclasses.replace(settings, limits=dataclasses.replace(ScanLimits(), **limits))


async def fetch(url: str, settings: Settings) -> HttpResponse:
    pinner = Pinner(Resolver(settings), settings)
    async with make_client(pinner, settings) as client:
        chain = await fetch_chain(client, pinner, url, settings.limits, raise_on_first_hop=True)
    assert chain.final is not None
    return chain.final


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/deflate-raw"])
async def test_a_1_gib_bomb_in_one_coding_is_cut_by_the_ratio_cap_with_memory_bounded(
    path: str, bombs: RunningSite, scan_settings: Settings
) -> None:
    # Given 1 GiB of zeros compressed about 1,000 to 1
    # When the page is fetched
    response, growth = await peak_growth(fetch(bombs.http_url + path.lstrip("/"), scan_settings))
    # Then decoding stopped early, the body was cut and the snapshot says why
    assert growth < MEMORY_CEILING, f"peak RSS grew by {growth / MIB:.0f} MiB"
    assert response.body_truncated
    assert response.body_note is not None and "decompression bomb" in response.body_note
    assert 0 < len(response.body) <= scan_settings.limits.max_body_bytes
    assert set(response.body) == {0}  # what was kept is the decoded start of the body


async def test_a_chained_gzip_gzip_bomb_is_cut_by_the_ratio_cap_with_memory_bounded(
    bombs: RunningSite, scan_settings: Settings
) -> None:
    # Given 1,8 KB that decodes to 1 GiB through `Content-Encoding: gzip, gzip`
    response, growth = await peak_growth(fetch(bombs.http_url + "gzip-gzip", scan_settings))
    # Then the chain is decoded as browsers decode it, each coding within the one budget: the bomb is cut
    assert growth < MEMORY_CEILING, f"peak RSS grew by {growth / MIB:.0f} MiB"
    assert response.body_truncated
    assert response.body_note is not None and "decompression bomb" in response.body_note
    assert 0 < len(response.body) <= scan_settings.limits.max_body_bytes
    assert set(response.body) == {0}


@pytest.mark.parametrize(("path", "coding"), [("/br", "br"), ("/zstd", "zstd"), ("/x-gzip-then-br", "x-gzip, br")])
async def test_a_coding_the_scanner_did_not_ask_for_is_kept_undecoded_and_cut(
    path: str, coding: str, bombs: RunningSite, scan_settings: Settings
) -> None:
    settings = limited(scan_settings, max_body_bytes=64 * 1024)
    response, growth = await peak_growth(fetch(bombs.http_url + path.lstrip("/"), settings))
    assert growth < MEMORY_CEILING
    assert response.body_note is not None and coding in response.body_note
    assert len(response.body) <= 64 * 1024


async def test_with_a_large_body_limit_the_ratio_cap_still_stops_the_bomb(
    bombs: RunningSite, scan_settings: Settings
) -> None:
    # Given a body limit far above the ratio cap's floor
    settings = limited(scan_settings, max_body_bytes=512 * MIB)
    response, growth = await peak_growth(fetch(bombs.http_url + "gzip", settings))
    # Then the ratio, not the size, stops it, long before the limit
    assert growth < MEMORY_CEILING, f"peak RSS grew by {growth / MIB:.0f} MiB"
    assert response.body_truncated and len(response.body) < 8 * MIB
    assert response.body_note is not None and "more than 100 times" in response.body_note


async def test_a_bomb_dripped_slowly_is_cut_at_the_first_drop(bombs: RunningSite, scan_settings: Settings) -> None:
    settings = limited(scan_settings, read_seconds=5.0)
    response, growth = await peak_growth(fetch(bombs.http_url + "drip", settings))
    assert growth < MEMORY_CEILING
    assert response.body_truncated
    assert response.body_note is not None and "decompression bomb" in response.body_note


async def test_a_gzip_page_that_compresses_well_is_decoded_whole(bombs: RunningSite, scan_settings: Settings) -> None:
    response = await fetch(bombs.http_url + "page", scan_settings)
    assert response.body.startswith(b"<!doctype html><title>fine</title>")
    assert len(response.body) == len(b"<!doctype html><title>fine</title>") + 2000 * len(b"<p>hello</p>")
    assert not response.body_truncated and response.body_note is None


# -- the decoder on its own ---------------------------------------------------------------------


def decoder_for(coding: str | None, max_body: int) -> BodyDecoder:
    from websec_app.scanner.fetch.body import BodyDecoder  # imported here so the fetch tests run on the old code

    return BodyDecoder(coding, max_body=max_body)


def feed_all(decoder: BodyDecoder, data: bytes, step: int) -> BodyDecoder:
    for start in range(0, len(data), step):
        if decoder.feed(data[start : start + step]):
            break
    decoder.finish()
    return decoder


@pytest.mark.parametrize("step", [1, 7, 65536])
@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "deflate-raw", "identity", ""])
def test_every_supported_coding_decodes_in_any_chunking(coding: str, step: int) -> None:
    page = b"<!doctype html><p>" + bytes(range(256)) * 40 + b"</p>"
    wbits = {"gzip": 31, "x-gzip": 31, "deflate": 15, "deflate-raw": -15}.get(coding)
    if wbits is None:
        wire = page
    else:
        compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
        wire = compressor.compress(page) + compressor.flush()
    header = "deflate" if coding == "deflate-raw" else coding
    decoder = feed_all(decoder_for(header or None, 1 * MIB), wire, step)
    assert bytes(decoder.body) == page
    assert not decoder.truncated and decoder.note is None


def _encoded_with(codings: str, content: bytes) -> bytes:
    """`content` with the codings of a Content-Encoding value applied in order."""
    wire = content
    for coding in (c.strip() for c in codings.split(",")):
        wbits = {"gzip": 31, "x-gzip": 31, "deflate": 15, "deflate-raw": -15}[coding]
        compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
        wire = compressor.compress(wire) + compressor.flush()
    return wire


@pytest.mark.parametrize("step", [1, 7, 65536])
@pytest.mark.parametrize("codings", ["gzip, gzip", "deflate, gzip", "gzip, deflate-raw", "x-gzip, deflate, gzip"])
def test_a_chain_of_up_to_three_codings_decodes_in_any_chunking(codings: str, step: int) -> None:
    # As Chromium decodes `Content-Encoding: gzip, gzip` (RFC 9110 8.4: the codings in the order applied)
    page = b"<!doctype html><p>" + bytes(range(256)) * 40 + b"</p>"
    decoder = feed_all(
        decoder_for(codings.replace("deflate-raw", "deflate"), 1 * MIB), _encoded_with(codings, page), step
    )
    assert bytes(decoder.body) == page
    assert not decoder.truncated and decoder.note is None


def test_what_follows_the_outer_member_of_a_chain_is_not_read() -> None:
    # Given gzip of gzip followed by junk (a server could send it forever)
    decoder = decoder_for("gzip, gzip", MIB)
    # Then the body is whole once the outer member ends, and no more is asked for
    assert decoder.feed(_encoded_with("gzip, gzip", b"<p>one</p>") + b"junk")
    assert bytes(decoder.body) == b"<p>one</p>" and not decoder.truncated


def test_a_chain_of_four_codings_is_kept_as_sent() -> None:
    wire = _encoded_with("gzip, gzip, gzip, gzip", b"<p>hello</p>")
    decoder = feed_all(decoder_for("gzip, gzip, gzip, gzip", MIB), wire, 4096)
    assert bytes(decoder.body) == wire
    assert decoder.note is not None and "at most 3" in decoder.note


@pytest.mark.parametrize("max_body", [1000, 300 * 1024])
def test_no_step_of_a_chain_produces_more_than_the_remaining_budget(max_body: int) -> None:
    decoder = decoder_for("gzip, gzip", max_body)
    done = decoder.feed(chained_gzip_bomb(GIB))
    assert done and decoder.truncated and len(decoder.body) == min(max_body, RATIO_FLOOR)


def test_no_single_step_produces_more_than_the_remaining_budget() -> None:
    decoder = decoder_for("gzip", 1000)
    done = decoder.feed(gzip_bomb(GIB))
    assert done and decoder.truncated and len(decoder.body) == 1000


def test_a_corrupt_gzip_body_keeps_what_was_decoded_and_says_so() -> None:
    wire = bytearray(gzip_page(b"<p>hello</p>" * 100))
    wire[30:40] = b"\xff" * 10
    decoder = feed_all(decoder_for("gzip", MIB), bytes(wire), 16)
    assert decoder.truncated
    assert decoder.note is not None and "could not be decoded" in decoder.note


def test_trailing_bytes_after_the_gzip_member_are_ignored() -> None:
    decoder = feed_all(decoder_for("gzip", MIB), gzip_page(b"<p>one</p>") + b"garbage", 4096)
    assert bytes(decoder.body) == b"<p>one</p>" and not decoder.truncated
