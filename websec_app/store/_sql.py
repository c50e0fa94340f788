"""Small SQL helpers the store functions share (dialect differences live here only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from .hot_rows import AnySelect, HotRows

#: What the read functions accept: a Session, or a bare Connection, which skips the ORM unit-of-work
#: machinery that a single indexed SELECT does not need.
Reader = Session | Connection


def connection_of(reader: Reader) -> Connection:
    return reader.connection() if isinstance(reader, Session) else reader


def first_row(reader: Reader, statement: AnySelect, params: Mapping[str, Any]) -> Sequence[Any] | None:
    """The first row of a prebuilt SELECT."""
    return connection_of(reader).execute(statement, params).first()


def insert_ignoring_conflicts(session: Session, model: type[Any], values: dict[str, Any]) -> bool:
    """`INSERT ... ON CONFLICT DO NOTHING`: create a row unless one with the same unique key exists.

    Used to create counter rows race-free: concurrent first uses all "insert", one row results,
    and nobody fails. It is also the first statement of every counter transaction, so on
    SQLite the transaction takes the write lock up front and never has to upgrade a read
    lock (which SQLite answers with SQLITE_BUSY instead of waiting).

    Returns whether a row was inserted. (`RETURNING` tells, where `rowcount` does not:
    SQLAlchemy reports -1 for statements it adds implicit RETURNING to.)
    """
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        stmt: Any = sqlite.insert(model).values(**values).on_conflict_do_nothing()
    elif dialect == "postgresql":
        stmt = postgresql.insert(model).values(**values).on_conflict_do_nothing()
    else:  # pragma: no cover - the settings only produce these two
        raise NotImplementedError(f"the store supports SQLite and PostgreSQL, not {dialect}")
    key = list(model.__table__.primary_key.columns)
    return session.exec(stmt.returning(*key)).first() is not None


__all__ = [
    "AnySelect",
    "HotRows",
    "Reader",
    "connection_of",
    "first_row",
    "insert_ignoring_conflicts",
]
