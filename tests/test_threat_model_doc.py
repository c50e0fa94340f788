"""docs/threat-model.md names the test of every attack: each named test file and test exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "threat-model.md"


def test_every_test_the_threat_model_names_exists() -> None:
    text = DOC.read_text("utf-8")
    references = re.findall(r"`(tests/[\w/]+\.py|bench/[\w/]+\.py)(?:::(\w+))?`", text)
    assert len(references) >= 20
    for path, name in references:
        source = ROOT / path
        assert source.is_file(), path
        if name:
            assert re.search(rf"^(async )?def {name}\(", source.read_text("utf-8"), re.M), f"{path}::{name}"
