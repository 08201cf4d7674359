"""simonw/llm logs.db on both schemas, written by the real llm with the echo model
(0.36 + llm-echo 0.5: the message store; 0.31.1 + llm-echo 0.4: the responses tables)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb import validate_history  # loads the wire adapter its rules need
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import MultipleThreads, detect, load

from .conftest import FIXTURES

NEW, OLD = FIXTURES / "llm_logs_0.36.db", FIXTURES / "llm_logs_0.31.db"


def rows(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def tool_thread_new(path: Path) -> str:
    return str(rows(path, "SELECT t.id FROM threads t ORDER BY datetime_utc LIMIT 1")[0][0])


def tool_thread_old(path: Path) -> str:
    return str(rows(path, "SELECT r.conversation_id FROM tool_calls c JOIN responses r ON r.id = c.response_id LIMIT 1")[0][0])


@pytest.mark.parametrize("path", [NEW, OLD], ids=["0.36", "0.31"])
def test_lists_every_conversation(path: Path) -> None:
    assert detect(path) == "llm_logs"
    with pytest.raises(MultipleThreads) as e:
        load(path)
    if path == NEW:
        want = {r[0] for r in rows(path, "SELECT id FROM threads")}
    else:
        want = {r[0] for r in rows(path, "SELECT DISTINCT conversation_id FROM responses")}
    assert set(e.value.threads) == want


def test_message_store_thread_follows_parent_hash() -> None:
    tid = tool_thread_new(NEW)
    (tip,) = rows(NEW, "SELECT tip_message_hash FROM threads WHERE id = ?", tid)[0]
    chain = []
    h = tip
    while h:
        parent, role = rows(NEW, "SELECT parent_hash, role FROM messages WHERE hash = ?", h)[0]
        chain.append(role)
        h = parent
    calls = [r[0] for r in rows(NEW, "SELECT json_extract(payload, '$.tool_call_id') FROM parts WHERE type='tool_call' ORDER BY id")]
    results = [r[0] for r in rows(NEW, "SELECT json_extract(payload, '$.tool_call_id') FROM parts WHERE type='tool_result' ORDER BY id")]
    t = load(NEW, thread=tid)
    assert t.meta["messages_in_chain"] == len(chain)
    assert [c.id for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()] == calls  # type: ignore[union-attr]
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == results  # type: ignore[union-attr]
    assert not validate_history(t.messages)


def test_legacy_conversation_pairs_results_without_ids_by_order_and_name() -> None:
    cid = tool_thread_old(OLD)
    calls = rows(OLD, "SELECT c.id, c.name, c.tool_call_id FROM tool_calls c ORDER BY c.id")
    assert all(r[2] is None for r in calls)  # llm-echo 0.4 gives no ids: the case to handle
    results = rows(OLD, "SELECT name FROM tool_results ORDER BY id")
    t = load(OLD, thread=cid)
    got = [(c.id, c.name) for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()]  # type: ignore[union-attr]
    assert [n for _, n in got] == [r[1] for r in calls]
    answers = [(m.tool_call_id, m.name) for m in t.messages if m.role == "tool"]  # type: ignore[union-attr]
    assert [n for _, n in answers] == [r[0] for r in results]
    by_name = dict((n, i) for i, n in got)
    assert all(by_name[n] == i for i, n in answers)
    assert not validate_history(t.messages)
    n_prompts = rows(OLD, "SELECT count(*) FROM responses WHERE conversation_id = ? AND prompt != ''", cid)[0][0]
    assert sum(1 for m in t.messages if m.role == "user") == n_prompts


@pytest.mark.parametrize("path", [NEW, OLD], ids=["0.36", "0.31"])
def test_a_lost_result_row_is_dangling_and_repaired(path: Path, fixture_copy: Any) -> None:
    db = fixture_copy(path.name)
    conn = sqlite3.connect(db)
    if path == NEW:
        tid = tool_thread_new(db)
        pid, cid = conn.execute(
            "SELECT id, json_extract(payload, '$.tool_call_id') FROM parts WHERE type='tool_result' ORDER BY id DESC LIMIT 1"
        ).fetchone()
        conn.execute("DELETE FROM parts WHERE id = ?", (pid,))
    else:
        tid = tool_thread_old(db)
        rid, name = conn.execute("SELECT id, name FROM tool_results ORDER BY id DESC LIMIT 1").fetchone()
        conn.execute("DELETE FROM tool_results WHERE id = ?", (rid,))
        cid = None
    conn.commit()
    conn.close()
    t = load(db, thread=tid)
    r = repair_history(t.messages)
    assert len(r.interrupted) == 1
    if cid is not None:
        assert r.interrupted[0].id == cid
    else:
        assert r.interrupted[0].name == name
    assert not validate_history(r.messages)


def test_a_lost_call_makes_an_orphan(fixture_copy: Any) -> None:
    db = fixture_copy(NEW.name)
    conn = sqlite3.connect(db)
    pid, cid = conn.execute(
        "SELECT id, json_extract(payload, '$.tool_call_id') FROM parts WHERE type='tool_call' ORDER BY id LIMIT 1"
    ).fetchone()
    conn.execute("DELETE FROM parts WHERE id = ?", (pid,))
    conn.commit()
    conn.close()
    t = load(db, thread=tool_thread_new(db))
    r = repair_history(t.messages)
    assert [c.ids for c in r.changes if c.kind == "result_to_note"] == [[cid]]


@pytest.mark.parametrize("path", [NEW, OLD], ids=["0.36", "0.31"])
def test_prompts_read_back_as_the_model_received_them(path: Path) -> None:
    """The echo model answers with the prompt and system prompt it was sent, so each of its
    answers is an oracle for the user and system text before it (fragments included: llm
    stores those by reference)."""
    with pytest.raises(MultipleThreads) as e:
        load(path)
    checked = 0
    for thread in e.value.threads:
        t = load(path, thread=thread)
        system = next((m.content for m in t.messages if m.role == "system"), "")
        for i, m in enumerate(t.messages):
            if m.role != "user":
                continue
            answer = t.messages[i + 1]
            assert answer.role == "assistant"
            echoed = json.loads(answer.content)  # type: ignore[arg-type]
            try:  # llm-echo reads a JSON prompt's own "prompt" key
                sent = json.loads(m.content)["prompt"]  # type: ignore[arg-type]
            except (ValueError, TypeError, KeyError):
                sent = m.content
            assert echoed["prompt"] == sent
            assert echoed["system"] == system
            checked += 1
    used = rows(path, "SELECT count(*) FROM fragments")[0][0]
    assert checked >= 3 and used >= 2  # the fragment thread is among them
