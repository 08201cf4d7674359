"""LangGraph threads on SqliteSaver (committed file) and PostgresSaver (made here, real server).

Expectations come from the raw rows: the latest checkpoint's messages are decoded in the test
with plain msgpack, and its writes name the ending (``__error__``, ``__interrupt__``, none).
"""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import msgpack
import pytest

from providerkit_nb import validate_history  # loads the wire adapter its rules need
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import MultipleThreads, TranscriptError, detect, load

from .conftest import FIXTURES, REPO, need, pg_dsn

DB = FIXTURES / "langgraph.sqlite"


def latest(path: Path, thread: str) -> tuple[list[str], set[str], set[str]]:
    """(open call ids at the end, answered ids, channels written against the latest checkpoint)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cid, blob = conn.execute(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id=? ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    channels = {r[0] for r in conn.execute("SELECT channel FROM writes WHERE thread_id=? AND checkpoint_id=?", (thread, cid))}
    conn.close()
    cp = msgpack.unpackb(blob, ext_hook=lambda code, data: msgpack.unpackb(data, strict_map_key=False), strict_map_key=False)
    fields = [m[2] for m in cp["channel_values"]["messages"]]
    calls = [c["id"] for f in fields if f["type"] == "ai" for c in f.get("tool_calls") or ()]
    answered = {f["tool_call_id"] for f in fields if f["type"] == "tool"}
    return [c for c in calls if c not in answered], answered, channels


def test_lists_threads_without_thread() -> None:
    assert detect(DB) == "langgraph_sqlite"
    with pytest.raises(MultipleThreads) as e:
        load(DB)
    conn = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    assert sorted(e.value.threads) == sorted(r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints"))
    conn.close()


def test_tool_raised() -> None:
    open_ids, _, channels = latest(DB, "tool-raised")
    assert "__error__" in channels and open_ids
    t = load(DB, thread="tool-raised")
    (m,) = [m for m in t.markers if m.kind == "tool_error"]
    assert m.ids == open_ids and "disk full" in m.text
    assert t.pending_approval == []
    r = repair_history(t.messages, pending=t.pending_approval)
    assert [i.id for i in r.interrupted] == open_ids
    assert not validate_history(r.messages, t.wire)


def test_interrupt_is_pending_approval_and_never_answered() -> None:
    open_ids, _, channels = latest(DB, "waiting-human")
    assert "__interrupt__" in channels and open_ids
    t = load(DB, thread="waiting-human")
    assert t.pending_approval == open_ids
    (m,) = [m for m in t.markers if m.kind == "interrupt"]
    assert "send it?" in m.text
    r = repair_history(t.messages, pending=t.pending_approval)
    assert r.interrupted == [] and [p.id for p in r.pending] == open_ids
    assert not [x for x in r.messages if x.role == "tool" and x.tool_call_id in open_ids]  # type: ignore[union-attr]


def test_healthy_thread_is_valid() -> None:
    open_ids, answered, _ = latest(DB, "healthy")
    t = load(DB, thread="healthy")
    assert open_ids == [] and answered
    assert t.markers == [] and t.pending_approval == []
    assert not validate_history(t.messages, t.wire)
    assert repair_history(t.messages).changes == []


def test_process_died_leaves_no_write() -> None:
    path = FIXTURES / "langgraph_died.sqlite"
    open_ids, _, channels = latest(path, "died")
    assert not ({"__error__", "__interrupt__"} & channels) and open_ids
    t = load(path)  # one thread: no thread= needed
    (m,) = t.markers
    assert m.kind == "stopped" and m.ids == open_ids
    assert [i.id for i in repair_history(t.messages).interrupted] == open_ids


def test_read_only_file_unchanged(tmp_path: Path) -> None:
    before = hashlib.sha256(DB.read_bytes()).hexdigest()
    for thread in ("tool-raised", "waiting-human", "healthy"):
        load(DB, thread=thread)
    assert hashlib.sha256(DB.read_bytes()).hexdigest() == before
    assert not Path(f"{DB}-wal").exists()


def test_pickle_is_refused(fixture_copy: Any) -> None:
    path = fixture_copy("langgraph.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE checkpoints SET type='pickle' WHERE thread_id='healthy'")
    conn.commit()
    conn.close()
    with pytest.raises(TranscriptError, match="pickle"):
        load(path, thread="healthy")


def test_garbage_blob_is_an_error_naming_the_row(fixture_copy: Any) -> None:
    path = fixture_copy("langgraph.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE checkpoints SET checkpoint=x'c1c1c1' WHERE thread_id='healthy'")
    conn.commit()
    conn.close()
    with pytest.raises(TranscriptError, match="thread 'healthy'"):
        load(path, thread="healthy")


def test_importers_need_no_framework() -> None:
    """Every part-2 fixture loads in a process where langchain, langgraph, pydantic_ai and llm
    cannot be imported (a meta-path blocker): the importers decode data, they run nothing."""
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('langchain_core', 'langgraph', 'pydantic_ai', 'llm', 'agents', 'ormsgpack'):
            raise ImportError('blocked ' + name)
sys.meta_path.insert(0, Block())
from providerkit_nb.transcripts import load
F = {str(FIXTURES)!r}
for name, thread in [('langgraph.sqlite', 'waiting-human'), ('langgraph_died.sqlite', None),
                     ('langchain_dumpd.json', None), ('pydantic_ai_tool_raised.json', None),
                     ('llm_logs_0.36.db', {_first_thread('llm_logs_0.36.db')!r})]:
    load(F + '/' + name, thread=thread)
print('ok', sorted(m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'langgraph', 'pydantic_ai')))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok []"


def _first_thread(name: str) -> str:
    conn = sqlite3.connect(f"file:{FIXTURES / name}?mode=ro", uri=True)
    tid = conn.execute("SELECT id FROM threads ORDER BY datetime_utc LIMIT 1").fetchone()[0]
    conn.close()
    return str(tid)


# --------------------------------------------------------------------------- PostgresSaver


@pytest.fixture
def pg_threads() -> Any:
    """The fixture graph run on a real PostgresSaver in a fresh schema; yields the DSN."""
    need("langgraph.checkpoint.postgres")
    dsn = pg_dsn()
    import psycopg

    sys.path.insert(0, str(REPO / "scripts" / "make_transcript_fixtures"))
    try:
        import part2
    finally:
        sys.path.pop(0)
    from langgraph.checkpoint.postgres import PostgresSaver

    schema = f"lg_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in dsn else "?"
    scoped = f"{dsn}{sep}options=-csearch_path%3D{schema}"
    try:
        with PostgresSaver.from_conn_string(scoped) as saver:
            saver.setup()
            part2.run_threads(part2.build_graph(saver), part2.LANGGRAPH_THREADS)
        yield scoped
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.postgres
def test_postgres_saver_three_endings(pg_threads: str) -> None:
    sqlite_view = {th: load(DB, thread=th) for th in ("tool-raised", "waiting-human", "healthy")}
    with pytest.raises(MultipleThreads):
        load(pg_threads)
    assert detect(pg_threads) == "langgraph_postgres"
    for thread, lite in sqlite_view.items():
        t = load(pg_threads, thread=thread)
        assert t.format == "langgraph_postgres"
        # the same graph on the other saver: the same calls, endings and pending calls
        calls = [c.id for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()]  # type: ignore[union-attr]
        assert calls == [c.id for m in lite.messages if m.role == "assistant" for c in m.tool_calls or ()]  # type: ignore[union-attr]
        assert [(m.kind, m.ids) for m in t.markers] == [(m.kind, m.ids) for m in lite.markers]
        assert t.pending_approval == lite.pending_approval
    assert load(pg_threads, thread="waiting-human").pending_approval == ["call_1", "call_2"]


@pytest.mark.postgres
def test_postgres_read_is_read_only(pg_threads: str) -> None:
    import psycopg

    with psycopg.connect(pg_threads) as c:
        before = c.execute("SELECT count(*), max(checkpoint_id) FROM checkpoints").fetchone()
    load(pg_threads, thread="tool-raised")
    with psycopg.connect(pg_threads) as c:
        assert c.execute("SELECT count(*), max(checkpoint_id) FROM checkpoints").fetchone() == before


def test_unreachable_postgres_is_a_clear_error() -> None:
    with pytest.raises(TranscriptError, match=r"cannot connect") as e:
        load("postgresql://u:secret@127.0.0.1:1/x", thread="t")
    assert "secret" not in str(e.value)


@pytest.mark.interop
def test_saved_writes_of_the_failed_step_count_as_answers(tmp_path: Path) -> None:
    """Two tool nodes in one super-step, one raises: LangGraph saves the other's messages write
    against the latest checkpoint and applies it on resume without running that node again.
    The reading matches what the resumed graph then holds."""
    need("langgraph.checkpoint.sqlite")
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    fail = {"b": True}
    runs = {"tool_a": 0, "tool_b": 0}

    def agent(state: MessagesState) -> dict[str, Any]:
        if any(m.type == "tool" for m in state["messages"]):
            return {"messages": [AIMessage("Done.")]}
        calls = [{"name": n, "args": {}, "id": f"call_{n}", "type": "tool_call"} for n in ("a", "b")]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    def tool_a(state: MessagesState) -> dict[str, Any]:
        runs["tool_a"] += 1
        return {"messages": [ToolMessage("A ok", tool_call_id="call_a")]}

    def tool_b(state: MessagesState) -> dict[str, Any]:
        runs["tool_b"] += 1
        if fail["b"]:
            raise RuntimeError("b broke")
        return {"messages": [ToolMessage("B ok", tool_call_id="call_b")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tool_a", tool_a)
    g.add_node("tool_b", tool_b)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: ["tool_a", "tool_b"] if s["messages"][-1].tool_calls else END)
    g.add_edge("tool_a", "agent")
    g.add_edge("tool_b", "agent")
    db = tmp_path / "par.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = g.compile(checkpointer=SqliteSaver(conn))
    cfg = {"configurable": {"thread_id": "par"}}
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [("user", "go")]}, cfg)

    t = load(db, thread="par")
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == ["call_a"]  # type: ignore[union-attr]
    (marker,) = t.markers
    assert marker.kind == "tool_error" and marker.ids == ["call_b"] and "tool_b" in marker.text
    assert [i.id for i in repair_history(t.messages).interrupted] == ["call_b"]

    fail["b"] = False
    graph.invoke(None, cfg)
    conn.close()
    assert runs == {"tool_a": 1, "tool_b": 2}  # the saved write was applied, not re-run
    after = load(db, thread="par")
    assert sorted(m.tool_call_id for m in after.messages if m.role == "tool") == ["call_a", "call_b"]  # type: ignore[union-attr]
    assert after.markers == []
