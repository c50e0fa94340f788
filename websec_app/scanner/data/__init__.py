"""Reference data the scanner grades against, kept as versioned files ("policy as data").

`weak_ciphers.json`: the cipher-suite families probed one by one (fetch/tls_probes.py)
and named in the `tls` findings.
`permissions_policy_features.txt`: the Permissions-Policy features Chromium recognises (checks/headers.py).
`csp_script_bypass_hosts.json`: the JSONP endpoints and AngularJS copies Google's CSP Evaluator lists, which a CSP's
script host allowlist must not allow (checks/csp_bypass.py; Apache-2.0, `csp-evaluator.LICENSE`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_DIR = Path(__file__).parent


@dataclass(frozen=True)
class CipherFamily:
    id: str  # stable: it names the probe in snapshots and reports
    name: str
    openssl: str  # the OpenSSL cipher string offering only this family
    reference: str
    iana: tuple[tuple[int, str], ...] = ()  # (code point, IANA name): offered by hand when OpenSSL cannot


@cache
def weak_cipher_families() -> tuple[CipherFamily, ...]:
    data = json.loads((_DIR / "weak_ciphers.json").read_text("utf-8"))
    return tuple(
        CipherFamily(**{**family, "iana": tuple((int(k, 16), v) for k, v in family.get("iana", {}).items())})
        for family in data["families"]
    )


def cipher_family(family_id: str) -> CipherFamily | None:
    return next((f for f in weak_cipher_families() if f.id == family_id), None)


@cache
def permissions_policy_features() -> frozenset[str]:
    lines = (_DIR / "permissions_policy_features.txt").read_text("utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
