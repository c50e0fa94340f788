"""Scripts on public hosts that run what a request names: a CSP host allowlist allowing one is bypassed.

A JSONP endpoint runs its callback parameter as script, and an AngularJS library runs templates written in the
page's markup. Google's CSP Evaluator keeps lists of such URLs (data/csp_script_bypass_hosts.json, Apache-2.0); the
JSONP endpoints of some hosts only work where 'unsafe-eval' is allowed, as CSP Evaluator has it.

Read by the headers check (checks/csp_bypass.py: which hosts a policy lets such scripts load from) and by the CSP
proposal (fixes/csp_proposal.py: a host the page loads scripts from is allowed by the paths it loads them from,
not whole, when it serves such a script). Sources are matched as CSP3 §6.7.2.8 matches a host-source: the host (or,
for `*.host`, any name under it), and the path, a prefix when it ends in "/", else the whole path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import SplitResult

__all__ = ["HostSource", "KnownScript", "bypass_hosts", "host_source", "known_scripts", "narrowed_path"]

_DATA = Path(__file__).resolve().parents[1] / "data" / "csp_script_bypass_hosts.json"
_HOST_SOURCE_RE = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://)?"
    r"(?P<wildcard>\*\.)?(?P<host>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*)\.?"
    r"(?::(?:\*|[0-9]+))?"
    r"(?P<path>/[^;,]*)?$"
)


@dataclass(frozen=True)
class KnownScript:
    url: str  # scheme-relative, as CSP Evaluator lists it: //host/path
    host: str
    path: str
    kind: str  # "JSONP endpoints" | "AngularJS"
    needs_eval: bool


@dataclass(frozen=True)
class HostSource:
    """A host-source of a script list that may load scripts over the web (http: or https:, or no scheme)."""

    host: str  # lowercased, without the `*.` of a wildcard
    wildcard: bool  # `*.host`: any name under host, not host itself
    path: str  # "" for any

    def allows(self, script: KnownScript) -> bool:
        if self.wildcard:
            if not script.host.endswith("." + self.host):
                return False
        elif script.host != self.host:
            return False
        return _path_matches(self.path, script.path)

    def covers(self, other: HostSource) -> bool:
        """Whether every URL `other` allows is one this source allows too (host, then path)."""
        if self.wildcard:
            if not other.host.endswith("." + self.host):
                return False
        elif other.wildcard or other.host != self.host:
            return False
        return _path_matches(self.path, other.path)


def host_source(source: str) -> HostSource | None:
    """`source` as a host-source that can load a script over the web; None for anything else (a keyword, a
    scheme source, `*`, another scheme)."""
    match = _HOST_SOURCE_RE.match(source)
    if match is None or (match["scheme"] or "https").lower() not in ("http", "https"):
        return None
    return HostSource(match["host"].lower(), match["wildcard"] is not None, match["path"] or "")


@cache
def known_scripts() -> tuple[KnownScript, ...]:
    data = json.loads(_DATA.read_text("utf-8"))
    needs_eval = frozenset(data["jsonp_needs_eval"])
    scripts = []
    for kind, urls in (("JSONP endpoints", data["jsonp"]), ("AngularJS", data["angular"])):
        for url in urls:
            host, _, path = url[2:].partition("/")
            scripts.append(KnownScript(url, host.lower(), "/" + path, kind, kind != "AngularJS" and host in needs_eval))
    return tuple(scripts)


@cache
def _scripts_by_host(with_eval: bool) -> dict[str, tuple[KnownScript, ...]]:
    by_host: dict[str, list[KnownScript]] = {}
    for script in known_scripts():
        if with_eval or not script.needs_eval:
            by_host.setdefault(script.host, []).append(script)
    return {host: tuple(scripts) for host, scripts in by_host.items()}


def bypass_hosts() -> frozenset[str]:
    """Every host serving a known script that needs no eval (the hosts a proposal allows by path only)."""
    return frozenset(_scripts_by_host(False))


def narrowed_path(url: SplitResult, *, eval_allowed: bool = False) -> str | None:
    """The path-part of a source that allows the script at `url` and none of the known scripts of its host, when
    its host serves one (those needing eval count only when `eval_allowed`): the script's directory
    (`/recaptcha/`, which also allows what the script loads beside it), or the script's own path when a known
    script lies under that directory. None when its host serves none: the host itself may be allowed."""
    scripts = _scripts_by_host(eval_allowed).get((url.hostname or "").lower())
    if not scripts:
        return None
    path = url.path or "/"
    directory = path[: path.rfind("/") + 1]
    if any(script.path.startswith(directory) for script in scripts):
        return path  # the directory holds a known script too: only this one file
    return directory


def _path_matches(source_path: str, url_path: str) -> bool:
    """CSP3 §6.7.2.8 path-part matching (without percent-decoding: the listed paths hold no escapes)."""
    if source_path in ("", "/"):
        return True
    if source_path.endswith("/"):
        return url_path.startswith(source_path)
    return url_path == source_path
