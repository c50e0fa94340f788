"""One sentence per requirement verdict: why it passes or fails, and which findings (by plain title) did it.

The compliance PDF prints it in every framework row; any other renderer can too.
"""

from __future__ import annotations

from websec_app.scanner.rules.titles import plain_title

from . import FAIL, NOT_TESTED, PARTIAL, PASS, ObservedFinding, RequirementResult

#: How many findings a sentence names before "and N more".
NAMED = 4


def finding_label(finding: ObservedFinding) -> str:
    """ "Session cookie sent over plain HTTP (sessionid)": the plain title and what it was seen on."""
    title = plain_title(finding.outcome)
    subject = finding.subject
    if subject and subject.lower() not in title.lower() and len(subject) <= 60:
        return f"{title} ({subject})"
    return title


def _listed(findings: tuple[ObservedFinding, ...]) -> str:
    labels = list(dict.fromkeys(finding_label(f) for f in findings))
    named = labels[:NAMED]
    rest = len(labels) - len(named)
    if rest:
        return "; ".join(named) + f"; and {rest} more"
    if len(named) > 1:
        return "; ".join(named[:-1]) + " and " + named[-1]
    return named[0] if named else ""


def verdict_sentence(result: RequirementResult) -> str:
    """Why `result` has its verdict, in one sentence a non-specialist can read."""
    if result.verdict == NOT_TESTED:
        return (
            "Not tested: nothing an external scan can observe is evidence about this requirement; assess it separately."
        )
    if result.verdict == FAIL:
        failing = tuple(f for f in result.findings if f.status in ("bad", "missing", "weak"))
        return f"Fails because the scan found: {_listed(failing)}."
    if result.verdict == PARTIAL:
        return f"Partly met: nothing serious, but the scan found: {_listed(result.problems)}."
    if result.verdict == PASS:
        count = len(result.findings)
        checks = "check" if count == 1 else "checks"
        return f"Passes: the {count} related {checks} found no problem ({_listed(result.findings)})."
    return ""


__all__ = ["NAMED", "finding_label", "verdict_sentence"]
