"""PostgresStore: the Store interface on a PostgreSQL server, for when one machine is not enough.

Same semantics as NotebookStore. A save is one autocommit INSERT that computes the next seq from
the rows already committed; the unique (conversation_id, seq) key makes a concurrent writer that
picked the same seq wait and fail, and that writer simply retries, so no message is lost or
reordered and a save costs one round trip. Tables are prefixed ``providerkit_`` and may live in
their own schema (``schema=``); their version is kept in ``providerkit_schema`` with numbered
migrations, and a database from a newer version is refused untouched.

psycopg 3 is imported when a store is opened (install the ``postgres`` extra).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from ..core.json_input import read_json
from ..transport.pg import KEPT, connect, describe_dsn, first_line, quote_identifier
from .base import (
    BaseStore,
    ConversationInfo,
    ConversationMeta,
    SavedMessage,
    StoreCorruptError,
    StoredMessage,
    StoreError,
    StoreLockedError,
    StoreVersionError,
    merge_meta,
    newest_first,
    now_utc,
)
from .migrations import statements

__all__ = ["PostgresStore", "MIGRATIONS"]

_MIGRATION_LOCK = 0x706B6E62  # advisory lock key held while migrating

# Migration i + 1's statements (store/migrations.py numbers and names them for both stores):
# MIGRATIONS[i] takes the schema recorded in providerkit_schema from i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = statements("postgres")

# Before the numbering was shared, this store counted only its own three migrations: a database
# whose highest recorded version is 3 was written then, and holds what shared migration 6 does
# (2 and 1 meant the same then as now). A store of this version always records up to at least
# 6 in one transaction, so a 3 is never its own. Such a database is read as its shared number
# and left as it is (an older providerkit_nb still opens it).
_BEFORE_SHARED_NUMBERS = {3: 6}


def _shared_version(recorded: int) -> int:
    """The shared migration number of the highest version a database records."""
    return _BEFORE_SHARED_NUMBERS.get(recorded, recorded)


_INSERT = """
INSERT INTO providerkit_messages (conversation_id, seq, created_at, hash, body)
VALUES (
    %(cid)s,
    coalesce((SELECT seq FROM providerkit_messages WHERE conversation_id = %(cid)s
              ORDER BY seq DESC LIMIT 1), 0) + 1,
    %(at)s, %(hash)s, %(body)s
)
RETURNING seq, (SELECT seq FROM providerkit_messages
                WHERE conversation_id = %(cid)s AND hash = %(hash)s ORDER BY seq DESC LIMIT 1)
"""

_PUT_MARK = (
    "INSERT INTO providerkit_call_marks (conversation_id, call_id, state, detail, updated_at) "
    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (conversation_id, call_id) DO UPDATE SET "
    "state = excluded.state, detail = excluded.detail, updated_at = excluded.updated_at"
)


class PostgresStore(BaseStore):
    """``PostgresStore(dsn, schema=None)``: one connection, thread-safe behind a lock.

    ``close()`` keeps the connection, idle, for the next open of the same store in this process
    (a re-run cell, a worker's next task), which then costs one round trip instead of a new
    connection; unused, it is closed after a minute and at exit.
    """

    def __init__(
        self, dsn: str, *, schema: str | None = None, connect_timeout: float = 5.0,
        lock_timeout: float = 10.0,
    ) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise StoreError(
                "PostgresStore needs psycopg 3: pip install 'providerkit_nb[postgres]'"
            ) from exc
        self._pg = psycopg
        self.where = describe_dsn(dsn)
        self.schema = schema
        self._lock = threading.RLock()
        self._guards = 0  # conversation guards (session advisory locks) this store holds
        lock_ms = int(lock_timeout * 1000)
        # What the session is set up with, so a kept connection serves only the same store (the
        # DSN by its digest: it may carry a password, which the store keeps nowhere).
        self._kept_as = (hashlib.sha256(dsn.encode()).hexdigest(), schema, lock_ms)
        settings = [("TimeZone", "UTC"), ("lock_timeout", str(lock_ms))]
        if schema is not None:
            settings.append(("search_path", quote_identifier(schema)))
        kept = KEPT.take(self._kept_as)
        if kept is not None:  # opened before in this process: its check is the round trip
            self._conn: Any = kept
            if self._up_to_date():
                return
            if kept.broken:  # it died while kept (a server restart, an idle timeout)
                kept.close()
                kept = None
        if kept is None:
            try:
                self._conn = connect(dsn, connect_timeout=connect_timeout, settings=settings)
            except psycopg.Error as exc:
                raise StoreError(
                    f"{self.where}: cannot connect ({first_line(exc)}). Check that the server is "
                    "running and the DSN is right (scripts/pg-test-server.sh starts a local one)."
                ) from None
        try:
            if not self._up_to_date():
                self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        schema = f", schema={self.schema!r}" if self.schema else ""
        state = ", closed" if self.closed else ""
        return f"PostgresStore({self.where!r}{schema}{state})"

    # ---- plumbing

    def _fail(self, exc: Exception, doing: str) -> StoreError:
        pg = self._pg
        if isinstance(exc, pg.errors.LockNotAvailable):
            return StoreLockedError(
                f"{self.where}: a lock stayed taken while trying to {doing} ({first_line(exc)}). "
                "Another client holds a long transaction; finish it or raise lock_timeout."
            )
        return StoreError(f"{self.where}: failed to {doing} ({first_line(exc)}). Nothing was "
                          "changed by this call.")

    @contextmanager
    def _cursor(self, doing: str, *, transaction: bool = False) -> Iterator[Any]:
        with self._lock:
            self._check_open()
            try:
                if transaction:
                    with self._conn.transaction(), self._conn.cursor() as cur:
                        yield cur
                else:
                    with self._conn.cursor() as cur:
                        yield cur
            except self._pg.Error as exc:
                raise self._fail(exc, doing) from exc

    def _up_to_date(self) -> bool:
        """The schema version check, the one round trip of an open of an up-to-date database
        (the session settings travel with the connection request; the migration path takes
        five more round trips under an advisory lock)."""
        try:
            row = self._conn.execute("SELECT max(version) FROM providerkit_schema").fetchone()
        except self._pg.Error:
            return False  # no tables yet (or no schema): the migration path creates them
        return row is not None and row[0] is not None and _shared_version(row[0]) == len(MIGRATIONS)

    def _migrate(self) -> None:
        sql = self._pg.sql
        with self._cursor("migrate the schema", transaction=True) as cur:
            # Everything under one lock: CREATE ... IF NOT EXISTS is not safe against a second
            # client doing the same at the same moment.
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if self.schema is not None:
                ident = sql.Identifier(self.schema)
                cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
                cur.execute(sql.SQL("SET search_path TO {}").format(ident))  # for the session
            cur.execute("CREATE TABLE IF NOT EXISTS providerkit_schema (version INTEGER NOT NULL)")
            cur.execute("SELECT max(version) FROM providerkit_schema")
            version = _shared_version(cur.fetchone()[0] or 0)
            if version > len(MIGRATIONS):
                raise StoreVersionError(
                    f"{self!r}: the tables were written by a newer providerkit_nb (schema "
                    f"{version}; this one knows up to {len(MIGRATIONS)}). They were not changed; "
                    "upgrade providerkit_nb to use them."
                )
            for number in range(version, len(MIGRATIONS)):
                for stmt in MIGRATIONS[number]:
                    cur.execute(stmt)
                cur.execute("INSERT INTO providerkit_schema (version) VALUES (%s)", (number + 1,))

    @property
    def schema_version(self) -> int:
        with self._cursor("read the schema version") as cur:
            cur.execute("SELECT max(version) FROM providerkit_schema")
            return _shared_version(int(cur.fetchone()[0] or 0))

    # ---- primitives

    def _append(
        self, conversation_id: str, text: str, digest: str, created_at: datetime | None
    ) -> SavedMessage:
        at = created_at or now_utc()
        params = {"cid": conversation_id, "at": at, "hash": digest, "body": text}
        unique = self._pg.errors.UniqueViolation
        with self._lock:
            for _ in range(1000):
                try:
                    with self._cursor("save a message") as cur:
                        cur.execute(_INSERT, params)
                        seq, dup = cur.fetchone()
                    return SavedMessage(seq, digest, at, dup)
                except StoreError as exc:
                    if not isinstance(exc.__cause__, unique):
                        raise
                    # another writer took this seq first; read again and take the next one
        raise StoreLockedError(f"{self.where}: conversation {conversation_id!r} is being written "
                               "too fast by other clients to append; try again")

    def _append_step(
        self, conversation_id: str, rows: Sequence[tuple[str, str]], marks: Sequence[tuple[str, str, str]]
    ) -> list[SavedMessage]:
        """One transaction: every row and mark of the step, or (after a crash or an error) none.
        A concurrent writer that took one of its seqs first makes it start again."""
        at = now_utc()
        unique = self._pg.errors.UniqueViolation
        with self._lock:
            for _ in range(1000):
                saved: list[SavedMessage] = []
                try:
                    with self._cursor("save a step", transaction=True) as cur:
                        for text, digest in rows:
                            cur.execute(_INSERT, {"cid": conversation_id, "at": at, "hash": digest, "body": text})
                            seq, dup = cur.fetchone()
                            saved.append(SavedMessage(seq, digest, at, dup))
                        for call_id, state, detail in marks:
                            cur.execute(_PUT_MARK, (conversation_id, call_id, state, detail, at))
                    return saved
                except StoreError as exc:
                    if not isinstance(exc.__cause__, unique):
                        raise
        raise StoreLockedError(f"{self.where}: conversation {conversation_id!r} is being written "
                               "too fast by other clients to append; try again")

    def _bodies(self, conversation_id: str) -> list[tuple[int, str, str]]:
        # only what a message is made of: no timestamps to read for load
        with self._cursor("load a conversation") as cur:
            cur.execute(
                "SELECT seq, hash, body FROM providerkit_messages WHERE conversation_id = %s ORDER BY seq",
                (conversation_id,),
            )
            rows: list[tuple[int, str, str]] = cur.fetchall()
            return rows

    def records(self, conversation_id: str) -> list[StoredMessage]:
        with self._cursor("load a conversation") as cur:
            cur.execute(
                "SELECT seq, hash, created_at, body FROM providerkit_messages "
                "WHERE conversation_id = %s ORDER BY seq",
                (conversation_id,),
            )
            return [StoredMessage(s, h, t, b) for s, h, t, b in cur.fetchall()]

    def conversations(self) -> list[ConversationInfo]:
        with self._cursor("list conversations") as cur:
            cur.execute(
                """
                WITH m AS (SELECT conversation_id AS id, count(*) AS n, max(created_at) AS last
                           FROM providerkit_messages GROUP BY conversation_id)
                SELECT coalesce(m.id, c.id), coalesce(m.n, 0), coalesce(m.last, c.updated_at),
                       c.session_id, c.title, c.model, c.tags
                FROM m FULL OUTER JOIN providerkit_conversations c ON c.id = m.id
                """
            )
            rows = cur.fetchall()
        return newest_first([
            ConversationInfo(cid, n, at, sid, title, model, read_json(tags) if tags else [])
            for cid, n, at, sid, title, model, tags in rows
        ])

    def _delete(self, conversation_id: str) -> int:
        with self._cursor("delete a conversation", transaction=True) as cur:
            cur.execute("DELETE FROM providerkit_messages WHERE conversation_id = %s", (conversation_id,))
            n: int = cur.rowcount
            cur.execute("DELETE FROM providerkit_conversations WHERE id = %s", (conversation_id,))
            cur.execute("DELETE FROM providerkit_lost_turns WHERE conversation_id = %s", (conversation_id,))
            cur.execute("DELETE FROM providerkit_call_marks WHERE conversation_id = %s", (conversation_id,))
            cur.execute("DELETE FROM providerkit_turn_usage WHERE conversation_id = %s", (conversation_id,))
        return n

    _META_SQL = "SELECT session_id, title, model, tags FROM providerkit_conversations WHERE id = %s"

    @staticmethod
    def _meta_of(row: Sequence[Any] | None) -> ConversationMeta | None:
        return None if row is None else ConversationMeta(row[0], row[1], row[2], read_json(row[3]))

    def _read_meta(self, conversation_id: str) -> ConversationMeta | None:
        with self._cursor("read metadata") as cur:
            cur.execute(self._META_SQL, (conversation_id,))
            return self._meta_of(cur.fetchone())

    def _write_meta(self, conversation_id: str, changes: dict[str, Any]) -> ConversationMeta:
        with self._cursor("write metadata", transaction=True) as cur:
            cur.execute(
                "INSERT INTO providerkit_conversations (id, updated_at) VALUES (%s, %s) "
                "ON CONFLICT (id) DO NOTHING",
                (conversation_id, now_utc()),
            )
            cur.execute(self._META_SQL + " FOR UPDATE", (conversation_id,))
            meta = merge_meta(self._meta_of(cur.fetchone()), changes)
            cur.execute(
                "UPDATE providerkit_conversations SET session_id = %s, title = %s, model = %s, "
                "tags = %s, updated_at = %s WHERE id = %s",
                (meta.session_id, meta.title, meta.model, json.dumps(meta.tags), now_utc(),
                 conversation_id),
            )
        return meta

    def _ensure_session_id(self, conversation_id: str, candidate: str) -> str:
        with self._cursor("create a session id") as cur:
            cur.execute(
                "INSERT INTO providerkit_conversations AS c (id, session_id, updated_at) "
                "VALUES (%s, %s, %s) ON CONFLICT (id) DO UPDATE "
                "SET session_id = coalesce(c.session_id, excluded.session_id) RETURNING session_id",
                (conversation_id, candidate, now_utc()),
            )
            return str(cur.fetchone()[0])

    def _add_lost_turn(self, conversation_id: str, body: str, error: str) -> int:
        with self._cursor("save a lost turn") as cur:
            cur.execute(
                "INSERT INTO providerkit_lost_turns (conversation_id, created_at, error, turn) "
                "VALUES (%s, %s, %s, %s) RETURNING id",
                (conversation_id, now_utc(), error, body),
            )
            return int(cur.fetchone()[0])

    def _lost_turns(self, conversation_id: str) -> Sequence[tuple[int, str, str, datetime]]:
        with self._cursor("read lost turns") as cur:
            cur.execute(
                "SELECT id, turn, error, created_at FROM providerkit_lost_turns "
                "WHERE conversation_id = %s ORDER BY id",
                (conversation_id,),
            )
            return [(int(i), t, e, at) for i, t, e, at in cur.fetchall()]

    def _put_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        with self._cursor("mark a tool call") as cur:
            cur.execute(_PUT_MARK, (conversation_id, call_id, state, detail, now_utc()))

    def _marks(self, conversation_id: str) -> Sequence[tuple[str, str, str, datetime]]:
        with self._cursor("read call marks") as cur:
            cur.execute(
                "SELECT call_id, state, detail, updated_at FROM providerkit_call_marks "
                "WHERE conversation_id = %s ORDER BY updated_at, call_id",
                (conversation_id,),
            )
            return [(i, s, d, at) for i, s, d, at in cur.fetchall()]

    def _add_usage(self, conversation_id: str, record: str) -> None:
        with self._cursor("save a turn's usage") as cur:
            cur.execute(
                "INSERT INTO providerkit_turn_usage (conversation_id, created_at, record) VALUES (%s, %s, %s)",
                (conversation_id, now_utc(), record),
            )

    def _usages(self, conversation_id: str) -> Sequence[tuple[int, str]]:
        with self._cursor("read usage per turn") as cur:
            cur.execute(
                "SELECT id, record FROM providerkit_turn_usage WHERE conversation_id = %s ORDER BY id",
                (conversation_id,),
            )
            return [(int(i), r) for i, r in cur.fetchall()]

    # ---- the per-conversation guard: a session advisory lock, gone when the process dies

    def _lock_conversation(self, conversation_id: str) -> bool:
        from .guard import conversation_key

        key = conversation_key(conversation_id, self.schema or "")
        with self._cursor("lock a conversation") as cur:
            cur.execute("SELECT pg_try_advisory_lock(%s::bigint)", (key,))
            got = bool(cur.fetchone()[0])
            self._guards += got
            return got

    def _unlock_conversation(self, conversation_id: str) -> None:
        from .guard import conversation_key

        key = conversation_key(conversation_id, self.schema or "")
        if self.closed or self._conn.closed:
            return  # the session is gone, and its locks with it
        with self._cursor("unlock a conversation") as cur:
            cur.execute("SELECT pg_advisory_unlock(%s::bigint)", (key,))
            self._guards -= bool(cur.fetchone()[0])

    def unfinished(self) -> list[str]:
        """As ``BaseStore.unfinished``, reading only each conversation's last row (one query)."""
        from .base import ends_unanswered

        with self._cursor("list unfinished conversations") as cur:
            cur.execute(
                "SELECT DISTINCT ON (conversation_id) conversation_id, seq, hash, body "
                "FROM providerkit_messages ORDER BY conversation_id, seq DESC"
            )
            rows = cur.fetchall()
        out = []
        for cid, seq, digest, body in rows:
            try:
                last = self._decode(cid, seq, digest, body)
            except StoreCorruptError:
                out.append(cid)  # as BaseStore.unfinished: a damaged row needs a person
                continue
            if self._unanswered(cid) if last.role == "system" else ends_unanswered([last]):
                out.append(cid)
        return sorted(out)

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                if self._guards:  # closing the session is what lets go of its guards
                    self._conn.close()
                else:
                    KEPT.keep(self._kept_as, self._conn)  # for the next open of this store
