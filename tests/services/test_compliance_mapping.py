"""The compliance mapping covers every scanner outcome once, reads each CWE from the rule table, and says what
auditors expect."""

from __future__ import annotations

from pathlib import Path

import pytest

import websec_app.services.compliance as compliance
from tests.api.fakes import make_report
from tests.reports import impact_report
from websec_app.scanner.report import fixes_by_impact
from websec_app.scanner.rules import default_rulebook
from websec_app.services.compliance import (
    FAIL,
    FRAMEWORKS,
    NOT_TESTED,
    PARTIAL,
    PASS,
    MappingError,
    assess,
    default_mapping,
    load_mapping,
)

MAPPING_TOML = Path(compliance.__file__).with_name("mapping.toml")


def test_every_outcome_of_the_rule_table_is_mapped_exactly_once() -> None:
    mapping = default_mapping()
    outcomes = set(default_rulebook().rules)

    mapped = mapping.outcomes()

    assert len(mapped) == len(set(mapped)), "an outcome is listed twice in mapping.toml"
    assert outcomes - set(mapped) - set(mapping.not_assessed) == set(), "outcomes missing from mapping.toml"
    assert set(mapped) - outcomes == set(), "mapping.toml names outcomes the rule table does not have"
    assert set(mapped).isdisjoint(mapping.not_assessed)


def test_every_mapped_outcome_has_a_named_cwe_on_its_rule_row_and_none_in_the_mapping() -> None:
    mapping = default_mapping()
    rules = default_rulebook().rules

    unnamed = {o: rules[o].cwe for o in mapping.outcomes() if rules[o].cwe not in mapping.cwe_names}

    assert unnamed == {}
    assert all(isinstance(o, str) for c in mapping.controls for o in c.outcomes)  # ids only, no CWE beside them
    assert '"CWE-' not in MAPPING_TOML.read_text("utf-8").split("[[controls]]", 1)[1]


def test_a_mapping_that_lists_an_outcome_twice_or_an_unknown_one_is_refused(tmp_path: Path) -> None:
    text = MAPPING_TOML.read_text("utf-8")
    first = default_mapping().controls[0].outcomes[0]
    twice = text.replace("outcomes = [", f'outcomes = [\n    "{first}",', 1)
    unknown = text.replace("outcomes = [", 'outcomes = [\n    "tls.no_such_outcome",', 1)

    for bad, problem in ((twice, "mapped twice"), (unknown, "no row in the rule table")):
        (tmp_path / "mapping.toml").write_text(bad, "utf-8")
        with pytest.raises(MappingError, match=problem):
            load_mapping(tmp_path / "mapping.toml")


def test_every_control_names_a_requirement_and_leaves_out_only_frameworks_that_do_not_ask_for_it() -> None:
    # A control may name no requirement of a framework (docs/compliance-mapping.md says why for each)
    mapping = default_mapping()

    left_out = {(c.id, key) for c in mapping.controls for key in FRAMEWORKS if not c.requirements[key]}

    assert all(any(c.requirements.values()) for c in mapping.controls)
    assert left_out == {
        ("certificate-issuance", "pci_dss"),
        ("cross-origin-isolation", "pci_dss"),
        ("vulnerability-disclosure", "owasp"),
        ("dns-availability", "owasp"),
        ("dns-availability", "pci_dss"),
        ("dns-availability", "iso27001"),
    }


def test_a_control_that_names_no_requirement_at_all_is_refused(tmp_path: Path) -> None:
    text = MAPPING_TOML.read_text("utf-8")
    first = text.index("[[controls]]")
    block_end = text.index("outcomes = [", first)
    block = text[first:block_end]
    emptied = "\n".join(
        line.split("=")[0] + "= []" if line.split("=")[0].strip() in FRAMEWORKS else line for line in block.splitlines()
    )
    (tmp_path / "mapping.toml").write_text(text[:first] + emptied + "\n" + text[block_end:], "utf-8")

    with pytest.raises(MappingError, match="names no requirement of any framework"):
        load_mapping(tmp_path / "mapping.toml")


@pytest.mark.parametrize(
    ("outcome", "framework", "not_there"),
    [
        # A missing Referrer-Policy is a missing security header (A05), not broken access control (A01).
        ("referrer.missing", "owasp", "A01:2021"),
        # Announcing a version does not make it outdated or vulnerable (A06, ISO A.8.8).
        ("fingerprint.header_version", "owasp", "A06:2021"),
        ("fingerprint.header_version", "iso27001", "A.8.8"),
        # PCI DSS asks for no CAA record and no browser isolation headers.
        ("dns.caa_missing", "pci_dss", "4.2.1.1"),
        ("coop.missing", "pci_dss", "6.2.4"),
        # 11.6.1 asks for change-detection alerts on the merchant's side: neither a CSP nor SRI is one.
        ("csp.missing", "pci_dss", "11.6.1"),
        ("page.sri_missing_script", "pci_dss", "11.6.1"),
        # A disclosure channel is no OWASP Top 10 category (A09 is logging and monitoring).
        ("security_txt.missing", "owasp", "A09:2021"),
        # IPv6 reachability is no hardening standard or inventory (it made PCI DSS 2.2.1 "partial").
        ("dns.no_ipv6", "pci_dss", "2.2.1"),
        ("dns.no_ipv6", "pci_dss", "12.5.1"),
    ],
)
def test_mappings_the_review_removed(outcome: str, framework: str, not_there: str) -> None:
    # docs/compliance-mapping.md gives the reasons
    control = default_mapping().control_of(outcome)

    assert control is not None
    assert not_there not in control.requirements[framework]


@pytest.mark.parametrize(
    ("outcome", "cwe", "expected"),
    [
        # TLS: PCI DSS 4.2.1 (strong cryptography for PAN in transit), ISO A.8.24 (use of cryptography), OWASP A02.
        (
            "tls.no_https",
            "CWE-319",
            {"owasp": "A02:2021", "pci_dss": "4.2.1", "gdpr": "32(1)(a)", "iso27001": "A.8.24"},
        ),
        ("tls.cert_expired", "CWE-298", {"owasp": "A02:2021", "pci_dss": "4.2.1", "iso27001": "A.8.24"}),
        ("hsts.missing", "CWE-319", {"owasp": "A02:2021", "pci_dss": "4.2.1"}),
        # Payment-page scripts: PCI DSS 6.4.3; XSS is OWASP A03.
        ("csp.missing", "CWE-693", {"owasp": "A03:2021", "pci_dss": "6.4.3"}),
        ("page.sri_missing_script", "CWE-353", {"owasp": "A08:2021", "pci_dss": "6.4.3"}),
        # OWASP's A05 lists CWE-614/1004 and A01 names CORS misconfiguration.
        ("cookie.session_no_secure", "CWE-614", {"owasp": "A05:2021"}),
        ("cors.origin_reflected_credentials", "CWE-942", {"owasp": "A01:2021"}),
        ("xfo.missing", "CWE-1021", {"owasp": "A04:2021"}),
        # OWASP A05's text: "the server does not send security headers or directives".
        ("referrer.missing", "CWE-200", {"owasp": "A05:2021", "gdpr": "32(2)", "iso27001": "A.8.12"}),
        ("fingerprint.header_version", "CWE-497", {"owasp": "A05:2021", "pci_dss": "2.2.1"}),
        # Anti-phishing (SPF/DMARC) is PCI DSS 5.4.1; vulnerability disclosure is incident readiness.
        ("dns.dmarc_missing", "CWE-290", {"pci_dss": "5.4.1", "owasp": "A07:2021"}),
        ("security_txt.missing", "CWE-693", {"pci_dss": "12.10.1", "iso27001": "A.5.24", "gdpr": "32(1)(d)"}),
    ],
)
def test_mappings_an_auditor_expects(outcome: str, cwe: str, expected: dict[str, str]) -> None:
    mapping = default_mapping()
    control = mapping.control_of(outcome)

    assert control is not None and outcome in control.outcomes
    assert default_rulebook().rule(outcome).cwe == cwe
    for framework, requirement in expected.items():
        assert requirement in control.requirements[framework], (outcome, framework)


def test_a_site_without_ipv6_is_not_partial_on_pci_dss() -> None:
    # Given a report whose only DNS gap is the missing AAAA record
    report = make_report().to_dict(pro=True)
    rules = default_rulebook().rules
    report["dns"]["findings"] = [
        {"check": o, "status": rules[o].status, "severity": rules[o].severity, "deduction": rules[o].deduction}
        for o in ("dns.resolves", "dns.no_ipv6", "dns.cnames_resolve")
    ]

    # When it is assessed
    verdicts = {(r.framework.key, q.requirement): q.verdict for r in assess(report).frameworks for q in r.requirements}

    # Then IPv6 is availability (GDPR 32(1)(b)) only; the PCI DSS requirements see the resolving names
    assert verdicts[("pci_dss", "12.5.1")] == PASS  # was "partial" when IPv6 counted as inventory
    assert verdicts[("gdpr", "32(1)(b)")] != PASS


def test_assessment_of_a_report_gives_verdicts_per_requirement() -> None:
    report = make_report().to_dict(pro=True)  # CSP missing, HSTS weak, TLS fine, DNS CAA missing, ...

    assessment = assess(report)

    verdicts = {
        (r.framework.key, req.requirement): req.verdict for r in assessment.frameworks for req in r.requirements
    }
    assert verdicts[("owasp", "A03:2021")] == FAIL  # CSP missing
    assert verdicts[("owasp", "A10:2021")] == NOT_TESTED  # SSRF: nothing in an external scan is evidence
    assert verdicts[("pci_dss", "4.2.1")] == FAIL  # HSTS max-age too short is "weak"
    assert {v for v in verdicts.values()} <= {PASS, FAIL, PARTIAL, NOT_TESTED}
    plan = assessment.remediation()
    assert plan[0].outcome == "csp.missing"  # -20, the biggest fix
    assert all(f.failing for f in plan)


def test_the_remediation_plan_is_the_shared_ranking_by_points_lost() -> None:
    # Given issue 11's report: CSP -15 (warn), HSTS -12 (weak), a session cookie -10 (bad)
    report = impact_report().to_dict(pro=True)

    # When it is assessed
    plan = assess(report).remediation()

    # Then the plan is fixes_by_impact's order (less what the mapping does not assess)
    ranked = [(f.section, f.index) for f in fixes_by_impact(report)]
    assert [(f.section, f.index) for f in plan] == [p for p in ranked if p in {(f.section, f.index) for f in plan}]
    assert [f.deduction for f in plan][:3] == [15, 12, 10]
    assert plan[0].subject == "Content-Security-Policy" and plan[0].status == "warn"


def test_header_findings_are_recognised_from_their_explanation() -> None:
    rules = default_rulebook().rules
    report = make_report().to_dict(pro=True)
    report["headers"]["X-Frame-Options"] = {
        "present": False,
        "value": None,
        "status": "missing",
        "severity": "important",
        "deduction": 8,
        "explanation": rules["xfo.missing"].explanation,
        "fix": "X-Frame-Options: DENY",
        "note": None,
    }

    outcomes = {f.outcome for f in assess(report).findings}

    assert "xfo.missing" in outcomes


@pytest.mark.parametrize(
    "outcomes",
    [("dns.ip_literal", "page.not_html"), ("page.empty",), ("page.http_page",)],
)
def test_nothing_to_check_outcomes_pass_no_requirement(outcomes: tuple[str, ...]) -> None:
    # Given a report whose only DNS and page findings say there was nothing to check there
    report = make_report().to_dict(pro=True)
    rules = default_rulebook().rules
    finding = {
        o: {"check": o, "status": rules[o].status, "severity": rules[o].severity, "deduction": 0} for o in outcomes
    }
    report["dns"]["findings"] = [finding[o] for o in outcomes if o.startswith("dns.")]
    report["page_analysis"]["findings"] = [finding[o] for o in outcomes if o.startswith("page.")]

    # When it is assessed
    assessment = assess(report)

    # Then they are evidence for nothing (as hsts.ip_address): no requirement passes on them
    for result in assessment.frameworks:
        for requirement in result.requirements:
            assert not {f.outcome for f in requirement.findings} & set(outcomes), (result.framework.key, requirement)
    assert set(outcomes) <= set(default_mapping().not_assessed)
