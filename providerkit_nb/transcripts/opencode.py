"""``opencode``: OpenCode's sessions (``~/.local/share/opencode/opencode.db``, or the older
``storage/session/**/<id>.json`` files).

The database (opened read-only) keeps one row per session, per message (``data`` JSON: role,
model, time, error) and per part (``data`` JSON: ``text``, ``reasoning``, ``tool``,
``step-start``, ``step-finish``, ``file``...). An assistant message holds one step per model
call: the tool parts of a step become one assistant message's calls, followed by the results
of the calls that finished. A tool part that is still ``pending``/``running`` is a call the
process died in: it gets no result, a ``tool_running`` marker and an abandoned-call finding
(OpenCode's own resume answers it "[Tool execution was interrupted]" in the request only).
The older layout keeps the same JSON in ``storage/message/<session>/<id>.json`` and
``storage/part/<message>/<id>.json``; it is read when a session file of it is named.
``thread=`` picks the session of a database holding several.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .base import Marker, MultipleThreads, Source, Transcript, TranscriptError
from .resume_findings import OPENCODE, AbandonedCall

# OpenCode's built-in tools that only read
READ_ONLY_TOOLS = frozenset({"read", "glob", "grep", "list", "webfetch", "websearch", "codesearch", "todoread", "lsp"})
_WIRES = {"anthropic": "anthropic", "openai": "responses", "google": "gemini"}
_UNFINISHED = ("pending", "running")


def detect(source: Source, name: str) -> bool:
    if source.is_sqlite():
        try:
            conn = source.connect_sqlite()
            try:
                return _tables(conn) >= {"session", "message", "part"} and _has_columns(conn)
            finally:
                conn.close()
        except (sqlite3.Error, TranscriptError):
            return False
    return _storage_root(source) is not None


def _tables(conn: Any) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _has_columns(conn: Any) -> bool:
    cols = {r[1] for r in conn.execute("PRAGMA table_info(part)")}
    return {"id", "message_id", "session_id", "data"} <= cols


def _storage_root(source: Source) -> Path | None:
    """The ``storage`` folder of an older install, when the source is one of its session files."""
    if source.path is None or source.path.suffix != ".json":
        return None
    head = source.head()
    if b'"id"' not in head or b"ses_" not in head or b"projectID" not in head:
        return None
    for parent in source.path.parents:
        if parent.name == "session" and (parent.parent / "message").is_dir():
            return parent.parent
    return None


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    if source.is_sqlite():
        sessions, messages, parts = _from_db(source, thread)
    else:
        sessions, messages, parts = _from_storage(source)
    session = sessions[0]
    t = Transcript(source.name, name, [], read_only_tools=READ_ONLY_TOOLS)
    t.thread = str(session.get("id"))
    t.meta["session_id"] = t.thread
    for key in ("title", "directory", "version"):
        if isinstance(session.get(key), str):
            t.meta[key] = session[key]
    _convert(t, messages, parts)
    return t


def _rows(conn: Any, sql: str, args: tuple[Any, ...], what: str, source: Source) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for rid, data in conn.execute(sql, args):
        try:
            obj = json.loads(data)
        except (TypeError, ValueError) as exc:
            raise TranscriptError(f"{source.name}: {what} {rid} has data that is not JSON ({exc}); is the database damaged?") from exc
        if not isinstance(obj, dict):
            raise TranscriptError(f"{source.name}: {what} {rid} has data that is not a JSON object")
        out.append((str(rid), obj))
    return out


def _from_db(source: Source, thread: str | None) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    conn = source.connect_sqlite()
    try:
        if not _tables(conn) >= {"session", "message", "part"}:
            raise TranscriptError(f"{source.name}: no OpenCode session, message and part tables")
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute("SELECT * FROM session ORDER BY time_created, id")]
        conn.row_factory = None
        if thread is not None:
            rows = [r for r in rows if r.get("id") == thread]
            if not rows:
                raise TranscriptError(f"{source.name}: no OpenCode session {thread!r}; leave thread out to list them")
        elif len(rows) > 1:
            raise MultipleThreads(source.name, [str(r["id"]) for r in rows])
        elif not rows:
            raise TranscriptError(f"{source.name}: holds no OpenCode session")
        sid = rows[0]["id"]
        messages = _rows(conn, "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                         (sid,), "message", source)
        parts: dict[str, list[dict[str, Any]]] = {}
        for _pid, p in _rows(conn, "SELECT message_id || char(0) || id, data FROM part WHERE session_id = ? "
                             "ORDER BY message_id, id", (sid,), "part", source):
            parts.setdefault(_pid.split("\0")[0], []).append(p)
    except sqlite3.Error as exc:
        raise TranscriptError(f"{source.name}: cannot read the OpenCode database ({exc})") from exc
    finally:
        conn.close()
    return rows, messages, parts


def _read_json(path: Path, source: Source) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TranscriptError(f"{source.name}: cannot read {path.name} of the OpenCode storage ({exc})") from exc
    if not isinstance(obj, dict):
        raise TranscriptError(f"{source.name}: {path.name} of the OpenCode storage is not a JSON object")
    return obj


def _from_storage(source: Source) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    root = _storage_root(source)
    if root is None or source.path is None:
        raise TranscriptError(f"{source.name}: not an OpenCode database or storage/session file")
    session = _read_json(source.path, source)
    sid = str(session.get("id"))
    messages = []
    for f in sorted((root / "message" / sid).glob("*.json")):
        m = _read_json(f, source)
        messages.append((str(m.get("id") or f.stem), m))
    messages.sort(key=lambda im: (((im[1].get("time") or {}).get("created") or 0), im[0]))
    parts: dict[str, list[dict[str, Any]]] = {}
    for mid, _ in messages:
        parts[mid] = [_read_json(f, source) for f in sorted((root / "part" / mid).glob("*.json"))]
    return [session], messages, parts


def _convert(t: Transcript, messages: list[tuple[str, dict[str, Any]]], parts: dict[str, list[dict[str, Any]]]) -> None:
    out: list[Message] = []
    for mid, m in messages:
        role = m.get("role")
        ps = parts.get(mid, [])
        if role == "user":
            texts = []
            for p in ps:
                if p.get("type") == "text" and isinstance(p.get("text"), str) and not p.get("synthetic"):
                    texts.append(p["text"])
                else:
                    t.skip(f"part:{p.get('type')}" + (":synthetic" if p.get("synthetic") else ""))
            if texts:
                out.append(UserMessage("\n".join(texts)))
            continue
        if role != "assistant":
            t.skip(f"message:{role}")
            continue
        wire = _WIRES.get(str(m.get("providerID")), "openai_chat")
        t.wire = wire
        for key in ("providerID", "modelID"):
            if isinstance(m.get(key), str):
                t.meta[key] = m[key]
        _assistant(t, out, ps)
        err = m.get("error")
        if isinstance(err, dict):
            t.markers.append(Marker("message_error", len(out) - 1 if out else None,
                                    str(err.get("name") or (err.get("data") or {}).get("message") or "error")))
    t.messages = out


def _assistant(t: Transcript, out: list[Message], ps: list[dict[str, Any]]) -> None:
    """One assistant message per step, then the results of the calls that finished."""
    steps: list[list[dict[str, Any]]] = [[]]
    for p in ps:
        if p.get("type") == "step-start" and steps[-1]:
            steps.append([])
        steps[-1].append(p)
    for step in steps:
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        results: list[ToolMessage] = []
        open_calls: list[tuple[ToolCall, str]] = []
        for p in step:
            kind = p.get("type")
            if kind == "text" and isinstance(p.get("text"), str):
                if p.get("synthetic"):
                    t.skip("part:text:synthetic")
                else:
                    text.append(p["text"])
            elif kind == "reasoning" and isinstance(p.get("text"), str):
                reasoning.append(p["text"])
            elif kind == "tool":
                state: dict[str, Any] = p["state"] if isinstance(p.get("state"), dict) else {}
                cid, name = p.get("callID"), p.get("tool")
                if not isinstance(cid, str) or not isinstance(name, str):
                    t.skip("part:tool:malformed")
                    continue
                call = ToolCall(cid, name, json.dumps(state.get("input") or {}, ensure_ascii=False))
                calls.append(call)
                status = state.get("status")
                if status == "completed":
                    results.append(ToolMessage(cid, name, _text(state.get("output"))))
                elif status == "error":
                    results.append(ToolMessage(cid, name, _text(state.get("error"))))
                    t.failed(cid)
                else:
                    open_calls.append((call, str(status)))
            else:
                t.skip(f"part:{kind}")
        if not (text or reasoning or calls):
            continue
        out.append(AssistantMessage("".join(text), reasoning="\n".join(reasoning) or None, tool_calls=calls or None))
        at = len(out) - 1
        for call, status in open_calls:
            t.markers.append(Marker("tool_running", at, f"{call.name} call left {status} by OpenCode", [call.id]))
            t.abandoned.append(AbandonedCall("opencode", call.id, call.name, call.arguments,
                                             OPENCODE.format(status=status), call.name in READ_ONLY_TOOLS, at))
        out.extend(results)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) if v is not None else ""
