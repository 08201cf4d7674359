"""``openai_agents``: an OpenAI Agents SDK ``SQLiteSession`` database.

The SDK keeps one Responses input item per row of ``agent_messages`` (``session_id``,
``message_data`` JSON, ordered by ``id``) and one row per session in ``agent_sessions``; both
table names are configurable, so the messages table is found by its columns. ``thread=`` picks
the session; a database with several sessions and no ``thread`` raises ``MultipleThreads``.
The database is opened read-only.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core.json_input import read_json
from .base import MultipleThreads, Source, Transcript, TranscriptError
from .responses_items import ItemReader

_NEEDED = frozenset({"id", "session_id", "message_data"})


def _messages_table(conn: Any) -> str | None:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    if "agent_messages" in tables:
        tables.remove("agent_messages")
        tables.insert(0, "agent_messages")
    for table in tables:
        cols = {r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")}
        if _NEEDED <= cols:
            return str(table)
    return None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def detect(source: Source, name: str) -> bool:
    if not source.is_sqlite():
        return False
    try:
        conn = source.connect_sqlite()
        try:
            return _messages_table(conn) is not None
        finally:
            conn.close()
    except (sqlite3.Error, TranscriptError):
        return False


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    t = Transcript(source.name, name, [], wire="responses")
    conn = source.connect_sqlite()
    try:
        table = _messages_table(conn)
        if table is None:
            raise TranscriptError(
                f"{source.name}: no Agents SDK messages table (one with id, session_id and message_data)"
            )
        q = _quote(table)
        sessions = [
            str(r[0])
            for r in conn.execute(f"SELECT session_id, MIN(id) AS first FROM {q} GROUP BY session_id ORDER BY first")
        ]
        if thread is None:
            if len(sessions) > 1:
                raise MultipleThreads(source.name, sessions)
            if not sessions:
                raise TranscriptError(f"{source.name}: the session database holds no messages")
            thread = sessions[0]
        elif thread not in sessions:
            raise TranscriptError(
                f"{source.name}: no session {thread!r}; it holds {', '.join(sessions) or 'none'}"
            )
        t.thread = thread
        t.meta.update({"session_id": thread, "table": table, "sessions": sessions})
        reader = ItemReader(t)
        rows = conn.execute(f"SELECT id, message_data FROM {q} WHERE session_id = ? ORDER BY id", (thread,))
        for row_id, data in rows:
            place = f"{table} row {row_id}"
            try:
                item = read_json(data)
            except (TypeError, ValueError) as exc:
                t.skip("malformed_row")
                t.warnings.append(f"{source.name}: {place} is not valid JSON ({exc}); skipped")
                continue
            reader.add(item, place)
    except sqlite3.Error as exc:
        raise TranscriptError(f"{source.name}: cannot read the session database ({exc})") from exc
    finally:
        conn.close()
    t.messages = reader.messages()
    return t
