"""docs/scoring.md lists every outcome of the rule table, as generated from it, by section in report order."""

from websec_app.scanner import SECTIONS
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.rules.docs import DOC_PATH, updated_document


def test_scoring_doc_is_generated_from_the_current_rule_table() -> None:
    current = DOC_PATH.read_text("utf-8")
    book = default_rulebook()
    assert current == updated_document(current, book), "run: python -m websec_app.scanner.rules.docs"
    for outcome in book.rules:
        assert f"`{outcome}`" in current


def test_scoring_doc_headings_are_the_section_titles_in_report_order() -> None:
    headings = [line[4:] for line in DOC_PATH.read_text("utf-8").splitlines() if line.startswith("### ")]

    assert headings == [f"{s.title} (`{s.key}`)" for s in SECTIONS] + ["Any section"]
