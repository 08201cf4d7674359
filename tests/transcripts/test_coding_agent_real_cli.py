"""The real coding-agent CLIs, killed mid-tool, repaired by us, resumed by themselves.

Each CLI (from the npm registry, installed into ``.cache/agent-clis/`` by ``.ci/run`` or
``python scripts/make_transcript_fixtures/coding_agents.py``) runs offline against the scripted
model on 127.0.0.1, which asks for a shell command; the CLI's process group gets SIGKILL while
the command runs. The test reads what the CLI left in its own session (its own reading, not
the library's), checks that ``inspect`` reports the abandoned call, writes the repaired session
with ``repair --to TOOL``, resumes that new session with the real CLI, and checks the request the
server received: the call's id answered with our text, the history valid for the wire.
Skips locally without the CLIs; fails under CI=true.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import load_script, unavailable
from tests.transcripts.agent_servers import ScriptedServer

pytestmark = pytest.mark.agent_cli

REPO = Path(__file__).resolve().parents[2]
MAY_HAVE_RUN = "It may have partly run, so check its effect before calling it again."


MAKER = load_script(REPO / "scripts" / "make_transcript_fixtures" / "coding_agents.py")


def _bin_dir(tool: str) -> Path:
    bin_dir = MAKER.CACHE / "node_modules" / ".bin"
    if not (bin_dir / MAKER.BINARIES[tool]).exists():
        unavailable(f"{MAKER.PACKAGES[tool]} is not installed in .cache/agent-clis "
                    "(run .ci/run, or scripts/make_transcript_fixtures/coding_agents.py)")
    return bin_dir


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def _killed(tool: str, tmp_path: Path) -> tuple[Any, Path, str]:
    bin_dir = _bin_dir(tool)
    agent = MAKER.Agent(tool, tmp_path / tool)
    with ScriptedServer() as server:
        MAKER.run_killed(agent, bin_dir, server)
        sent = server.calls_sent
    assert len(sent) == 1, sent
    files = agent.session_files()
    assert len(files) == 1, files
    return agent, files[0], sent[0]["id"]


def _resume(agent: Any, session: str) -> dict[str, Any]:
    with ScriptedServer(tools=False) as server:
        done = MAKER.resume(agent, MAKER.CACHE / "node_modules" / ".bin", server, session)
        requests = MAKER.model_requests(server)
    assert requests, f"the resume sent no model request: {done.stderr[-2000:]}"
    return dict(requests[-1]["body"])


def _repair(path: Path, tool: str, *extra: str) -> str:
    out = _cli("repair", str(path), "--to", tool, *extra)
    assert out.returncode in (0, 1), out.stderr
    assert "wrote session " in out.stdout, out.stdout
    return out.stdout.split("wrote session ", 1)[1].split(" ", 1)[0]


def test_claude_code_repaired_session_resumes_with_our_text(tmp_path: Path) -> None:
    agent, path, call_id = _killed("claude_code", tmp_path)
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    uses = [b for o in lines if o.get("type") == "assistant" for b in o["message"]["content"] if b.get("type") == "tool_use"]
    results = [b for o in lines if o.get("type") == "user" and isinstance(o["message"]["content"], list)
               for b in o["message"]["content"] if b.get("type") == "tool_result"]
    assert [u["id"] for u in uses] == [call_id] and results == []  # what the kill left
    report = json.loads(_cli("inspect", str(path), "--json").stdout)
    assert [a["call_id"] for a in report["abandoned"]] == [call_id]
    before = path.read_bytes()
    new_id = _repair(path, "claude_code")
    assert path.read_bytes() == before  # never in place
    assert (path.parent / f"{new_id}.jsonl").exists()
    body = _resume(agent, new_id)
    msgs = body["messages"]
    at = [i for i, m in enumerate(msgs) if m["role"] == "assistant" and isinstance(m["content"], list)
          and any(b.get("type") == "tool_use" and b.get("id") == call_id for b in m["content"])]
    assert len(at) == 1, msgs
    nxt = msgs[at[0] + 1]
    answers = [b for b in nxt["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert [a["tool_use_id"] for a in answers] == [call_id]
    text = answers[0]["content"] if isinstance(answers[0]["content"], str) else answers[0]["content"][0]["text"]
    assert MAY_HAVE_RUN in text
    assert nxt["role"] == "user" and nxt["content"][: len(answers)] == answers  # results lead the turn


def test_claude_code_runs_a_scripted_read_edit_write_bash_session_to_its_end(tmp_path: Path) -> None:
    """The way ``claude_code/edits.jsonl`` is made, run again: the CLI makes the four calls the
    scripted model asks for, one per turn, records each with its result, and the viewer lays the
    Edit out as a diff."""
    import html

    import providerkit_nb as pk

    agent = MAKER.run_edits(_bin_dir("claude_code"), tmp_path / "edits")
    files = agent.session_files()
    assert len(files) == 1, files
    lines = [json.loads(x) for x in files[0].read_text().splitlines() if x.strip()]
    uses = [b for o in lines if o.get("type") == "assistant" for b in o["message"]["content"] if b.get("type") == "tool_use"]
    assert [u["name"] for u in uses] == ["Read", "Edit", "Write", "Bash"]
    answered = {b["tool_use_id"]: o.get("toolUseResult") for o in lines
                if o.get("type") == "user" and isinstance(o["message"]["content"], list)
                for b in o["message"]["content"] if b.get("type") == "tool_result"}
    assert set(answered) == {u["id"] for u in uses}
    assert (agent.project / "NOTES.md").read_text() == uses[2]["input"]["content"]  # really written
    cards = "".join(r.before_html for r in pk.inspect(files[0]).page().rows)
    for x in uses[1]["input"]["new_string"].splitlines():
        assert f"<ins>+{html.escape(x)}</ins>" in cards


def test_codex_repaired_rollout_resumes_with_our_text(tmp_path: Path) -> None:
    agent, path, call_id = _killed("codex", tmp_path)
    items = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    calls = [o["payload"]["call_id"] for o in items if o["type"] == "response_item" and o["payload"]["type"] == "function_call"]
    outputs = [o for o in items if o["type"] == "response_item" and o["payload"]["type"] == "function_call_output"]
    assert calls == [call_id] and outputs == []
    report = json.loads(_cli("inspect", str(path), "--json").stdout)
    assert [a["call_id"] for a in report["abandoned"]] == [call_id]
    before = path.read_bytes()
    new_id = _repair(path, "codex")
    assert path.read_bytes() == before
    state = sorted((agent.home / ".codex").glob("state_*.sqlite"))
    if state:  # the index names the new rollout
        with sqlite3.connect(f"{state[0].resolve().as_uri()}?mode=ro", uri=True) as c:
            assert c.execute("select count(*) from threads where id = ?", (new_id,)).fetchone()[0] == 1
    body = _resume(agent, new_id)
    inp = body["input"]
    at = [i for i, it in enumerate(inp) if it.get("type") == "function_call" and it.get("call_id") == call_id]
    assert len(at) == 1
    outs = [it for it in inp if it.get("type") == "function_call_output" and it.get("call_id") == call_id]
    assert len(outs) == 1 and inp[at[0] + 1] is outs[0]
    assert MAY_HAVE_RUN in json.dumps(outs[0]["output"]) and "aborted" != outs[0]["output"]


def test_opencode_repaired_session_resumes_with_our_text(tmp_path: Path) -> None:
    agent, db, call_id = _killed("opencode", tmp_path)
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as c:
        (old_id,) = c.execute("select id from session").fetchone()
        parts = [json.loads(d) for (d,) in c.execute("select data from part where session_id = ?", (old_id,))]
        old_rows = c.execute("select id, data from part where session_id = ? order by id", (old_id,)).fetchall()
    tools = [p for p in parts if p.get("type") == "tool"]
    assert [(p["callID"], p["state"]["status"]) for p in tools] == [(call_id, "running")]
    report = json.loads(_cli("inspect", str(db), "--json").stdout)
    assert [a["call_id"] for a in report["abandoned"]] == [call_id]
    new_id = _repair(db, "opencode")
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as c:
        assert c.execute("select id, data from part where session_id = ? order by id", (old_id,)).fetchall() == old_rows
        assert c.execute("select count(*) from session").fetchone()[0] == 2
    body = _resume(agent, new_id)
    msgs = body["messages"]
    at = [i for i, m in enumerate(msgs) if m["role"] == "assistant"
          and any(c["id"] == call_id for c in m.get("tool_calls") or [])]
    assert len(at) == 1, msgs
    nxt = msgs[at[0] + 1]
    assert nxt["role"] == "tool" and nxt["tool_call_id"] == call_id
    assert MAY_HAVE_RUN in json.dumps(nxt["content"])
    assert "[Tool execution was interrupted]" not in json.dumps(msgs)
