"""``langgraph_postgres``: a thread of a LangGraph ``PostgresSaver`` database, read-only.

The source is a DSN (``postgresql://...``). ``checkpoints.checkpoint`` is JSONB holding the
primitive channel values inline; the others (the messages list) sit in ``checkpoint_blobs`` under
the version ``channel_versions`` names; ``checkpoint_writes`` holds the pending writes. Reads run
in a read-only transaction; psycopg is imported only here.
"""

from __future__ import annotations

from typing import Any

from .base import Source, Transcript, TranscriptError
from .langgraph_common import Write, build, decode, pick_thread


def detect(source: Source, name: str) -> bool:
    # The only format read from a DSN: connecting here would hide a connection error behind
    # "no known format", so load() reports it instead.
    return source.dsn is not None


def _connect(source: Source) -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise TranscriptError(
            f"{source.name}: reading a PostgresSaver database needs psycopg: pip install 'providerkit-nb[postgres]'"
        ) from exc
    assert source.dsn is not None
    try:
        conn = psycopg.connect(source.dsn, connect_timeout=10, autocommit=False)
    except psycopg.Error as exc:
        raise TranscriptError(f"{source.name}: cannot connect ({str(exc).splitlines()[0] if str(exc) else exc})") from exc
    conn.read_only = True
    return conn


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    if source.dsn is None:
        raise TranscriptError(f"{source.name}: a PostgresSaver database is named by a DSN (postgresql://...)")
    import psycopg

    conn = _connect(source)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT to_regclass('checkpoints'), to_regclass('checkpoint_blobs'), to_regclass('checkpoint_writes')")
            found = cur.fetchone()
            if not found or not all(found):
                raise TranscriptError(
                    f"{source.name}: no PostgresSaver tables (checkpoints, checkpoint_blobs, checkpoint_writes) "
                    "on the search_path; run saver.setup() where the graph runs, or point the DSN at that schema"
                )
            cur.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")
            tid = pick_thread([str(r[0]) for r in cur.fetchall()], thread, source.name)
            cur.execute(
                "SELECT checkpoint_id, checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                (tid,),
            )
            row = cur.fetchone()
            if row is None:
                raise TranscriptError(f"{source.name}: thread {tid!r} has no root checkpoint")
            cid, checkpoint, metadata = row
            where = f"{source.name}: thread {tid!r}, checkpoint {cid}"
            if not isinstance(checkpoint, dict):
                raise TranscriptError(f"{where}: the checkpoint is not a JSON object")
            values = dict(checkpoint.get("channel_values") or {})
            versions = checkpoint.get("channel_versions") or {}
            if versions:
                cur.execute(
                    "SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = '' "
                    "AND (channel, version) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                    (tid, list(map(str, versions)), [str(v) for v in versions.values()]),
                )
                for channel, kind, blob in cur.fetchall():
                    if kind != "empty":
                        values[channel] = decode(kind, blob, f"{where}, blob of channel {channel!r}")
            cur.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = 'checkpoint_writes' "
                "AND column_name = 'task_path' AND table_schema = ANY(current_schemas(false))"
            )
            task_path = "task_path" if cur.fetchone() else "''"  # added by a later migration
            cur.execute(
                f"SELECT task_id, {task_path}, idx, channel, type, blob FROM checkpoint_writes "
                "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s ORDER BY task_id, idx",
                (tid, cid),
            )
            writes = [
                Write(str(task_id), str(task_path or ""), int(idx), str(channel),
                      decode(kind, blob, f"{where}, write {idx} ({channel})"))
                for task_id, task_path, idx, channel, kind, blob in cur.fetchall()
            ]
            cur.execute("SELECT COUNT(*), COUNT(*) FILTER (WHERE checkpoint_ns != '') FROM checkpoints WHERE thread_id = %s", (tid,))
            counts = cur.fetchone() or (0, 0)
    except psycopg.Error as exc:
        raise TranscriptError(f"{source.name}: cannot read the PostgresSaver tables ({exc})") from exc
    finally:
        conn.rollback()
        conn.close()
    t = Transcript(source.name, name, [], thread=tid)
    step = metadata.get("step") if isinstance(metadata, dict) else None
    t.meta.update(checkpoint_id=cid, checkpoints=counts[0], step=step if isinstance(step, int) else None)
    if counts[1]:
        t.skip("subgraph_checkpoint", counts[1])
    build(t, {**checkpoint, "channel_values": values}, writes, where)
    return t
