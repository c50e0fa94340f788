"""Content Security Policy: script-src hosts known to serve scripts that run what a request names.

A host allowlist stops an injected <script src> only if no URL it allows runs code of the attacker's choosing: a
JSONP endpoint does (its callback parameter becomes the script), and so does an AngularJS library (templates in the
page's markup become script). A policy allowing one of the scripts Google's CSP Evaluator lists
(records/script_bypasses.py) is bypassed whatever else it says: csp.bypassable_script_host names them.

A URL is allowed when every enforced policy restricting scripts allows it (CSP3 §8.1), through a host-source (on
the default port, or `*`, 443 or 80). 'strict-dynamic' (host sources are ignored, CSP3 §8.2), a list matching
nothing and a sandbox without allow-scripts allow none; a policy with `*` or a scheme source allows every one, and
when every policy does, the scripts are csp.broad_script_source's and are not named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..records.csp import Policy, scheme_and_host
from ..records.script_bypasses import KnownScript, allowing_keys, known_web_key, scripts_allowed_by
from .csp import script_url_sources, writes_unsafe_eval

#: Names shown in a note, at most: a policy may name thousands of hosts.
_SHOWN = 3


@dataclass(frozen=True)
class _ListReading:
    """What one script list allows of the known scripts, and through which of its sources."""

    scripts: frozenset[KnownScript] | None  # None: every one (`*`, a scheme source: csp.broad_script_source)
    sources_by_key: Mapping[tuple[str, bool, str], tuple[str, ...]]  # HostSource.key -> the sources written so


def _read_list(sources: tuple[str, ...], eval_allowed: bool) -> _ListReading:
    """Its sources are read once each and grouped by `HostSource.key`, and each known script looked up by its own
    keys: a hostile list of 420,000 `*.com/path` sources read each against every script of .com (8.7 s)."""
    if any(_allows_every_web_url(source) for source in sources):
        return _ListReading(None, {})
    by_key: dict[tuple[str, bool, str], list[str]] = {}
    for source in sources:
        if (key := known_web_key(source)) is not None:
            by_key.setdefault(key, []).append(source)
    scripts = scripts_allowed_by(by_key, eval_allowed=eval_allowed)
    return _ListReading(scripts, {key: tuple(written) for key, written in by_key.items()})


def _allows_every_web_url(source: str) -> bool:
    """`*`, `https:`, `http:` (which matches https too, CSP3 §6.7.2.8), or a host-source whose host is `*`."""
    if source.startswith("*.") or "://*." in source or (":" not in source and not source.startswith("*")):
        return False  # a host, `*.host` (or a keyword): the common cases, without a pattern run
    scheme, host = scheme_and_host(source)
    return (host is None and scheme in ("http", "https")) or (host == "*" and scheme in (None, "http", "https"))


@dataclass(frozen=True)
class Bypass:
    """The known scripts every script-restricting enforced policy lets load (CSP3 §8.1), when one of them names them
    (a policy allowing every script is csp.broad_script_source's); the first policy naming one of them, and its
    sources through which one loads (those its repair narrows: fixes/csp_proposal.py Repairs.bypassing)."""

    scripts: frozenset[KnownScript] = frozenset()
    policy: Policy | None = None
    sources: frozenset[str] = frozenset()
    sources_without_eval: frozenset[str] = frozenset()  # those through which one loads that needs no 'unsafe-eval'


def bypass_of(policies: Sequence[Policy]) -> Bypass:
    """Each distinct list is read once, and the reading stops once no script is left: a 2 MiB page holds 116,000
    <meta> policies (22.6 s before both)."""
    allowed: frozenset[KnownScript] | None = None
    # a policy's directives -> its list's reading (None: it does not restrict scripts)
    read: dict[object, _ListReading | None] = {}
    for policy in policies:
        if policy.directives not in read:
            sources = script_url_sources(policy)
            read[policy.directives] = None if sources is None else _read_list(sources, writes_unsafe_eval(policy))
        reading = read[policy.directives]
        if reading is None or reading.scripts is None:
            continue  # no restriction, or every script: it narrows nothing
        allowed = reading.scripts if allowed is None else allowed & reading.scripts
        if not allowed:
            return Bypass()
    if not allowed:
        return Bypass()
    keys = allowing_keys(allowed)
    keys_without_eval = allowing_keys(script for script in allowed if not script.needs_eval)
    for policy in policies:
        reading = read[policy.directives]
        by_key = reading.sources_by_key.items() if reading is not None else ()
        culprits = frozenset(source for key, written in by_key if key in keys for source in written)
        if culprits:
            without_eval = frozenset(
                source for key, written in by_key if key in keys_without_eval for source in written
            )
            return Bypass(allowed, policy, culprits, without_eval)
    return Bypass(allowed)


def bypass_notes(scripts: frozenset[KnownScript]) -> list[str]:
    """What csp.bypassable_script_host's note says of `scripts` (Bypass.scripts)."""
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
