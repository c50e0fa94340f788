"""Content Security Policy: script-src hosts known to serve scripts that run what a request names.

A host allowlist stops an injected <script src> only if no URL it allows runs code of the attacker's choosing: a
JSONP endpoint does (its callback parameter becomes the script), and so does an AngularJS library (templates in the
page's markup become script). A policy allowing one of the scripts Google's CSP Evaluator lists
(records/script_bypasses.py) is bypassed whatever else it says: csp.bypassable_script_host names them.

A URL is allowed when every enforced policy restricting scripts allows it (CSP3 §8.1), through a host-source.
'strict-dynamic' (host sources are ignored, CSP3 §8.2), a list matching nothing and a sandbox without allow-scripts
allow none; `*` and scheme sources are csp.broad_script_source already and are not named.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..records.csp import Policy, effective_sources, keywords_in, matches_nothing
from ..records.script_bypasses import HostSource, KnownScript, host_source, known_scripts

#: Names shown in a note, at most: a policy may name thousands of hosts.
_SHOWN = 3


def _script_host_sources(policy: Policy) -> list[tuple[str, HostSource]] | None:
    """The host-sources of the policy's script list that load scripts (source as written, read), or None when the
    policy does not restrict scripts."""
    found = effective_sources(policy, "script-src-elem")
    if found is None:
        return None
    sources = found[1]
    sandbox = policy.get("sandbox")
    if sandbox is not None and "allow-scripts" not in (t.lower() for t in sandbox):
        return []
    if "'strict-dynamic'" in keywords_in(sources) or matches_nothing(sources):
        return []
    return [(source, read) for source in sources if (read := host_source(source)) is not None]


def _eval_allowed(policy: Policy) -> bool:
    script_list = effective_sources(policy, "script-src")
    return script_list is not None and "'unsafe-eval'" in keywords_in(script_list[1])


def _allowed(policy: Policy) -> set[KnownScript] | None:
    """The known scripts the policy lets load, or None when it does not restrict scripts."""
    host_sources = _script_host_sources(policy)
    if host_sources is None:
        return None
    if not host_sources:
        return set()
    exact: dict[str, list[str]] = {}  # host -> the paths its sources allow ("" for any)
    under: dict[str, list[str]] = {}  # *.host -> the same
    for _, read in host_sources:
        (under if read.wildcard else exact).setdefault(read.host, []).append(read.path)
    eval_allowed = _eval_allowed(policy)
    allowed = set()
    for script in known_scripts():
        if script.needs_eval and not eval_allowed:
            continue
        labels = script.host.split(".")
        reading = [HostSource(script.host, False, path) for path in exact.get(script.host, ())] + [
            HostSource(".".join(labels[i:]), True, path)
            for i in range(1, len(labels))
            for path in under.get(".".join(labels[i:]), ())
        ]
        if any(read.allows(script) for read in reading):
            allowed.add(script)
    return allowed


def bypassed_scripts(policies: Sequence[Policy]) -> frozenset[KnownScript]:
    """The known scripts every script-restricting enforced policy lets load."""
    allowed: set[KnownScript] | None = None
    for policy in policies:
        scripts = _allowed(policy)
        if scripts is not None:
            allowed = scripts if allowed is None else allowed & scripts
    return frozenset(allowed or ())


def bypassing_sources(policy: Policy, scripts: frozenset[KnownScript]) -> frozenset[str]:
    """The sources (as written) of `policy`'s script list through which one of `scripts` loads."""
    return frozenset(
        source for source, read in _script_host_sources(policy) or () if any(read.allows(script) for script in scripts)
    )


def bypass_notes(scripts: frozenset[KnownScript]) -> list[str]:
    """What csp.bypassable_script_host's note says of `scripts` (bypassed_scripts)."""
    notes = []
    for kind, consequence in (
        ("JSONP endpoints", "an injected <script> calling one with a callback of the attacker's runs under the policy"),
        ("AngularJS", "injected markup that loads it runs script through AngularJS templates, under the policy"),
    ):
        listed = sorted((s for s in scripts if s.kind == kind), key=lambda s: s.url)
        if not listed:
            continue
        hosts = list(dict.fromkeys(s.host for s in listed))
        named = ", ".join(hosts[:_SHOWN]) + (f" and {len(hosts) - _SHOWN} more" if len(hosts) > _SHOWN else "")
        example = listed[0].url
        notes.append(
            f"scripts may load from {named}, where Google's CSP Evaluator lists {kind} ({example}): {consequence}"
        )
    return notes
