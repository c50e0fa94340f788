"""The parse cache of data files (rule tables, block pages, the Public Suffix List): same answers as a parse."""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

import pytest

from websec_app.scanner import parsed_cache
from websec_app.scanner.parsed_cache import cached
from websec_app.scanner.rule_files import RULES_DIR, parse_rule_files, rule_tables


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caches written under tmp_path (as with PYTHONPYCACHEPREFIX), byte-code writing on."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path


def test_a_cached_value_is_read_back_without_building(cache_dir: Path) -> None:
    source = cache_dir / "data.txt"
    source.write_text("one")
    builds: list[str] = []

    def build() -> dict[str, str]:
        builds.append(source.read_text())
        return {"value": source.read_text()}

    assert cached("t", [source], build) == {"value": "one"}
    assert cached("t", [source], build) == {"value": "one"}
    assert builds == ["one"]


def test_a_changed_source_or_key_is_parsed_again(cache_dir: Path) -> None:
    source = cache_dir / "data.txt"
    source.write_text("one")
    assert cached("t", [source], source.read_text) == "one"
    source.write_text("two, longer")  # the size changes even where the clock is coarse
    assert cached("t", [source], source.read_text) == "two, longer"
    assert cached("t", [source], lambda: "other key", key=2) == "other key"


def test_a_corrupt_cache_is_ignored_and_replaced(cache_dir: Path) -> None:
    source = cache_dir / "data.txt"
    source.write_text("one")
    cached("t", [source], source.read_text)
    (written,) = (cache_dir / "prefix").rglob("t.*.marshal")
    written.write_bytes(b"\x00garbage")
    assert cached("t", [source], source.read_text) == "one"
    assert marshal.loads(written.read_bytes())[1] == "one"


def test_nothing_is_written_when_byte_code_is_not(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    source = cache_dir / "data.txt"
    source.write_text("one")
    assert cached("t", [source], source.read_text) == "one"
    assert not list((cache_dir / "prefix").rglob("*.marshal"))


def test_an_unwritable_cache_directory_still_answers(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = cache_dir / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setattr(parsed_cache, "_cache_file", lambda name: blocker / f"{name}.marshal")
    source = cache_dir / "data.txt"
    source.write_text("one")
    assert cached("t", [source], source.read_text) == "one"
    assert sorted(os.listdir(cache_dir)) == ["data.txt", "file-not-dir"]  # nothing left behind


def test_the_rule_tables_from_the_cache_are_the_parsed_tables(cache_dir: Path) -> None:
    parsed = parse_rule_files(sorted(RULES_DIR.glob("*.toml")))
    assert rule_tables() == parsed  # written
    assert rule_tables() == parsed  # read back
    assert list((cache_dir / "prefix").rglob("rule-tables.*.marshal"))


def test_the_public_suffix_list_from_the_cache_answers_as_a_parse(cache_dir: Path) -> None:
    from publicsuffixlist import PSLFILE, PublicSuffixList

    from websec_app.scanner import registrable

    with open(PSLFILE, encoding="utf-8") as source:
        rules = [*source.read().splitlines(), *registrable.EXTRA_SUFFIXES]
    parsed = PublicSuffixList(rules, accept_unknown=False, accept_encoded_idn=False)
    for _ in range(2):  # written, then read back
        registrable._suffix_list.cache_clear()
        loaded = registrable._suffix_list()
        assert vars(loaded) == vars(parsed)
        assert loaded.privatesuffix("www.example.co.uk") == "example.co.uk"
        assert loaded.privatesuffix("a.b.c.kawasaki.jp") == "b.c.kawasaki.jp"
    registrable._suffix_list.cache_clear()
