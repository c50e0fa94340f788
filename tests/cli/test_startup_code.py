"""dataclasses' generated code is compiled once and served from a cache beside the byte-code
(websec_app/startup_code.py, issue 14): classes made through it behave exactly as without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.sites import RunningSite

ROOT = Path(__file__).resolve().parents[2]

#: Defines the same dataclasses with and without the cache and prints what they look like from outside.
_SAME_BEHAVIOUR = """
import dataclasses, inspect, json, sys
from dataclasses import dataclass, field
from websec_app import startup_code

def define():
    @dataclass(frozen=True)
    class Point:
        x: int
        y: "int" = 0
        tags: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=list, compare=False, repr=False)

    @dataclass(order=True)
    class Version:
        major: int
        minor: int = 0
    return Point, Version

def describe(Point, Version):
    p = Point(1, notes=["n"])
    try:
        p.x = 2
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    return {
        "repr": repr(p), "eq": p == Point(1, notes=["other"]), "hash": hash(p) == hash(Point(1)),
        "frozen": frozen, "signature": str(inspect.signature(Point)),
        "init_annotations": {k: str(v) for k, v in Point.__init__.__annotations__.items()},
        "qualname": Point.__init__.__qualname__,
        "order": sorted([Version(2), Version(1, 5)]) == [Version(1, 5), Version(2)],
        "doc": Point.__doc__,
    }

plain = describe(*define())
startup_code.install()
cached = describe(*define())
compiled_first = startup_code.compiled()
startup_code.allow_saving()
startup_code.save()
print(json.dumps({"plain": plain, "cached": cached, "compiled": compiled_first}))
"""

#: The same classes again, in a fresh process.
_SECOND_PROCESS = _SAME_BEHAVIOUR.replace(
    "plain = describe(*define())",
    "startup_code.install()\nplain = describe(*define())\ncompiled_plain = startup_code.compiled()",
).replace('"compiled": compiled_first', '"compiled": compiled_plain, "point": repr(define()[0](3))')


def _run(code: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _env(tmp_path: Path, *, bytecode: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_classes_made_through_the_cache_behave_as_without_it(tmp_path: Path) -> None:
    result = _run(_SAME_BEHAVIOUR, _env(tmp_path))

    assert result["cached"] == result["plain"]
    assert result["compiled"] > 0  # type: ignore[operator]  # nothing was cached yet: compiled, then saved


def test_a_second_process_compiles_nothing_it_has_in_the_cache(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _run(_SAME_BEHAVIOUR, env)  # writes the cache

    second = _run(_SECOND_PROCESS, env)

    assert second["compiled"] == 0
    assert second["point"] == "define.<locals>.Point(x=3, y=0, tags=())"
    assert second["cached"] == second["plain"]


def test_nothing_is_written_where_byte_code_is_not(tmp_path: Path) -> None:
    env = _env(tmp_path, bytecode=False)
    _run(_SAME_BEHAVIOUR, env)

    assert _run(_SECOND_PROCESS, env)["compiled"] > 0  # type: ignore[operator]
    assert not list((tmp_path / "pycache").rglob("dataclass-code.*"))


def test_a_damaged_cache_is_ignored(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _run(_SAME_BEHAVIOUR, env)
    (cache,) = (tmp_path / "pycache").rglob("dataclass-code.*")
    cache.write_bytes(b"\x00garbage")

    assert _run(_SECOND_PROCESS, env)["point"] == "define.<locals>.Point(x=3, y=0, tags=())"


def test_a_command_line_scan_starts_from_the_cache(
    best_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    # Given a first scan that wrote the cache
    env = {**_env(tmp_path), **scan_env}
    watch = (
        "import atexit, json, runpy, sys\n"
        "from websec_app import startup_code\n"
        "atexit.register(lambda: print(json.dumps(startup_code.compiled()), file=sys.stderr))\n"
        "sys.argv = ['websec_app', *sys.argv[1:]]\n"
        "runpy.run_module('websec_app', run_name='__main__', alter_sys=True)\n"
    )
    argv = [sys.executable, "-c", watch, "scan", best_site.url]
    subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    # When the same scan runs again in a fresh process
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    # Then its report is the same and none of its dataclasses' code was compiled
    assert json.loads(done.stdout)["grade"] == "A+"
    assert json.loads(done.stderr.strip().splitlines()[-1]) == 0


def test_only_a_process_that_allows_it_writes_the_cache(tmp_path: Path) -> None:
    # A long-running process (serve-api, a worker) or a test run reads the cache but never writes what it defined.
    env = _env(tmp_path)
    _run(_SAME_BEHAVIOUR.replace("startup_code.allow_saving()\n", ""), env)

    assert not list((tmp_path / "pycache").rglob("dataclass-code.*"))


def _defining(classes: str) -> str:
    """A process that defines `classes` (Python statements) through the cache and saves it."""
    return (
        "import dataclasses\n"
        "from dataclasses import dataclass\n"
        "from websec_app import startup_code\n"
        "startup_code.install()\n"
        f"{classes}\n"
        "startup_code.allow_saving()\n"
        "startup_code.save()\n"
        "print('{}')\n"
    )


_ONE_NEW_CLASS = _defining("@dataclass\nclass Only:\n    x: int\n")
_MANY_NEW_CLASSES = _defining("[dataclasses.make_dataclass(f'C{i}', [(f'f{i}', int)]) for i in range(200)]")


def test_a_process_that_compiled_nothing_writes_nothing(tmp_path: Path) -> None:
    # Given a cache written by a process
    env = _env(tmp_path)
    _run(_SAME_BEHAVIOUR, env)
    (cache,) = (tmp_path / "pycache").rglob("dataclass-code.*")
    written = (cache.read_bytes(), cache.stat().st_mtime_ns)

    # When the same classes are defined again, then only some of them (a scan of another kind of site)
    _run(_SAME_BEHAVIOUR, env)
    _run(_defining("@dataclass(order=True)\nclass Version:\n    major: int\n    minor: int = 0\n"), env)

    # Then the file was not written again
    assert (cache.read_bytes(), cache.stat().st_mtime_ns) == written


def test_a_save_keeps_a_few_unused_entries_and_drops_many(tmp_path: Path) -> None:
    # Given a cache written by a process that defined other classes than the next one
    env = _env(tmp_path)
    _run(_SAME_BEHAVIOUR, env)
    (cache,) = (tmp_path / "pycache").rglob("dataclass-code.*")
    first = cache.stat().st_size

    # When a process defines one class the cache lacks, the others are few: kept beside it
    _run(_ONE_NEW_CLASS, env)
    with_both = cache.stat().st_size
    assert with_both > first
    assert _run(_SECOND_PROCESS, env)["compiled"] == 0  # the first process's classes are still there

    # When many entries go unused (code since changed), the next save keeps what its process used
    _run(_MANY_NEW_CLASSES, env)
    many = cache.stat().st_size
    _run(_ONE_NEW_CLASS.replace("class Only:", "class Other:").replace("x: int", "y: int"), env)

    assert many > 10 * with_both
    assert 0 < cache.stat().st_size < with_both
