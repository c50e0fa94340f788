"""The scanner's layers, read from the source with `ast` (nothing is imported, so nothing can hide).

STYLE.md, "the shape of the house": `fetch` and `checks` both use `records`, never each other;
`records` (parsers of what was fetched) uses neither; and the scanner imports neither the UI,
the database, the web framework, PDFs, payments nor the parts of the application above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import websec_app.scanner

SCANNER = "websec_app.scanner"
SCANNER_DIR = Path(websec_app.scanner.__file__).parent

#: (importing layer, imported layer) pairs that break the one-way arrows.
FORBIDDEN_LAYERS = (
    ("fetch", "checks"),
    ("checks", "fetch"),
    ("records", "fetch"),
    ("records", "checks"),
)
#: Packages no scanner module may import: frameworks, storage, rendering, payments, and our own
#: layers above the scanner.
FORBIDDEN_PACKAGES = (
    "reflex",
    "sqlmodel",
    "sqlalchemy",
    "fastapi",
    "starlette",
    "reportlab",
    "stripe",
    "razorpay",
    "api_routes",
    "websec_app.store",
    "websec_app.services",
    "websec_app.ui",
    "websec_app.usecases",
    "websec_app.runtime",
    "websec_app.cli",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(SCANNER_DIR).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((SCANNER, *parts))


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module `source` imports, relative imports resolved against `module`.

    `from . import x` yields both the package and `package.x` (x may be a submodule). Imports
    inside functions and under TYPE_CHECKING count too: a layer is broken by any of them.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package[: len(package) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def scanner_imports() -> dict[str, set[str]]:
    return {
        module_name(path): imported_modules(
            path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py"
        )
        for path in sorted(SCANNER_DIR.rglob("*.py"))
    }


def layer(module: str) -> str | None:
    """`fetch`, `checks`, `records`... for a module inside a scanner sub-package, else None."""
    if not module.startswith(SCANNER + "."):
        return None
    return module.removeprefix(SCANNER + ".").split(".")[0]


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def outermost(targets: set[str]) -> set[str]:
    """Drop `a.b.name` when `a.b` is there too (`from a.b import name` gives both)."""
    return {t for t in targets if t.rpartition(".")[0] not in targets}


def test_relative_imports_are_resolved_against_the_importing_module() -> None:
    source = "from ..checks._dns_text import txt_of\nfrom . import csp\nfrom .resolve import Resolver\nimport httpx\n"
    found = imported_modules(source, "websec_app.scanner.fetch.dns")
    assert found >= {
        "websec_app.scanner.checks._dns_text",
        "websec_app.scanner.fetch",
        "websec_app.scanner.fetch.csp",
        "websec_app.scanner.fetch.resolve",
        "httpx",
    }
    from_package = imported_modules("from .. import records", SCANNER + ".checks", is_package=True)
    assert "websec_app.scanner.records" in from_package


def test_every_scanner_sub_package_is_read() -> None:
    layers = {layer(module) for module in scanner_imports()}
    assert {"fetch", "checks", "records", "rules"} <= layers


@pytest.mark.parametrize(("importer", "imported"), FORBIDDEN_LAYERS, ids=[f"{a}->{b}" for a, b in FORBIDDEN_LAYERS])
def test_layers_import_one_way(importer: str, imported: str) -> None:
    broken = sorted(
        f"{module} imports {target}"
        for module, targets in scanner_imports().items()
        if layer(module) == importer
        for target in outermost(targets)
        if within(target, f"{SCANNER}.{imported}")
    )
    assert broken == [], f"{importer}/ must not import {imported}/:\n" + "\n".join(broken)


def test_the_scanner_imports_no_framework_storage_or_upper_layer() -> None:
    broken = sorted(
        f"{module} imports {target}"
        for module, targets in scanner_imports().items()
        for target in outermost(targets)
        if any(within(target, package) for package in FORBIDDEN_PACKAGES)
    )
    assert broken == [], "the scanner must stay free of these imports:\n" + "\n".join(broken)
