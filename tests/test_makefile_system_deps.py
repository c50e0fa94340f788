"""`make run` and `make test` install the Debian packages they need only when something is missing
(Makefile `apt_install_missing`): a command by its name on PATH, a font by its file. Each font was taken
for missing while it was installed (its file is not executable, and the check used `command -v`), so
every `make` ran apt-get again, asking for sudo on a developer's machine."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _listed_as_missing(packages: str) -> str:
    """What `make system-deps` would install for RUN_APT_PACKAGES=`packages`; apt-get is not run (SUDO=true
    turns each apt-get line into `true apt-get ...`)."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-s", "system-deps", f"RUN_APT_PACKAGES={packages}", "SUDO=true"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_a_present_file_or_command_is_not_installed_again_and_a_missing_one_is(tmp_path: Path) -> None:
    present_font = tmp_path / "Present-Regular.ttf"
    present_font.write_bytes(b"not executable, like every font")
    missing_font = tmp_path / "Missing-Regular.ttf"
    packages = (
        f"{present_font}:pkg-font-present {missing_font}:pkg-font-missing "
        "sh:pkg-command-present websec-no-such-command:pkg-command-missing"
    )

    out = _listed_as_missing(packages)

    assert out.strip() == "Installing Debian packages: pkg-font-missing pkg-command-missing", out
