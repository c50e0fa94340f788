"""A throwaway PostgreSQL server for tests, from Debian's `postgresql` package.

Started once per test session (on first use) in a temporary directory, listening on
127.0.0.1 only, with durability switched off for speed; stopped at exit. Each test gets
a fresh database cloned from a migrated template.

If the binaries are missing the tests that need it fail with a message saying what to
install (`make test` installs it); nothing is skipped silently.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests.fixtures.ports import free_port

_INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) were not found. Install Debian's `postgresql` package "
    "(`apt-get install postgresql`; `make test` does this) or put its bin directory on PATH."
)


class PostgresUnavailable(RuntimeError):
    pass


def find_bindir() -> Path:
    """The directory with initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/<version>/bin."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return Path(candidates[-1]).parent
    raise PostgresUnavailable(_INSTALL_HINT)


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int
    user: str = "websec"
    _as_postgres: bool = False
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _template: str | None = None

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self._as_postgres:  # initdb and postgres refuse to run as root
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")

    def start(self) -> None:
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.datadir), "-U", self.user, "-A", "trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.datadir), "-o", options, "-l", str(self.root / "log"), "-w", "start")

    def stop(self) -> None:
        if self.datadir.exists():
            try:
                self._run("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "-w", "stop")
            except PostgresUnavailable:
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str, driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://{self.user}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str) -> None:
        with psycopg.connect(self.url("postgres", driver="postgresql"), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[call-overload,unused-ignore]

    def create_database(self, template: str | None = None) -> str:
        """A new, empty (or template-cloned) database; returns its SQLAlchemy URL."""
        name = f"test_{os.getpid()}_{next(self._counter)}"
        clause = f" TEMPLATE {template} STRATEGY FILE_COPY" if template else ""
        self.execute(f"CREATE DATABASE {name}{clause}")
        return self.url(name)

    def migrated_database(self) -> str:
        """A new database with the store's schema, cloned from a template migrated once per session."""
        if self._template is None:
            from sqlalchemy import create_engine

            from websec_app.store import upgrade_schema

            url = self.create_database()
            engine = create_engine(url)
            upgrade_schema(engine)
            engine.dispose()
            self._template = url.rsplit("/", 1)[1]
        return self.create_database(template=self._template)


_server: PostgresServer | None = None
_lock = threading.Lock()


def get_server() -> PostgresServer:
    """The session's server, started on first use."""
    global _server
    with _lock:
        if _server is None:
            root = Path(tempfile.mkdtemp(prefix="websec-pg-"))
            server = PostgresServer(find_bindir(), root, free_port())
            try:
                server.start()
            except BaseException:
                server.stop()
                raise
            atexit.register(server.stop)
            _server = server
        return _server
