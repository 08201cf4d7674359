"""Tool results the source marks as errors: ``details[i]["error"]`` on the result, per format.

Not a problem of the history (the model read the error): the report stays valid, the result is
badged on its call's card and its own, counted, and a filter finds it. Expectations come from the
files themselves (the upstream Claude Code session) or from the field written here by hand into
a copy of a real fixture or a small file in the format's own shape.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import providerkit_nb as pk
from providerkit_nb.viewer import report_html, text_summary

from .conftest import FIXTURES


def _errors(report: Any) -> list[int]:
    return sorted(i for i, d in report.details.items() if d.get("error"))


def test_claude_code_is_error_from_the_upstream_file(upstream_transcripts_dir: Path) -> None:
    """short.jsonl: the two tool_result blocks with ``is_error: true`` (the user rejected both)."""
    src = upstream_transcripts_dir / "claude-code" / "short.jsonl"
    failed = [
        b["tool_use_id"] for line in src.read_text().splitlines() if line.strip()
        for b in ((json.loads(line).get("message") or {}).get("content") or [])
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error") is True
    ]
    assert len(failed) == 2
    report = pk.inspect(src)
    at = [i for i, m in enumerate(report.messages) if m.role == "tool" and m.tool_call_id in failed]
    assert _errors(report) == at == [2, 3]
    assert report.details[2]["time"] == "2026-02-10 21:12:02"  # what the line said stays
    page = report.page()
    assert page.valid and page.errors == 2
    call = page.rows[1].before_html
    assert call.count('<span class="pk-badge pk-bad">error</span>') == 2  # on the call's card, each result
    assert '<span class="pk-badge pk-bad">error</span>' in page.rows[2].before_html  # and the result's own
    assert "2 tool result(s) were errors (shown, not a problem: the model read them)" in text_summary(page)
    html = report_html(page)
    assert '<option value="error_result">tool result was an error</option>' in html
    assert "2 tool result(s) were errors" in html
    # the command line's text and --json count them too
    assert "  2 tool result(s) were errors (the model read them; not a problem): #2, #3" in repr(report)
    assert report.to_json()["error_results"] == [2, 3] and report.to_json()["problems"] == []


def _cc_line(kind: str, uid: str, parent: str | None, message: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "s",
                       "timestamp": "2026-03-01T10:00:00.000Z", "message": message})


def test_claude_code_a_failed_command_among_good_ones(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    calls = [{"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": f"c{k}"}} for k in range(3)]
    results = [{"type": "tool_result", "tool_use_id": "t0", "content": "ok"},
               {"type": "tool_result", "tool_use_id": "t1", "content": "Exit code 1\nboom", "is_error": True},
               {"type": "tool_result", "tool_use_id": "t2", "content": "fine", "is_error": False}]
    src.write_text("\n".join([
        _cc_line("user", "u1", None, {"role": "user", "content": "go"}),
        _cc_line("assistant", "a1", "u1", {"id": "m1", "role": "assistant", "content": calls}),
        _cc_line("user", "u2", "a1", {"role": "user", "content": results}),
    ]) + "\n")
    report = pk.inspect(src)
    assert [m.role for m in report.messages] == ["user", "assistant", "tool", "tool", "tool"]
    assert _errors(report) == [3]
    page = report.page()
    assert [r.kinds for r in page.rows] == [[], ["error_result"], [], ["error_result"], []]
    call = page.rows[1].before_html
    assert call.count('<div class="pk-result pk-bad">') == 1
    # the result's number, how long the call took (the file's two times), then the badge
    assert re.search(r'<a class="pk-idx" href="#m-3">#3</a> result <span class="pk-took"[^>]*>took 0\.0 s</span>'
                     r'<span class="pk-badge pk-bad">error</span>', call)


def test_codex_exit_codes_and_success_false(tmp_path: Path) -> None:
    """Codex heads a shell output with its exit code; older rollouts wrote JSON with metadata."""
    outputs = {
        "c1": "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nno such file",
        "c2": "Process exited with code 0\nOutput:\nExit code: 7",  # the command printed that, it did not fail
        "c3": json.dumps({"output": "boom", "metadata": {"exit_code": 2, "duration_seconds": 0.1}}),
        "c4": json.dumps({"output": "fine", "metadata": {"exit_code": 0}}),
        "c5": "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 127\nOutput:\nnot found",
        "c6": "{not json",
    }
    lines = [{"type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text", "text": "go"}]}}]
    for cid, out in outputs.items():
        lines.append({"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                           "arguments": "{}", "call_id": cid}})
        lines.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": cid,
                                                           "output": out}})
    lines.append({"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch",
                                                       "input": "*** Begin Patch", "call_id": "c7"}})
    lines.append({"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "c7",
                                                       "output": "Exit code: 1\nOutput:\npatch failed"}})
    src = tmp_path / "rollout-2026-03-01T10-00-00-s1.jsonl"
    src.write_text("".join(json.dumps({"timestamp": "2026-03-01T10:00:00Z", **x}) + "\n" for x in lines))
    report = pk.inspect(src)
    assert report.format == "codex"
    failed = sorted(m.tool_call_id for i, m in enumerate(report.messages) if i in _errors(report))
    assert failed == ["c1", "c3", "c5", "c7"]


def test_cline_is_error(tmp_path: Path) -> None:
    task = tmp_path / "task_1764800000000"
    shutil.copytree(FIXTURES / "cline" / "task_1764800000000", task)
    f = task / "api_conversation_history.json"
    history = json.loads(f.read_text())
    history[2]["content"][0]["is_error"] = True  # the one tool_result (toolu_01A)
    f.write_text(json.dumps(history))
    report = pk.inspect(task)
    assert _errors(report) == [2] and report.messages[2].tool_call_id == "toolu_01A"


def test_opencode_tool_part_in_error(tmp_path: Path) -> None:
    """The real CLI's killed session, its running tool part turned into one that failed."""
    db = tmp_path / "opencode.db"
    shutil.copy(FIXTURES / "coding_agents" / "opencode" / "killed_mid_tool.db", db)
    with sqlite3.connect(db) as c:
        (pid, data), = c.execute("select id, data from part where json_extract(data, '$.type') = 'tool'")
        part = json.loads(data)
        part["state"] = {**part["state"], "status": "error", "error": "Error: command failed"}
        c.execute("update part set data = ? where id = ?", (json.dumps(part), pid))
    report = pk.inspect(db)
    (i,) = _errors(report)
    assert report.messages[i].tool_call_id == part["callID"] and report.messages[i].content == "Error: command failed"


def test_langchain_status_error() -> None:
    """The fixture's own ToolMessage with ``status: "error"`` (an orphan result) is marked."""
    src = FIXTURES / "langchain_messages_to_dict.json"
    doc = json.loads(src.read_text())
    failed = [m["data"]["tool_call_id"] for m in doc if m["type"] == "tool" and m["data"].get("status") == "error"]
    assert failed == ["toolu_99"]
    report = pk.inspect(src)
    assert [report.messages[i].tool_call_id for i in _errors(report)] == failed


def test_gemini_cli_error_response(tmp_path: Path) -> None:
    header = json.loads((FIXTURES / "coding_agents" / "gemini_cli" / "killed_mid_tool.jsonl").read_text().splitlines()[0])

    def call(cid: str, response: dict[str, Any], status: str) -> dict[str, Any]:
        return {"id": cid, "name": "run_shell_command", "args": {"command": "ls"}, "status": status,
                "result": [{"functionResponse": {"id": cid, "name": "run_shell_command", "response": response}}]}

    lines = [header, {"id": "u1", "type": "user", "content": [{"text": "list"}]},
             {"id": "g1", "type": "gemini", "content": "", "toolCalls": [
                 call("ok-1", {"output": "a.txt"}, "success"), call("bad-1", {"error": "no such dir"}, "error")]},
             {"id": "g2", "type": "gemini", "content": "Done."}]
    src = tmp_path / "session-x.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    report = pk.inspect(src)
    (i,) = _errors(report)
    assert report.messages[i].tool_call_id == "bad-1" and report.messages[i].content == "no such dir"


def test_pydantic_ai_retry_prompt_is_an_error() -> None:
    src = FIXTURES / "pydantic_ai_retry_legacy.json"  # 1.x: a retry-prompt naming the tool answers its call
    raw = json.loads(src.read_text())
    retried = [p["tool_call_id"] for m in raw for p in m.get("parts", [])
               if p.get("part_kind") == "retry-prompt" and p.get("tool_name")]
    report = pk.inspect(src)
    assert retried  # the file's own retry prompt for a tool
    assert sorted(report.messages[i].tool_call_id for i in _errors(report)) == sorted(retried)


def test_vercel_ui_output_error() -> None:
    """The fixture's own tool part in state ``output-error``."""
    src = FIXTURES / "vercel_ui_tool_error.json"
    doc = json.loads(src.read_text())
    messages = doc if isinstance(doc, list) else doc.get("messages", [])
    failed = [p["toolCallId"] for m in messages for p in m.get("parts", []) if p.get("state") == "output-error"]
    assert len(failed) == 1
    report = pk.inspect(src)
    assert [report.messages[i].tool_call_id for i in _errors(report)] == failed
