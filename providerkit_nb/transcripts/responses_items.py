"""Responses-API input items as canonical messages: the one reader behind ``codex`` rollouts and
``openai_agents`` sessions (both persist the items they send, one per line or row).

The conversion itself is the ``responses`` importer's (``from_responses_input``); this module
adds what a persisted source needs on top: custom (free-form) tool calls read as function calls,
hosted tool items (web search, computer use, MCP...) skipped and counted rather than refused,
markers placed at the canonical index they belong to, and errors that name the source's line or
row instead of an index into a list the user never saw.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.messages import Message
from ..providers.openai_responses import from_responses_input
from .base import Marker, Transcript, TranscriptError

__all__ = ["ItemReader"]

# Item types from_responses_input reads as they are.
_READ = frozenset({"message", "reasoning", "function_call", "function_call_output"})
# Free-form tool calls (Codex's apply_patch): a call and an output like a function's, with the
# raw text input where a function call has its JSON arguments.
_CUSTOM = {"custom_tool_call": "function_call", "custom_tool_call_output": "function_call_output"}

_INPUT_AT = re.compile(r"input\[(\d+)\]")


class ItemReader:
    """Collects items (each with the place it came from, and what the source says of it: its
    time, the model, tokens) and markers, then converts once."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.items: list[dict[str, Any]] = []
        self.places: list[str] = []
        self.stamps: list[dict[str, Any]] = []  # per item: "time", "at", "model", "tokens" where known
        self._marks: list[tuple[int, Marker]] = []  # (number of items before it, marker)

    def add(self, item: Any, place: str, stamp: dict[str, Any] | None = None) -> None:
        """One persisted item; what canonical messages cannot hold is counted in ``skipped``."""
        if not isinstance(item, dict):
            self.t.skip("malformed_item")
            self.t.warnings.append(f"{self.t.source}: {place} is not a JSON object; skipped")
            return
        kind = item.get("type")
        if not isinstance(kind, (str, type(None))):
            kind = "(invalid type)"
        if kind is None and "role" in item:
            kind = "message"
        if kind in _CUSTOM:
            item = _from_custom(item)
        elif kind == "local_shell_call":
            item = _from_local_shell(item)
        elif kind not in _READ:
            self.t.skip(f"item:{kind}")
            return
        if item.get("type", "message") == "message" and not isinstance(item.get("role"), str):
            self.t.skip("item:message:(no role)")
            return
        if item.get("type", "message") == "message" and item.get("role") not in (
            "user",
            "assistant",
            "system",
            "developer",
        ):
            self.t.skip(f"item:message:{item.get('role')}")
            return
        if item.get("type") == "function_call_output" and isinstance(item.get("call_id"), str) and _failed(item):
            self.t.failed(item["call_id"])
        self.items.append(item)
        self.places.append(place)
        self.stamps.append(dict(stamp or {}))

    def stamp_last_answer(self, **what: Any) -> None:
        """What the source says of the model's last answer so far (its tokens): on its last item."""
        for k in range(len(self.items) - 1, -1, -1):
            if _answers(self.items[k]):
                self.stamps[k].update(what)
                return

    def details(self, messages: list[Message]) -> dict[int, dict[str, Any]]:
        """Per canonical message: the time of its first item, and the model and tokens its items
        carry. Empty when the items do not group into ``messages`` as read here (nothing is
        better than a time on the wrong message)."""
        at = _message_of_items(self.items)
        if not at or at[-1] != len(messages) - 1:
            return {}
        out: dict[int, dict[str, Any]] = {}
        for i, stamp in zip(at, self.stamps, strict=True):
            if not stamp:
                continue
            d = out.setdefault(i, {})
            for key, v in stamp.items():
                if key in ("time", "at"):
                    d.setdefault(key, v)
                else:
                    d[key] = v
        return out

    def mark(self, kind: str, text: str, ids: list[str] | None = None) -> None:
        """A marker at the current end of the conversation."""
        self._marks.append((len(self.items), Marker(kind, None, text, list(ids or []))))

    def reset(self, items: list[Any], place: str) -> None:
        """Compaction: the history so far is replaced by ``items``."""
        self.items.clear()
        self.places.clear()
        self.stamps.clear()
        self._marks = [(0, m) for _, m in self._marks]
        for j, item in enumerate(items):
            self.add(item, f"{place}, replacement_history[{j}]")

    def messages(self) -> list[Message]:
        msgs = self._convert(self.items)
        for at, marker in self._marks:
            n = len(self._convert(self.items[:at])) if at else 0
            marker.index = n - 1 if n else None
            self.t.markers.append(marker)
        return msgs

    def _convert(self, items: list[dict[str, Any]]) -> list[Message]:
        try:
            return from_responses_input(items)
        except ValueError as exc:
            text = str(exc)
            m = _INPUT_AT.search(text)
            place = self.places[int(m.group(1))] if m and int(m.group(1)) < len(self.places) else "an item"
            text = _INPUT_AT.sub("item", text)
            raise TranscriptError(f"{self.t.source}: {place}: {text}") from exc


def _answers(item: dict[str, Any]) -> bool:
    """An item the model wrote (its text, reasoning or a call)."""
    kind = item.get("type", "message")
    return kind in ("reasoning", "function_call") or (kind == "message" and item.get("role") == "assistant")


def _has_text(item: dict[str, Any]) -> bool:
    c = item.get("content")
    if isinstance(c, str):
        return bool(c)
    return isinstance(c, list) and any(isinstance(p, dict) and (p.get("text") or p.get("refusal")) for p in c)


def _message_of_items(items: list[dict[str, Any]]) -> list[int]:
    """The canonical message each item lands in, grouped as ``from_responses_input`` groups
    them (consecutive items of one answer make one assistant message); ``details`` checks the
    count against the conversion's."""
    out: list[int] = []
    n = -1  # the last message so far
    cur = False  # an assistant message is open
    text = calls = False  # ... and holds text, calls
    for item in items:
        kind, role = item.get("type", "message"), item.get("role")
        if kind == "message" and role == "assistant":
            if not cur or text or calls:
                n, cur, calls = n + 1, True, False
            text = text or _has_text(item)
        elif kind == "reasoning":
            if not cur or calls:
                n, cur, text, calls = n + 1, True, False, False
        elif kind == "function_call":
            if not cur:
                n, cur, text = n + 1, True, False
            calls = True
        else:  # a user, system or developer message, a call's output: a message of its own
            n, cur, text, calls = n + 1, False, False, False
        out.append(n)
    return out


# How Codex's shell tools head their output: "Exit code: N" (shell), "Process exited with code N"
# (exec_command); older rollouts wrote JSON {"output", "metadata": {"exit_code"}}.
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\s*$", re.M)
_HEAD = 400  # the header lines come first; the command's own output after them is not read


def _failed(item: dict[str, Any]) -> bool:
    """Whether a call's output says it failed: ``success: false``, or a non-zero exit code."""
    out = item.get("output")
    if isinstance(out, dict):
        return out.get("success") is False
    if not isinstance(out, str):
        return False
    head = out[:_HEAD]
    if head.lstrip().startswith("{"):
        try:
            doc = json.loads(out)
        except (ValueError, RecursionError):  # not JSON after all (or absurdly deep): no verdict
            return False
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return (isinstance(code, int) and not isinstance(code, bool) and code != 0) or (
            isinstance(doc, dict) and doc.get("success") is False)
    m = _EXIT.search(head.split("\nOutput:", 1)[0])
    return m is not None and int(m.group(1)) != 0


def _from_custom(item: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in item.items() if k not in ("type", "input")}
    out["type"] = _CUSTOM[item["type"]]
    if item["type"] == "custom_tool_call":
        raw = item.get("input")
        out["arguments"] = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return out


def _from_local_shell(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": item.get("call_id") or item.get("id"),
        "name": "local_shell",
        "arguments": json.dumps(item.get("action") or {}, ensure_ascii=False),
    }
