"""Content Security Policy: say what the parsed policies (records/csp.py) really allow.

References (section numbers of CSP Level 3, w3.org/TR/CSP3, Working Draft 2024):
- §8.1 (and "Multiple policies" in §1): every enforced policy must allow a load, so the
  effective protection for a concern is the strongest any one policy gives.
- §6.8 fallbacks (records/csp.py `effective_sources`): a list inherited from default-src is
  judged exactly like the same list written under the directive it stands in for.
- §8.2 'strict-dynamic': host and scheme sources, 'self' and 'unsafe-inline' are ignored
  for scripts.
- §6.3.2 `sandbox` without allow-scripts: no script (and no plugin) runs at all.
- Upgrade Insecure Requests §4.1: under an enforced `upgrade-insecure-requests`, http:// script sources
  are fetched over https://.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records.csp import (
    Policy,
    allows_all_inline,
    effective_sources,
    is_nonce_or_hash,
    keywords_in,
    matches_nothing,
    quoted_sources,
    scheme_and_host,
    upgrades_insecure_requests,
)

# Scheme sources that let a script come from anywhere (or from attacker-made content).
_BROAD_SCHEMES = frozenset({"http", "https", "data", "blob", "filesystem"})


def is_broad(source: str) -> bool:
    """`*`, a scheme source such as `https:` or `data:`, or a host-source whose host is `*`."""
    if source.startswith("*.") or (":" not in source and not source.startswith("*")):
        return False  # no scheme, and a host other than `*`: the common cases, without a pattern run
    scheme, host = scheme_and_host(source)
    if host is None:
        return scheme in _BROAD_SCHEMES
    return host == "*"


def is_insecure(source: str) -> bool:
    """`http:` or an `http://` host: content fetched in cleartext can be swapped in transit."""
    return source[:5].lower() == "http:" and scheme_and_host(source)[0] == "http"


# --- Evaluation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CspEvaluation:
    """What the enforced policies of one response allow, all policies applied together."""

    policies: tuple[Policy, ...]  # the enforced policies with at least one known directive
    restricts_scripts: bool  # some policy has script-src(-elem) or default-src
    inline_script: tuple[str, ...]  # what inline script runs: "<script> elements", "event handler attributes"
    eval_allowed: bool
    broad_script_sources: tuple[str, ...]
    insecure_script_sources: tuple[str, ...]
    object_unrestricted: bool
    base_uri_unrestricted: bool
    inline_style: tuple[str, ...]  # explicitly allowed: "<style> elements", "style attributes"
    frame_ancestors: str | None  # "restrictive" | "permissive" | None (no enforced header policy has it)
    notes: tuple[str, ...]


def evaluate(policies: Sequence[Policy]) -> CspEvaluation:
    """Apply every enforced policy together (CSP3 §8.1: a load must pass them all).

    Policies with no directive a browser acts on are left out: they change nothing.
    """
    active = tuple(p for p in policies if p.enforced and p.has_effect)
    notes: list[str] = []
    for policy in active:
        notes.extend(policy.warnings)

    restricts_scripts = any(effective_sources(p, "script-src-elem") is not None or _sandboxed(p) for p in active)
    script_kinds = (("script-src-elem", "<script> elements"), ("script-src-attr", "event handler attributes"))
    inline_script = tuple(
        label for directive, label in script_kinds if all(_allows_inline(p, directive, script=True) for p in active)
    )
    eval_allowed = all(_allows_eval(p) for p in active)
    broad = _all_flag(active, lambda sources: [s for s in sources if is_broad(s)])
    insecure = _all_flag(active, lambda sources: [s for s in sources if is_insecure(s)])
    if insecure and upgrades_insecure_requests(active):
        # Upgrade Insecure Requests §4.1 (Fetch "main fetch"): the page's http:// requests are made over https://
        # before CSP checks them, and an http:// source matches the upgraded URL (CSP3 §6.7.2.8 scheme-part).
        notes.append(
            f"scripts named with http:// ({' '.join(insecure)}) are fetched over https://, as the policy has "
            "upgrade-insecure-requests"
        )
        insecure = ()
    object_unrestricted = all(not _restricts_objects(p) for p in active)
    base_uri_unrestricted = all(
        (sources := p.get("base-uri")) is None or any(is_broad(s) for s in sources) for p in active
    )
    inline_style = tuple(
        label
        for directive, label in (("style-src-elem", "<style> elements"), ("style-src-attr", "style attributes"))
        if all(_allows_inline(p, directive, script=False) for p in active)
        and any(effective_sources(p, directive) is not None for p in active)
    )
    frame_ancestors = _frame_ancestors(active)
    notes.extend(_script_notes(active, inline_script, eval_allowed))
    return CspEvaluation(
        policies=active,
        restricts_scripts=restricts_scripts,
        inline_script=inline_script,
        eval_allowed=eval_allowed,
        broad_script_sources=broad,
        insecure_script_sources=insecure,
        object_unrestricted=object_unrestricted,
        base_uri_unrestricted=base_uri_unrestricted,
        inline_style=inline_style,
        frame_ancestors=frame_ancestors,
        notes=tuple(dict.fromkeys(notes)),
    )


def _sandboxed(policy: Policy) -> bool:
    """CSP3 §6.3.2 `sandbox` without allow-scripts: no script runs at all.

    (Nor any plugin: sandboxing always sets HTML's "sandboxed plugins browsing context flag".)
    """
    tokens = policy.get("sandbox")
    return tokens is not None and "allow-scripts" not in (t.lower() for t in tokens)


def _allows_inline(policy: Policy, directive: str, *, script: bool) -> bool:
    if script and _sandboxed(policy):
        return False
    found = effective_sources(policy, directive)
    return found is None or allows_all_inline(found[1], script=script)


def _allows_eval(policy: Policy) -> bool:
    # CSP3 "EnsureCSPDoesNotBlockStringCompilation" reads script-src, then default-src.
    if _sandboxed(policy):
        return False
    found = effective_sources(policy, "script-src")
    return found is None or "'unsafe-eval'" in keywords_in(found[1])


def writes_unsafe_eval(policy: Policy) -> bool:
    """The policy's script-src (or default-src) lists 'unsafe-eval' (not: allows eval, which a policy without a
    script list does too)."""
    found = effective_sources(policy, "script-src")
    return found is not None and "'unsafe-eval'" in keywords_in(found[1])


def script_url_sources(policy: Policy) -> tuple[str, ...] | None:
    """Sources that decide which script URLs load: () when none does (a sandbox without allow-scripts, also with no
    script directive; 'strict-dynamic', CSP3 §8.2; a list matching nothing); None when the policy does not restrict
    scripts."""
    if _sandboxed(policy):
        return ()
    found = effective_sources(policy, "script-src-elem")
    if found is None:
        return None
    sources = found[1]
    if "'strict-dynamic'" in keywords_in(sources) or matches_nothing(sources):
        return ()
    return sources


def _all_flag(policies: Sequence[Policy], offending: Callable[[Sequence[str]], list[str]]) -> tuple[str, ...]:
    """Sources flagged by `offending`, if EVERY script-restricting policy has some (else none pass)."""
    found: list[str] = []
    restricting = 0
    for policy in policies:
        sources = script_url_sources(policy)
        if sources is None:
            continue  # this policy does not restrict scripts; it cannot block anything
        restricting += 1
        flagged = offending(sources)
        if not flagged:
            return ()
        found.extend(flagged)
    return tuple(dict.fromkeys(found)) if restricting else ()


def _restricts_objects(policy: Policy) -> bool:
    """Plugins are limited to named hosts (or 'self', or nothing), directly or through default-src."""
    if policy.get("sandbox") is not None:
        return True  # sandboxing always sets the "sandboxed plugins" flag (HTML "Sandboxing")
    found = effective_sources(policy, "object-src")
    if found is None:
        return False
    sources = found[1]
    return matches_nothing(sources) or not any(is_broad(s) for s in sources)


def _frame_ancestors(policies: Sequence[Policy]) -> str | None:
    values = [p.get("frame-ancestors") for p in policies if p.delivery == "header"]
    present = [v for v in values if v is not None]
    if not present:
        return None
    if any(matches_nothing(v) or not any(is_broad(s) for s in v) for v in present):
        return "restrictive"
    return "permissive"


def _script_notes(policies: Sequence[Policy], inline_script: tuple[str, ...], eval_allowed: bool) -> list[str]:
    notes = []
    for policy in policies:
        found = effective_sources(policy, "script-src-elem")
        if found is None:
            continue
        name, sources = found
        keywords = keywords_in(sources)
        has_nonce_or_hash = any(is_nonce_or_hash(s) for s in quoted_sources(sources))
        if "'unsafe-inline'" in keywords and (has_nonce_or_hash or "'strict-dynamic'" in keywords):
            notes.append(
                f"'unsafe-inline' in {name} is ignored by current browsers because the policy also uses "
                "a nonce, hash or 'strict-dynamic' (it only serves browsers older than CSP2)"
            )
        if "'strict-dynamic'" in keywords:
            if has_nonce_or_hash:
                notes.append(
                    f"{name} uses 'strict-dynamic': host allowlists and 'self' are ignored; scripts trusted "
                    "by nonce or hash may load further scripts"
                )
            else:
                notes.append(f"{name} uses 'strict-dynamic' without a nonce or hash, so no script can run")
    script_lists = [found[1] for p in policies if (found := effective_sources(p, "script-src")) is not None]
    wasm = {"'wasm-unsafe-eval'", "'unsafe-eval'"}
    if not eval_allowed and script_lists and all(keywords_in(s) & wasm for s in script_lists):
        notes.append("'wasm-unsafe-eval' allows compiling WebAssembly (but not JavaScript eval)")
    if len(policies) > 1:
        where = ", ".join(sorted({p.delivery for p in policies}))
        notes.append(f"{len(policies)} policies are enforced together ({where}); each must allow a script")
    return notes
