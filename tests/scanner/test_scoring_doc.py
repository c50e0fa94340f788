"""docs/scoring.md lists every outcome of the rule table, as generated from it."""

from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.rules.docs import DOC_PATH, updated_document


def test_scoring_doc_is_generated_from_the_current_rule_table() -> None:
    current = DOC_PATH.read_text("utf-8")
    book = default_rulebook()
    assert current == updated_document(current, book), "run: python -m websec_app.scanner.rules.docs"
    for outcome in book.rules:
        assert f"`{outcome}`" in current
