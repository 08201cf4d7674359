"""PostgresStore's open: one round trip on an up-to-date schema, the migration path otherwise.

Needs a real server (PROVIDERKIT_PG_DSN; see tests/store/conftest.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

import providerkit_nb as pk
from providerkit_nb.store.base import StoreVersionError
from providerkit_nb.store.postgres import MIGRATIONS, PostgresStore

from .conftest import require_pg

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg() -> Iterator[tuple[str, str]]:
    import psycopg

    dsn = require_pg()
    schema = f"pk_open_{uuid.uuid4().hex[:8]}"
    yield dsn, schema
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _settings(store: PostgresStore) -> tuple[str, ...]:
    out = []
    for name in ("TimeZone", "lock_timeout", "search_path"):
        got = store._conn.execute(f"SHOW {name}").fetchone()
        assert got is not None
        out.append(str(got[0]))
    return tuple(out)


def test_reopen_sets_the_session_like_the_first_open(pg: tuple[str, str]) -> None:
    dsn, schema = pg
    first = PostgresStore(dsn, schema=schema, lock_timeout=3)  # creates the tables
    with first:
        first.save("c", pk.UserMessage("hi"))
        made = _settings(first)
    again = PostgresStore(dsn, schema=schema, lock_timeout=3)  # the one-round-trip path
    with again:
        assert _settings(again) == made == ("UTC", "3s", schema)
        assert again.load("c") == [pk.UserMessage("hi")]
        assert again.schema_version == 3


def test_older_schema_migrates_on_open(pg: tuple[str, str]) -> None:
    import psycopg

    dsn, schema = pg
    with psycopg.connect(dsn, autocommit=True) as c:  # a database left at schema 1
        c.execute(f'CREATE SCHEMA "{schema}"')
        c.execute(f'SET search_path TO "{schema}"')
        for stmt in MIGRATIONS[0]:
            c.execute(stmt)
        c.execute("CREATE TABLE providerkit_schema (version INTEGER NOT NULL)")
        c.execute("INSERT INTO providerkit_schema (version) VALUES (1)")
    s = PostgresStore(dsn, schema=schema)
    with s:
        assert s.schema_version == 3
        assert _settings(s)[2] == schema
        s.save("c", pk.UserMessage("after the migration"))
        assert len(s.load("c")) == 1


def test_newer_schema_is_refused_untouched(pg: tuple[str, str]) -> None:
    import psycopg

    dsn, schema = pg
    PostgresStore(dsn, schema=schema).close()
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'INSERT INTO "{schema}".providerkit_schema (version) VALUES (%s)', (4,))
    with pytest.raises(StoreVersionError, match="newer providerkit_nb"):
        PostgresStore(dsn, schema=schema)
    with psycopg.connect(dsn, autocommit=True) as c:
        got = c.execute(f'SELECT max(version) FROM "{schema}".providerkit_schema').fetchone()
    assert got is not None and got[0] == 4
