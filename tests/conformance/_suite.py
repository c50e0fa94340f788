"""What the ported suites' bookkeeping tests share: the tally of agreeing and diverging cases (every suite whose
cases carry a `why`), and for Boulder, OpenDMARC and mox their cases grouped by the peer's test, each case in
exactly one group, and docs/conformance.md's section read back: its table's counts, its total row, and its lists of
divergences and of what is not ported, each name with its reason."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


class Named(Protocol):
    @property
    def name(self) -> str: ...


C = TypeVar("C", bound=Named)


class Judged(Protocol):
    @property
    def why(self) -> str | None: ...


def tally(cases: Iterable[Judged]) -> tuple[int, int, int]:
    """(cases, agreeing, documented divergences): a case with a `why` is a documented divergence."""
    cases = list(cases)
    diverging = sum(c.why is not None for c in cases)
    return len(cases), len(cases) - diverging, diverging


def sections_by_prefix(cases: Sequence[C], prefixes: Mapping[str, str]) -> dict[str, list[C]]:
    """The cases of each of the peer's tests, in its order: those whose name starts with its prefix."""
    return {section: [c for c in cases if c.name.startswith(prefix)] for section, prefix in prefixes.items()}


def assert_each_case_in_one_section(
    cases: Sequence[Named],
    sections: Mapping[str, Sequence[Named]],
    not_ported: Mapping[str, str],
    not_ported_in: Mapping[str, Sequence[str]],
) -> None:
    names = [case.name for case in cases]
    assert len(names) == len(set(names)) and not set(names) & not_ported.keys()
    assert sorted(names) == sorted(c.name for section in sections.values() for c in section)
    assert sorted(not_ported) == sorted(n for names in not_ported_in.values() for n in names)


def doc_part(heading: str) -> str:
    """The text of docs/conformance.md's `## heading` section."""
    return DOC.read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def expected_rows(
    sections: Mapping[str, Sequence[C]],
    not_ported_in: Mapping[str, Sequence[str]],
    tally: Callable[[Iterable[C]], tuple[int, ...]],
) -> dict[str, tuple[int, ...]]:
    """Each of the peer's tests (ported or not) with its counts and how many of its parts are not ported."""
    tests = [*sections, *(t for t in not_ported_in if t not in sections)]
    return {t: (*tally(sections.get(t, [])), len(not_ported_in.get(t, []))) for t in tests}


def stated_total(part: str, label: str) -> tuple[int, ...] | None:
    """The counts of the section's `| **label** | ... |` row (after an empty cell, where the table has two name
    columns)."""
    counts = r" \| ".join([r"\*\*(\d+)\*\*"] * 4)
    total = re.search(rf"^\| \*\*{re.escape(label)}\*\* \|(?: \|)? {counts} \|$", part, re.M)
    return None if total is None else tuple(int(n) for n in total.groups())


def listed_under(part: str, heading: str) -> dict[str, str]:
    """Each name of a `- \\`a\\`, \\`b\\`: reason` line under `### heading`, with its reason."""
    text = part.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    listed = {}
    for names, reason in re.findall(r"^- ((?:`[\w.*-]+`(?:, )?)+): (.+)$", text, re.M):
        listed.update({name: reason for name in re.findall(r"`([\w.*-]+)`", names)})
    return listed
