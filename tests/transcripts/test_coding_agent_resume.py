"""What Claude Code's and Codex's own resume did with a call killed mid-tool, and our write-back.

The sessions were made by the real CLIs (see VERSIONS.json): killed with SIGKILL while a shell
command ran, then resumed once by the CLI itself; ``resume_request.json`` is the request body
that resume sent. Expectations are read from the files here, independently of the library."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from providerkit_nb.notebook.inspection import inspect
from providerkit_nb.transcripts import load
from providerkit_nb.transcripts.export import export

from .conftest import FIXTURES, raw_lines

CC = FIXTURES / "coding_agents" / "claude_code"
CODEX = FIXTURES / "coding_agents" / "codex"
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect before calling it again."
)
READ_ONLY = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."


def _uses(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for o in lines if o.get("type") == "assistant" for b in o["message"]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]


def _result_ids(lines: list[dict[str, Any]]) -> set[str]:
    return {b["tool_use_id"] for o in lines if o.get("type") == "user" and isinstance(o["message"]["content"], list)
            for b in o["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", *args], capture_output=True, text=True, timeout=120)


def test_claude_code_resume_leaves_the_call_off_the_branch_and_inspect_says_so() -> None:
    path = CC / "after_own_resume.jsonl"
    lines = raw_lines(path)
    (use,) = [u for u in _uses(lines) if u["id"] not in _result_ids(lines)]
    call_line = next(o for o in lines if o.get("type") == "assistant" and use in o["message"]["content"])
    hung_beside = [o for o in lines if o.get("parentUuid") == call_line["parentUuid"] and o is not call_line]
    assert hung_beside and hung_beside[0].get("isMeta")  # the resume's meta line, beside the call
    assert hung_beside[0]["message"]["content"][0]["text"] == "Continue from where you left off."
    request = json.loads((CC / "resume_request.json").read_text())
    assert use["id"] not in json.dumps(request["messages"])  # the model is never told

    r = inspect(path)
    assert r.problems == []  # the branch itself is valid: that is why the call went unnoticed
    assert [(a.call_id, a.name, a.index) for a in r.abandoned] == [(use["id"], use["name"], None)]
    assert not r.valid
    assert use["id"] in repr(r) and "abandoned" in repr(r)
    assert [a["call_id"] for a in r.to_json()["abandoned"]] == [use["id"]]
    html = r.report_html()
    findings = html[html.index('<ol class="pk-findings">'):html.index("</ol>")]
    assert findings.count("pk-fk-abandoned_call") == 1 and use["id"] in findings
    assert "own resume abandoned" in findings
    out = _cli("inspect", str(path))
    assert out.returncode == 1 and use["id"] in out.stdout


def test_claude_code_killed_session_reports_the_call_its_resume_will_drop() -> None:
    path = CC / "killed_mid_tool.jsonl"
    lines = raw_lines(path)
    (use,) = _uses(lines)
    assert _result_ids(lines) == set()
    r = inspect(path)
    assert [(a.call_id, a.index) for a in r.abandoned] == [(use["id"], len(r.messages) - 1)]
    assert [c.original_id for c in r.interrupted] == [use["id"]]


def test_codex_resume_sends_aborted_but_never_writes_it() -> None:
    for name in ("killed_mid_tool.jsonl", "after_own_resume.jsonl"):
        items = raw_lines(CODEX / name)
        calls = [o["payload"]["call_id"] for o in items if o["type"] == "response_item"
                 and o["payload"].get("type") == "function_call"]
        outputs = [o for o in items if o["type"] == "response_item" and o["payload"].get("type") == "function_call_output"]
        assert len(calls) == 1 and outputs == []
        r = inspect(CODEX / name)
        assert [a.call_id for a in r.abandoned] == calls and "aborted" in r.abandoned[0].what
    request = json.loads((CODEX / "resume_request.json").read_text())
    sent = [it for it in request["input"] if it.get("type") == "function_call_output" and it["call_id"] == calls[0]]
    assert [it["output"] for it in sent] == ["aborted"]


def test_repair_claude_code_resumed_session_puts_the_call_back_on_the_branch(tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl"
    shutil.copyfile(CC / "after_own_resume.jsonl", src)
    before = src.read_bytes()
    (use,) = [u for u in _uses(raw_lines(src)) if u["id"] not in _result_ids(raw_lines(src))]
    out = _cli("repair", str(src), "--to", "claude_code")
    assert out.returncode == 1, out.stderr  # the source had findings
    new_id = out.stdout.split("wrote session ", 1)[1].split(" ", 1)[0]
    assert out.stdout.rstrip().endswith(f"resume it with: claude --resume {new_id}")  # Claude Code's own flag
    assert src.read_bytes() == before
    new = tmp_path / f"{new_id}.jsonl"
    lines = raw_lines(new)
    assert {o["sessionId"] for o in lines if "sessionId" in o} == {new_id}
    assert use["id"] in _result_ids(lines)
    t = load(new)
    results = [m for m in t.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in results if m.tool_call_id == use["id"]] == [(use["id"], MAY_HAVE_RUN)]
    r = inspect(new)
    assert r.valid and r.abandoned == []
    # the resumed turn is kept after the answered call
    assert [m.content for m in t.messages if m.role == "assistant" and m.content][-1] == "Done."


def test_read_only_flag_and_python_export(tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl"
    shutil.copyfile(CC / "killed_mid_tool.jsonl", src)
    (use,) = _uses(raw_lines(src))
    out = _cli("repair", str(src), "--to", "claude_code", "--read-only", use["name"])
    new_id = out.stdout.split("wrote session ", 1)[1].split(" ", 1)[0]
    assert [m.content for m in load(tmp_path / f"{new_id}.jsonl").messages if m.role == "tool"] == [READ_ONLY]
    written = export(inspect(src), "claude_code")
    assert Path(written.path).parent == tmp_path and written.answered == {use["id"]: MAY_HAVE_RUN}
    assert len(list(tmp_path.glob("*.jsonl"))) == 3  # the original and two new sessions


def test_repair_codex_rollout(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "03"
    day.mkdir(parents=True)
    src = day / "rollout-2026-12-03T00-00-00-x.jsonl"
    shutil.copyfile(CODEX / "after_own_resume.jsonl", src)
    before = src.read_bytes()
    written = export(inspect(src), "codex")
    assert src.read_bytes() == before and Path(written.path).parent == day
    items = raw_lines(Path(written.path))
    assert items[0]["payload"]["id"] == written.session_id
    assert written.resume_command == f"codex resume {items[0]['payload']['id']}"  # Codex's own subcommand
    (cid,) = written.answered
    k = next(i for i, o in enumerate(items) if o["payload"].get("call_id") == cid and o["payload"]["type"] == "function_call")
    assert items[k + 1]["payload"] == {"type": "function_call_output", "call_id": cid, "output": MAY_HAVE_RUN}
    r = inspect(written.path)
    assert r.valid and r.abandoned == []


def test_repair_refuses_another_tools_session() -> None:
    out = _cli("repair", str(CODEX / "killed_mid_tool.jsonl"), "--to", "claude_code")
    assert out.returncode == 2 and "codex" in out.stderr


def test_the_widget_shows_the_abandoned_calls() -> None:
    r = inspect(CODEX / "killed_mid_tool.jsonl")
    (a,) = r.abandoned
    shown = [li for li in r.view.findings.value.split("<li ") if "pk-fk-abandoned_call" in li]
    assert len(shown) == 1 and a.call_id in shown[0]
    assert "echo done &gt; marker" in shown[0] and "done > marker" not in shown[0]  # escaped
