"""``codex``: an OpenAI Codex CLI rollout (``rollout-<time>-<uuid>.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` payloads are the Responses
items Codex sent and received (read by the shared items reader); ``session_meta`` and
``turn_context`` give the session id, working directory and model; ``compacted`` replaces the
history so far with its ``replacement_history``; ``event_msg`` lines are UI events (they repeat
the messages) and are skipped and counted, except ``turn_aborted``, Codex's own record that a
turn was cut off, which becomes a marker, and ``token_count``, whose last usage is the tokens of
the answer before it. Each message gets the time of its line and the model of its turn (the
cards show them; the time of a call and of its output give the call's duration). Unknown record
types are skipped; a line that is not JSON is reported and skipped.
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
    model: str | None = None
    last: Any = None
    for n, line in jsonl_records(source, t):
        last = line.get("timestamp", last)
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
            model = payload["model"] if isinstance(payload.get("model"), str) else model
        elif kind == "response_item":
            reader.add(payload, f"line {n}", _stamp(line.get("timestamp"), model, payload))
        elif kind == "compacted":
            _compacted(t, reader, payload, n)
        elif kind == "event_msg":
            _event(t, reader, payload)
        else:
            t.skip(f"record:{kind}")
            if kind == "token_usage_record" and (tokens := _usage(payload.get("usage"))):
                reader.stamp_last_answer(tokens=tokens)  # newer Codex: one per response
    if not seen_session and not reader.items:
        raise TranscriptError(f"{source.name}: no Codex session_meta or response_item line")
    if thread is not None and t.thread is not None and thread != t.thread:
        raise TranscriptError(f"{source.name}: holds session {t.thread}, not {thread!r}")
    t.messages = reader.messages()
    t.details = reader.details(t.messages)
    if isinstance(last, str):
        t.meta["last_record"] = last  # where a killed session stopped: the timeline marks it
    return t


def _compacted(t: Transcript, reader: ItemReader, payload: dict[str, Any], n: int) -> None:
    history = payload.get("replacement_history")
    if isinstance(history, list):
        reader.reset(history, f"line {n}")
        reader.mark("compacted", "history replaced by a compaction")
    else:
        t.skip("record:compacted")


def _event(t: Transcript, reader: ItemReader, payload: dict[str, Any]) -> None:
    """A UI event: ``turn_aborted`` is a marker, ``token_count`` the tokens of the answer before
    it; every other one is skipped and counted."""
    sub = payload.get("type") if isinstance(payload.get("type"), str) else "(invalid type)"
    if sub == "turn_aborted":
        turn = payload.get("turn_id")
        what = f"turn {turn}" if isinstance(turn, str) else "turn"
        reader.mark("turn_aborted", f"{what} aborted ({payload.get('reason') or 'no reason given'})")
        return
    t.skip(f"event_msg:{sub}")
    if sub == "token_count" and (tokens := _tokens(payload)):
        reader.stamp_last_answer(tokens=tokens)


def _stamp(ts: Any, model: str | None, item: dict[str, Any]) -> dict[str, Any]:
    """The time of an item's line and, for what the model wrote, the model of its turn."""
    out: dict[str, Any] = {}
    if isinstance(ts, str) and len(ts) >= 19:
        out["time"], out["at"] = ts.replace("T", " ")[:19], ts
    if model and (item.get("type") in ("reasoning", "function_call", "custom_tool_call", "local_shell_call")
                  or item.get("role") == "assistant"):
        out["model"] = model
    return out


def _tokens(payload: dict[str, Any]) -> str | None:
    """``token_count``'s last usage (the answer before it), in the words the cards use."""
    info = payload.get("info")
    return _usage(info.get("last_token_usage") if isinstance(info, dict) else None)


def _usage(last: Any) -> str | None:
    """A Codex usage object (``input_tokens``, ``cached_input_tokens``, ``output_tokens``) as text."""
    if not isinstance(last, dict):
        return None
    tin, cached, tout = (last.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens"))
    if not isinstance(tin, int) or not isinstance(tout, int):
        return None
    cache = f" ({cached:,} cache read)" if isinstance(cached, int) and cached else ""
    return f"{tin:,} in{cache}, {tout:,} out"


def _session(t: Transcript, p: dict[str, Any]) -> None:
    if isinstance(p.get("id"), str):
        t.thread = p["id"]
    for key in ("id", "cwd", "cli_version", "originator", "model_provider", "source", "timestamp"):
        if p.get(key) is not None and not isinstance(p.get(key), (dict, list)):
            t.meta[key if key != "id" else "session_id"] = p[key]

