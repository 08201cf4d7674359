"""``codex``: an OpenAI Codex CLI rollout (``rollout-<time>-<uuid>.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` payloads are the Responses
items Codex sent and received (read by the shared items reader); ``session_meta`` and
``turn_context`` give the session id, working directory and model; ``compacted`` replaces the
history so far with its ``replacement_history``; ``event_msg`` lines are UI events (they repeat
the messages) and are skipped and counted, except ``turn_aborted``, Codex's own record that a
turn was cut off, which becomes a marker. Unknown record types are skipped; a line that is not
JSON is reported and skipped.
"""

from __future__ import annotations

from typing import Any

from .base import Source, Transcript, TranscriptError, jsonl_records
from .responses_items import ItemReader

_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def detect(source: Source, name: str) -> bool:
    for obj in source.first_json_lines(5):
        if isinstance(obj, dict) and obj.get("type") in _TYPES and isinstance(obj.get("payload"), dict):
            return True
    return False


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    t = Transcript(source.name, name, [], wire="responses")
    reader = ItemReader(t)
    seen_session = False
    for n, line in jsonl_records(source, t):
        kind, payload = line.get("type"), line.get("payload")
        kind = kind if isinstance(kind, str) else "(invalid type)"
        if not isinstance(payload, dict):
            t.skip(f"record:{kind}")
            continue
        if kind == "session_meta":
            _session(t, payload)
            seen_session = True
        elif kind == "turn_context":
            for key in ("model", "cwd", "approval_policy"):
                if payload.get(key) is not None:
                    t.meta[key] = payload[key]
        elif kind == "response_item":
            reader.add(payload, f"line {n}")
        elif kind == "compacted":
            history = payload.get("replacement_history")
            if isinstance(history, list):
                reader.reset(history, f"line {n}")
                reader.mark("compacted", "history replaced by a compaction")
            else:
                t.skip("record:compacted")
        elif kind == "event_msg":
            sub = payload.get("type") if isinstance(payload.get("type"), str) else "(invalid type)"
            if sub == "turn_aborted":
                turn = payload.get("turn_id")
                what = f"turn {turn}" if isinstance(turn, str) else "turn"
                reader.mark("turn_aborted", f"{what} aborted ({payload.get('reason') or 'no reason given'})")
            else:
                t.skip(f"event_msg:{sub}")
        else:
            t.skip(f"record:{kind}")
    if not seen_session and not reader.items:
        raise TranscriptError(f"{source.name}: no Codex session_meta or response_item line")
    if thread is not None and t.thread is not None and thread != t.thread:
        raise TranscriptError(f"{source.name}: holds session {t.thread}, not {thread!r}")
    t.messages = reader.messages()
    return t


def _session(t: Transcript, p: dict[str, Any]) -> None:
    if isinstance(p.get("id"), str):
        t.thread = p["id"]
    for key in ("id", "cwd", "cli_version", "originator", "model_provider", "source", "timestamp"):
        if p.get(key) is not None and not isinstance(p.get(key), (dict, list)):
            t.meta[key if key != "id" else "session_id"] = p[key]

