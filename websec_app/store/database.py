"""Engines, sessions and schema migrations.

The schema is owned by Alembic (`migrations/`): `Database.ensure_schema()` upgrades the
database to the newest revision the first time a session is opened in the process, so
deploying a new version migrates existing data in place instead of recreating tables.
Concurrent starters (several workers) are serialised by a lock: an advisory lock on
PostgreSQL, a lock file next to the database on SQLite.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlmodel import Session

from .hot_rows import PgRows, SqliteRows

if TYPE_CHECKING:  # Alembic is imported when migrations run, not with every use of the store
    from alembic.config import Config

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: Arbitrary constant naming our PostgreSQL advisory lock.
_PG_MIGRATION_LOCK = 7_460_521_893


def normalise_url(url: str) -> str:
    """`postgres://` and `postgresql://` (libpq style) mean psycopg 3, the PostgreSQL driver we ship."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return url


def make_engine(url: str) -> Engine:
    """An engine tuned for the API's many short transactions from worker threads."""
    url = normalise_url(url)
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or database.startswith("file:"):
            # In-memory: one connection per thread (SQLAlchemy's default); for quick experiments only.
            engine = create_engine(url, connect_args={"check_same_thread": False})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            # Sessions are used from the API's worker threads; each connection is used by one at a time.
            # `timeout` is SQLite's busy timeout: writers queue for the lock instead of failing.
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=20,
            max_overflow=40,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if backend == "postgresql":
        return create_engine(url, pool_size=20, max_overflow=20, pool_pre_ping=True, pool_recycle=1800)
    raise ValueError(f"unsupported database {backend!r}: use sqlite:/// or postgresql+psycopg://")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL: readers never wait for the writer (https://sqlite.org/wal.html); NORMAL is durable in WAL mode
    # except for the last transactions on power loss, an acceptable trade for counters.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def alembic_config(url: str | None = None) -> Config:
    """Alembic configuration for our migrations (no ini file needed at runtime)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
            connection.commit()
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _PG_MIGRATION_LOCK})
                connection.commit()
        return
    database = engine.url.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    with open(f"{database}.migrate-lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade_schema(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to `revision` (default: the newest). Safe to call concurrently."""
    from alembic import command

    config = alembic_config()
    with _migration_lock(engine), engine.connect() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        connection.commit()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


class Database:
    """One engine plus its schema state. Store functions take the sessions it opens."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._rows = SqliteRows(self.engine) if self.engine.dialect.name == "sqlite" else PgRows(self.engine)
        self._ready = False
        self._lock = threading.Lock()

    def ensure_schema(self) -> None:
        """Run pending migrations once per process (cheap no-op afterwards)."""
        if self._ready:
            return
        with self._lock:
            if not self._ready:
                upgrade_schema(self.engine)
                self._ready = True

    @contextmanager
    def session(self) -> Iterator[Session]:
        self.ensure_schema()
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    def hot_rows(self) -> SqliteRows | PgRows:
        """The reader for the API's hot prebuilt reads (key lookups): `hot_rows.SqliteRows` or `hot_rows.PgRows`."""
        self.ensure_schema()
        return self._rows

    def dispose(self) -> None:
        self._rows.close()
        self.engine.dispose()


_databases: dict[str, Database] = {}
_databases_lock = threading.Lock()


def database_for(url: str) -> Database:
    """The process-wide Database for a URL (one connection pool per database)."""
    with _databases_lock:
        database = _databases.get(url)
        if database is None:
            database = _databases[url] = Database(url)
        return database
