"""Call marks: the store's record of calls waiting for approval or started, beside the history."""

from __future__ import annotations

import sqlite3

import pytest

import providerkit_nb as pk
from providerkit_nb.store.base import StoreCorruptError
from providerkit_nb.store.sqlite import MIGRATIONS, NotebookStore


def test_marks_round_trip_latest_wins_and_leave_the_messages_alone(backing):
    store = backing.new()
    call = pk.AssistantMessage("", tool_calls=[pk.ToolCall("call_1", "write_file", '{"path": "a"}')])
    store.save("c", call)
    before = [r.json for r in store.records("c")]
    store.mark_call("c", "call_1", "asking")
    store.mark_call("c", "call_2", "asking")
    store.mark_call("c", "call_1", "started", {"decision": "edited", "arguments": '{"path": "b"}'})
    again = backing.new()  # another store object (another process, for the durable ones)
    marks = again.call_marks("c")
    assert list(marks) == ["call_2", "call_1"]  # in the order of their latest marks
    assert (marks["call_1"].state, marks["call_1"].detail) == (
        "started", {"decision": "edited", "arguments": '{"path": "b"}'}
    )
    assert marks["call_2"].state == "asking" and marks["call_2"].detail == {}
    assert [r.json for r in again.records("c")] == before
    assert again.call_marks("other") == {}
    again.delete("c")
    assert again.call_marks("c") == {}


def test_bad_marks_are_refused_before_anything_is_written(store):
    with pytest.raises(ValueError, match="call state must be one of"):
        store.mark_call("c", "call_1", "maybe")
    with pytest.raises(ValueError, match="call_id must be a non-empty string"):
        store.mark_call("c", "", "asking")
    with pytest.raises(ValueError, match="detail must be a dict"):
        store.mark_call("c", "call_1", "asking", ["x"])  # type: ignore[arg-type]
    assert store.call_marks("c") == {}


def test_a_store_of_the_previous_schema_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.providerkit.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for stmt in MIGRATIONS[0]:  # the schema as version 1 shipped it
        conn.execute(stmt)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    with NotebookStore(path) as store:
        assert store.schema_version == 6
        store.mark_call("c", "call_1", "asking")
        assert store.call_marks("c")["call_1"].state == "asking"


def test_a_damaged_mark_names_the_store_and_the_call(tmp_path):
    path = tmp_path / "m.providerkit.sqlite"
    with NotebookStore(path) as store:
        store.mark_call("c", "call_1", "asking")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE call_marks SET detail = '{oops'")
    conn.close()
    with NotebookStore(path) as store, pytest.raises(StoreCorruptError, match=r"m\.providerkit\.sqlite.*'call_1'"):
        store.call_marks("c")
