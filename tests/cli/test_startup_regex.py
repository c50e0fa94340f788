"""The code of regular expressions compiled at import is kept beside the byte-code (websec_app/startup_regex.py,
issue 14): a pattern served from the cache is the pattern `re` compiles, and only what module bodies compile is
written down."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.sites import RunningSite

ROOT = Path(__file__).resolve().parents[2]

#: Patterns of every shape `re` compiles differently: flags inline and passed, named and unnamed groups,
#: bytes, Unicode classes, possessive and atomic parts, look-arounds, conditionals, backreferences.
_PATTERNS = [
    (r"[A-Za-z][A-Za-z0-9+.\-]*+:", 0),
    (r"^(?P<name>[\x21-\x39\x3b-\x7e]++):(?P<space>[ \t]*+)(?P<value>.*+)$", 0),
    (r"(?i)<(/?)(script|style)(?=[\t\n\f\r />])", 0),
    (r"(?x) ( \d+ ) \s* (?P<unit> ms | s )  # a duration", 0),
    (r"\w+(?<![\d_])", "IGNORECASE"),
    (r"(?P<q>['\"]).*?(?P=q)|(?(q)x|y)", "DOTALL"),
    (r"(?>a+)b|[^\W\d]{2,5}?", "ASCII"),
    (r"^\s*#.*$", "MULTILINE"),
    (r"[\u0400-\u04ff\U0001f600-\U0001f64f]+", 0),
    (rb"\A(?:[\x00-\x7f]|\xc3[\x80-\xbf])*\Z", 0),
    (rb"(?L)[a-z]+", 0),
]

#: A module that compiles the patterns in its body, imported by a process with the cache installed: the first
#: process compiles and saves them, the second takes them from the cache. Each prints what its patterns are.
_MODULE = """
import re
PATTERNS = [re.compile(p, getattr(re, f) if f else 0) for p, f in {patterns!r}]
"""
_PROCESS = """
import json, re, sys
from websec_app import startup_regex
startup_regex.install()
import patterns_at_import
at_run_time = re.compile(sys.argv[1])  # by the program (`__main__`), not by an imported module's body: not kept
plain = [startup_regex._original_compile(p.pattern, p.flags) for p in patterns_at_import.PATTERNS]
print(json.dumps({
    "compiled": startup_regex.compiled(),
    "same": [a == b for a, b in zip(patterns_at_import.PATTERNS, plain, strict=True)],
    "shape": [[p.pattern if isinstance(p.pattern, str) else p.pattern.decode("latin-1"), p.flags, p.groups,
               dict(p.groupindex)] for p in patterns_at_import.PATTERNS],
    "plain_shape": [[p.pattern if isinstance(p.pattern, str) else p.pattern.decode("latin-1"), p.flags, p.groups,
               dict(p.groupindex)] for p in plain],
    "matches": [bool(p.search("ab <script id=1> 12 ms" if isinstance(p.pattern, str) else b"abc")) for p in
                patterns_at_import.PATTERNS],
    "at_run_time": at_run_time.fullmatch("x--y") is not None,
}))
startup_regex.allow_saving()
startup_regex.save()
"""


def _env(tmp_path: Path, *, bytecode: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "modules"), str(ROOT)])
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _process(tmp_path: Path, env: dict[str, str], run_time_pattern: str = r"x-{2}y") -> dict[str, object]:
    modules = tmp_path / "modules"
    modules.mkdir(exist_ok=True)
    (modules / "patterns_at_import.py").write_text(_MODULE.format(patterns=_PATTERNS))
    done = subprocess.run(
        [sys.executable, "-c", _PROCESS, run_time_pattern],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _cache_entries(tmp_path: Path) -> dict[tuple[str | bytes, int], object]:
    (cache,) = (tmp_path / "pycache").rglob("regex-code.*")
    _version, entries = marshal.loads(cache.read_bytes())
    return entries  # type: ignore[no-any-return]


def test_patterns_from_the_cache_are_the_patterns_re_compiles(tmp_path: Path) -> None:
    # Given a first process that compiled the module's patterns and saved their code
    env = _env(tmp_path)
    first = _process(tmp_path, env)
    assert first["compiled"] == len(_PATTERNS)

    # When a second process imports the same module
    second = _process(tmp_path, env)

    # Then it compiled none of them, and each equals what re compiles (Pattern equality compares the code)
    assert second["compiled"] == 0
    assert second["same"] == [True] * len(_PATTERNS)
    assert second["shape"] == second["plain_shape"] == first["shape"]
    assert second["matches"] == first["matches"]
    assert second["at_run_time"] is True


def test_only_patterns_compiled_by_a_module_body_are_written(tmp_path: Path) -> None:
    # When a process compiles, besides its module's patterns, one at run time (made of what a site sent, say)
    env = _env(tmp_path)
    _process(tmp_path, env, run_time_pattern="site-sent-[0-9]+")

    # Then the cache holds the module's patterns and not that one
    patterns = {pattern for pattern, _flags in _cache_entries(tmp_path)}
    assert patterns == {pattern for pattern, _flags in _PATTERNS}
    assert "site-sent-[0-9]+" not in patterns


def test_nothing_is_written_where_byte_code_is_not(tmp_path: Path) -> None:
    env = _env(tmp_path, bytecode=False)
    _process(tmp_path, env)

    assert _process(tmp_path, env)["compiled"] == len(_PATTERNS)
    assert not list((tmp_path / "pycache").rglob("regex-code.*"))


def test_a_damaged_cache_or_one_of_another_interpreter_is_ignored(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _process(tmp_path, env)
    (cache,) = (tmp_path / "pycache").rglob("regex-code.*")
    version, entries = marshal.loads(cache.read_bytes())

    # A file of another Python (or re) with wrong code for every pattern: not read, compiled as usual
    wrong = {key: (0, [1], 0, {}, ()) for key in entries}
    cache.write_bytes(marshal.dumps(((*version[:-1], 0x10FFFE), wrong)))
    other = _process(tmp_path, env)
    assert other["compiled"] == len(_PATTERNS)
    assert other["same"] == [True] * len(_PATTERNS)

    cache.write_bytes(b"\x00garbage")
    assert _process(tmp_path, env)["same"] == [True] * len(_PATTERNS)


def test_a_command_line_scan_takes_its_patterns_from_the_cache(
    best_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    # Given a first scan that wrote the cache
    env = {**_env(tmp_path), **scan_env}
    env.pop("PYTHONPATH")
    watch = (
        "import atexit, json, runpy, sys\n"
        "from websec_app import startup_regex\n"
        "atexit.register(lambda: print(json.dumps(startup_regex.compiled()), file=sys.stderr))\n"
        "sys.argv = ['websec_app', *sys.argv[1:]]\n"
        "runpy.run_module('websec_app', run_name='__main__', alter_sys=True)\n"
    )
    argv = [sys.executable, "-c", watch, "scan", best_site.url]
    first = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    # When the same scan runs again in a fresh process
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    # Then its report is the same, none of the patterns its modules compile was compiled again
    assert json.loads(done.stdout)["grade"] == json.loads(first.stdout)["grade"] == "A+"
    assert json.loads(done.stderr.strip().splitlines()[-1]) == 0
    # and every pattern the cache holds is the one re compiles from its text (the libraries' and ours)
    entries = _cache_entries(tmp_path)
    assert len(entries) > 100
    check = (
        "import json, marshal, re, sys\n"
        "from websec_app import startup_regex as s\n"
        "version, entries = marshal.loads(open(sys.argv[1], 'rb').read())\n"
        "print(json.dumps([version == s._version(), sum(s._entry_for(p, f) != e for (p, f), e in entries.items())]))\n"
    )
    (cache,) = (tmp_path / "pycache").rglob("regex-code.*")
    verdict = subprocess.run(
        [sys.executable, "-c", check, str(cache)], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(verdict.stdout) == [True, 0]


_WARNING = """
import json, re, warnings
from websec_app import startup_regex
startup_regex.install()

def compile_a_doubtful_set():
    return re.compile("[[a]")  # FutureWarning: possible nested set

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    compile_a_doubtful_set()
print(json.dumps([(w.category.__name__, w.filename, w.lineno) for w in caught]))
"""


def test_the_parser_warns_at_the_line_that_compiled_the_pattern(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WARNING], env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert json.loads(done.stdout) == [["FutureWarning", "<string>", 7]]
