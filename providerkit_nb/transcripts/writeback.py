"""Hand a repaired session back to the coding agent that wrote it, as a NEW session it resumes.

``write_session(inspection, "claude_code" | "codex" | "opencode")`` copies the session under a
new id next to the original (never in place) and answers each call that never returned, under
its own id, with the text the inspection decided the model reads (``core.repair``'s one decision:
``INTERRUPTED_READ_ONLY`` for a tool that only reads, else ``INTERRUPTED_MAY_HAVE_RUN``), the
same text its report and every view show. The rest of the session is kept as the tool wrote it, so the
tool's own resume reads it as one of its own:

- Claude Code: ``<new id>.jsonl`` beside the original; a ``tool_result`` line is hung from each
  dangling ``tool_use`` line, and the lines its own resume had hung from the entry before the
  call (the call fell off the branch) are hung from that result instead.
- Codex: ``rollout-<time>-<new id>.jsonl`` beside the original, a ``function_call_output`` after
  each unanswered call; the thread row of Codex's ``state_*.sqlite`` index is copied for the new
  id when the original has one (one transaction).
- OpenCode: new session, message and part rows in the same ``opencode.db`` (one transaction;
  the original session's rows are only read), the ``running`` tool parts ``completed`` with the
  repair text.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.repair import interrupted_text
from .base import TranscriptError

__all__ = ["WRITE_BACK_FORMATS", "WrittenSession", "write_session"]

WRITE_BACK_FORMATS = ("claude_code", "codex", "opencode")

# how each tool's own CLI opens a session by its id (run in the session's project folder)
RESUME_COMMANDS = {"claude_code": "claude --resume {id}", "codex": "codex resume {id}",
                   "opencode": "opencode --session {id}"}


@dataclass(slots=True)
class WrittenSession:
    """Where the repaired session went and what its tool resumes it by."""

    format: str
    session_id: str
    path: str
    answered: dict[str, str]  # call id -> the text written as its result

    @property
    def resume_command(self) -> str:
        return RESUME_COMMANDS[self.format].format(id=self.session_id)

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "session_id": self.session_id, "path": self.path,
                "answered": dict(self.answered), "resume_command": self.resume_command}


def write_session(inspection: Any, to: str, *, read_only: Collection[str] | None = None) -> WrittenSession:
    """Write the repaired session of ``inspection`` (an ``Inspection`` of a session of tool ``to``)
    as a new session; ``read_only`` names the tools that only read (default: what the inspection
    decided, which its report shows)."""
    if to not in WRITE_BACK_FORMATS:
        raise ValueError(f"cannot write a {to!r} session; one of {', '.join(WRITE_BACK_FORMATS)}")
    if getattr(inspection, "format", None) != to:
        raise ValueError(
            f"{getattr(inspection, 'source', '?')} is a {getattr(inspection, 'format', '?')} transcript: "
            f"only a {to} session can be written back as a {to} session"
        )
    calls = _dangling(inspection)
    if read_only is not None:
        is_ro: Callable[[str], bool] = set(read_only).__contains__
        texts = {cid: interrupted_text(is_ro(name)) for cid, (name, _) in calls.items()}
    else:
        texts = {cid: told for cid, (_, told) in calls.items()}
    path = Path(inspection.source)
    if to == "claude_code":
        return _claude_code(path, texts)
    if to == "codex":
        return _codex(path, texts)
    return _opencode(path, inspection.thread, texts)


def _dangling(inspection: Any) -> dict[str, tuple[str, str]]:
    """call id -> (tool name, the text the inspection decided the model reads) of every call no
    result answers (the repaired history's interrupted calls, and the abandoned calls off the branch)."""
    out: dict[str, tuple[str, str]] = {}
    for r in getattr(inspection, "interrupted", []):
        out[r.original_id] = (r.name, r.note)
    for a in getattr(inspection, "abandoned", []):
        if a.call_id:
            out.setdefault(a.call_id, (a.name or "", interrupted_text(bool(a.read_only))))
    return out


def _write_new(path: Path, lines: list[dict[str, Any]]) -> None:
    """Write a file that must not exist yet (never over a session)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        for obj in lines:
            f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    try:
        os.link(tmp, path)  # fails if the path exists: a session is never overwritten
    finally:
        tmp.unlink(missing_ok=True)


def _read_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                raise TranscriptError(f"{path}: line {n} is not JSON ({exc}); repair what can be read with --to canonical") from exc
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"


# --------------------------------------------------------------------------- Claude Code


def _claude_code(path: Path, texts: dict[str, str]) -> WrittenSession:
    lines = _read_lines(path)
    new_id = str(uuid.uuid4())
    out: list[dict[str, Any]] = []
    moved: dict[str, str] = {}  # parent uuid of an answered call -> the result line to hang from instead
    answered: dict[str, str] = {}
    for obj in lines:
        obj = dict(obj)
        if "sessionId" in obj:
            obj["sessionId"] = new_id
        p = obj.get("parentUuid")
        if isinstance(p, str) and p in moved and obj.get("type") in ("user", "assistant", "attachment", "system"):
            obj["parentUuid"] = moved[p]  # a line its own resume hung beside the call
        out.append(obj)
        content = (obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None
        if obj.get("type") != "assistant" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") in texts and b["id"] not in answered:
                text = texts[b["id"]]
                u = str(uuid.uuid4())
                out.append({
                    "parentUuid": obj.get("uuid"), "isSidechain": False, "userType": "external",
                    "cwd": obj.get("cwd"), "sessionId": new_id, "version": obj.get("version"),
                    "gitBranch": obj.get("gitBranch"), "type": "user",
                    "message": {"role": "user", "content": [
                        {"tool_use_id": b["id"], "type": "tool_result", "content": text, "is_error": True}]},
                    "uuid": u, "timestamp": obj.get("timestamp") or _now_iso(), "toolUseResult": f"Error: {text}",
                    "sourceToolAssistantUUID": obj.get("uuid"),
                })
                answered[b["id"]] = text
                if isinstance(obj.get("parentUuid"), str):
                    moved[obj["parentUuid"]] = u
    dest = path.with_name(f"{new_id}.jsonl")
    _write_new(dest, out)
    return WrittenSession("claude_code", new_id, str(dest), answered)


# --------------------------------------------------------------------------- Codex


def _codex(path: Path, texts: dict[str, str]) -> WrittenSession:
    lines = _read_lines(path)
    old_id = None
    new_id = str(_uuid7())
    out: list[dict[str, Any]] = []
    answered: dict[str, str] = {}
    for obj in lines:
        obj = dict(obj)
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict):
            old_id = payload.get("id")
            obj["payload"] = {**payload, "id": new_id}
        out.append(obj)
        if obj.get("type") == "response_item" and isinstance(payload, dict) and payload.get("type") == "function_call":
            cid = payload.get("call_id")
            if cid in texts and cid not in answered:
                out.append({"timestamp": obj.get("timestamp") or _now_iso(), "type": "response_item",
                            "payload": {"type": "function_call_output", "call_id": cid, "output": texts[cid]}})
                answered[cid] = texts[cid]
    if not isinstance(old_id, str):
        raise TranscriptError(f"{path}: no session_meta line with an id; cannot write it back as a Codex session")
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime())
    dest = path.with_name(f"rollout-{stamp}-{new_id}.jsonl")
    _write_new(dest, out)
    try:
        _codex_index(path, old_id, new_id, dest)
    except (sqlite3.Error, OSError):
        dest.unlink(missing_ok=True)
        raise
    return WrittenSession("codex", new_id, str(dest), answered)


def _uuid7() -> uuid.UUID:
    ms = int(time.time() * 1000)
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 66) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return uuid.UUID(int=value)


def _codex_home(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent.parent
    return None


def _codex_index(path: Path, old_id: str, new_id: str, dest: Path) -> None:
    """Copy the original's thread row of Codex's ``state_*.sqlite`` for the new session."""
    home = _codex_home(path)
    if home is None:
        return
    for db in sorted(home.glob("state_*.sqlite")):
        conn = sqlite3.connect(db, timeout=10)
        try:
            conn.row_factory = sqlite3.Row
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "threads" not in tables:
                continue
            row = conn.execute("SELECT * FROM threads WHERE id = ?", (old_id,)).fetchone()
            if row is None:
                continue
            values = dict(row)
            now = int(time.time())
            values.update(id=new_id, rollout_path=str(dest.resolve()), updated_at=now)
            cols = ", ".join(f'"{c}"' for c in values)
            with conn:
                conn.execute(f"INSERT INTO threads ({cols}) VALUES ({', '.join('?' for _ in values)})",
                             list(values.values()))
                if "thread_dynamic_tools" in tables:
                    conn.execute(
                        "INSERT INTO thread_dynamic_tools SELECT ?, position, name, description, input_schema, "
                        "defer_loading, namespace FROM thread_dynamic_tools WHERE thread_id = ?", (new_id, old_id))
        finally:
            conn.close()


# --------------------------------------------------------------------------- OpenCode


_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _renamed(old: str) -> str:
    """A new id that sorts where the old one did (OpenCode orders by id): its prefix and time
    part kept, its random tail drawn again."""
    head, tail = old[:16], old[16:]
    return head + "".join(secrets.choice(_ALNUM) for _ in range(max(len(tail), 10)))


def _opencode(path: Path, thread: str | None, texts: dict[str, str]) -> WrittenSession:
    if thread is None:
        raise TranscriptError(f"{path}: name the OpenCode session to repair (--thread)")
    conn = sqlite3.connect(path, timeout=10)
    answered: dict[str, str] = {}
    try:
        conn.row_factory = sqlite3.Row
        session = conn.execute("SELECT * FROM session WHERE id = ?", (thread,)).fetchone()
        if session is None:
            raise TranscriptError(f"{path}: no OpenCode session {thread!r}")
        new_sid = _renamed(thread)
        now = int(time.time() * 1000)
        with conn:  # one transaction: all of the new session's rows, or none
            values = dict(session)
            values.update(id=new_sid, slug=f"{values.get('slug') or 'session'}-repaired",
                          title=f"{values.get('title') or ''} (repaired)".strip(), time_created=now, time_updated=now)
            if "share_url" in values:
                values["share_url"] = None
            _insert(conn, "session", values)
            ids: dict[str, str] = {}
            for m in conn.execute("SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (thread,)).fetchall():
                ids[m["id"]] = _renamed(m["id"])
            for m in conn.execute("SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (thread,)).fetchall():
                values = dict(m)
                data = json.loads(values["data"])
                if data.get("parentID") in ids:
                    data["parentID"] = ids[data["parentID"]]
                values.update(id=ids[m["id"]], session_id=new_sid, data=json.dumps(data, ensure_ascii=False))
                _insert(conn, "message", values)
            for p in conn.execute("SELECT * FROM part WHERE session_id = ? ORDER BY message_id, id", (thread,)).fetchall():
                values = dict(p)
                data = json.loads(values["data"])
                state = data.get("state") if isinstance(data.get("state"), dict) else None
                cid = data.get("callID")
                if data.get("type") == "tool" and state is not None and cid in texts and state.get("status") in ("pending", "running"):
                    start = (state.get("time") or {}).get("start") or now
                    data["state"] = {"status": "completed", "input": state.get("input") or {}, "output": texts[cid],
                                     "title": "interrupted", "metadata": {"interrupted": True},
                                     "time": {"start": start, "end": now}}
                    answered[cid] = texts[cid]
                values.update(id=_renamed(p["id"]), message_id=ids.get(p["message_id"], p["message_id"]),
                              session_id=new_sid, data=json.dumps(data, ensure_ascii=False))
                _insert(conn, "part", values)
    finally:
        conn.close()
    return WrittenSession("opencode", new_sid, str(path), answered)


def _insert(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> None:
    cols = ", ".join(f'"{c}"' for c in values)
    conn.execute(f'INSERT INTO "{table}" ({cols}) VALUES ({", ".join("?" for _ in values)})', list(values.values()))
