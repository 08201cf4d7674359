"""Make the Cline fixtures with the real ``cline`` CLI from the npm registry, offline.

    npm install --prefix CACHE cline@3.0.65
    python scripts/make_transcript_fixtures/cline.py FIXTURES_DIR --cline CACHE/node_modules/cline/bin/cline \
        [--home /home/cline-fixture] [--pk-python PYTHON]

A fake OpenAI-compatible server on 127.0.0.1 (streamed chat completions) plays the model; the
CLI is pointed at it with ``cline auth -p openai-compatible -b http://127.0.0.1:PORT/v1``. HOME is
a throwaway folder (its path ends up inside the files Cline writes: pick a neutral one). Three
sessions:

- ``healthy``: the model asks for ``run_commands(["echo hello"])``, Cline runs it, the model answers;
- ``killed``: the model asks for ``run_commands(["sleep 300"])``; while the command runs, the CLI,
  its hub daemon (the process that runs the session) and the command get SIGKILL; the session
  folder is copied as it was left (``killed/``);
- the same session resumed in the interactive UI under tmux (``--json`` does not resume):
  "please continue" is typed; the request the model gets holds Cline's own placeholder result,
  which is recorded in VERSIONS.json, and the session file is copied again;
- given ``--pk-python`` (a Python with this package), ``providerkit-nb repair --to cline`` writes
  the repaired session beside it and the real cline resumes that one too: what the model then got
  is recorded as ``repaired_resume_sent_to_model``.

Writes FIXTURES_DIR/cline/{data,killed}/... and adds ``cline`` to FIXTURES_DIR/VERSIONS.json.
``python cline.py legacy FIXTURES_DIR`` writes the older task folder, constructed (see ``legacy``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

STATE: dict[str, Any] = {"mode": "text", "requests": [], "n": 0}


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        STATE["requests"].append(req)
        STATE["n"] += 1
        n = STATE["n"]
        answered = any(m.get("role") == "tool" for m in req.get("messages", []))
        tools = [t.get("function", {}).get("name") for t in req.get("tools") or []]
        command = STATE["mode"]
        if command != "text" and not answered and "run_commands" in tools:
            args = json.dumps({"commands": [command]})
            delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": f"call_cmd_{n}", "type": "function",
                "function": {"name": "run_commands", "arguments": args}}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": "Done: the command printed hello."}
            finish = "stop"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1764800000 + n,
                "model": req.get("model")}
        for chunk in (
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
        ):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def _children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().split(") ")[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def _kill_tree(pid: int) -> None:
    for c in _children(pid):
        _kill_tree(c)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _clines_of(home: Path) -> list[int]:
    """The Cline processes this script started (hub daemons and the UI outlive the CLI and tmux)."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if (p.name.isdigit() and b".cline" in (p / "cmdline").read_bytes()
                    and f"HOME={home}".encode() in (p / "environ").read_bytes().split(b"\0")):
                out.append(int(p.name))
        except OSError:
            continue
    return out


def _wait(cond: Any, what: str, timeout: float = 60) -> Any:
    end = time.time() + timeout
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def _session_dirs(data: Path) -> set[str]:
    s = data / "sessions"
    return {p.name for p in s.iterdir()} if s.exists() else set()


def _messages(data: Path, sid: str) -> list[dict[str, Any]]:
    p = data / "sessions" / sid / f"{sid}.messages.json"
    try:
        return list(json.loads(p.read_text())["messages"])
    except (OSError, ValueError, KeyError):
        return []


def main(out: Path, cline: str, home: Path, pk_python: str | None = None) -> None:
    if home.exists():
        shutil.rmtree(home)
    (home / "proj").mkdir(parents=True)
    data = home / ".cline" / "data"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "HOME": str(home), "CLINE_DIR": str(home / ".cline")}
    run = dict(env=env, cwd=home / "proj")
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    subprocess.run([cline, "auth", "-p", "openai-compatible", "-b", base, "-k", "sk-fake", "-m", "fake-model"],
                   check=True, capture_output=True, **run)  # type: ignore[arg-type]
    version = subprocess.run([cline, "--version"], check=True, capture_output=True, text=True, **run).stdout.strip()  # type: ignore[call-overload]
    cmd = [cline, "--json", "-P", "openai-compatible", "-m", "fake-model"]

    # healthy: one command that finishes
    STATE["mode"] = "echo hello"
    before = _session_dirs(data)
    subprocess.run([*cmd, "run echo hello"], check=True, capture_output=True, timeout=120, **run)  # type: ignore[call-overload]
    [healthy] = _session_dirs(data) - before

    # killed mid-command
    STATE["mode"] = "sleep 300"
    before = _session_dirs(data)
    proc = subprocess.Popen([*cmd, "wait for the sleep"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **run)  # type: ignore[call-overload]
    sid = _wait(lambda: next(iter(_session_dirs(data) - before), None), "the killed session's folder")
    _wait(lambda: any(b.get("type") == "tool_use" for m in _messages(data, sid) for b in m.get("content", [])),
          "the tool_use to be saved")
    hub = json.loads((data / "sessions" / sid / f"{sid}.json").read_text())["pid"]
    _wait(lambda: any("sleep" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")
                      for c in _children(hub) if Path(f"/proc/{c}").exists()), "the command to run")
    time.sleep(1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _kill_tree(hub)
    killed_dir = out / "cline" / "killed"
    if killed_dir.exists():
        shutil.rmtree(killed_dir)
    shutil.copytree(data / "sessions" / sid, killed_dir / sid)

    # resumed in the interactive UI
    sent = _resume(cline, home, data, sid, 4)

    target = out / "cline" / "data"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(data / "sessions", target / "sessions")
    (target / "db").mkdir()
    src = sqlite3.connect(f"file:{data / 'db' / 'sessions.db'}?mode=ro", uri=True)
    dst = sqlite3.connect(target / "db" / "sessions.db")
    src.backup(dst)  # folds the WAL in: one file
    dst.execute("PRAGMA journal_mode=DELETE")
    dst.close()
    src.close()
    versions_path = out / "VERSIONS.json"
    known = json.loads(versions_path.read_text()) if versions_path.exists() else {}
    known["cline"] = {
        "script": "scripts/make_transcript_fixtures/cline.py",
        "written_by": f"npm cline {version} (its compiled linux-x64 binary), provider openai-compatible against a local fake server",
        "sessions": {"healthy": healthy, "killed_then_resumed": sid},
        "killed": "cline/killed/ is the killed session as SIGKILL left it (CLI, hub daemon and command killed)",
        "resume_sent_to_model": sent,
    }
    if pk_python:  # the repaired session, written by providerkit's repair, resumed by the real cline
        done = subprocess.run([pk_python, "-m", "providerkit_nb", "repair", str(data), "--thread", sid, "-o", str(data),
                               "--to", "cline"], capture_output=True, text=True)
        new = done.stdout.split("new Cline session ")[1].split()[0]
        known["cline"]["repaired_resume_sent_to_model"] = _resume(cline, home, data, new, 2 + len(_messages(data, new)))
        versions_path.write_text(json.dumps(dict(sorted(known.items())), indent=2) + "\n", encoding="utf-8")
    server.shutdown()


def _resume(cline: str, home: Path, data: Path, sid: str, wait_for: int) -> list[dict[str, Any]]:
    """Resume session ``sid`` in Cline's interactive UI under tmux, type one message, and return
    the tool messages the model then received."""
    STATE["mode"] = "text"
    STATE["requests"].clear()
    tmux = f"cline-fixture-{os.getpid()}"
    shell = (f"cd {home / 'proj'} && HOME={home} CLINE_DIR={home / '.cline'} "
             f"{cline} -P openai-compatible -m fake-model --id {sid} -i")
    subprocess.run(["tmux", "new-session", "-d", "-s", tmux, "-x", "200", "-y", "50", shell], check=True)
    try:
        def screen() -> str:
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", tmux], capture_output=True, text=True).stdout

        _wait(lambda: "Ask anything" in screen(), "the interactive UI")
        subprocess.run(["tmux", "send-keys", "-t", tmux, "please continue", "Enter"], check=True)
        time.sleep(2)
        subprocess.run(["tmux", "send-keys", "-t", tmux, "Enter"], check=True)
        _wait(lambda: len(_messages(data, sid)) >= wait_for, "the resumed answer to be saved")
        time.sleep(1)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", tmux], check=False)
    for h in _clines_of(home):
        if h != os.getpid():
            _kill_tree(h)
    return [m for r in STATE["requests"] for m in r.get("messages", []) if m.get("role") == "tool"]


def legacy(out: Path) -> None:
    """A task folder of the VS Code extension / older Cline, CONSTRUCTED from the documented
    format (no extension ran here): the task was stopped while ``execute_command`` ran, so the
    history ends on its ``tool_use`` and the UI's last message offers to resume."""
    task = out / "cline" / "task_1764800000000"
    task.mkdir(parents=True, exist_ok=True)
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nRun the tests\n</task>"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "I will run the test suite."},
            {"type": "tool_use", "id": "toolu_01A", "name": "read_files", "input": {"paths": ["package.json"]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A",
                                       "content": [{"type": "text", "text": '{"scripts": {"test": "jest"}}'}]}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_01B", "name": "execute_command", "input": {"command": "npm test"}}]},
    ]
    ui = [
        {"ts": 1764800000000, "type": "say", "say": "task", "text": "Run the tests"},
        {"ts": 1764800001000, "type": "say", "say": "text", "text": "I will run the test suite."},
        {"ts": 1764800002000, "type": "ask", "ask": "command", "text": "npm test"},
        {"ts": 1764800090000, "type": "ask", "ask": "resume_task"},
    ]
    (task / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    (task / "ui_messages.json").write_text(json.dumps(ui), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == "legacy":
        legacy(Path(sys.argv[2]))
        raise SystemExit(0)
    args = sys.argv[1:]
    opts = dict(zip(args[1::2], args[2::2], strict=False))
    main(Path(args[0]), opts["--cline"], Path(opts.get("--home", "/home/cline-fixture")), opts.get("--pk-python"))
