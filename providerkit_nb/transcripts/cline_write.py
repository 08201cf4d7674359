"""Write a repaired history as a NEW Cline 3 session (``repair --to cline``): never in place.

The messages come from ``export(..., "cline")``; the session gets a fresh id in Cline's shape,
its metadata file, and (when written into a Cline data folder) a row in ``db/sessions.db``, so
``cline --id <new id>`` resumes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .base import TranscriptError

__all__ = ["new_session_id", "write_session"]


def new_session_id() -> str:
    """An id in Cline's own shape: milliseconds since the epoch, '_', five characters."""
    import secrets
    import string
    import time

    alphabet = string.ascii_lowercase + string.digits
    return f"{int(time.time() * 1000)}_{''.join(secrets.choice(alphabet) for _ in range(5))}"


def write_session(inspection: Any, out: str | Path) -> Path:
    """Write the repaired history of ``inspection`` as a NEW Cline 3 session and return its folder.

    ``out`` is a Cline data folder (``~/.cline/data``: the session goes to ``sessions/<new id>/``
    and is added to ``db/sessions.db``, so ``cline --id <new id>`` resumes it) or any other folder
    (the session folder is written inside it). The source session is never touched."""
    import datetime as dt
    import sqlite3

    from .export import export

    msgs = export(inspection, "cline")  # refuses a history that still has breaks
    system = msgs[0]["content"] if msgs and msgs[0]["role"] == "system" else ""
    turns = [m for m in msgs if m["role"] != "system"]
    out = Path(out)
    sid = new_session_id()
    data = out if (out / "sessions").is_dir() and (out / "db" / "sessions.db").is_file() else None
    folder = (data / "sessions" / sid) if data is not None else out / sid
    folder.mkdir(parents=True, exist_ok=False)
    meta_in = dict(getattr(inspection, "meta", {}) or {})
    now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    first = next((b.get("text", "") for m in turns if m["role"] == "user" for b in m["content"]
                  if b.get("type") == "text"), "")
    messages_path = (folder / f"{sid}.messages.json").resolve()
    meta = {
        "version": 1, "session_id": sid, "source": "cli", "pid": 0, "started_at": now, "ended_at": now,
        "exit_code": 0, "status": "completed", "interactive": False,
        "provider": str(meta_in.get("provider") or ""), "model": str(meta_in.get("model") or ""),
        "cwd": str(meta_in.get("cwd") or ""), "workspace_root": str(meta_in.get("cwd") or ""),
        "enable_tools": True, "enable_spawn": True, "enable_teams": False, "prompt": first[:2000],
        "metadata": {"title": f"repaired: {first[:60]}", "repaired_from": getattr(inspection, "thread", None)},
        "messages_path": str(messages_path),
    }
    doc = {"version": 1, "updated_at": now, "agent": "lead", "sessionId": sid,
           "origin": {"source": "cli", "mode": "user", "sessionId": sid,
                      "version": str(meta_in.get("cline_version") or "")},
           "messages": turns, "system_prompt": system}
    (folder / f"{sid}.messages.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    (folder / f"{sid}.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    if data is not None:
        con = sqlite3.connect(data / "db" / "sessions.db", timeout=10)
        try:
            with con:
                con.execute(
                    "INSERT INTO sessions (session_id, source, pid, started_at, ended_at, exit_code, status,"
                    " interactive, provider, model, cwd, workspace_root, enable_tools, enable_spawn,"
                    " enable_teams, prompt, metadata_json, hook_path, messages_path, updated_at)"
                    " VALUES (?, 'cli', 0, ?, ?, 0, 'completed', 0, ?, ?, ?, ?, 1, 1, 0, ?, ?, '', ?, ?)",
                    (sid, now, now, meta["provider"], meta["model"], meta["cwd"], meta["cwd"], meta["prompt"],
                     json.dumps(meta["metadata"]), str(messages_path), now),
                )
        except sqlite3.Error as exc:
            raise TranscriptError(f"{data / 'db' / 'sessions.db'}: cannot add the new session ({exc}); "
                                  f"its files are in {folder}") from exc
        finally:
            con.close()
    return folder
