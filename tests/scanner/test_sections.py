"""The section table: one place for each section's order, title, Pro-only flag and summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import make_snapshot
from websec_app.scanner import PRO_ONLY_SECTIONS, SECTION_ORDER, SECTIONS, grade_snapshot, section
from websec_app.scanner.checks import CHECKS
from websec_app.scanner.rules import RuleTableError, default_rulebook, load_rulebook
from websec_app.scanner.rules.docs import API_DOC_PATH, render_sections, updated_api_document
from websec_app.scanner.sections import SectionTableError, parse_sections

_ROW = 'key = "{key}"\ntitle = "{title}"\nlabel = "{label}"\npro_only = false\nsummary = "What it checks."\n'

_RULE = 'section = "{section}"\n[outcomes."{section}.x"]\nstatus = "good"\nseverity = "minor"\nexplanation = "e"\n'


def _table(*rows: str) -> str:
    return "".join(f"[[sections]]\n{row}\n" for row in rows)


def test_the_table_lists_every_section_a_scan_produces_in_report_order() -> None:
    # Given a scan of a plain page (every check runs, each fills its section)
    report = grade_snapshot(make_snapshot(headers={"Server": "nginx"}, body="<html><body>hi</body></html>"))

    # When its full body is built
    body = report.to_dict(pro=True)

    # Then the scan filled exactly the table's sections, and the body lists them in the table's order,
    # as does the registry of checks
    assert set(report.sections) == set(SECTION_ORDER)
    assert [key for key in body if key in report.sections] == list(SECTION_ORDER)
    assert [key for key, _ in CHECKS] == list(SECTION_ORDER)


def test_a_free_body_omits_exactly_the_pro_only_sections() -> None:
    report = grade_snapshot(make_snapshot())

    free = report.to_dict(pro=False)

    assert PRO_ONLY_SECTIONS == ("cookies", "cross_origin")  # spec 2.1: "cookies and cross_origin omitted"
    assert [s.key for s in SECTIONS if s.key in free] == [s.key for s in SECTIONS if not s.pro_only]


def test_every_section_has_a_distinct_plain_title_label_and_one_sentence_summary() -> None:
    titles = [s.title for s in SECTIONS]

    assert len(set(titles)) == len(titles)
    assert section("server_fingerprint").title == "Server software disclosure"
    for s in SECTIONS:
        assert "_" not in s.title, s.key  # a title is words, not the JSON key
        assert len(s.label) <= len(s.title) and s.summary.endswith(".") and s.summary.count(". ") == 0, s.key


def test_every_rule_row_names_a_listed_section() -> None:
    used = {rule.section for rule in default_rulebook().rules.values()}

    assert used - {"*"} == set(SECTION_ORDER)


def test_an_unknown_key_is_refused() -> None:
    with pytest.raises(KeyError, match="sections.toml"):
        section("ssl")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (_table(_ROW.format(key="a", title="A", label="A") + 'colour = "red"\n'), "unknown fields"),
        (_table(_ROW.format(key="a", title="A", label="A"), _ROW.format(key="a", title="B", label="B")), "key"),
        (_table(_ROW.format(key="a", title="A", label="A"), _ROW.format(key="b", title="A", label="B")), "title"),
        (_table(_ROW.format(key="a", title="A", label="A").replace("pro_only = false", 'pro_only = "no"')), "bool"),
        (_table(_ROW.format(key="a", title=" ", label="A")), "empty"),
        (_table(_ROW.format(key="Server Fingerprint", title="A", label="A")), "JSON key"),
        (_table(_ROW.format(key="a", title="A", label="A").replace("checks.", "checks")), "full stop"),
        (_table('key = "a"\ntitle = "A"\n'), "missing"),
        ('version = "1"\n' + _table(_ROW.format(key="a", title="A", label="A")), "top-level"),
        ("", "no \\[\\[sections\\]\\]"),
    ],
)
def test_a_malformed_table_is_refused_at_load(text: str, problem: str) -> None:
    with pytest.raises(SectionTableError, match=problem):
        parse_sections(text)


def test_the_rule_table_refuses_a_row_whose_section_is_not_listed(tmp_path: Path) -> None:
    (tmp_path / "grading.toml").write_text('version = "t"\nbands = [{ grade = "F", min = 0, max = 100 }]\n')
    (tmp_path / "sections.toml").write_text(_table(_ROW.format(key="a", title="A", label="A")))
    (tmp_path / "x.toml").write_text(_RULE.format(section="b"))

    with pytest.raises(RuleTableError, match="sections.toml does not list"):
        load_rulebook(tmp_path)


def test_the_rule_table_refuses_a_listed_section_without_rule_rows(tmp_path: Path) -> None:
    (tmp_path / "grading.toml").write_text('version = "t"\nbands = [{ grade = "F", min = 0, max = 100 }]\n')
    (tmp_path / "sections.toml").write_text(
        _table(_ROW.format(key="a", title="A", label="A"), _ROW.format(key="b", title="B", label="B"))
    )
    (tmp_path / "x.toml").write_text(_RULE.format(section="a"))

    with pytest.raises(RuleTableError, match="no rule row belongs to"):
        load_rulebook(tmp_path)


def test_the_api_doc_section_table_is_generated_from_the_section_table() -> None:
    current = API_DOC_PATH.read_text("utf-8")

    assert current == updated_api_document(current), "run: python -m websec_app.scanner.rules.docs"
    rows = [line for line in render_sections().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(SECTION_ORDER)
    for s in SECTIONS:
        assert s.title in current and s.summary in current
