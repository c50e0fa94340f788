"""The rule table is consistent, and every outcome a check can emit has a row."""

import ast
from pathlib import Path

import pytest

import websec_app.scanner.checks as checks_package
from websec_app.scanner.rules import RuleTableError, default_rulebook, load_rulebook


def test_the_shipped_rule_table_loads_and_covers_every_score() -> None:
    book = default_rulebook()
    assert book.version
    assert [b.grade for b in book.bands] == ["A+", "A", "B", "C", "D", "F"]
    for score in range(101):
        book.grade_for(score)  # raises when a band is missing
    assert book.grade_for(90) == "A+" and book.grade_for(89) == "A" and book.grade_for(49) == "F"


def _outcome_literals() -> set[str]:
    """Every string literal passed as the first argument of Finding(...) in the checks."""
    found: set[str] = set()
    for path in Path(checks_package.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value)
    return found


def test_every_outcome_named_in_a_check_has_a_rule_row() -> None:
    book = default_rulebook()
    missing = sorted(o for o in _outcome_literals() if o not in book.rules)
    assert missing == []


def test_a_rule_row_with_a_bad_status_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "grading.toml").write_text('version = "t"\nbands = [{ grade = "F", min = 0, max = 100 }]\n')
    (tmp_path / "x.toml").write_text(
        'section = "x"\n[outcomes."x.a"]\nstatus = "terrible"\nseverity = "minor"\nexplanation = "e"\n'
    )
    with pytest.raises(RuleTableError, match="status"):
        load_rulebook(tmp_path)


def test_a_good_outcome_cannot_deduct(tmp_path: Path) -> None:
    (tmp_path / "grading.toml").write_text('version = "t"\nbands = [{ grade = "F", min = 0, max = 100 }]\n')
    (tmp_path / "x.toml").write_text(
        'section = "x"\n[outcomes."x.a"]\nstatus = "good"\nseverity = "minor"\ndeduction = 3\nexplanation = "e"\n'
    )
    with pytest.raises(RuleTableError, match="good outcomes deduct 0"):
        load_rulebook(tmp_path)


def test_texts_point_the_reader_to_the_finding_not_to_a_field_of_the_report() -> None:
    """ "The note" is the report's field name; readers see it as "Found:" on the web and "Observed:" in the PDF."""
    for rule in default_rulebook().rules.values():
        assert "the note" not in f"{rule.explanation} {rule.fix or ''}".lower(), rule.outcome
