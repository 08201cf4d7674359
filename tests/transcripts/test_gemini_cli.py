"""Gemini CLI sessions made by the real CLI (``@google/gemini-cli``, see VERSIONS.json): killed
mid-tool, and after its own resume. Expectations come from the files themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.notebook.inspection import inspect
from providerkit_nb.transcripts import TranscriptError, detect, load

from .conftest import FIXTURES, raw_lines

DIR = FIXTURES / "coding_agents" / "gemini_cli"
KILLED = DIR / "killed_mid_tool.jsonl"
RESUMED = DIR / "after_own_resume.jsonl"


def _final_messages(path: Path) -> list[dict[str, Any]]:
    """The messages the log ends with (the test's own replay of ``$set`` and message lines)."""
    msgs: list[dict[str, Any]] = []
    for o in raw_lines(path):
        if "$set" in o and "messages" in o["$set"]:
            msgs = list(o["$set"]["messages"])
        elif "type" in o and "id" in o:
            ids = [m["id"] for m in msgs]
            if o["id"] in ids:
                msgs[ids.index(o["id"])] = o
            else:
                msgs.append(o)
    return msgs


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_killed_session_keeps_an_empty_model_turn_and_no_call() -> None:
    msgs = _final_messages(KILLED)
    last = msgs[-1]
    assert last["type"] == "gemini" and last["content"] == "" and not last.get("toolCalls")
    users = [m for m in msgs if m["type"] == "user" and _text(m["content"])]
    assert detect(KILLED) == "gemini_cli"
    t = load(KILLED)
    assert t.thread == raw_lines(KILLED)[0]["sessionId"] and t.wire == "gemini"
    assert [m.content for m in t.messages] == [_text(m["content"]) for m in users]
    assert t.skipped == {"empty_turn": 1}
    assert [m.kind for m in t.markers] == ["empty_turn"]
    r = inspect(KILLED)
    assert [(a.agent, a.call_id, a.name) for a in r.abandoned] == [("gemini_cli", None, None)]
    assert r.problems == [] and not r.valid  # no broken pairing, but a lost call is a finding


def test_after_its_own_resume_the_empty_turn_is_gone_and_still_reported() -> None:
    lines = raw_lines(RESUMED)
    empty = [o["id"] for o in lines if o.get("type") == "gemini" and o.get("content") == "" and not o.get("toolCalls")]
    assert len(empty) == 1
    assert empty[0] not in [m["id"] for m in _final_messages(RESUMED)]  # the resume dropped it
    request = json.loads((DIR / "resume_request.json").read_text())
    assert "functionCall" not in json.dumps(request["contents"])  # the model never hears of the call
    t = load(RESUMED)
    assert t.meta["resumes"] == sum(1 for o in lines if "projectHash" in o and "type" not in o) - 1
    assert [m.kind for m in t.markers] == ["empty_turn_dropped"]
    r = inspect(RESUMED)
    assert len(r.abandoned) == 1 and "dropped" in r.abandoned[0].what


def test_json_session_object(tmp_path: Path) -> None:
    """The older single-object ``.json`` file: the same session, the same reading."""
    header = raw_lines(RESUMED)[0]
    obj = {**header, "messages": _final_messages(RESUMED)}
    path = tmp_path / "session-2026-01-01T00-00-abcd.json"
    path.write_text(json.dumps(obj))
    assert detect(path) == "gemini_cli"
    assert [m.to_dict() for m in load(path).messages] == [m.to_dict() for m in load(RESUMED).messages]


def test_completed_call_and_its_result(tmp_path: Path) -> None:
    """A finished call carries its result in the model message (the shape Gemini CLI writes)."""
    header = raw_lines(KILLED)[0]
    call = {"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "ls"},
            "result": [{"functionResponse": {"id": "run_shell_command-1", "name": "run_shell_command",
                                             "response": {"output": "a.txt"}}}], "status": "success"}
    lines = [header, {"id": "u1", "type": "user", "content": [{"text": "list"}]},
             {"id": "g1", "type": "gemini", "content": "", "toolCalls": [call]},
             {"id": "g2", "type": "gemini", "content": "One file."}]
    path = tmp_path / "session-x.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = inspect(path)
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "assistant"]
    assert r.messages[2].content == "a.txt" and r.valid and r.abandoned == []


def test_a_file_without_header_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "session-y.jsonl"
    path.write_text(json.dumps({"$set": {"lastUpdated": "x"}}) + "\n")
    with pytest.raises(TranscriptError, match="session-y.jsonl"):
        load(path, format="gemini_cli")
