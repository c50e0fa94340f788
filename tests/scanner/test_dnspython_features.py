"""dnspython's optional features are answered from the parse cache once it holds them
(scanner/dnspython_features.py, issue 14): the same answers dnspython gives itself, without reading metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PLAIN = """
import json, dns._features
print(json.dumps({f: dns._features.have(f) for f in dns._features._requirements}))
"""

#: Counts the metadata look-ups dnspython makes while the scanner (and dnspython with it) is imported.
_WITH_SCANNER = """
import importlib.metadata, json
calls = []
version = importlib.metadata.version
importlib.metadata.version = lambda name: calls.append(name) or version(name)
import websec_app.scanner
import dns._features, dns.name, dns.dnssec
print(json.dumps({"answers": {f: dns._features.have(f) for f in dns._features._requirements}, "lookups": calls}))
"""


def _run(code: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_cached_answers_are_dnspython_s_own_and_need_no_metadata(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    plain = _run(_PLAIN, env)

    first = _run(_WITH_SCANNER, env)  # computes the answers and writes the cache
    second = _run(_WITH_SCANNER, env)

    assert first["answers"] == plain and second["answers"] == plain
    assert first["lookups"]  # dnspython read the metadata itself the first time
    assert second["lookups"] == []


#: With the answers cached: is importlib.metadata loaded by the scanner and dnspython, and does it work after?
_METADATA_AFTER = """
import json, sys
import websec_app.scanner
import dns._features, dns.dnssec, dns.version
loaded = "importlib.metadata" in sys.modules
from importlib import metadata  # bound before the real module is imported, as any caller may
version = metadata.version("dnspython")
import importlib.metadata
print(json.dumps({
    "loaded_by_the_scanner": loaded,
    "version_read": version == dns.version.version,
    "real_module_everywhere": sys.modules["importlib.metadata"] is importlib.metadata
    and hasattr(sys.modules["importlib.metadata"], "__file__")
    and metadata.distribution is importlib.metadata.distribution,
    "a_feature_missing_from_the_cache": (dns._features._cache.clear(), dns._features.have("dnssec"))[1],
}))
"""


def test_with_the_answers_cached_importlib_metadata_loads_only_when_read(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    subprocess.run([sys.executable, "-c", "import websec_app.scanner"], env=env, cwd=ROOT, check=True, timeout=60)

    after = _run(_METADATA_AFTER, env)

    assert after == {
        "loaded_by_the_scanner": False,
        "version_read": True,
        "real_module_everywhere": True,
        "a_feature_missing_from_the_cache": True,
    }


_READ_WHILE_IT_STANDS_IN = """
import json, sys
import websec_app.scanner
from websec_app.scanner import dnspython_features
with dnspython_features._metadata_on_first_use():
    stand_in = sys.modules["importlib.metadata"]
    version = stand_in.version("dnspython")  # as another thread could, while dnspython is being imported
import importlib.metadata, dns.version
print(json.dumps({
    "stood_in": type(stand_in).__name__,
    "version_read": version == dns.version.version,
    "real_after": sys.modules["importlib.metadata"] is importlib.metadata and importlib.metadata is not stand_in,
}))
"""


def test_the_stand_in_read_during_the_import_gives_way_to_the_real_module(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    subprocess.run([sys.executable, "-c", "import websec_app.scanner"], env=env, cwd=ROOT, check=True, timeout=60)

    assert _run(_READ_WHILE_IT_STANDS_IN, env) == {
        "stood_in": "_MetadataOnFirstUse",
        "version_read": True,
        "real_after": True,
    }
