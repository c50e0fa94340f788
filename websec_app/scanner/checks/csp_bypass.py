"""Content Security Policy: script-src hosts known to serve scripts that run what a request names.

A host allowlist stops an injected <script src> only if no URL it allows runs code of the attacker's choosing. A
JSONP endpoint does (its callback parameter becomes the script), and so does an AngularJS library (templates in the
page's markup become script). Google's CSP Evaluator keeps lists of such URLs (data/csp_script_bypass_hosts.json,
Apache-2.0); a policy allowing one is bypassed whatever else it says, so the header's note names it. The JSONP
endpoints of some hosts only work where 'unsafe-eval' is allowed, as CSP Evaluator has it.

A URL is allowed when every enforced policy restricting scripts allows it (CSP3 §8.1), through a host-source as CSP3
§6.7.2.8 matches one: the host (or, for `*.host`, any name under it), and the path, a prefix when it ends in "/",
else the whole path. 'strict-dynamic' (host sources are ignored, CSP3 §8.2), a list matching nothing and a sandbox
without allow-scripts allow none; `*` and scheme sources are csp.broad_script_source already and are not named.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..records.csp import Policy, effective_sources, keywords_in, matches_nothing

_DATA = Path(__file__).resolve().parents[1] / "data" / "csp_script_bypass_hosts.json"
_HOST_SOURCE_RE = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://)?"
    r"(?P<wildcard>\*\.)?(?P<host>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*)\.?"
    r"(?::(?:\*|[0-9]+))?"
    r"(?P<path>/[^;,]*)?$"
)
#: Names shown in a note, at most: a policy may name thousands of hosts.
_SHOWN = 3


@dataclass(frozen=True)
class _Script:
    url: str  # scheme-relative, as CSP Evaluator lists it: //host/path
    host: str
    path: str
    kind: str  # "JSONP endpoints" | "AngularJS"
    needs_eval: bool


@cache
def _known_scripts() -> tuple[_Script, ...]:
    data = json.loads(_DATA.read_text("utf-8"))
    needs_eval = frozenset(data["jsonp_needs_eval"])
    scripts = []
    for kind, urls in (("JSONP endpoints", data["jsonp"]), ("AngularJS", data["angular"])):
        for url in urls:
            host, _, path = url[2:].partition("/")
            scripts.append(_Script(url, host.lower(), "/" + path, kind, kind != "AngularJS" and host in needs_eval))
    return tuple(scripts)


def _allowed(policy: Policy) -> set[_Script] | None:
    """The known scripts the policy lets load, or None when it does not restrict scripts."""
    found = effective_sources(policy, "script-src-elem")
    if found is None:
        return None
    sources = found[1]
    sandbox = policy.get("sandbox")
    if sandbox is not None and "allow-scripts" not in (t.lower() for t in sandbox):
        return set()
    if "'strict-dynamic'" in keywords_in(sources) or matches_nothing(sources):
        return set()
    exact: dict[str, list[str]] = {}  # host -> the paths its sources allow ("" for any)
    under: dict[str, list[str]] = {}  # *.host -> the same
    for source in dict.fromkeys(sources):  # a hostile list repeats itself; each source is read once
        match = _HOST_SOURCE_RE.match(source)
        if match is None or (match["scheme"] or "https").lower() not in ("http", "https"):
            continue
        table = under if match["wildcard"] else exact
        table.setdefault(match["host"].lower(), []).append(match["path"] or "")
    if not exact and not under:
        return set()
    script_list = effective_sources(policy, "script-src")
    eval_allowed = script_list is not None and "'unsafe-eval'" in keywords_in(script_list[1])
    allowed = set()
    for script in _known_scripts():
        if script.needs_eval and not eval_allowed:
            continue
        labels = script.host.split(".")
        paths = [
            *exact.get(script.host, ()),
            *(p for i in range(1, len(labels)) for p in under.get(".".join(labels[i:]), ())),
        ]
        if any(_path_matches(path, script.path) for path in paths):
            allowed.add(script)
    return allowed


def _path_matches(source_path: str, url_path: str) -> bool:
    """CSP3 §6.7.2.8 path-part matching (without percent-decoding: the listed paths hold no escapes)."""
    if source_path in ("", "/"):
        return True
    if source_path.endswith("/"):
        return url_path.startswith(source_path)
    return url_path == source_path


def bypass_notes(policies: Sequence[Policy]) -> list[str]:
    """What the header's note says of known scripts every script-restricting enforced policy lets load."""
    allowed: set[_Script] | None = None
    for policy in policies:
        scripts = _allowed(policy)
        if scripts is not None:
            allowed = scripts if allowed is None else allowed & scripts
    if not allowed:
        return []
    notes = []
    for kind, consequence in (
        ("JSONP endpoints", "an injected <script> calling one with a callback of the attacker's runs under the policy"),
        ("AngularJS", "injected markup that loads it runs script through AngularJS templates, under the policy"),
    ):
        listed = sorted((s for s in allowed if s.kind == kind), key=lambda s: s.url)
        if not listed:
            continue
        hosts = list(dict.fromkeys(s.host for s in listed))
        named = ", ".join(hosts[:_SHOWN]) + (f" and {len(hosts) - _SHOWN} more" if len(hosts) > _SHOWN else "")
        example = listed[0].url
        notes.append(
            f"scripts may load from {named}, where Google's CSP Evaluator lists {kind} ({example}): {consequence}"
        )
    return notes
