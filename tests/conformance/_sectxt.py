# Test cases adapted from sectxt 0.9.8 (DigitalTrustCenter, https://github.com/DigitalTrustCenter/sectxt), the
# security.txt validator of internet.nl. Licensed under the EUPL (EUPL-1.2; the licence, copied unchanged:
# tests/conformance/files/sectxt.LICENCE); this file is available under EUPL-1.2.
"""Shared pieces of the sectxt conformance suite (docs/conformance.md).

sectxt (PyPI `sectxt`, 0.9.8, the validator internet.nl runs) reports a security.txt's errors, recommendations
and notifications as codes (`no_expire`, `no_space`, `bom_in_file` ...). Each case here is one input a test of its
`test/test_sectxt.py` builds (a file, and for its HTTP tests the answers of the two locations), or, for a code its
tests never raise, an input its `sectxt/__init__.py` raises that code for; the code the test asserts; and websec's
exact outcome ids for it. The input is served by a loopback fixture site (tests/fixtures/sites.py) and scanned by
websec's real fetch and check (`scanner.scan`).

sectxt_map.toml says, for each code, which of websec's findings report the same thing: (outcome, a phrase of its
note). A case agrees when one of its findings does (for `!code`, when none does: the test asserts sectxt does
not raise it; `valid` is `is_valid()`); a case with `why` is a documented divergence and must NOT agree, so a case
cannot drift from one kind to the other unnoticed. Where websec reports the same thing with a lower grade than
sectxt's (a warning for one of its errors), the table's [graded] section says why, and the doc lists it.

Adaptations: sectxt's tests scan example.com; here the served file names the fixture site's host where they name
example.com (Canonical, Contact...), so a Canonical lists the URL the file is fetched from, as sectxt's Parser
tests (which pass no URL) never compare. Their dates are computed from today: here from the suite's clock
(tests/clock.py TEST_NOW), the same number of days or years away.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from tests.clock import TEST_NOW

HERE = Path(__file__).parent
HOST_IN_TESTS = "example.com"  # the host sectxt's tests scan and name in their files
WELL_KNOWN = "/.well-known/security.txt"
LEGACY = "/security.txt"
PLAIN_UTF8 = "text/plain; charset=utf-8"

#: `date.today() + timedelta(days=10)` in sectxt's tests
IN_TEN_DAYS = (TEST_NOW.date() + timedelta(days=10)).isoformat()
#: `date.today().year` in sectxt's tests
THIS_YEAR = TEST_NOW.year

#: test_sectxt.py's `_signed_example`, its Expires ten days ahead of the suite's clock
SIGNED_EXAMPLE = f"""-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA256

# Canonical URI
Canonical: https://example.com/.well-known/security.txt

# Our security address
Contact: mailto:security@example.com

# Our OpenPGP key
Encryption: https://example.com/pgp-key.txt

# Our security policy
Policy: https://example.com/security-policy.html

# Our security acknowledgments page
Acknowledgments: https://example.com/hall-of-fame.html

# CSAF link
CSAF: https://example.com/.well-known/csaf/provider-metadata.json

Expires: {IN_TEN_DAYS}T18:37:07z
-----BEGIN PGP SIGNATURE-----
Version: GnuPG v2.2

wpwEAQEIABAFAmTHcawJEDs4gPMoG10dAACN5wP/UozhFqHcUWRNhg4KwfY4
HHXU8bf222naeYJHgaHadLTJJ8YQIQ9N5fYF7K4BM0jPZc48aaUPaBdhNxw+
KDtQJWPzVREIbbGLRQ5WNYrLR6/7v1LHTI8RvgY22QZD9EAkFQwgdG8paIP4
2APWewNf8e01t1oh4n5bDBtr4IaQoj0=
=DHXw
-----END PGP SIGNATURE-----
"""


@dataclass(frozen=True)
class Answer:
    """What a location answers: a status and a body with a Content-Type (None: the header is not sent)."""

    body: bytes = b""
    content_type: str | None = PLAIN_UTF8
    status: int = 200


NOT_FOUND = Answer(b"not found\n", status=404)


@dataclass(frozen=True)
class Case:
    test: str  # sectxt's test ("test_no_uri"), or "__init__.py" for a code its tests never raise
    label: str  # which input of that test
    code: str  # the code the test asserts; "valid": is_valid(); "!code": the test asserts it is not raised
    well_known: Answer  # /.well-known/security.txt
    ours: tuple[str, ...]  # websec's outcome ids for the input, in the order the check emits them
    legacy: Answer = NOT_FOUND  # /security.txt
    https: bool = True  # False: nothing listens on the https port, the site answers over http
    why: str | None = None  # a documented divergence: why websec's verdict differs


def file(text: str, content_type: str | None = PLAIN_UTF8) -> Answer:
    return Answer(text.encode(), content_type)


def params(cases: Iterable[Case]) -> list[pytest.param]:
    return [pytest.param(case, id=f"{case.test}[{case.label}]") for case in cases]


@dataclass(frozen=True)
class Table:
    """sectxt_map.toml: each code -> the (outcome, note phrase) findings of websec that report it."""

    codes: dict[str, tuple[tuple[str, str], ...]]
    graded: dict[str, str]

    @classmethod
    def load(cls) -> Table:
        with (HERE / "sectxt_map.toml").open("rb") as fh:
            table = tomllib.load(fh)
        codes = {code: tuple((o, n) for o, n in pairs) for code, pairs in table["codes"].items()}
        return cls(codes, table["graded"])

    def reported(self, code: str, findings: Sequence[tuple[str, str]]) -> bool:
        """Whether one of websec's (outcome, note) findings reports what sectxt's `code` does."""
        return any(outcome == o and phrase in note for outcome, note in findings for o, phrase in self.codes[code])

    def agrees(self, case: Case, findings: Sequence[tuple[str, str]]) -> bool:
        code = case.code.removeprefix("!")
        return self.reported(code, findings) != case.code.startswith("!")

    def assert_conforms(self, case: Case, findings: Sequence[tuple[str, str]]) -> None:
        code = case.code.removeprefix("!")
        assert code in self.codes, f"{code} is missing from sectxt_map.toml"
        assert [outcome for outcome, _ in findings] == list(case.ours), findings
        if case.why is None:
            assert self.agrees(case, findings), f"{case.code}: expected {self.codes[code]}, got {findings}"
        else:
            assert not self.agrees(case, findings), "declared a divergence, but websec reports what sectxt does"


SECTXT = Table.load()
