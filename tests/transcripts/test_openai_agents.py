"""openai_agents: SQLiteSession databases written by the real SDK (scripts/make_transcript_fixtures/
part1.py). Expectations are read from the rows with plain sqlite3 here."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3

import pytest

import providerkit_nb as pk
from providerkit_nb import transcripts
from providerkit_nb.core.messages import AssistantMessage, ToolMessage

from .conftest import FIXTURES

DB = FIXTURES / "openai_agents_sessions.db"


def _rows(db, session, table="agent_messages"):
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as conn:
        return [json.loads(r[0]) for r in conn.execute(
            f"SELECT message_data FROM {table} WHERE session_id = ? ORDER BY id", (session,))]


def _sessions(db, table="agent_messages"):
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as conn:
        return [r[0] for r in conn.execute(f"SELECT session_id FROM {table} GROUP BY session_id ORDER BY MIN(id)")]


def _broken_ids(items):
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    return [c for c in calls if c not in outs], [o for o in outs if o not in calls]


def test_without_a_thread_the_sessions_are_listed():
    report = pk.inspect(DB)
    assert report.format == "openai_agents"
    assert report.needs_thread and report.threads == _sessions(DB)
    assert report.messages == [] and not report.valid
    with pytest.raises(transcripts.MultipleThreads) as e:
        transcripts.load(DB)
    assert e.value.threads == _sessions(DB)


def test_the_complete_session_is_valid_and_keeps_encrypted_reasoning():
    items = _rows(DB, "weather-complete")
    report = pk.inspect(DB, thread="weather-complete")
    assert report.thread == "weather-complete" and report.valid
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    assert [c.id for m in report.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []] == calls
    reasoning = [i for i in items if i.get("type") == "reasoning"]
    assert [it for m in report.messages if isinstance(m, AssistantMessage) and m.reasoning_items
            for it in m.reasoning_items.items] == reasoning


def test_the_broken_session_reports_its_dangling_call_and_orphan_output():
    dangling, orphans = _broken_ids(_rows(DB, "weather-broken"))
    assert dangling and orphans
    report = pk.inspect(DB, thread="weather-broken")
    assert [r.original_id for r in report.interrupted] == dangling
    assert report.orphans == orphans
    rules = {p.rule for p in report.problems}
    assert {"dangling_call", "orphan_result", "responses.orphan_function_call_output"} <= rules
    wording = next(p.provider_wording or p.message for p in report.problems
                   if p.rule == "responses.orphan_function_call_output")
    assert "No tool call found for function call output" in wording
    assert pk.validate_history(report.repaired.messages, wire="responses") == []
    # the orphan's text is not lost: it becomes a user note
    assert not any(isinstance(m, ToolMessage) and m.tool_call_id in orphans for m in report.repaired.messages)


def test_custom_table_names_are_found_by_their_columns():
    db = FIXTURES / "openai_agents_custom_tables.db"
    [session] = _sessions(db, "chat_items")
    dangling, orphans = _broken_ids(_rows(db, session, "chat_items"))
    report = pk.inspect(db)
    assert report.format == "openai_agents" and report.thread == session
    assert [r.original_id for r in report.interrupted] == dangling and report.orphans == orphans


def test_an_unknown_session_is_named_with_the_ones_there():
    with pytest.raises(transcripts.TranscriptError, match="no session 'nope'.*weather-complete"):
        transcripts.load(DB, thread="nope")


def test_reading_never_writes_nor_leaves_files_beside_the_database(tmp_path):
    db = tmp_path / "s.db"
    shutil.copy(DB, db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    pk.inspect(db, thread="weather-broken")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_rows_still_in_the_wal_are_read(tmp_path):
    """A live or crashed app leaves committed rows in the -wal file: they must be seen."""
    db = tmp_path / "s.db"
    shutil.copy(DB, db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                   ("weather-complete", json.dumps({"role": "user", "content": "one more"})))
    writer.commit()
    try:
        assert (tmp_path / "s.db-wal").exists()
        report = pk.inspect(db, thread="weather-complete")
        assert report.messages[-1].content == "one more"
    finally:
        writer.close()
