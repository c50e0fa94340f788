"""Reference data the scanner grades against, kept as versioned files ("policy as data").

`weak_ciphers.json`: the cipher-suite families probed one by one (fetch/tls_probes.py)
and named in the `tls` findings.
`permissions_policy_features.txt`: the Permissions-Policy features Chromium recognises (checks/headers.py).
`csp_script_bypass_hosts.json`: the JSONP endpoints and AngularJS copies Google's CSP Evaluator lists, which a CSP's
script host allowlist must not allow (checks/csp_bypass.py; Apache-2.0, `csp-evaluator.LICENSE`).
`csp_services.toml`: what known third-party stylesheets and scripts need of a CSP once they load, as their makers
document it (fixes/csp_proposal.py).
`distrusted_roots.toml`: the roots the stores still hold whose newer certificates Chrome no longer trusts
(checks/tls.py).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from datetime import datetime
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


@dataclass(frozen=True)
class ScriptService:
    """A third-party script that loads more when it runs (csp_services.toml [[scripts]])."""

    name: str
    scripts: tuple[str, ...]  # the start of its URL after "scheme://": host and path, lower case
    sources: tuple[tuple[str, tuple[str, ...]], ...]  # (directive, sources) a policy needs besides the script's own

    def loaded_by(self, url: str) -> bool:
        """Whether `url` (absolute, http or https) is one of this service's scripts."""
        rest = url.partition("://")[2].lower()
        return any(rest.startswith(prefix) for prefix in self.scripts)


@dataclass(frozen=True)
class CspServices:
    fonts_of_stylesheet: dict[str, str]  # a stylesheet's origin -> its fonts' origin
    scripts: tuple[ScriptService, ...]

    @property
    def script_hosts(self) -> frozenset[str]:
        """The hosts the known scripts are served from: a script elsewhere is none of them."""
        return frozenset(prefix.partition("/")[0] for service in self.scripts for prefix in service.scripts)


@cache
def csp_services() -> CspServices:
    data = tomllib.loads((_DIR / "csp_services.toml").read_text("utf-8"))
    return CspServices(
        {entry["origin"]: entry["fonts"] for entry in data["stylesheets"]},
        tuple(
            ScriptService(
                entry["name"],
                tuple(entry["scripts"]),
                tuple((directive, tuple(values)) for directive, values in entry["sources"].items()),
            )
            for entry in data["scripts"]
        ),
    )


@dataclass(frozen=True)
class DistrustedRoot:
    """A root CA whose certificates with an earliest SCT after `after` Chrome refuses (distrusted_roots.toml)."""

    name: str
    owner: str
    after: datetime
    since: str  # the Chrome release that refuses them
    also: str | None = None  # other browsers' word on the same roots, when they have one


@cache
def distrusted_roots() -> dict[str, DistrustedRoot]:
    """Each root by the lowercase hex SHA-256 of its SubjectPublicKeyInfo."""
    data = tomllib.loads((_DIR / "distrusted_roots.toml").read_text("utf-8"))
    return {
        root["spki_sha256"]: DistrustedRoot(
            root["name"], group["owner"], group["after"], group["since"], group.get("also")
        )
        for group in data["distrust"]
        for root in group["roots"]
    }
