"""``langchain``: LangChain messages saved as JSON, in either of LangChain's own forms.

- ``messages_to_dict``: ``[{"type": "human"|"ai"|"tool"|..., "data": {...}}]`` (also what the
  file, Redis and SQL chat histories store);
- ``dumpd``: ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``.

Calls are read from ``tool_calls`` and ``invalid_tool_calls`` (both go to the provider, so both
need a result), and from ``additional_kwargs.tool_calls`` in dumps made before LangChain had a
``tool_calls`` field. Signed reasoning (Anthropic ``thinking`` blocks, Responses ``reasoning``
items) is kept whole for the provider that signed it. The same conversion serves the LangGraph
checkpoints, whose messages are these dicts inside msgpack. Nothing here imports LangChain.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .base import Source, Transcript, TranscriptError

__all__ = ["detect", "load", "convert", "message_dict", "CLASS_TYPES"]

# dumpd class name -> messages_to_dict type
CLASS_TYPES = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "RemoveMessage": "remove",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
    "ChatMessageChunk": "chat",
}
_TYPES = frozenset(CLASS_TYPES.values())
_PROVIDER_WIRE = {"anthropic": "anthropic", "openai": "openai_chat", "google_genai": "gemini", "deepseek": "deepseek"}
_SEP = (",", ":")
_encode = json.JSONEncoder(ensure_ascii=False, separators=_SEP, default=str).encode  # one encoder, not one per call


def message_dict(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """(type, data) of one saved message in either form, None when it is not one."""
    if not isinstance(obj, dict):
        return None
    if obj.get("lc") == 1 and obj.get("type") == "constructor":
        ident = obj.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident else None
        kind = CLASS_TYPES.get(cls) if isinstance(cls, str) else None
        kwargs = obj.get("kwargs")
        if kind is None or not isinstance(kwargs, dict):
            return None
        return kind, kwargs
    kind, data = obj.get("type"), obj.get("data")
    if isinstance(kind, str) and kind in _TYPES and isinstance(data, dict):
        return kind, data
    return None


def detect(source: Source, name: str) -> bool:
    data = source.json()
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    return isinstance(data, list) and bool(data) and message_dict(data[0]) is not None


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    data = source.json()
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise TranscriptError(
            f"{source.name}: expected a JSON list of LangChain messages (messages_to_dict or dumpd output)"
        )
    t = Transcript(source.name, name, [])
    pairs: list[tuple[str, dict[str, Any]]] = []
    for i, obj in enumerate(data):
        md = message_dict(obj)
        if md is None:
            raise TranscriptError(
                f"{source.name}: item {i} is not a LangChain message (neither {{type, data}} nor an "
                "lc constructor); check that the file is messages_to_dict or dumpd output"
            )
        pairs.append(md)
    convert(pairs, t, where=source.name)
    return t


# --------------------------------------------------------------------------- conversion


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text") or "")
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") in ("text", "output_text", "input_text"))
        )
    return "" if content is None else str(content)


def _args(args: Any) -> str:
    if isinstance(args, str):
        return args
    return _encode(args if args is not None else {})


def _user(content: Any, t: Transcript) -> UserMessage:
    if isinstance(content, str) or not isinstance(content, list):
        return UserMessage(_text(content))
    parts: list[ContentPart] = []
    for b in content:
        if isinstance(b, str):
            parts.append(TextPart(b))
            continue
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            parts.append(TextPart(str(b.get("text") or "")))
        elif kind == "image" and isinstance(b.get("base64") or b.get("data"), str) and b.get("mime_type"):
            parts.append(ImagePart(str(b["mime_type"]), str(b.get("base64") or b.get("data"))))
        elif kind == "image_url" and isinstance(b.get("image_url"), dict) and str(b["image_url"].get("url", "")).startswith("data:"):
            head, _, data = str(b["image_url"]["url"]).partition(",")
            parts.append(ImagePart(head[5:].split(";")[0], data))
        else:
            t.skip(f"user_block:{kind}")
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return UserMessage(parts[0].text)
    return UserMessage(parts)


def _provider(data: dict[str, Any]) -> str | None:
    meta = data.get("response_metadata")
    if isinstance(meta, dict):
        for key in ("model_provider", "ls_provider"):
            if isinstance(meta.get(key), str):
                return str(meta[key])
    return None


def _assistant(data: dict[str, Any], t: Transcript) -> AssistantMessage:
    content = data.get("content")
    texts: list[str] = []
    thoughts: list[str] = []
    signed: list[dict[str, Any]] = []  # Anthropic blocks
    items: list[dict[str, Any]] = []  # Responses reasoning items
    provider = _provider(data)
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for b in content:
            if isinstance(b, str):
                texts.append(b)
                continue
            kind = b.get("type") if isinstance(b, dict) else None
            if kind in ("text", "output_text"):
                texts.append(str(b.get("text") or ""))
            elif kind in ("thinking", "redacted_thinking"):
                signed.append({k: v for k, v in b.items() if k in ("type", "thinking", "signature", "data")})
                if b.get("thinking"):
                    thoughts.append(str(b["thinking"]))
            elif kind == "reasoning":
                summary = b.get("summary") or []
                said = [str(p.get("text")) for p in summary if isinstance(p, dict) and p.get("text")]
                if isinstance(b.get("reasoning"), str):  # v1 standard block
                    said.append(b["reasoning"])
                thoughts.extend(said)
                if b.get("encrypted_content") or str(b.get("id", "")).startswith("rs_"):
                    item = {k: v for k, v in b.items() if k in ("type", "id", "summary", "encrypted_content", "content")}
                    item.setdefault("summary", [])
                    items.append(item)
            else:  # tool_use / tool_call blocks repeat what tool_calls holds; the rest has no place
                t.skip(f"ai_block:{kind}")
    kwargs = data.get("additional_kwargs")
    extra: dict[str, Any] = kwargs if isinstance(kwargs, dict) else {}
    if isinstance(extra.get("reasoning_content"), str) and extra["reasoning_content"]:
        thoughts.append(extra["reasoning_content"])
    calls: list[ToolCall] = []
    for c in list(data.get("tool_calls") or []) + list(data.get("invalid_tool_calls") or []):
        if isinstance(c, dict) and c.get("id"):
            calls.append(ToolCall(str(c["id"]), str(c.get("name") or ""), _args(c.get("args"))))
        else:
            t.skip("call_without_id")
    if not calls:
        for c in extra.get("tool_calls") or ():  # pre-0.2 dumps: OpenAI-shaped calls only here
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict) and c.get("id"):
                calls.append(ToolCall(str(c["id"]), str(fn.get("name") or ""), _args(fn.get("arguments"))))
    reasoning_items = None
    if signed:
        reasoning_items = ReasoningItems(provider or "anthropic", signed)
    elif items:
        reasoning_items = ReasoningItems("openai-responses", items)
    return AssistantMessage(
        content="".join(texts),
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=reasoning_items,
        tool_calls=calls or None,
    )


def _wire_of(provider: str, data: dict[str, Any], m: AssistantMessage) -> str | None:
    """The wire an AI message came from: ChatOpenAI names "openai" on both of OpenAI's wires, so a
    Responses id (``resp_...``) or a Responses reasoning item tells them apart."""
    if provider == "openai":
        meta = data.get("response_metadata")
        rid = meta.get("id") if isinstance(meta, dict) else None
        responses = (isinstance(rid, str) and rid.startswith("resp_")) or (
            m.reasoning_items is not None and m.reasoning_items.provider == "openai-responses")
        return "responses" if responses else "openai_chat"
    return _PROVIDER_WIRE.get(provider)


def convert(pairs: list[tuple[str, dict[str, Any]]], t: Transcript, *, where: str) -> None:
    """Append the canonical form of LangChain (type, data) pairs to ``t.messages``; the provider
    named in the AI messages' metadata sets ``t.wire``."""
    names: dict[str, str] = {}
    providers: set[str] = set()
    wires: set[str | None] = set()
    out: list[Message] = t.messages
    for i, (kind, data) in enumerate(pairs):
        if kind == "chat":
            role = data.get("role")
            kind = {"user": "human", "assistant": "ai", "system": "system"}.get(str(role), "")
            if not kind:
                t.skip(f"chat_role:{role}")
                continue
        if kind == "human":
            out.append(_user(data.get("content"), t))
        elif kind == "system":
            out.append(SystemMessage(_text(data.get("content"))))
        elif kind == "ai":
            m = _assistant(data, t)
            for c in m.tool_calls or ():
                names[c.id] = c.name
            p = _provider(data)
            if p:
                providers.add(p)
                wires.add(_wire_of(p, data, m))
            out.append(m)
        elif kind == "tool":
            cid = data.get("tool_call_id")
            if not isinstance(cid, str) or not cid:
                raise TranscriptError(f"{where}: message {i}: a tool message without tool_call_id")
            content = data.get("content")
            text = content if isinstance(content, str) else (
                _text(content) if isinstance(content, list) else _encode(content)
            )
            name = data.get("name") if isinstance(data.get("name"), str) else names.get(cid, "")
            out.append(ToolMessage(cid, str(name or names.get(cid, "")), text))
            if data.get("status") == "error":
                t.failed(cid)
        else:
            t.skip(f"message:{kind}")
    if len(providers) == 1:
        t.meta["provider"] = next(iter(providers))
    if len(wires) == 1:
        t.wire = next(iter(wires))
