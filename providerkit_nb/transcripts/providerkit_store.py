"""``providerkit``: a conversation of this library's own store file (``NotebookStore``), read-only.

The file is recognised by its schema: the store's SQLite ``application_id`` and its ``messages``
table, read through the write-ahead log. It is read through ``Source.connect_sqlite`` (``mode=ro``;
``immutable`` when no ``-wal`` file is there, else the ``-shm`` opened read-only): nothing is
written, nothing is created beside it, and a notebook that has the store open is not disturbed.

What the store knows beyond the messages comes along, so the inspection says what
``convo.view()`` says: the call marks decide what the model is told about a call without a
result (Stop landed in it: the stopped text; its process ended while it ran: the interrupted
text) and which calls wait for a person's approval; ``meta`` names each open call's state, the
lost turns (a failed turn's snapshot, kept beside the history) and the conversation's metadata.
"""

from __future__ import annotations

import hashlib
import sqlite3

from ..core.json_input import read_json
from ..core.messages import AssistantMessage, Message, ToolMessage, message_from_dict
from ..store.call_marks import (
    ASKING,
    LOST,
    STARTED,
    TOLD_BY_STATE,
    CallMark,
    decode_mark,
    told_by_marks,
)
from ..store.sqlite import APPLICATION_ID, MIGRATIONS
from .base import MultipleThreads, Source, Transcript, TranscriptError

__all__ = ["detect", "load", "conversations"]

_MESSAGE_COLUMNS = frozenset({"conversation_id", "seq", "created_at", "hash", "body"})
_SHOWN = 300  # characters of a lost turn's error kept in meta


def detect(source: Source, name: str) -> bool:
    """By its schema: the store's ``application_id`` and its ``messages`` table, read through the
    write-ahead log (a store whose process was killed before a checkpoint has them only there,
    not yet in the main file's header)."""
    if source.path is None or not source.is_sqlite():
        return False
    try:
        conn = source.connect_sqlite()
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            return bool(app_id == APPLICATION_ID and _MESSAGE_COLUMNS <= _columns(conn, "messages"))
        finally:
            conn.close()
    except (sqlite3.Error, TranscriptError):
        return False


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def conversations(conn: sqlite3.Connection) -> list[str]:
    """The conversation ids the store holds, the one with the newest message first (as
    ``NotebookStore.conversations`` orders them)."""
    has_meta = "conversations" in _tables(conn)
    rows = conn.execute(
        "SELECT conversation_id, max(created_at) FROM messages GROUP BY conversation_id"
        + (" UNION ALL SELECT id, updated_at FROM conversations" if has_meta else "")
    ).fetchall()
    newest: dict[str, str] = {}
    for cid, at in rows:
        key = str(cid)
        newest[key] = max(newest.get(key, ""), str(at or ""))
    return sorted(newest, key=lambda c: (newest[c], c), reverse=True)


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    if source.path is None:
        raise TranscriptError(f"{source.name}: a providerkit store is read from a file path")
    conn = source.connect_sqlite()
    try:
        return _load(conn, source, name, thread)
    except sqlite3.Error as exc:
        raise TranscriptError(
            f"{source.name}: cannot read the providerkit store ({exc}); is the file damaged? "
            "NotebookStore(path).check() runs SQLite's integrity check"
        ) from exc
    finally:
        conn.close()


def _load(conn: sqlite3.Connection, source: Source, name: str, thread: str | None) -> Transcript:
    tables = _tables(conn)
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id != APPLICATION_ID:
        raise TranscriptError(
            f"{source.name}: not a providerkit store (its SQLite application_id is {app_id}, not "
            f"{APPLICATION_ID}); leave format= out to detect what it is"
        )
    if "messages" not in tables or not _MESSAGE_COLUMNS <= _columns(conn, "messages"):
        raise TranscriptError(
            f"{source.name}: carries the providerkit store's id but has no messages table of its "
            f"shape (tables: {', '.join(sorted(tables)) or 'none'}); is the file damaged?"
        )
    ids = conversations(conn)
    if thread is None:
        if not ids:
            raise TranscriptError(f"{source.name}: the providerkit store holds no conversation")
        if len(ids) > 1:
            raise MultipleThreads(source.name, ids)
        thread = ids[0]
    elif thread not in ids:
        shown = ", ".join(repr(c) for c in ids[:20]) + (" ..." if len(ids) > 20 else "")
        raise TranscriptError(
            f"{source.name}: no conversation {thread!r} in this providerkit store; it holds "
            f"{len(ids)}: {shown or 'none'}"
        )
    t = Transcript(source.name, name, [], thread=thread)
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(MIGRATIONS):
        t.warnings.append(f"{source.name}: written by a newer providerkit_nb (schema {version}; this one "
                          f"knows up to {len(MIGRATIONS)}); what it adds is not shown")
    _messages(conn, t, thread)
    if "conversations" in tables:
        _meta(conn, t, thread)
    marks = _marks(conn, t, thread) if "call_marks" in tables else {}
    _apply_marks(t, marks)
    if "lost_turns" in tables:
        _lost_turns(conn, t, thread)
    return t


def _messages(conn: sqlite3.Connection, t: Transcript, thread: str) -> None:
    rows = conn.execute(
        "SELECT seq, created_at, hash, CAST(body AS BLOB) FROM messages WHERE conversation_id = ? ORDER BY seq",
        (thread,),
    )
    for seq, at, digest, body in rows:
        where = f"{t.source}: conversation {thread!r}, row seq={seq}"
        try:
            text = bytes(body).decode("utf-8")
            message: Message = message_from_dict(read_json(text), int(seq) - 1)
        except (ValueError, TypeError) as exc:  # UnicodeError, JsonInputError, MessageFormatError
            t.skip("corrupt_row")
            t.warnings.append(f"{where} does not decode as a canonical message ({exc}); left out")
            continue
        if hashlib.sha256(text.encode()).hexdigest() != digest:
            t.warnings.append(f"{where}: its content no longer matches its hash (edited by hand?); shown as stored")
        if isinstance(at, str):
            t.details[len(t.messages)] = {"time": at.replace("T", " ")[:19]}
        t.messages.append(message)


def _meta(conn: sqlite3.Connection, t: Transcript, thread: str) -> None:
    row = conn.execute(
        "SELECT session_id, title, model, tags FROM conversations WHERE id = ?", (thread,)
    ).fetchone()
    if row is None:
        return
    for key, value in zip(("session_id", "title", "model"), row[:3], strict=True):
        if isinstance(value, str) and value:
            t.meta[key] = value
    try:
        tags = read_json(row[3]) if row[3] else []
    except ValueError:
        tags = None
    if isinstance(tags, list) and tags:
        t.meta["tags"] = tags


def _marks(conn: sqlite3.Connection, t: Transcript, thread: str) -> dict[str, CallMark]:
    from datetime import datetime

    out: dict[str, CallMark] = {}
    for call_id, state, detail, at in conn.execute(
        "SELECT call_id, state, detail, updated_at FROM call_marks WHERE conversation_id = ? "
        "ORDER BY updated_at, call_id",
        (thread,),
    ):
        try:
            out[str(call_id)] = decode_mark(str(call_id), str(state), detail, datetime.fromisoformat(at))
        except (ValueError, TypeError) as exc:
            t.warnings.append(f"{t.source}: the mark of call {call_id!r} does not decode ({exc}); ignored")
    return out


def _apply_marks(t: Transcript, marks: dict[str, CallMark]) -> None:
    """What a Conversation makes of its marks: the stopped text for a call Stop landed in, and
    the calls still waiting for approval. The state of each call without a result goes into
    ``meta["call_marks"]`` (a fact of the source, not one more finding: the inspection counts
    what ``convo.view()`` counts)."""
    answered = {m.tool_call_id for m in t.messages if isinstance(m, ToolMessage)}
    names = {c.id: c.name for m in t.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or ()}
    said: list[str] = []
    told = told_by_marks(marks)
    for call_id, mark in marks.items():
        if call_id in answered or call_id not in names:
            continue
        if mark.state == ASKING:
            t.pending_approval.append(call_id)
        elif mark.state in TOLD_BY_STATE:
            t.notes[call_id] = told[call_id]
        elif mark.state not in (STARTED, LOST):
            continue
        said.append(f"{names[call_id]} {call_id}: {mark.state} {mark.updated_at.isoformat(sep=' ', timespec='seconds')}")
    if said:
        t.meta["call_marks"] = "; ".join(said)


def _lost_turns(conn: sqlite3.Connection, t: Transcript, thread: str) -> None:
    """Failed turns kept beside the history (never sent): how many, and the last one's error."""
    rows = conn.execute(
        "SELECT error FROM lost_turns WHERE conversation_id = ? ORDER BY id", (thread,)
    ).fetchall()
    if rows:
        last = " ".join(str(rows[-1][0] or "").split())
        last = last if len(last) <= _SHOWN else last[:_SHOWN] + "..."
        t.meta["lost_turns"] = f"{len(rows)} (the last: {last})"
