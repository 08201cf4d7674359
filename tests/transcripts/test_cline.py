"""Cline: the sessions under fixtures/cline/data and killed/ were written by the real ``cline``
3.0.65 CLI offline (scripts/make_transcript_fixtures/cline.py); task_1764800000000 is a
constructed task folder of the older format (VERSIONS.json says so). Expectations come from the
files, read here with plain json/sqlite3."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.transcripts import MultipleThreads, TranscriptError, load

from .conftest import FIXTURES

CLINE = FIXTURES / "cline"
VERSIONS = json.loads((FIXTURES / "VERSIONS.json").read_text(encoding="utf-8"))
HEALTHY = VERSIONS["cline"]["sessions"]["healthy"]
RESUMED = VERSIONS["cline"]["sessions"]["killed_then_resumed"]
PLACEHOLDER_SENT = VERSIONS["cline"]["resume_sent_to_model"][0]  # what the fake model received
OUR_TEXT = "This call was interrupted before it returned. It may have partly run, so check its effect before calling it again."


def _raw(folder: Path, sid: str) -> list[dict]:
    return json.loads((folder / f"{sid}.messages.json").read_text(encoding="utf-8"))["messages"]


def test_the_db_lists_the_sessions_and_thread_picks_one():
    with sqlite3.connect(f"file:{CLINE / 'data' / 'db' / 'sessions.db'}?mode=ro", uri=True) as con:
        ids = sorted(r[0] for r in con.execute("select session_id from sessions"))
    for src in (CLINE / "data", CLINE / "data" / "db" / "sessions.db"):
        with pytest.raises(MultipleThreads) as e:
            load(src)
        assert sorted(e.value.threads) == ids
    assert load(CLINE / "data", thread=HEALTHY).thread == HEALTHY
    with pytest.raises(TranscriptError, match="no session"):
        load(CLINE / "data", thread="nope")


def test_a_healthy_cline3_messages_file_loads():
    folder = CLINE / "data" / "sessions" / HEALTHY
    report = pk.inspect(folder / f"{HEALTHY}.messages.json")
    assert report.format == "cline" and report.valid, report.problems
    raw = _raw(folder, HEALTHY)
    [use] = [b for m in raw for b in m["content"] if b["type"] == "tool_use"]
    [res] = [b for m in raw for b in m["content"] if b["type"] == "tool_result"]
    [tool] = [m for m in report.messages if m.role == "tool"]
    assert tool.tool_call_id == use["id"] == res["tool_use_id"]
    assert json.loads(tool.content) == res["content"]  # Cline's own result objects, as JSON text
    assert report.messages[0].role == "system"  # its system_prompt
    assert pk.inspect(folder).messages == report.messages  # the folder reads the same


def test_killed_mid_command_ends_on_a_running_call():
    folder = CLINE / "killed" / RESUMED
    meta = json.loads((folder / f"{RESUMED}.json").read_text())
    assert meta["status"] == "running"
    raw = _raw(folder, RESUMED)
    last_call = [b for b in raw[-1]["content"] if b["type"] == "tool_use"][-1]
    report = pk.inspect(folder)
    [marker] = report.markers
    assert marker.kind == "interrupted" and marker.ids == [last_call["id"]]
    assert [r.original_id for r in report.interrupted] == [last_call["id"]]
    assert pk.validate_history(report.repaired.messages, wire="anthropic") == []


def test_resumed_session_reports_clines_unsaved_placeholder():
    folder = CLINE / "data" / "sessions" / RESUMED
    raw = _raw(folder, RESUMED)
    assert not any(PLACEHOLDER_SENT["content"] in json.dumps(m) for m in raw), "Cline saved it after all?"
    report = pk.inspect(folder)
    [marker] = report.markers
    assert marker.kind == "resume_placeholder_unsaved" and marker.ids == [PLACEHOLDER_SENT["tool_call_id"]]
    sent_text = json.loads(PLACEHOLDER_SENT["content"])[0]["text"]
    assert sent_text in marker.text
    assert any(p.rule == "dangling_call" and "tool_use" in (p.provider_wording or "") for p in report.problems)
    assert pk.validate_history(report.repaired.messages, wire="anthropic") == []


def test_messages_file_overwritten_with_metadata_is_a_clear_error():
    with pytest.raises(TranscriptError, match="metadata, not its messages"):
        load(CLINE / "killed_messages_file_overwritten")


def test_older_task_folder():
    task = CLINE / "task_1764800000000"
    history = json.loads((task / "api_conversation_history.json").read_text())
    report = pk.inspect(task)
    assert report.format == "cline"
    assert [m.role for m in report.messages] == ["user", "assistant", "tool", "assistant"]
    dangling = history[-1]["content"][-1]["id"]
    assert [m.kind for m in report.markers] == ["interrupted", "resume_offered"]
    assert [r.original_id for r in report.interrupted] == [dangling]
    assert pk.inspect(task / "api_conversation_history.json").messages == report.messages


@pytest.mark.parametrize("damage", ["torn", "not_list", "bad_block"])
def test_damaged_session_is_our_error_or_a_finding(tmp_path, damage):
    folder = tmp_path / HEALTHY
    shutil.copytree(CLINE / "data" / "sessions" / HEALTHY, folder)
    p = folder / f"{HEALTHY}.messages.json"
    text = p.read_text()
    if damage == "torn":
        p.write_text(text[: len(text) // 2])
        with pytest.raises(TranscriptError, match="not valid JSON"):
            load(folder)
    elif damage == "not_list":
        d = json.loads(text)
        d["messages"] = {"oops": 1}
        p.write_text(json.dumps(d))
        with pytest.raises(TranscriptError, match="no messages list"):
            load(folder)
    else:
        d = json.loads(text)
        d["messages"][1]["content"].append({"type": "mystery"})
        d["messages"].insert(0, "not a message")
        p.write_text(json.dumps(d))
        t = load(folder)
        assert t.skipped == {"block:mystery": 1, "malformed_message": 1}


def test_reading_never_writes(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(CLINE / "data", data)
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    for sid in (HEALTHY, RESUMED):
        pk.inspect(data, thread=sid)
    after = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    assert after == before


def test_repair_to_cline_writes_a_new_session_the_reader_takes_back(tmp_path):
    """The written session was also resumed by the real cline 3.0.65 by hand (its model got the
    repaired result); here: it loads back valid, it is registered in sessions.db, and the source
    session is untouched."""
    from providerkit_nb.cli import main

    data = tmp_path / "data"
    shutil.copytree(CLINE / "data", data)
    src = data / "sessions" / RESUMED
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    assert main(["repair", str(data), "--thread", RESUMED, "-o", str(data), "--to", "cline"]) == 1
    new = sorted({p.name for p in (data / "sessions").iterdir()} - {HEALTHY, RESUMED})
    assert len(new) == 1
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before
    with sqlite3.connect(data / "db" / "sessions.db") as con:
        assert con.execute("select status from sessions where session_id = ?", new).fetchone() == ("completed",)
    report = pk.inspect(data, thread=new[0])
    assert report.valid, report.problems
    [tool] = [m for m in report.messages if m.role == "tool" and m.tool_call_id == PLACEHOLDER_SENT["tool_call_id"]]
    assert tool.content == OUR_TEXT
    written = json.loads((data / "sessions" / new[0] / f"{new[0]}.messages.json").read_text())["messages"]
    results = [b for m in written for b in m["content"] if b["type"] == "tool_result"]
    assert all(b["name"] == "run_commands" for b in results)  # Cline's SDK refuses a result without it


def test_export_cline_refuses_a_history_with_breaks_and_writes_elsewhere(tmp_path):
    report = pk.inspect(CLINE / "killed" / RESUMED)
    with pytest.raises(ValueError, match="break"):
        pk.export(report.messages, "cline")
    out = pk.export(report, "cline")
    assert out[0]["role"] == "system" and [m["role"] for m in out[1:]] == ["user", "assistant", "user"]
    from providerkit_nb.transcripts.cline_write import write_session

    folder = write_session(report, tmp_path / "elsewhere")
    assert folder.parent == tmp_path / "elsewhere"
    assert pk.inspect(folder).valid


def test_the_real_cline_resumed_the_repaired_session_with_the_repaired_result():
    """Recorded by the fixture script: the repaired session (written by ``repair --to cline``)
    resumed in the real cline's UI; what its model received for the interrupted call."""
    [got] = VERSIONS["cline"]["repaired_resume_sent_to_model"]
    assert got["tool_call_id"] == PLACEHOLDER_SENT["tool_call_id"]
    assert got["content"] == OUR_TEXT  # ours, not Cline's unsaved placeholder
