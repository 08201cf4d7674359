"""PostgresStore's open: one round trip on an up-to-date schema, the migration path otherwise.

Needs a real server (PROVIDERKIT_PG_DSN; see tests/store/conftest.py).
"""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.store.base import StoreVersionError
from providerkit_nb.store.postgres import MIGRATIONS, PostgresStore

pytestmark = pytest.mark.postgres


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
        assert again.schema_version == 6  # the migrations SQLite and PostgreSQL share


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
        assert s.schema_version == 6
        assert _settings(s)[2] == schema
        s.save("c", pk.UserMessage("after the migration"))
        assert len(s.load("c")) == 1


def test_newer_schema_is_refused_untouched(pg: tuple[str, str]) -> None:
    import psycopg

    dsn, schema = pg
    PostgresStore(dsn, schema=schema).close()
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'INSERT INTO "{schema}".providerkit_schema (version) VALUES (%s)', (7,))
    with pytest.raises(StoreVersionError, match="newer providerkit_nb"):
        PostgresStore(dsn, schema=schema)
    with psycopg.connect(dsn, autocommit=True) as c:
        got = c.execute(f'SELECT max(version) FROM "{schema}".providerkit_schema').fetchone()
    assert got is not None and got[0] == 7


def _backend(store: PostgresStore) -> int:
    got = store._conn.execute("SELECT pg_backend_pid()").fetchone()
    assert got is not None
    return int(got[0])


def test_open_again_takes_the_connection_the_close_kept(pg: tuple[str, str]) -> None:
    dsn, schema = pg
    with PostgresStore(dsn, schema=schema) as first:
        first.save("c", pk.UserMessage("hi"))
        pid = _backend(first)
    with PostgresStore(dsn, schema=schema) as again:
        assert _backend(again) == pid
        assert again.load("c") == [pk.UserMessage("hi")]
    with PostgresStore(dsn, schema=schema, lock_timeout=2) as other:  # set up otherwise: its own
        assert _backend(other) != pid
        assert _settings(other)[1] == "2s"


def test_a_schema_name_that_needs_quoting_reaches_the_server_whole(pg: tuple[str, str]) -> None:
    import psycopg

    dsn, schema = pg
    odd = schema + ' a "b" \\c'
    try:
        with PostgresStore(dsn, schema=odd) as s:
            s.save("c", pk.UserMessage("hi"))
            assert _settings(s) == ("UTC", "10s", '"' + odd.replace('"', '""') + '"')
        with psycopg.connect(dsn, autocommit=True) as c:
            got = c.execute("SELECT schema_name FROM information_schema.schemata WHERE schema_name = %s",
                            (odd,)).fetchone()
        assert got == (odd,)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(odd)))


def test_the_dsn_s_own_options_are_kept(pg: tuple[str, str]) -> None:
    dsn, schema = pg
    with PostgresStore(f"{dsn}?options=-c%20statement_timeout%3D4321", schema=schema) as s:
        got = s._conn.execute("SHOW statement_timeout").fetchone()
        assert got == ("4321ms",)
        assert _settings(s)[2] == schema


def test_a_kept_connection_the_server_ended_is_replaced(pg: tuple[str, str]) -> None:
    import psycopg

    dsn, schema = pg
    with PostgresStore(dsn, schema=schema) as first:
        first.save("c", pk.UserMessage("hi"))
        pid = _backend(first)
    with psycopg.connect(dsn, autocommit=True) as c:  # a server restart, an idle timeout
        c.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with PostgresStore(dsn, schema=schema) as again:
        assert _backend(again) != pid
        assert again.load("c") == [pk.UserMessage("hi")]


def test_only_an_idle_connection_is_kept_and_not_for_long(pg: tuple[str, str]) -> None:
    import time

    import psycopg

    from providerkit_nb.transport.pg import KeptConnections

    dsn, _ = pg
    kept = KeptConnections(idle_limit=0.3)
    busy = psycopg.connect(dsn)  # not autocommit: a query leaves a transaction open
    busy.execute("SELECT 1")
    kept.keep("k", busy)
    assert busy.closed and kept.take("k") is None
    idle = psycopg.connect(dsn, autocommit=True)
    kept.keep("k", idle)
    time.sleep(1.0)
    assert idle.closed and kept.take("k") is None
    fresh = psycopg.connect(dsn, autocommit=True)
    kept.keep("k", fresh)
    assert kept.take("k") is fresh and not fresh.closed
    fresh.close()


def test_a_forked_child_neither_uses_nor_ends_the_parent_s_kept_connection(pg: tuple[str, str]) -> None:
    import os

    dsn, schema = pg
    with PostgresStore(dsn, schema=schema) as first:
        first.save("c", pk.UserMessage("hi"))
        pid = _backend(first)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe, never returns
        # The inherited kept connection is dropped at the fork: used here, the parent's session
        # would carry two clients' traffic; ended here, the parent's would be over.
        code = 1
        try:
            with PostgresStore(dsn, schema=schema) as s:
                os.write(write, str(_backend(s)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    child_backend = int(os.read(read, 64) or b"0")
    os.close(read)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert child_backend not in (0, pid)
    with PostgresStore(dsn, schema=schema) as again:  # the parent's session is still there
        assert _backend(again) == pid
        assert again.load("c") == [pk.UserMessage("hi")]


def test_a_store_closed_while_it_guards_a_conversation_lets_the_guard_go(pg: tuple[str, str]) -> None:
    dsn, schema = pg
    holder = PostgresStore(dsn, schema=schema)
    assert holder._lock_conversation("c")
    pid = _backend(holder)
    holder.close()  # as a process that ends: the guard must not live on in a kept connection
    with PostgresStore(dsn, schema=schema) as other:
        assert _backend(other) != pid
        assert other._lock_conversation("c")
        other._unlock_conversation("c")
    with PostgresStore(dsn, schema=schema) as again:  # released guards: the connection is kept
        assert again._lock_conversation("c")
        again._unlock_conversation("c")
        pid = _backend(again)
    with PostgresStore(dsn, schema=schema) as last:
        assert _backend(last) == pid
