"""OpenCode sessions made by the real CLI (``opencode-ai``, see VERSIONS.json): killed mid-tool,
and after its own resume. Expectations come from the database itself, read here with sqlite3."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.notebook.inspection import inspect
from providerkit_nb.transcripts import MultipleThreads, TranscriptError, detect, load
from providerkit_nb.transcripts.writeback import write_session

from .conftest import FIXTURES

DIR = FIXTURES / "coding_agents" / "opencode"
KILLED = DIR / "killed_mid_tool.db"
RESUMED = DIR / "after_own_resume.db"
MAY_HAVE_RUN = "It may have partly run, so check its effect before calling it again."


def _db(path: Path) -> dict[str, Any]:
    with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True) as c:
        sessions = [r[0] for r in c.execute("select id from session")]
        parts = [json.loads(d) for (d,) in c.execute("select data from part order by message_id, id")]
    return {"sessions": sessions, "parts": parts}


def test_killed_session_loads_with_the_running_call_reported() -> None:
    raw = _db(KILLED)
    (sid,) = raw["sessions"]
    running = [p for p in raw["parts"] if p.get("type") == "tool" and p["state"]["status"] == "running"]
    assert len(running) == 1
    call = running[0]
    assert detect(KILLED) == "opencode"
    t = load(KILLED)
    assert t.thread == sid and t.format == "opencode"
    calls = [c for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [(call["callID"], call["tool"], call["state"]["input"])]
    assert [(m.kind, m.ids) for m in t.markers] == [("tool_running", [call["callID"]])]
    steps = sum(1 for p in raw["parts"] if p.get("type") == "step-start")
    assert t.skipped.get("part:step-start") == steps
    r = inspect(KILLED)
    assert [(a.call_id, a.name, a.agent) for a in r.abandoned] == [(call["callID"], call["tool"], "opencode")]
    assert "running" in r.abandoned[0].what and not r.valid


def test_after_its_own_resume_the_part_is_still_running_and_still_reported() -> None:
    raw = _db(RESUMED)
    request = json.loads((DIR / "resume_request.json").read_text())
    (call,) = [p for p in raw["parts"] if p.get("type") == "tool"]
    assert call["state"]["status"] == "running"  # its resume never stored what it sent
    sent = [m for m in request["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == call["callID"]]
    assert [m["content"] for m in sent] == ["[Tool execution was interrupted]"]
    r = inspect(RESUMED)
    assert [a.call_id for a in r.abandoned] == [call["callID"]]
    assert [m.role for m in r.messages][-2:] == ["user", "assistant"]  # the resumed turn is read


def test_loading_never_writes(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(KILLED, db)
    before = db.read_bytes()
    load(db)
    inspect(db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]


def test_repair_writes_a_new_session_in_one_transaction(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(KILLED, db)
    raw = _db(db)
    (old,) = raw["sessions"]
    (call,) = [p for p in raw["parts"] if p.get("type") == "tool"]
    with sqlite3.connect(db) as c:
        old_rows = c.execute("select id, message_id, data from part where session_id = ? order by id", (old,)).fetchall()
    written = write_session(inspect(db), "opencode")
    assert written.session_id != old and written.answered == {call["callID"]: written.answered[call["callID"]]}
    assert written.resume_command == f"opencode --session {written.session_id}"
    with sqlite3.connect(db) as c:
        assert c.execute("select id, message_id, data from part where session_id = ? order by id", (old,)).fetchall() == old_rows
    with pytest.raises(MultipleThreads) as exc:
        load(db)
    assert sorted(exc.value.threads) == sorted([old, written.session_id])
    t = load(db, thread=written.session_id)
    results = [m for m in t.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in results] == [(call["callID"], written.answered[call["callID"]])]
    assert MAY_HAVE_RUN in results[0].content
    r = inspect(db, thread=written.session_id)
    assert r.valid and r.abandoned == []

    # a write that fails half-way leaves no row of the new session behind
    with sqlite3.connect(db) as c:
        c.execute("create trigger no_parts before insert on part begin select raise(abort, 'refused'); end")
        counts = [c.execute(f"select count(*) from {t}").fetchone()[0] for t in ("session", "message", "part")]
    with pytest.raises(sqlite3.IntegrityError):
        write_session(inspect(db, thread=old), "opencode")
    with sqlite3.connect(db) as c:
        assert [c.execute(f"select count(*) from {t}").fetchone()[0] for t in ("session", "message", "part")] == counts


def test_read_only_tools_get_the_read_only_text(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(KILLED, db)
    (call,) = [p for p in _db(db)["parts"] if p.get("type") == "tool"]
    written = write_session(inspect(db), "opencode", read_only=[call["tool"]])
    assert "It changed nothing" in written.answered[call["callID"]]


def test_previous_storage_layout(tmp_path: Path) -> None:
    """The same rows as the older ``storage/{session,message,part}`` JSON files."""
    root = tmp_path / "storage"
    with sqlite3.connect(f"{KILLED.resolve().as_uri()}?mode=ro&immutable=1", uri=True) as c:
        c.row_factory = sqlite3.Row
        s = dict(c.execute("select * from session").fetchone())
        (root / "session" / "global").mkdir(parents=True)
        session_file = root / "session" / "global" / f"{s['id']}.json"
        session_file.write_text(json.dumps({"id": s["id"], "projectID": s["project_id"], "title": s["title"],
                                            "version": s["version"], "directory": s["directory"]}))
        for m in c.execute("select * from message"):
            d = {**json.loads(m["data"]), "id": m["id"], "sessionID": m["session_id"]}
            (root / "message" / s["id"]).mkdir(parents=True, exist_ok=True)
            (root / "message" / s["id"] / f"{m['id']}.json").write_text(json.dumps(d))
        for p in c.execute("select * from part"):
            d = {**json.loads(p["data"]), "id": p["id"], "messageID": p["message_id"], "sessionID": p["session_id"]}
            (root / "part" / p["message_id"]).mkdir(parents=True, exist_ok=True)
            (root / "part" / p["message_id"] / f"{p['id']}.json").write_text(json.dumps(d))
    assert detect(session_file) == "opencode"
    old, new = load(KILLED), load(session_file)
    assert [m.to_dict() for m in new.messages] == [m.to_dict() for m in old.messages]
    assert [a.call_id for a in inspect(session_file).abandoned] == [a.call_id for a in inspect(KILLED).abandoned]


def test_damaged_rows_name_the_row(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(KILLED, db)
    with sqlite3.connect(db) as c:
        (pid,) = c.execute("select id from part limit 1").fetchone()
        c.execute("update part set data = '{not json' where id = ?", (pid,))
    with pytest.raises(TranscriptError, match=pid):
        load(db)
