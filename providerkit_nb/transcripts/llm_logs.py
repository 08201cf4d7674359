"""``llm_logs``: a simonw/llm ``logs.db``, both schemas, read-only.

- The message store of llm 0.32+ (``messages``, ``parts``, ``threads``): a thread is the chain
  from ``threads.tip_message_hash`` back through ``parent_hash``; parts are text, reasoning,
  tool_call and tool_result (payload JSON with ``tool_call_id``), attachments are skipped.
- The tables of llm 0.26-0.31 (``responses``, ``tool_calls``, ``tool_results``): a thread is a
  ``conversation_id``, its responses in ``datetime_utc`` order. ``tool_calls.response_id`` is the
  response that asked; ``tool_results.response_id`` the next one, whose prompt carried them.

A database upgraded to 0.32 keeps its older conversations in the old tables, so threads of both
are listed. When a model gave no call ids (``tool_call_id`` NULL), a call gets ``llm-call-<row>``
and a result answers the first open call of its tool name in the message before it.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..core.json_input import read_json
from ..core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .base import MultipleThreads, Source, Transcript, TranscriptError


def _tables(conn: Any) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def detect(source: Source, name: str) -> bool:
    if not source.is_sqlite():
        return False
    try:
        conn = source.connect_sqlite()
        try:
            t = _tables(conn)
            return "_llm_migrations" in t and ("threads" in t or "responses" in t)
        finally:
            conn.close()
    except (sqlite3.Error, TranscriptError):
        return False


def _list_threads(conn: Any, tables: set[str]) -> dict[str, str]:
    """thread id -> schema ("store" or "legacy"), oldest first."""
    out: dict[str, str] = {}
    if {"threads", "messages", "parts"} <= tables:
        for (tid,) in conn.execute("SELECT id FROM threads ORDER BY datetime_utc, id"):
            out[str(tid)] = "store"
    if "responses" in tables:
        for (cid,) in conn.execute(
            "SELECT conversation_id FROM responses WHERE conversation_id IS NOT NULL "
            "GROUP BY conversation_id ORDER BY MIN(datetime_utc)"
        ):
            out.setdefault(str(cid), "legacy")
    return out


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    if source.path is None:
        raise TranscriptError(f"{source.name}: a logs.db is read from a file path")
    conn = source.connect_sqlite()
    try:
        tables = _tables(conn)
        if "_llm_migrations" not in tables:
            raise TranscriptError(f"{source.name}: not an llm logs.db (no _llm_migrations table)")
        found = _list_threads(conn, tables)
        if thread is None:
            if len(found) != 1:
                if not found:
                    raise TranscriptError(f"{source.name}: the log holds no conversations")
                raise MultipleThreads(source.name, list(found))
            thread = next(iter(found))
        if thread not in found:
            raise TranscriptError(f"{source.name}: no thread or conversation {thread!r}; threads: {', '.join(list(found)[:20])}")
        t = Transcript(source.name, name, [], thread=thread)
        t.meta["schema"] = "message store (0.32+)" if found[thread] == "store" else "responses tables (0.26-0.31)"
        if found[thread] == "store":
            _load_store(conn, thread, t)
        else:
            _load_legacy(conn, thread, t)
        return t
    except sqlite3.Error as exc:
        raise TranscriptError(f"{source.name}: cannot read the llm tables ({exc})") from exc
    finally:
        conn.close()


class _Pairing:
    """Ids for calls and results when the model gave none: by order and tool name."""

    def __init__(self) -> None:
        self.open: list[ToolCall] = []

    def calls(self, calls: list[ToolCall]) -> None:
        self.open = list(calls)

    def result_id(self, given: Any, name: str, row: Any) -> str:
        if isinstance(given, str) and given:
            self.open = [c for c in self.open if c.id != given]
            return given
        for c in self.open:
            if c.name == name:
                self.open.remove(c)
                return c.id
        return f"llm-result-{row}"  # no open call of that name: an orphan, under its own id


def _payload(raw: Any, t: Transcript, pid: Any) -> dict[str, Any]:
    """A part's JSON payload; a damaged one is named in the warnings and read as empty."""
    try:
        v = read_json(raw) if raw else {}
    except (ValueError, TypeError):
        v = None
    if not isinstance(v, dict):
        t.skip("damaged_part_payload")
        t.warnings.append(f"{t.source}: part {pid} has a payload that is not a JSON object; read without it")
        return {}
    return v


def _args(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)


def _fragments(conn: Any, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {int(i): str(c or "") for i, c in conn.execute(f"SELECT id, content FROM fragments WHERE id IN ({marks})", sorted(ids))}


def _text_of(column: Any, payload: dict[str, Any], fragments: dict[int, str], t: Transcript) -> str:
    """A part's text: the text column, or the payload's ``text``, or its ``text_ref`` pieces
    (literals and fragment ids: long shared text is stored once, in ``fragments``)."""
    if column is not None:
        return str(column)
    if isinstance(payload.get("text"), str):
        return str(payload["text"])
    out: list[str] = []
    for piece in payload.get("text_ref") or ():
        if isinstance(piece, dict) and "literal" in piece:
            out.append(str(piece["literal"]))
        elif isinstance(piece, dict) and isinstance(piece.get("fragment"), int):
            if piece["fragment"] not in fragments:
                t.warnings.append(f"{t.source}: fragment {piece['fragment']} is missing; its text is left out")
            out.append(fragments.get(piece["fragment"], ""))
    return "".join(out)


def _load_store(conn: Any, thread: str, t: Transcript) -> None:
    row = conn.execute("SELECT tip_message_hash, name FROM threads WHERE id = ?", (thread,)).fetchone()
    chain: list[tuple[str, str]] = []
    seen: set[str] = set()
    h = row[0] if row else None
    while h:
        if h in seen:
            raise TranscriptError(f"{t.source}: thread {thread!r}: parent_hash chain loops at {h}")
        seen.add(h)
        m = conn.execute("SELECT parent_hash, role FROM messages WHERE hash = ?", (h,)).fetchone()
        if m is None:
            t.warnings.append(f"{t.source}: thread {thread!r}: message {h} is missing; the chain starts after it")
            break
        chain.append((h, str(m[1])))
        h = m[0]
    chain.reverse()
    t.meta.update(messages_in_chain=len(chain), name=row[1] if row else None)
    if "turns" in _tables(conn):
        models = [str(m) for (m,) in conn.execute(
            "SELECT DISTINCT model FROM turns WHERE thread_id = ? AND model IS NOT NULL ORDER BY model", (thread,))]
        if models:
            t.meta["model"] = models[-1] if len(models) == 1 else models
    rows = {
        h: [(pid, kind, tool_name, text, _payload(payload, t, pid)) for pid, kind, tool_name, text, payload in conn.execute(
            "SELECT id, type, tool_name, text, payload FROM parts WHERE message_hash = ? ORDER BY position", (h,))]
        for h, _ in chain
    }
    wanted = {p["fragment"] for parts in rows.values() for *_, pl in parts for p in pl.get("text_ref") or ()
              if isinstance(p, dict) and isinstance(p.get("fragment"), int)}
    fragments = _fragments(conn, wanted)
    pairing = _Pairing()
    for h, role in chain:
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        results: list[Message] = []
        for pid, kind, tool_name, text, p in rows[h]:
            if p.get("server_executed"):
                t.skip(f"server_executed_{kind}")  # run by the provider, answered in the same turn
                continue
            if kind == "text":
                texts.append(_text_of(text, p, fragments, t))
            elif kind == "reasoning":
                if p.get("redacted"):
                    t.skip("redacted_reasoning")
                else:
                    thoughts.append(_text_of(text, p, fragments, t))
                if p.get("provider_metadata"):
                    t.skip("reasoning_provider_metadata")  # llm's own replay state, not carried over
            elif kind == "tool_call":
                cname = str(p.get("name") or tool_name or "")
                cid = p.get("tool_call_id") or f"llm-call-{pid}"
                calls.append(ToolCall(str(cid), cname, _args(p.get("arguments"))))
            elif kind == "tool_result":
                rname = str(p.get("name") or tool_name or "")
                out = p.get("output")
                rid = pairing.result_id(p.get("tool_call_id"), rname, pid)
                results.append(ToolMessage(rid, rname, out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)))
                if p.get("exception"):
                    t.failed(rid)
            else:
                t.skip(f"part:{kind}")
        _emit(t, role, "".join(texts), thoughts, calls, results, pairing)


def _emit(t: Transcript, role: str, text: str, thoughts: list[str], calls: list[ToolCall],
          results: list[Message], pairing: _Pairing) -> None:
    if role == "assistant":
        t.messages.append(AssistantMessage(text, "\n\n".join(thoughts) if thoughts else None, tool_calls=calls or None))
        pairing.calls(calls)
        return
    t.messages.extend(results)
    if role == "system" and text:
        t.messages.append(SystemMessage(text))
    elif role in ("user", "tool") and text:
        t.messages.append(UserMessage(text))
    elif role not in ("user", "tool", "system"):
        t.skip(f"role:{role}")


def _load_legacy(conn: Any, conversation: str, t: Transcript) -> None:
    cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
    reasoning = "reasoning" if "reasoning" in cols else "NULL"
    rows = conn.execute(
        f"SELECT id, prompt, system, response, model, {reasoning} FROM responses WHERE conversation_id = ? "
        "ORDER BY datetime_utc, id",
        (conversation,),
    ).fetchall()
    tables = _tables(conn)
    has_results = "tool_results" in tables
    result_cols = {r[1] for r in conn.execute("PRAGMA table_info(tool_results)")} if has_results else set()
    exc_col = "exception" if "exception" in result_cols else "NULL"
    pairing = _Pairing()
    system_seen: str | None = None

    def borrowed(table: str, rid: str) -> list[str]:
        if table not in tables or "fragments" not in tables:
            return []
        return [str(c or "") for (c,) in conn.execute(
            f'SELECT f.content FROM {table} x JOIN fragments f ON f.id = x.fragment_id '
            'WHERE x.response_id = ? ORDER BY x."order"', (rid,))]

    for rid, prompt, system, response, model, thought in rows:
        # what was sent: fragments first, as llm assembles Prompt.prompt and Prompt.system
        bits = [b.strip() for b in [*borrowed("system_fragments", rid), system or ""] if b.strip()]
        system = "\n\n".join(bits)
        prompt = "\n".join(borrowed("prompt_fragments", rid) + ([prompt] if prompt else []))
        if system and system != system_seen:
            t.messages.append(SystemMessage(system))
            system_seen = system
        if has_results:
            for row, name, output, cid, exc in conn.execute(
                f"SELECT id, name, output, tool_call_id, {exc_col} FROM tool_results WHERE response_id = ? ORDER BY id",
                (rid,),
            ):
                result_id = pairing.result_id(cid, str(name or ""), row)
                t.messages.append(ToolMessage(result_id, str(name or ""), output or ""))
                if exc:
                    t.failed(result_id)
        if prompt:
            t.messages.append(UserMessage(prompt))
        calls = [
            ToolCall(str(cid or f"llm-call-{row}"), str(name or ""), arguments or "{}")
            for row, name, arguments, cid in conn.execute(
                "SELECT id, name, arguments, tool_call_id FROM tool_calls WHERE response_id = ? ORDER BY id", (rid,)
            )
        ] if "tool_calls" in tables else []
        t.messages.append(AssistantMessage(response or "", thought or None, tool_calls=calls or None))
        pairing.calls(calls)
        t.meta["model"] = model
