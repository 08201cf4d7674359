"""``vercel_ui``: a JSON list of Vercel AI SDK ``UIMessage``s (what ``useChat`` apps persist).

A message is ``{"id", "role", "parts"}``. An assistant message holds every step of a turn,
separated by ``step-start`` parts; a tool part (``tool-<name>`` or ``dynamic-tool`` with
``toolName``) carries the call and, once it has one, its result in ``state``:
``output-available``, ``output-error`` and ``output-denied`` are results; ``input-streaming``
and ``input-available`` are calls that never finished (interrupted); ``approval-requested``
and ``approval-responded`` wait for a person (pending approval, not broken). Each step becomes
an assistant message followed by the tool messages of its answered calls. Reasoning keeps its
text and provider metadata (signatures). A ``{"messages": [...]}`` wrapper is accepted.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.messages import (
    IMAGE_MIME_TYPES,
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    Message,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .base import Marker, Source, Transcript, TranscriptError

PROVIDER_TAG = "vercel-ai"
_RESULT_STATES = frozenset({"output-available", "output-error", "output-denied"})
_INTERRUPTED_STATES = frozenset({"input-streaming", "input-available"})
_PENDING_STATES = frozenset({"approval-requested", "approval-responded"})
DENIED_TEXT = "The user denied this tool call."


def _ui_messages(data: Any) -> list[Any] | None:
    """The list of UIMessages in ``data`` (bare or under ``messages``), else None."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list) or not data:
        return None
    return data if all(_why_not(m) is None for m in data) else None


def _why_not(m: Any) -> str | None:
    if not isinstance(m, dict):
        return "is not an object"
    if m.get("role") not in ("system", "user", "assistant"):
        return f"has role {m.get('role')!r} (system, user or assistant)"
    if not isinstance(m.get("parts"), list) or "content" in m:
        return "has no parts list"
    if not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in m["parts"]):
        return "has a part without a type"
    return None


def detect(source: Source, name: str) -> bool:
    if source.path is not None and source.head().lstrip()[:1] not in (b"[", b"{"):
        return False
    return _ui_messages(source.json()) is not None


def _is_tool(p: dict[str, Any]) -> bool:
    kind = str(p["type"])
    return kind.startswith("tool-") or kind == "dynamic-tool"


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    data = _ui_messages(source.json())
    if data is None:
        raw = source.json()
        items = raw.get("messages") if isinstance(raw, dict) else raw
        where = ""
        if isinstance(items, list):
            where = next((f"; message {i} {w}" for i, m in enumerate(items) if (w := _why_not(m))), "")
        raise TranscriptError(
            f"{source.name}: not a list of UIMessages ({{id, role, parts: [{{type, ...}}]}}){where}"
        )
    t = Transcript(source.name, name, [], wire=None)
    wrapper = source.json()
    if isinstance(wrapper, dict) and isinstance(wrapper.get("id"), str):
        t.thread = wrapper["id"]
    out: list[Message] = []
    for i, m in enumerate(data):
        where = f"message {i} ({m.get('id', 'no id')})"
        if m["role"] == "system":
            out.append(SystemMessage("".join(p.get("text") or "" for p in m["parts"] if p["type"] == "text")))
        elif m["role"] == "user":
            out.append(_user(m["parts"], t))
        else:
            _assistant(m["parts"], t, out, where)
    t.messages = out
    return t


def _user(parts: list[dict[str, Any]], t: Transcript) -> UserMessage:
    content: list[ContentPart] = []
    for p in parts:
        if p["type"] == "text":
            content.append(TextPart(str(p.get("text") or "")))
        elif p["type"] == "file" and (url := _data_url(p.get("url"))):
            mime, data = url
            mime = p.get("mediaType") or mime
            if mime in IMAGE_MIME_TYPES:
                content.append(ImagePart(mime, data))
            else:
                content.append(FilePart(mime, data, p.get("filename")))
        else:
            t.skip(f"part:{p['type']}")
    if len(content) == 1 and isinstance(content[0], TextPart):
        return UserMessage(content[0].text)
    if all(isinstance(c, TextPart) for c in content):
        return UserMessage("".join(c.text for c in content if isinstance(c, TextPart)))
    return UserMessage(content)


def _data_url(url: Any) -> tuple[str, str] | None:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return head, data
    return None


def _assistant(parts: list[dict[str, Any]], t: Transcript, out: list[Message], where: str) -> None:
    step: list[dict[str, Any]] = []
    for p in parts:
        if p["type"] == "step-start":
            _step(step, t, out, where)
            step = []
        elif step and p["type"] in ("text", "reasoning") and any(_is_tool(q) for q in step):
            # text after tool calls without a step-start: the model spoke after the results
            _step(step, t, out, where)
            step = [p]
        else:
            step.append(p)
    _step(step, t, out, where)


def _step(parts: list[dict[str, Any]], t: Transcript, out: list[Message], where: str) -> None:
    if not parts:
        return
    texts: list[str] = []
    thoughts: list[str] = []
    reasoning: list[Any] = []
    calls: list[ToolCall] = []
    results: list[ToolMessage] = []
    for p in parts:
        kind = p["type"]
        if kind == "text":
            texts.append(str(p.get("text") or ""))
        elif kind == "reasoning":
            reasoning.append(dict(p))
            if p.get("text"):
                thoughts.append(str(p["text"]))
        elif _is_tool(p):
            call_id = p.get("toolCallId")
            tool = p.get("toolName") if kind == "dynamic-tool" else kind[len("tool-"):]
            if not isinstance(call_id, str) or not call_id or not isinstance(tool, str) or not tool:
                raise TranscriptError(f"{t.source}: {where}: a tool part without toolCallId or tool name")
            calls.append(ToolCall(call_id, tool, _json(p.get("input", p.get("rawInput")))))
            state = p.get("state")
            if state in _RESULT_STATES:
                results.append(ToolMessage(call_id, tool, _result(p)))
                if state == "output-error":
                    t.failed(call_id)
            elif state in _PENDING_STATES:
                t.pending_approval.append(call_id)
            elif state in _INTERRUPTED_STATES:
                t.markers.append(Marker("interrupted_tool", None, f"tool part left in state {state}", [call_id]))
            else:
                raise TranscriptError(f"{t.source}: {where}: tool part {call_id} has unknown state {state!r}")
        else:
            t.skip(f"part:{kind}")
    if not (texts or calls or reasoning):
        return
    a = AssistantMessage(
        content="".join(texts),
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=ReasoningItems(PROVIDER_TAG, reasoning) if reasoning else None,
        tool_calls=calls or None,
    )
    out.append(a)
    at = len(out) - 1
    for m in t.markers:
        if m.index is None and m.kind == "interrupted_tool":
            m.index = at
    out.extend(results)


def _json(value: Any) -> str:
    if value is None:
        return "{}"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _result(p: dict[str, Any]) -> str:
    state = p["state"]
    if state == "output-error":
        return str(p.get("errorText") or "The tool failed.")
    if state == "output-denied":
        reason = (p.get("approval") or {}).get("reason") if isinstance(p.get("approval"), dict) else None
        return DENIED_TEXT + (f" Reason: {reason}" if reason else "")
    output = p.get("output")
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
