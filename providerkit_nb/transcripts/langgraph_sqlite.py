"""``langgraph_sqlite``: a thread of a LangGraph ``SqliteSaver`` database, read-only.

Tables ``checkpoints`` (the state after each super-step, msgpack, inline) and ``writes`` (what
tasks wrote against a checkpoint before the next one existed). The thread's state is its latest
root checkpoint (ids are UUIDv6, so they sort in time order) and that checkpoint's writes.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core.json_input import read_json
from .base import Source, Transcript, TranscriptError
from .langgraph_common import Write, build, decode, pick_thread

_CHECKPOINT_COLS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "type", "checkpoint"})
_WRITES_COLS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"})


def _columns(conn: Any, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def detect(source: Source, name: str) -> bool:
    if not source.is_sqlite():
        return False
    try:
        conn = source.connect_sqlite()
        try:
            return _CHECKPOINT_COLS <= _columns(conn, "checkpoints") and _WRITES_COLS <= _columns(conn, "writes")
        finally:
            conn.close()
    except (sqlite3.Error, TranscriptError):
        return False


def threads(conn: Any) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    if source.path is None:
        raise TranscriptError(f"{source.name}: a SqliteSaver database is read from a file path")
    conn = source.connect_sqlite()
    try:
        if not (_CHECKPOINT_COLS <= _columns(conn, "checkpoints")):
            raise TranscriptError(f"{source.name}: no LangGraph checkpoints table (is it a SqliteSaver file?)")
        tid = pick_thread(threads(conn), thread, source.name)
        row = conn.execute(
            "SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            (tid,),
        ).fetchone()
        if row is None:
            raise TranscriptError(f"{source.name}: thread {tid!r} has no root checkpoint (only subgraph ones)")
        cid, kind, blob, metadata = row
        where = f"{source.name}: thread {tid!r}, checkpoint {cid}"
        checkpoint = decode(kind, blob, where)
        if not isinstance(checkpoint, dict):
            raise TranscriptError(f"{where}: the checkpoint is not a map")
        writes = [
            Write(str(task_id), str(task_path or ""), int(idx), str(channel), decode(wkind, value, f"{where}, write {idx} ({channel})"))
            for task_id, task_path, idx, channel, wkind, value in conn.execute(
                "SELECT task_id, " + ("task_path" if "task_path" in _columns(conn, "writes") else "''")
                + ", idx, channel, type, value FROM writes "
                "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? ORDER BY task_id, idx",
                (tid, cid),
            )
        ]
        subgraph = conn.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns != ''", (tid,)
        ).fetchone()[0]
        count = conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (tid,)).fetchone()[0]
    except sqlite3.Error as exc:
        raise TranscriptError(f"{source.name}: cannot read the SqliteSaver tables ({exc})") from exc
    finally:
        conn.close()
    t = Transcript(source.name, name, [], thread=tid)
    t.meta.update(checkpoint_id=cid, checkpoints=count, step=_step(metadata))
    if subgraph:
        t.skip("subgraph_checkpoint", subgraph)
    build(t, checkpoint, writes, where)
    return t


def _step(metadata: Any) -> int | None:

    try:
        step = read_json(metadata).get("step") if metadata else None
    except (ValueError, AttributeError, TypeError):
        return None
    return step if isinstance(step, int) else None
