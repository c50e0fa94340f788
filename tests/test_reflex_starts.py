"""`make test` runs the suite in two pytest-xdist workers; every test that starts Reflex must run in the same
one (tests/conftest.py, REFLEX_STARTS), or two Reflex starts at once rewrite `reflex.lock/` under each other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REFLEX_STARTS, pytest_collection_modifyitems

ROOT = Path(__file__).resolve().parents[1]
#: What starts `make run` in a test: tests/fixtures/processes.py's helpers (the UI's servers call the second).
STARTS_REFLEX = re.compile(r"\bmake_run(_argv)?\b")


def test_every_test_file_that_starts_reflex_is_in_the_reflex_group() -> None:
    starters = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != "processes.py" and STARTS_REFLEX.search(path.read_text())
    }

    assert {"tests/ui/conftest.py", "tests/test_app_smoke.py", "tests/jobs/test_embedded.py"} <= starters
    assert [path for path in sorted(starters) if not path.startswith(REFLEX_STARTS)] == []


class _Item:
    def __init__(self, path: str) -> None:
        self.path = ROOT / path
        self.markers: list[pytest.MarkDecorator] = []

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.markers.append(marker)


def test_the_reflex_tests_get_one_xdist_group_and_the_others_none() -> None:
    items = [_Item("tests/ui/test_view.py"), _Item("tests/test_app_smoke.py"), _Item("tests/api/test_keys.py")]

    pytest_collection_modifyitems(items)  # type: ignore[arg-type]

    groups = [[(m.name, m.args) for m in item.markers] for item in items]
    assert groups == [[("xdist_group", ("reflex",))], [("xdist_group", ("reflex",))], []]
