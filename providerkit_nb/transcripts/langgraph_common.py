"""What the two LangGraph checkpoint readers share: decoding a checkpoint without running it.

LangGraph's serializer writes ``(type, bytes)`` pairs: ``msgpack`` (LangChain messages as ext
type 5 wrapping ``[module, class, fields, method]``), ``json``, ``null``, ``bytes``, and
``pickle`` when a user turned the pickle fallback on. msgpack is read with an ext hook that
returns each payload as plain data: nothing is imported by the names in the file and nothing
in it runs. Pickle is refused.

The thread's state is the latest root checkpoint's channel values plus the writes saved against
it (the super-step that did not finish). Three endings are told apart by those writes: a tool
raised (``__error__``), a human was asked (``__interrupt__``: the open calls wait for an answer,
they are not broken), or the process stopped while the tools ran (no write at all).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..core.json_input import read_json
from ..core.messages import AssistantMessage, ToolMessage
from .base import Marker, MultipleThreads, Transcript, TranscriptError
from .langchain import CLASS_TYPES, convert

__all__ = ["Ext", "decode", "Write", "build", "pick_thread"]

EXT_PYDANTIC_V2 = 5
_SHOWN = 500  # characters of an interrupt's question kept in the marker text
ERROR, INTERRUPT = "__error__", "__interrupt__"


@dataclass(slots=True, frozen=True)
class Ext:
    """A msgpack extension value, kept as data (``code`` 5: a pydantic model's fields)."""

    code: int
    data: Any


def _msgpack() -> Any:
    try:
        import msgpack
    except ImportError as exc:  # pragma: no cover - a runtime dependency
        raise TranscriptError(
            "reading LangGraph checkpoints needs the msgpack package: pip install msgpack"
        ) from exc
    return msgpack


def decode(kind: str | None, blob: bytes | None, where: str) -> Any:
    """One serialized value as plain data; ``where`` names the row in errors."""
    if kind in (None, "null", "empty"):
        return None
    if blob is None:
        return None
    if kind == "bytes" or kind == "bytearray":
        return bytes(blob)
    if kind == "json":
        try:
            return read_json(bytes(blob))
        except ValueError as exc:
            raise TranscriptError(f"{where}: not valid JSON ({exc})") from exc
    if kind == "pickle":
        raise TranscriptError(
            f"{where}: this checkpoint was written with pickle, which cannot be read without "
            "running code from the file; save the thread with the default msgpack serializer "
            "(no pickle_fallback) and inspect that"
        )
    if kind != "msgpack":
        raise TranscriptError(f"{where}: unknown serialization type {kind!r} (msgpack, json, null, bytes)")
    mp = _msgpack()

    def hook(code: int, data: bytes) -> Ext:
        return Ext(code, mp.unpackb(data, ext_hook=hook, raw=False, strict_map_key=False))

    try:
        return mp.unpackb(bytes(blob), ext_hook=hook, raw=False, strict_map_key=False)
    except (ValueError, mp.ExtraData, mp.FormatError, mp.StackError) as exc:
        raise TranscriptError(f"{where}: not a readable msgpack value ({exc})") from exc


def _as_message(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(type, fields) of a LangChain message stored as ext 5, or as a plain dict."""
    if isinstance(value, Ext) and value.code == EXT_PYDANTIC_V2 and isinstance(value.data, list):
        parts = value.data
        if len(parts) >= 3 and isinstance(parts[1], str) and isinstance(parts[2], dict):
            kind = CLASS_TYPES.get(parts[1]) or parts[2].get("type")
            if isinstance(kind, str):
                return kind, parts[2]
        return None
    if isinstance(value, dict) and isinstance(value.get("type"), str) and "content" in value:
        return str(value["type"]), value
    return None


def _plain(value: Any) -> Any:
    """Ext values unwrapped to their fields, for meta and marker texts."""
    if isinstance(value, Ext):
        d = value.data
        if isinstance(d, list) and len(d) >= 3 and isinstance(d[2], dict):
            return _plain(d[2])
        return _plain(d)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


@dataclass(slots=True)
class Write:
    """One pending write of the latest checkpoint."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    value: Any


def pick_thread(threads: list[str], thread: str | None, where: str) -> str:
    if thread is not None:
        if thread not in threads:
            raise TranscriptError(
                f"{where}: no thread {thread!r}; threads: {', '.join(threads[:20]) or '(none)'}"
            )
        return thread
    if len(threads) == 1:
        return threads[0]
    if not threads:
        raise TranscriptError(f"{where}: no LangGraph checkpoints in it")
    raise MultipleThreads(where, threads)


def _messages_channel(values: dict[str, Any]) -> str | None:
    if isinstance(values.get("messages"), list):
        return "messages"
    for key, v in values.items():
        if isinstance(v, list) and v and all(_as_message(x) is not None for x in v):
            return str(key)
    return None


def build(
    t: Transcript,
    checkpoint: dict[str, Any],
    writes: list[Write],
    where: str,
) -> None:
    """Fill ``t`` from the latest checkpoint's channel values and its pending writes."""
    values = checkpoint.get("channel_values")
    if not isinstance(values, dict):
        raise TranscriptError(f"{where}: checkpoint has no channel_values")
    channel = _messages_channel(values)
    if channel is None:
        raise TranscriptError(
            f"{where}: no channel holds LangChain messages (channels: {', '.join(map(str, values)) or 'none'}); "
            "a DeltaChannel keeps only a marker here and cannot be read from one checkpoint"
        )
    t.meta["channel"] = channel
    raw = list(values.get(channel) or [])
    # Writes to the messages channel saved by tasks that finished in the step that did not:
    # LangGraph applies them on resume without running those tasks again, so they belong here.
    applied = 0
    for w in writes:
        if w.channel == channel:
            vals = w.value if isinstance(w.value, list) else [w.value]
            raw.extend(vals)
            applied += len(vals)
    if applied:
        t.meta["pending_writes_applied"] = applied
    pairs: list[tuple[str, dict[str, Any]]] = []
    for v in raw:
        md = _as_message(v)
        if md is None:
            t.skip("channel_value_not_a_message")
            continue
        pairs.append(md)
    convert(pairs, t, where=where)
    _endings(t, writes)


def _open_calls(t: Transcript) -> tuple[int | None, list[str]]:
    """The last assistant message with calls and those of its calls no later result answers."""
    for i in range(len(t.messages) - 1, -1, -1):
        m = t.messages[i]
        if isinstance(m, AssistantMessage) and m.tool_calls:
            answered = {x.tool_call_id for x in t.messages[i + 1 :] if isinstance(x, ToolMessage)}
            return i, [c.id for c in m.tool_calls if c.id not in answered]
        if m.role in ("user", "assistant"):
            return None, []  # the thread went on after its last calls
    return None, []


def _endings(t: Transcript, writes: list[Write]) -> None:
    at, open_ids = _open_calls(t)
    errors = [w for w in writes if w.channel == ERROR]
    interrupts = [w for w in writes if w.channel == INTERRUPT]
    for w in errors:
        error = str(_plain(w.value))
        error = error if len(error) <= _SHOWN else error[:_SHOWN] + "..."
        t.markers.append(Marker("tool_error", at, f"{_node(w)} raised: {error}", list(open_ids)))
    for w in interrupts:
        values = w.value if isinstance(w.value, list) else [w.value]
        text = "; ".join(json.dumps(_plain(v).get("value") if isinstance(_plain(v), dict) else _plain(v),
                                    ensure_ascii=False, default=str) for v in values)
        if len(text) > _SHOWN:
            text = text[:_SHOWN] + "..."
        t.markers.append(
            Marker("interrupt", at, f"{_node(w)} asked a human: {text}; the thread resumes with the answer",
                   list(open_ids))
        )
    if interrupts and not errors:
        t.pending_approval.extend(open_ids)
    elif open_ids and not errors:
        t.markers.append(
            Marker("stopped", at, "no write after the latest checkpoint: the process stopped while the tools ran",
                   list(open_ids))
        )


def _node(w: Write) -> str:
    """The node a write came from (task_path ends with it), for marker texts."""
    tail = w.task_path.rsplit(",", 1)[-1].strip() if w.task_path else ""
    return f"node {tail!r}" if tail else f"task {w.task_id}"
