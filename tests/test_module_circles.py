"""No module of websec_app imports itself around a circle (STYLE.md: each part sits above or below another,
never both). Read from the source with `ast`, imports inside functions and under TYPE_CHECKING included:
a lazy import hides a circle from Python, not from a reader. Package `__init__` files are left out:
they re-export their modules' names, so every `from . import x` in a package passes through one."""

from __future__ import annotations

import graphlib
from pathlib import Path

import pytest

import websec_app
from tests.scanner.test_layers import imported_modules

PACKAGE_DIR = Path(websec_app.__file__).parent


def module_imports() -> dict[str, set[str]]:
    """Each module of websec_app (no package `__init__`) and the modules of websec_app it imports."""
    paths: dict[str, Path] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.name != "__init__.py":
            paths[".".join(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)] = path
    graph = {}
    for module, path in paths.items():
        imported = imported_modules(path.read_text(encoding="utf-8"), module)
        graph[module] = {name for name in imported if name in paths and name != module}
    return graph


def test_no_module_of_websec_app_is_part_of_an_import_circle() -> None:
    graph = module_imports()
    assert len(graph) > 150, "the package's modules were found"
    assert "websec_app.services.payments.fulfilment" in graph["websec_app.services.payments.sandbox_checkouts"]
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as circle:
        pytest.fail("import circle: " + " -> ".join(circle.args[1]))
