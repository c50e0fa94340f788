"""Store test fixtures: temporary SQLite, and PostgreSQL for the `any_database` cases."""

from __future__ import annotations

from tests import db_fixtures

# The shared database fixtures (tests/db_fixtures.py), registered for this directory.
database = db_fixtures.database
postgres_database = db_fixtures.postgres_database
any_database = db_fixtures.any_database
