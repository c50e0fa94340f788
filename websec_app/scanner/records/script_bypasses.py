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
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import SplitResult, unquote

__all__ = [
    "WEB_PORTS",
    "HostSource",
    "KnownScript",
    "allowing_keys",
    "bypass_hosts",
    "host_source",
    "known_web_key",
    "known_scripts",
    "narrowed_path",
    "scripts_allowed_by",
]

_DATA = Path(__file__).resolve().parents[1] / "data" / "csp_script_bypass_hosts.json"
_HOST_NAME_RE = re.compile(r"[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\Z")


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
    port: str | None = None  # as written: digits or "*"

    @property
    def key(self) -> tuple[str, bool, str]:
        return (self.host, self.wildcard, self.path)

    def covers(self, other: HostSource) -> bool:
        """Whether every URL `other` allows is one this source allows too (host, port, then path)."""
        if self.port != "*" and _port_or_default(self.port) != _port_or_default(other.port):
            return False
        if self.wildcard:
            if not other.host.endswith("." + self.host):
                return False
        elif other.wildcard or other.host != self.host:
            return False
        return _path_matches(self.path, other.path)


#: A source's port that allows a URL on https's or http's default port (CSP3 §6.7.2.8 port-part: none, `*`, the
#: default port, or 80 for an https URL).
WEB_PORTS = frozenset({None, "*", "443", "80"})


def host_source(source: str) -> HostSource | None:
    """`source` as a host-source that can load a script over the web; None for anything else (a keyword, a
    scheme source, `*`, another scheme). Read with string operations: a hostile list holds 420,000 sources."""
    parts = _host_source_parts(source, known_only=False)
    return None if parts is None else HostSource(*parts)


def known_web_key(source: str) -> tuple[str, bool, str] | None:
    """`HostSource.key` of a host-source that loads over a web port (WEB_PORTS) from a known script's host or, written
    `*.name`, a name above one; None for the rest, rejected before the path is read (a list of 420,000 sources)."""
    read = _host_source_parts(source, known_only=True)
    return None if read is None or read[3] not in WEB_PORTS else read[:3]


def _host_source_parts(source: str, *, known_only: bool) -> tuple[str, bool, str, str | None] | None:
    """(host, wildcard, path, port) of a CSP3 §2.3.1 host-source over http(s) or without a scheme; `known_only`:
    only of a host `known_web_key` takes, decided before the rest is read."""
    scheme, separator, rest = source.partition("://")
    if not separator:
        rest = source
    elif scheme.lower() not in ("http", "https"):
        return None
    authority, slash, path = rest.partition("/")
    host, colon, port = authority.partition(":")
    host = host.lower().removesuffix(".")  # one dot ends a name (CSP3 host-part); a second is no host
    wildcard = host.startswith("*.")
    if wildcard:
        host = host[2:]
    if known_only and host not in (_scripts_by_suffix(True) if wildcard else _scripts_by_host(True)):
        return None
    if colon and port != "*":
        if not (port.isascii() and port.isdigit()):
            return None
        port = str(int(port))  # 0443 is 443 (CSP3 §6.7.2.8 reads the port-part as a number)
    if not host or not _HOST_NAME_RE.match(host):
        return None
    # the path percent-decoded whole, as Chromium 156 compares it (an encoded slash too: `/tools%2F` allows
    # /tools/feedback/..., where CSP3 §6.7.2.8 splits on "/" first); the listed scripts' paths hold no escapes
    return host, wildcard, unquote(slash + path), port if colon else None


def allowing_keys(scripts: Iterable[KnownScript]) -> frozenset[tuple[str, bool, str]]:
    """Every `HostSource.key` of a source on a web port that allows one of `scripts` (`_keys_of`)."""
    return frozenset(key for script in scripts for key in _keys_of(script))


def scripts_allowed_by(keys: Container[tuple[str, bool, str]], *, eval_allowed: bool) -> frozenset[KnownScript]:
    """The known scripts (those needing eval when `eval_allowed`) a source of one of `keys` on a web port allows,
    each looked up by its own few keys: a hostile list holds 420,000 sources."""
    return frozenset(
        script
        for script in known_scripts()
        if (eval_allowed or not script.needs_eval) and any(key in keys for key in _keys_of(script))
    )


@cache
def _keys_of(script: KnownScript) -> tuple[tuple[str, bool, str], ...]:
    """(host, wildcard, path) of every source on a web port that allows `script` (CSP3 §6.7.2.8): its host, or a
    name above it as `*.name`, with no path, a prefix of its path ending in "/", or its whole path."""
    labels = script.host.split(".")
    hosts = [(script.host, False), *((".".join(labels[i:]), True) for i in range(1, len(labels)))]
    path = script.path
    paths = ["", path, *(path[: i + 1] for i, char in enumerate(path) if char == "/")]
    return tuple(dict.fromkeys((host, wildcard, written) for host, wildcard in hosts for written in paths))


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


@cache
def _scripts_by_suffix(with_eval: bool) -> dict[str, tuple[KnownScript, ...]]:
    """The known scripts under each name a `*.name` source may give: every proper suffix of their hosts."""
    by_suffix: dict[str, list[KnownScript]] = {}
    for host, scripts in _scripts_by_host(with_eval).items():
        labels = host.split(".")
        for index in range(1, len(labels)):
            by_suffix.setdefault(".".join(labels[index:]), []).extend(scripts)
    return {suffix: tuple(scripts) for suffix, scripts in by_suffix.items()}


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
    path = _without_dot_segments(url.path or "/")  # as browsers request it: written as is, it would not match
    directory = path[: path.rfind("/") + 1]
    if any(script.path.startswith(unquote(directory)) for script in scripts):
        directory = path  # the directory holds a known script too: only this one file
    # a ';' or ',' would end the directive or the policy (CSP3 §2.3.1 asks for them percent-encoded)
    return directory.replace(";", "%3B").replace(",", "%2C")


def _without_dot_segments(path: str) -> str:
    """URL Standard path parsing: "." and ".." segments, written or percent-encoded ("%2e", ".%2E" ...), removed."""
    segments: list[str] = []
    parts = path.split("/")
    for index, segment in enumerate(parts[1:], start=1):
        last = index == len(parts) - 1
        kind = segment.lower().replace("%2e", ".")
        if kind == "..":
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif kind == ".":
            if last:
                segments.append("")
        else:
            segments.append(segment)
    return "/" + "/".join(segments)


def _port_or_default(port: str | None) -> str | None:
    """A port-part as it matches a URL on its scheme's default port: none, 443 and 80 alike (CSP3 §6.7.2.8)."""
    return None if port in (None, "443", "80") else port


def _path_matches(source_path: str, url_path: str) -> bool:
    """CSP3 §6.7.2.8 path-part matching, both percent-decoded (HostSource keeps its path so)."""
    if source_path in ("", "/"):
        return True
    if source_path.endswith("/"):
        return url_path.startswith(source_path)
    return url_path == source_path
