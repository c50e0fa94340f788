"""The module that wires the process together (websec_app/runtime.py: `build_runtime`, and the job engine's
tasks handed the use cases) is imported only by the composition roots, never by what it wires: the use
cases take the `Runtime` type from usecases/runtime.py (STYLE.md: "Nothing imports the module that wires
everything together"). Read from the source with `ast`, lazy imports included."""

from __future__ import annotations

from pathlib import Path

import pytest

import websec_app
from tests.scanner.test_layers import imported_modules

PACKAGE_DIR = Path(websec_app.__file__).parent
WIRING = "websec_app.runtime"
#: What sits below the wiring: none of it may import it.
BELOW_THE_WIRING = ("usecases", "services", "store", "jobs", "scanner", "report_formats", "ui")


def _modules_below() -> list[tuple[str, Path]]:
    found = []
    for layer in BELOW_THE_WIRING:
        for path in sorted((PACKAGE_DIR / layer).rglob("*.py")):
            parts = path.relative_to(PACKAGE_DIR).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join(("websec_app", *parts)), path))
    return found


@pytest.mark.parametrize(("module", "path"), _modules_below(), ids=[module for module, _ in _modules_below()])
def test_nothing_below_the_composition_roots_imports_the_wiring(module: str, path: Path) -> None:
    imports = imported_modules(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")

    assert WIRING not in imports and f"{WIRING}.build_runtime" not in imports
