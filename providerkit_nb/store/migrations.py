"""The stores' schema migrations, numbered and named once for SQLite and PostgreSQL.

Migration N takes a store from schema N - 1 to N, whichever database holds it: SQLite records
the number as ``user_version``, PostgreSQL as a row in ``providerkit_schema``. Each migration
says what it does and holds each dialect's statements; a step one dialect does not need (the
SQLite index layout) is empty there, and still counted, so one number means one schema on both.
Append only: never edit a migration that has shipped, and never renumber one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Migration", "MIGRATIONS", "Dialect", "statements"]

Dialect = Literal["sqlite", "postgres"]

APPLICATION_ID = 0x706B6E62  # "pknb": marks a SQLite file as a providerkit store


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, what it does, and the statements of each dialect."""

    number: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]

    def statements(self, dialect: Dialect) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgres


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "create the messages, conversations and lost turns tables",
        sqlite=(
            f"PRAGMA application_id = {APPLICATION_ID}",
            """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            hash TEXT NOT NULL,
            body TEXT NOT NULL,
            duplicate_of INTEGER,
            UNIQUE (conversation_id, seq)
        )""",
            "CREATE INDEX messages_by_hash ON messages (conversation_id, hash, seq)",
            """CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            session_id TEXT,
            title TEXT,
            model TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            updated_at TEXT NOT NULL
        )""",
            """CREATE TABLE lost_turns (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            error TEXT NOT NULL,
            turn TEXT NOT NULL
        )""",
            "CREATE INDEX lost_turns_by_conversation ON lost_turns (conversation_id, id)",
        ),
        postgres=(
            """CREATE TABLE providerkit_messages (
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            hash TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        )""",
            "CREATE INDEX providerkit_messages_by_hash ON providerkit_messages (conversation_id, hash, seq)",
            """CREATE TABLE providerkit_conversations (
            id TEXT PRIMARY KEY,
            session_id TEXT,
            title TEXT,
            model TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            updated_at TIMESTAMPTZ NOT NULL
        )""",
            """CREATE TABLE providerkit_lost_turns (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            error TEXT NOT NULL,
            turn TEXT NOT NULL
        )""",
            "CREATE INDEX providerkit_lost_turns_by_conversation ON providerkit_lost_turns (conversation_id, id)",
        ),
    ),
    Migration(
        2,
        "add call marks (a call waits for a person's approval, or has started)",
        sqlite=(
            """CREATE TABLE IF NOT EXISTS call_marks (
            conversation_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (conversation_id, call_id)
        )""",
        ),
        postgres=(
            """CREATE TABLE IF NOT EXISTS providerkit_call_marks (
            conversation_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '{}',
            updated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (conversation_id, call_id)
        )""",
        ),
    ),
    Migration(
        3,
        "drop the SQLite hash index (duplicates are found from each store object's hash map)",
        sqlite=("DROP INDEX IF EXISTS messages_by_hash",),
        postgres=(),  # the server's save finds a duplicate with its index, in the same round trip
    ),
    Migration(
        4,
        "add usage per turn (kept with the history, so the frames read it after a restart)",
        sqlite=(
            """CREATE TABLE IF NOT EXISTS turn_usage (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            record TEXT NOT NULL
        )""",
            "CREATE INDEX IF NOT EXISTS turn_usage_by_conversation ON turn_usage (conversation_id, id)",
        ),
        postgres=(
            """CREATE TABLE IF NOT EXISTS providerkit_turn_usage (
            id BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            record TEXT NOT NULL
        )""",
            "CREATE INDEX IF NOT EXISTS providerkit_turn_usage_by_conversation ON providerkit_turn_usage (conversation_id, id)",
        ),
    ),
    Migration(
        5,
        "bring back the SQLite hash index (the first save to a long conversation looks up one "
        "hash instead of reading every row)",
        sqlite=("CREATE INDEX IF NOT EXISTS messages_by_hash ON messages (conversation_id, hash, seq)",),
        postgres=(),  # kept its index all along
    ),
    Migration(
        6,
        "one SQLite index for order and hash (conversation_id, seq, h8): a save updates two "
        "b-trees instead of three",
        # h8 is the first 60 bits of the hash (the store registers the function). The seq is kept
        # unique by the statements that insert (each under SQLite's write lock), so the table is
        # rebuilt without its UNIQUE constraint.
        sqlite=(
            """CREATE TABLE messages_v6 (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            hash TEXT NOT NULL,
            h8 INTEGER NOT NULL,
            body TEXT NOT NULL,
            duplicate_of INTEGER
        )""",
            "INSERT INTO messages_v6 (id, conversation_id, seq, created_at, hash, h8, body, duplicate_of) "
            "SELECT id, conversation_id, seq, created_at, hash, coalesce(h8(hash), 0), body, duplicate_of "
            "FROM messages ORDER BY id",
            "DROP TABLE messages",
            "ALTER TABLE messages_v6 RENAME TO messages",
            "CREATE INDEX messages_by_seq ON messages (conversation_id, seq, h8)",
        ),
        postgres=(),  # its primary key (conversation_id, seq) and hash index already do this
    ),
)


def statements(dialect: Dialect) -> tuple[tuple[str, ...], ...]:
    """Each migration's statements in ``dialect``, in order: item i takes schema i to i + 1."""
    return tuple(m.statements(dialect) for m in MIGRATIONS)
