"""The schema migrations, numbered and named once for both stores.

A SQLite file is built at each older schema from the migration list (the statements of the
migrations up to it, and its number), then opened; the PostgreSQL tests need a real server
(PROVIDERKIT_PG_DSN; see tests/store/conftest.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.store import postgres as postgres_mod
from providerkit_nb.store import sqlite as sqlite_mod
from providerkit_nb.store.migrations import MIGRATIONS
from providerkit_nb.store.postgres import PostgresStore
from providerkit_nb.store.sqlite import NotebookStore

SHIPPED = 6  # migrations released so far (a SQLite store of 1.0 has user_version 6)
HI = '{"content":"hi","role":"user"}'  # a user message's canonical JSON, as a store keeps it
HI_HASH = hashlib.sha256(HI.encode()).hexdigest()


def test_each_migration_has_one_number_and_a_name_for_both_stores() -> None:
    assert [m.number for m in MIGRATIONS] == list(range(1, SHIPPED + 1))
    names = [m.name for m in MIGRATIONS]
    assert all(len(n.split()) >= 3 for n in names), names  # says what it does
    assert len(set(names)) == len(names)
    # each store runs the shared list, one step per number, whatever its dialect needs
    assert len(sqlite_mod.MIGRATIONS) == len(postgres_mod.MIGRATIONS) == SHIPPED
    for m, lite, pg in zip(MIGRATIONS, sqlite_mod.MIGRATIONS, postgres_mod.MIGRATIONS, strict=True):
        assert lite == m.sqlite and pg == m.postgres
    assert all(m.sqlite or m.postgres for m in MIGRATIONS)  # no step empty on both


def _schema(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name"
        ).fetchall()
    finally:
        conn.close()
    return [(t, n, " ".join(s.split())) for t, n, s in rows]


def _sqlite_at(path: Path, version: int) -> None:
    """A store file as a release at schema ``version`` left it, with one message saved."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("h8", 1, lambda d: int(d[:15], 16))  # what migration 6 reads
    for migration in MIGRATIONS[:version]:
        for stmt in migration.sqlite:
            conn.execute(stmt)
    conn.execute(f"PRAGMA user_version = {version}")
    if version:
        h8 = ", h8" if version >= 6 else ""
        conn.execute(
            f"INSERT INTO messages (conversation_id, seq, created_at, hash, body{h8}) "
            f"VALUES ('c', 1, '2026-01-01T00:00:00+00:00', ?, ?{', ?' if h8 else ''})",
            (HI_HASH, HI, int(HI_HASH[:15], 16)) if h8 else (HI_HASH, HI),
        )
    conn.close()


@pytest.mark.parametrize("version", range(1, SHIPPED))
def test_an_sqlite_file_of_each_older_schema_upgrades_to_the_schema_of_a_new_one(
    tmp_path: Path, version: int
) -> None:
    fresh = tmp_path / "fresh.providerkit.sqlite"
    NotebookStore(fresh).close()
    old = tmp_path / f"v{version}.providerkit.sqlite"
    _sqlite_at(old, version)
    with NotebookStore(old) as store:
        assert store.schema_version == SHIPPED
        assert store.load("c") == [pk.UserMessage("hi")]  # the message saved before, kept
        store.save("c", pk.UserMessage("after"))
        store.mark_call("c", "call_1", "asking")  # migration 2's table
        store.save_turn_usage("c", {"usage": None, "step": 0})  # migration 4's
        assert store.load("c") == [pk.UserMessage("hi"), pk.UserMessage("after")]
    # every step after the file's own ran, once, in order: the same tables and indexes as new
    assert _schema(old) == _schema(fresh)
    names = {n for _, n, _ in _schema(fresh)}
    assert {"messages", "messages_by_seq", "call_marks", "turn_usage", "lost_turns"} <= names


# --------------------------------------------------------------------------- PostgreSQL


def _recorded(dsn: str, schema: str) -> list[int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute(f'SELECT version FROM "{schema}".providerkit_schema ORDER BY version').fetchall()
    return [r[0] for r in rows]


@pytest.mark.postgres
def test_a_new_postgres_database_records_the_numbers_a_new_sqlite_file_has(
    pg: tuple[str, str], tmp_path: Path
) -> None:
    dsn, schema = pg
    with PostgresStore(dsn, schema=schema) as store, NotebookStore(tmp_path / "s.sqlite") as lite:
        assert store.schema_version == lite.schema_version == SHIPPED
    assert _recorded(dsn, schema) == list(range(1, SHIPPED + 1))  # one row per shared step


@pytest.mark.postgres
# 3 is left out: a database recording 3 is one of the previous numbering (the test below), as
# this release always records up to 6 in one transaction
@pytest.mark.parametrize("version", [1, 2, 4, 5])
def test_a_postgres_database_of_each_older_schema_upgrades_step_by_step(
    pg: tuple[str, str], version: int
) -> None:
    import psycopg

    dsn, schema = pg
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
        c.execute(f'SET search_path TO "{schema}"')
        for migration in MIGRATIONS[:version]:
            for stmt in migration.postgres:
                c.execute(stmt)
        c.execute("CREATE TABLE providerkit_schema (version INTEGER NOT NULL)")
        for n in range(1, version + 1):
            c.execute("INSERT INTO providerkit_schema (version) VALUES (%s)", (n,))
        c.execute("INSERT INTO providerkit_messages VALUES ('c', 1, now(), %s, %s)", (HI_HASH, HI))
    with PostgresStore(dsn, schema=schema) as store:
        assert store.schema_version == SHIPPED
        assert store.load("c") == [pk.UserMessage("hi")]
        store.mark_call("c", "call_1", "asking")
        store.save_turn_usage("c", {"usage": None, "step": 0})
        assert store.turn_usage("c") == [{"usage": None, "step": 0}]
    assert _recorded(dsn, schema) == list(range(1, SHIPPED + 1))


@pytest.mark.postgres
def test_a_postgres_database_of_the_previous_numbering_opens_unchanged(pg: tuple[str, str]) -> None:
    """Before the numbering was shared, PostgreSQL counted its own three steps (create, call
    marks, turn usage: shared 1, 2 and 4) and recorded 1, 2, 3. Such a database is complete:
    it opens, works and is not written to (an older release can still open it)."""
    import psycopg

    dsn, schema = pg
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
        c.execute(f'SET search_path TO "{schema}"')
        for number in (1, 2, 4):
            for stmt in MIGRATIONS[number - 1].postgres:
                c.execute(stmt)
        c.execute("CREATE TABLE providerkit_schema (version INTEGER NOT NULL)")
        c.execute("INSERT INTO providerkit_schema (version) VALUES (1), (2), (3)")
        c.execute("INSERT INTO providerkit_messages VALUES ('c', 1, now(), %s, %s)", (HI_HASH, HI))
    with PostgresStore(dsn, schema=schema) as store:
        assert store.schema_version == SHIPPED
        assert store.load("c") == [pk.UserMessage("hi")]
        store.save_turn_usage("c", {"usage": None, "step": 1})
        assert store.turn_usage("c") == [{"usage": None, "step": 1}]
    assert _recorded(dsn, schema) == [1, 2, 3]
