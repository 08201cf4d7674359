"""``cline``: Cline's task histories.

Cline 3 (the SDK-based CLI) keeps each session as ``<data>/sessions/<id>/<id>.json`` (metadata:
status, provider, model, cwd) and ``<id>.messages.json`` (``{"messages": [...]}``, Anthropic
messages with ``tool_use`` / ``tool_result`` blocks plus ``id``/``ts``/``modelInfo``), indexed by
``<data>/db/sessions.db``. A source is a session folder, either of its files, the data folder or
``sessions.db`` (which lists the sessions: ``thread=`` picks one). Cline's tool results hold its
own objects (``{"query", "result", "success"}`` for a command), kept as their JSON text.

The VS Code extension and older versions keep a task folder with ``api_conversation_history.json``
(the Anthropic messages sent) beside ``ui_messages.json`` (what the user saw); a source is that
folder or the history file.

Killed mid-tool, a session ends on a ``tool_use`` with status ``running``. On resume Cline sends
the model its own placeholder result and never saves it, so the file stays broken: both are
reported as markers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.messages import Message
from ..wire.anthropic import from_anthropic_messages
from .base import Marker, MultipleThreads, Source, Transcript, TranscriptError

__all__ = ["detect", "load", "reads_dirs", "to_cline_messages", "PLACEHOLDER"]

reads_dirs = True

# What Cline sends the model for a call that never returned (its wording, "<name>." appended).
PLACEHOLDER = "Tool execution was interrupted before a result was produced. Tool: "
# Cline 3's tools that only read (the CLI's system prompt names them for parallel reads).
READ_ONLY_TOOLS = frozenset({"read_files", "search_codebase", "list_files", "fetch_web_content"})
_HISTORY = "api_conversation_history.json"
_UI = "ui_messages.json"
_MAX_BYTES = 256 * 1024 * 1024


def _is_messages_doc(d: Any) -> bool:
    return isinstance(d, dict) and isinstance(d.get("messages"), list) and (
        "sessionId" in d or "agent" in d or isinstance(d.get("origin"), dict)
    )


def _is_meta_doc(d: Any) -> bool:
    return isinstance(d, dict) and isinstance(d.get("session_id"), str) and "messages_path" in d


def _session_files(folder: Path) -> tuple[str, Path, Path] | None:
    """(session id, metadata file, messages file) of a session folder (named after its id,
    or renamed: then its one ``<id>.messages.json`` names it)."""
    sid = folder.name
    if not (folder / f"{sid}.messages.json").is_file():
        found = sorted(folder.glob("*.messages.json"))[:2]
        if len(found) != 1:
            return None
        sid = found[0].name.removesuffix(".messages.json")
    return sid, folder / f"{sid}.json", folder / f"{sid}.messages.json"


def _db_of(path: Path) -> Path | None:
    """sessions.db of a data folder (or the file itself)."""
    for cand in (path, path / "db" / "sessions.db", path / "data" / "db" / "sessions.db"):
        if cand.is_file() and cand.name == "sessions.db":
            return cand
    return None


def detect(source: Source, name: str) -> bool:
    p = source.path
    if p is None:
        return False
    if p.is_dir():
        return (p / _HISTORY).is_file() or _session_files(p) is not None or _db_of(p) is not None
    if p.name == _HISTORY:
        return True
    if p.name.endswith(".messages.json") or (p.suffix == ".json" and p.parent.name == p.stem):
        head = source.head()
        return b'"messages"' in head or b'"session_id"' in head or b'"sessionId"' in head
    if source.is_sqlite() and p.name == "sessions.db":
        con = source.connect_sqlite()
        try:
            cols = {r[1] for r in con.execute("PRAGMA table_info(sessions)")}
        except Exception:  # noqa: BLE001 - a database we cannot read is simply not ours
            return False
        finally:
            con.close()
        return {"session_id", "messages_path"} <= cols
    return False


def _read_json(path: Path, what: str) -> Any:
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise TranscriptError(f"{path}: {what} is over {_MAX_BYTES // 2**20} MiB; not read")
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TranscriptError(f"{path}: no such {what}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read the {what} ({exc})") from exc
    except ValueError as exc:
        raise TranscriptError(f"{path}: the {what} is not valid JSON ({exc}); a torn write?") from exc


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    p = source.path
    if p is None:
        raise TranscriptError(f"{source.name}: Cline histories are read from a path")
    if p.is_dir() and (p / _HISTORY).is_file():
        return _legacy(source, p)
    if p.name == _HISTORY:
        return _legacy(source, p.parent)
    if p.is_dir() and _session_files(p) is not None:
        return _session(source, p, thread)
    if p.name.endswith(".messages.json") or (p.suffix == ".json" and p.parent.name == p.stem):
        return _session(source, p.parent, thread, p.name.removesuffix(".json").removesuffix(".messages"))
    db = _db_of(p)
    if db is None:
        raise TranscriptError(f"{source.name}: not a Cline session, task folder or sessions.db")
    return _from_db(source, db, thread)


def _from_db(source: Source, db: Path, thread: str | None) -> Transcript:
    con = Source(db).connect_sqlite()
    try:
        rows = con.execute(
            "SELECT session_id, messages_path, status, started_at FROM sessions ORDER BY started_at"
        ).fetchall()
    except Exception as exc:  # noqa: BLE001 - sqlite3.Error, but the module is imported lazily
        raise TranscriptError(f"{db}: cannot read the sessions table ({exc})") from exc
    finally:
        con.close()
    ids = [r[0] for r in rows if isinstance(r[0], str)]
    if not ids:
        raise TranscriptError(f"{db}: lists no session")
    if thread is None:
        if len(ids) > 1:
            raise MultipleThreads(source.name, ids)
        thread = ids[0]
    if thread not in ids:
        raise TranscriptError(f"{db}: no session {thread!r}; it lists {', '.join(ids)}")
    folder = db.parent.parent / "sessions" / thread  # beside the db (the stored path may be another machine's)
    if not folder.is_dir():
        row = next(r for r in rows if r[0] == thread)
        if isinstance(row[1], str) and Path(row[1]).is_file():
            folder = Path(row[1]).parent
        else:
            raise TranscriptError(f"{db}: session {thread} has no folder at {folder}; was it deleted?")
    return _session(source, folder, thread)


def _session(source: Source, folder: Path, thread: str | None, sid: str | None = None) -> Transcript:
    if sid is None:
        found = _session_files(folder)
        if found is None:
            raise TranscriptError(f"{folder}: no <id>.messages.json in this session folder")
        sid = found[0]
    if thread is not None and thread != sid:
        raise TranscriptError(f"{source.name}: holds session {sid}, not {thread!r}")
    meta_path, msgs_path = folder / f"{sid}.json", folder / f"{sid}.messages.json"
    t = Transcript(source.name, "cline", [], wire="anthropic", thread=sid, read_only_tools=READ_ONLY_TOOLS)
    meta = _read_json(meta_path, "session metadata") if meta_path.is_file() else {}
    if isinstance(meta, dict):
        for key in ("status", "provider", "model", "cwd", "started_at", "ended_at", "exit_code", "source"):
            if meta.get(key) is not None and not isinstance(meta[key], (dict, list)):
                t.meta[key] = meta[key]
    t.meta["session_id"] = sid
    doc = _read_json(msgs_path, "messages file")
    if _is_meta_doc(doc) and not _is_messages_doc(doc):
        raise TranscriptError(
            f"{msgs_path}: holds the session's metadata, not its messages (Cline overwrote the messages "
            "file; seen after a SIGKILL); the conversation is lost from this file, look for a backup"
        )
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise TranscriptError(f"{msgs_path}: no messages list; not a Cline messages file")
    version = (doc.get("origin") or {}).get("version") if isinstance(doc.get("origin"), dict) else None
    if isinstance(version, str):
        t.meta["cline_version"] = version
    system = doc.get("system_prompt") if isinstance(doc.get("system_prompt"), str) else None
    t.messages = _convert(doc["messages"], system, t, str(msgs_path))
    _markers(t, doc["messages"], t.meta.get("status"))
    return t


def _result_content(c: Any) -> Any:
    """A tool_result's content as Anthropic blocks: Cline's own result objects become JSON text."""
    if isinstance(c, str) or c is None:
        return c or ""
    if isinstance(c, list) and all(isinstance(b, dict) and b.get("type") in ("text", "image") for b in c):
        return c
    return [{"type": "text", "text": json.dumps(c, ensure_ascii=False)}]


def _convert(raw: list[Any], system: str | None, t: Transcript, where: str) -> list[Message]:
    wire: list[dict[str, Any]] = []
    for k, m in enumerate(raw):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            t.skip("malformed_message")
            t.warnings.append(f"{where}: message {k} is not a user or assistant message; skipped")
            continue
        content = m.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            t.skip("malformed_message")
            t.warnings.append(f"{where}: message {k} has no content list; skipped")
            continue
        blocks = []
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "tool_result":
                if b.get("is_error") is True and isinstance(b.get("tool_use_id"), str):
                    t.failed(b["tool_use_id"])
                blocks.append({k2: v for k2, v in b.items() if k2 in ("type", "tool_use_id", "is_error")}
                              | {"content": _result_content(b.get("content"))})
            elif kind in ("text", "tool_use", "thinking", "redacted_thinking", "image"):
                blocks.append({k2: v for k2, v in b.items() if k2 != "name" or kind == "tool_use"})
            else:
                t.skip(f"block:{kind if isinstance(kind, str) else '(none)'}")
        if blocks:
            wire.append({"role": m["role"], "content": blocks})
    try:
        return from_anthropic_messages(wire, system)
    except ValueError as exc:
        raise TranscriptError(f"{where}: {exc}") from exc


def _markers(t: Transcript, raw: list[Any], status: Any, *, cline3: bool = True) -> None:
    """Where a call has no result: the process died (status running) and, if the session went
    on, Cline's resume sent the model a placeholder it never saved."""
    answered = {
        b.get("tool_use_id") for m in raw if isinstance(m, dict) and isinstance(m.get("content"), list)
        for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    idx = -1
    for k, m in enumerate(t.messages):
        calls = getattr(m, "tool_calls", None) or []
        for c in calls:
            if c.id in answered:
                continue
            later = k < len(t.messages) - 1
            idx = k
            if not cline3:
                t.markers.append(Marker("interrupted", k, f"{c.name} ({c.id}) never returned", [c.id]))
            elif later:
                t.markers.append(Marker(
                    "resume_placeholder_unsaved", k,
                    f"{c.name} ({c.id}) never returned; on resume Cline sent the model \"{PLACEHOLDER}{c.name}.\" "
                    "as its result and never saved it, so this file still lacks a result for it", [c.id]))
            else:
                t.markers.append(Marker(
                    "interrupted", k,
                    f"{c.name} ({c.id}) was running when the session stopped (status {status or 'unknown'}); "
                    f"resuming, Cline would send \"{PLACEHOLDER}{c.name}.\" and not save it", [c.id]))
    if status == "running" and idx < 0:
        t.warnings.append(f"{t.source}: the session's status is still 'running' (its process died?)")


def _legacy(source: Source, folder: Path) -> Transcript:
    history = _read_json(folder / _HISTORY, _HISTORY)
    if not isinstance(history, list):
        raise TranscriptError(f"{folder / _HISTORY}: not a list of messages")
    t = Transcript(source.name, "cline", [], wire="anthropic", thread=folder.name, read_only_tools=READ_ONLY_TOOLS)
    t.meta["task_id"] = folder.name
    t.messages = _convert(history, None, t, str(folder / _HISTORY))
    ui_path = folder / _UI
    ui = _read_json(ui_path, _UI) if ui_path.is_file() else []
    last_ask = None
    if isinstance(ui, list):
        t.meta["ui_messages"] = len(ui)
        asks = [u.get("ask") for u in ui if isinstance(u, dict) and u.get("type") == "ask"]
        last_ask = asks[-1] if asks and isinstance(ui[-1], dict) and ui[-1].get("type") == "ask" else None
    _markers(t, history, None, cline3=False)
    if last_ask in ("resume_task", "resume_completed_task"):
        t.markers.append(Marker("resume_offered", len(t.messages) - 1 if t.messages else None,
                                f"the task stopped; Cline's UI last asked {last_ask}"))
    return t


# --------------------------------------------------------------------------- writing a new session


def to_cline_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, Cline 3 ``messages``) of a canonical history: Anthropic turns with the
    ``id`` and ``ts`` Cline adds (tool results as text blocks, as the model read them)."""
    import time
    import uuid

    from ..wire.anthropic import to_anthropic_messages

    conv = to_anthropic_messages(messages)
    now = int(time.time() * 1000)
    out = []
    names: dict[str, str] = {}
    for k, turn in enumerate(conv.messages):
        blocks = turn["content"] if isinstance(turn["content"], list) else [{"type": "text", "text": turn["content"]}]
        for blk in blocks:  # Cline names the tool in its results too (its SDK needs the name)
            if blk.get("type") == "tool_use":
                names[blk["id"]] = blk["name"]
            elif blk.get("type") == "tool_result" and blk.get("tool_use_id") in names:
                blk["name"] = names[blk["tool_use_id"]]
        out.append({"id": f"msg_{uuid.uuid4().hex[:8]}" if turn["role"] == "assistant" else str(uuid.uuid4()),
                    "role": turn["role"], "content": blocks, "ts": now + k})
    return conv.system, out
