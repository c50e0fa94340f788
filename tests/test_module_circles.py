"""No module of websec_app imports itself around a circle (STYLE.md: each part sits above or below another,
never both). Read from the source with `ast`, imports inside functions and under TYPE_CHECKING included:
a lazy import hides a circle from Python, not from a reader. Package `__init__` files are left out:
they re-export their modules' names, so every `from . import x` in a package passes through one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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


def circles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)


def test_the_circle_finder_finds_a_circle_and_nothing_else() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert list(circles(graph)) == [["a", "b", "c"]]
    assert list(circles({"a": {"b"}, "b": set()})) == []


def test_no_module_of_websec_app_is_part_of_an_import_circle() -> None:
    graph = module_imports()
    assert len(graph) > 150, "the package's modules were found"
    assert "websec_app.services.payments.fulfilment" in graph["websec_app.services.payments.sandbox_checkouts"]
    found = list(circles(graph))
    assert found == [], "\n".join(" -> ".join(circle) for circle in found)
