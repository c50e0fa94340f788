"""What a newcomer's `make run` and `.env` (copied from .env.example, as the README says) hand the app.

`make run PORT=N` serves on port N, and the links the app writes (the sandbox's checkout page, the emails,
security.txt) must name that port too: they named :3000 whatever PORT said, so every sandbox purchase of a
newcomer who picked another port ended on a refused connection."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from websec_app.settings import Settings, SettingsError

REPO = Path(__file__).resolve().parents[1]


def test_make_run_hands_its_port_to_the_app() -> None:
    # -n prints the recipe without running it; -o setup leaves the setup out
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", "setup", "run", "PORT=4321", "HOST=127.0.0.1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert "WEBSEC_RUN_PORT=4321 " in done.stdout, done.stdout
    assert "--frontend-port 4321" in done.stdout, done.stdout


def test_the_base_url_follows_the_run_port_unless_it_is_set() -> None:
    assert Settings.from_env({}).base_url == "http://localhost:3000"
    on_4321 = Settings.from_env({"WEBSEC_RUN_PORT": "4321"})
    assert on_4321.base_url == "http://localhost:4321"
    assert on_4321.base_url_is_loopback  # the sandbox stays on for a newcomer on another port
    given = {"WEBSEC_RUN_PORT": "4321", "WEBSEC_BASE_URL": "https://websec.example.com/"}
    assert Settings.from_env(given).base_url == "https://websec.example.com"


@pytest.mark.parametrize("port", ["http", "0", "70000"])
def test_a_run_port_that_is_no_port_is_refused(port: str) -> None:
    with pytest.raises(SettingsError, match="WEBSEC_RUN_PORT"):
        Settings.from_env({"WEBSEC_RUN_PORT": port})


def test_the_example_env_file_sets_nothing() -> None:
    """README: copy .env.example to .env; the Dockerfile: `docker run --env-file .env`, whose values override
    the image's ENV. An active WEBSEC_ENV=development there ran the production image in development mode
    (no HSTS, socket.io's Origin check off, private targets and the sandbox allowed). Every line shows a
    default, commented."""
    from dotenv import dotenv_values

    assert dotenv_values(REPO / ".env.example") == {}
