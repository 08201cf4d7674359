"""``gemini_cli``: a Gemini CLI session (``~/.gemini/tmp/<project>/chats/session-*.jsonl``, or the
older single ``session-*.json``).

The JSONL file is a log of a session object: a header line (``sessionId``, ``projectHash``,
``startTime``), message lines (``id``, ``type`` ``user``/``gemini``/``info``/``error``...,
``content``, ``toolCalls``, ``thoughts``) that add or replace the message with that id, and
``{"$set": {...}}`` lines that replace fields (``messages`` wholesale, ``lastUpdated``). A resume
appends a new header and a ``$set`` of the messages. The ``.json`` file is the object itself.

A ``gemini`` message's ``toolCalls`` carry their results (Gemini CLI writes a call only once it
has finished). So a process killed mid-tool leaves an empty model turn and no call: the turn is
skipped, marked ``empty_turn`` and reported as an abandoned call (what it did is lost).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .base import Marker, Source, Transcript, TranscriptError, jsonl_records
from .resume_findings import GEMINI_CLI, GEMINI_CLI_DROPPED, AbandonedCall

# Gemini CLI's built-in tools that only read
READ_ONLY_TOOLS = frozenset({
    "read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep_search",
    "google_web_search", "web_fetch",
})
_HEADER = ("sessionId", "projectHash")


def detect(source: Source, name: str) -> bool:
    if source.path is not None and source.path.suffix == ".json":
        head = source.head()
        return b'"sessionId"' in head and b'"projectHash"' in head and b'"messages"' in head
    lines = source.first_json_lines(3)
    return bool(lines) and isinstance(lines[0], dict) and all(k in lines[0] for k in _HEADER) and "type" not in lines[0]


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    t = Transcript(source.name, name, [], wire="gemini", read_only_tools=READ_ONLY_TOOLS)
    if source.path is not None and source.path.suffix == ".json":
        state = source.json()
        if not isinstance(state, dict) or not isinstance(state.get("messages"), list):
            raise TranscriptError(f"{source.name}: not a Gemini CLI session object (no messages list)")
    else:
        state = _replay(source, t)
    sid = state.get("sessionId")
    if isinstance(sid, str):
        t.thread = sid
        t.meta["session_id"] = sid
    for key in ("projectHash", "startTime", "lastUpdated", "kind"):
        if isinstance(state.get(key), str):
            t.meta[key] = state[key]
    if thread is not None and t.thread is not None and thread != t.thread:
        raise TranscriptError(f"{source.name}: holds session {t.thread}, not {thread!r}")
    final = [m for m in state.get("messages") or [] if isinstance(m, dict)]
    _convert(t, final)
    kept = {m.get("id") for m in final}
    for mid in state.get("_empty_turns", ()):
        if mid not in kept:  # its own resume rewrote the messages without it
            t.markers.append(Marker("empty_turn_dropped", None, f"empty model turn {mid} dropped by a resume"))
            t.abandoned.append(AbandonedCall("gemini_cli", None, None, None, GEMINI_CLI_DROPPED))
    return t


def _replay(source: Source, t: Transcript) -> dict[str, Any]:
    """The session object the log ends with."""
    state: dict[str, Any] = {"messages": []}
    empty: list[str] = []  # ids of the empty model turns the log ever held
    where: dict[str, int] = {}
    headers = 0
    for n, obj in jsonl_records(source, t):
        if "$set" in obj:
            upd = obj["$set"]
            if not isinstance(upd, dict):
                t.skip("malformed_line")
                continue
            state.update(upd)
            if "messages" in upd:
                msgs = upd["messages"] if isinstance(upd["messages"], list) else []
                state["messages"] = list(msgs)
                where = {m["id"]: i for i, m in enumerate(msgs) if isinstance(m, dict) and isinstance(m.get("id"), str)}
        elif all(k in obj for k in _HEADER) and "type" not in obj:
            headers += 1
            state.update({k: v for k, v in obj.items() if k != "messages"})
        elif isinstance(obj.get("type"), str) and "id" in obj:
            mid = obj.get("id")
            if obj.get("type") == "gemini" and not _text(obj.get("content")) and not obj.get("toolCalls"):
                empty.append(str(mid))
            if isinstance(mid, str) and mid in where:
                state["messages"][where[mid]] = obj
            else:
                if isinstance(mid, str):
                    where[mid] = len(state["messages"])
                state["messages"].append(obj)
        else:
            t.skip("line:unknown")
            t.warnings.append(f"{source.name}: line {n} is not a Gemini CLI session line; skipped")
    if not headers:
        raise TranscriptError(f"{source.name}: no Gemini CLI session header (sessionId, projectHash)")
    if headers > 1:
        t.meta["resumes"] = headers - 1
    return {**state, "_empty_turns": empty}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _convert(t: Transcript, messages: list[dict[str, Any]]) -> None:
    out: list[Message] = []
    for m in messages:
        kind = m.get("type")
        if kind == "user":
            text = _text(m.get("content"))
            if text:
                out.append(UserMessage(text))
            else:
                t.skip("empty_user")
        elif kind == "gemini":
            text = _text(m.get("content"))
            thoughts = [
                f"{th.get('subject', '')}: {th.get('description', '')}".strip(": ")
                for th in m.get("thoughts") or [] if isinstance(th, dict)
            ]
            calls: list[ToolCall] = []
            results: list[ToolMessage] = []
            for c in m.get("toolCalls") or []:
                if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(c.get("name"), str):
                    t.skip("tool_call:malformed")
                    continue
                calls.append(ToolCall(c["id"], c["name"], json.dumps(c.get("args") or {}, ensure_ascii=False)))
                results.append(ToolMessage(c["id"], c["name"], _result(c)))
                if c.get("status") == "error" or _response_error(c):
                    t.failed(c["id"])
            if not (text or calls):
                t.markers.append(Marker("empty_turn", len(out) - 1 if out else None,
                                        "empty model turn (a call Gemini CLI never wrote down)"))
                t.abandoned.append(AbandonedCall("gemini_cli", None, None, None, GEMINI_CLI, False,
                                                 len(out) - 1 if out else None))
                t.skip("empty_turn")
                continue
            out.append(AssistantMessage(text, reasoning="\n".join(thoughts) or None, tool_calls=calls or None))
            out.extend(results)
        else:
            t.skip(f"message:{kind}")
    t.messages = out


def _response_error(c: dict[str, Any]) -> bool:
    """Whether the functionResponse the model read holds an ``error`` (Gemini CLI's failed call)."""
    for r in c.get("result") or []:
        resp = (r.get("functionResponse") or {}).get("response") if isinstance(r, dict) else None
        if isinstance(resp, dict) and "error" in resp and "output" not in resp:
            return True
    return False


def _result(c: dict[str, Any]) -> str:
    """The text the model read back for a call (its functionResponse output)."""
    for r in c.get("result") or []:
        resp = (r.get("functionResponse") or {}).get("response") if isinstance(r, dict) else None
        if isinstance(resp, dict):
            v = resp.get("output", resp.get("error", resp))
            return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    if isinstance(c.get("resultDisplay"), str):
        return str(c["resultDisplay"])
    return str(c.get("status") or "")
