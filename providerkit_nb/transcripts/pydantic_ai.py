"""``pydantic_ai``: the JSON of pydantic-ai's ``ModelMessagesTypeAdapter`` (``all_messages_json()``).

A list of requests (``kind: request``: system, user, tool-return, retry parts) and responses
(``kind: response``: text, thinking, tool-call parts). Both retry generations are read: the 1.x
``retry-prompt`` (with ``tool_name`` it answers that call, without it is user feedback) and the
2.x ``tool-return`` with ``outcome: retried`` / ``retry-feedback``. ``state: interrupted`` on a
request or response is reported as a marker. A response's calls with no request after them are
what pydantic-ai keeps open on purpose (they run on resume or get ``deferred_tool_results``, the
human-in-the-loop path), so they are reported as pending, not broken, unless the source says the
run was interrupted. Signed thinking is kept for the provider that signed it.
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
from .base import Marker, Source, Transcript, TranscriptError

__all__ = ["detect", "load", "convert", "reasoning_tag", "PROVIDER_TAGS"]

# pydantic-ai provider_name -> this library's replay tag (see the wires' reasoning_items)
PROVIDER_TAGS = {"anthropic": "anthropic", "openai": "openai-responses"}
_WIRES = {"anthropic": "anthropic", "responses": "responses", "openai_chat": "openai_chat",
          "google-gla": "gemini", "google-vertex": "gemini",
          "deepseek": "deepseek"}
_SEP = (",", ":")
_encode = json.JSONEncoder(ensure_ascii=False, separators=_SEP, default=str).encode  # one encoder, not one per call


def reasoning_tag(provider_name: str | None) -> str:
    return PROVIDER_TAGS.get(provider_name or "", provider_name or "pydantic-ai")


def detect(source: Source, name: str) -> bool:
    data = source.json()
    if not isinstance(data, list) or not data:
        return False
    first = data[0]
    return isinstance(first, dict) and first.get("kind") in ("request", "response") and isinstance(first.get("parts"), list)


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    data = source.json()
    if not isinstance(data, list):
        raise TranscriptError(f"{source.name}: expected a JSON list of pydantic-ai messages (all_messages_json())")
    t = Transcript(source.name, name, [])
    convert(data, t, where=source.name)
    return t


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    return _encode(value)


def _user(content: Any, t: Transcript) -> UserMessage:
    if isinstance(content, str):
        return UserMessage(content)
    parts: list[ContentPart] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, dict) and item.get("kind") == "binary" and str(item.get("media_type", "")).startswith("image/"):
            parts.append(ImagePart(str(item["media_type"]), str(item.get("data") or "")))
        else:
            t.skip(f"user_content:{item.get('kind') if isinstance(item, dict) else type(item).__name__}")
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return UserMessage(parts[0].text)
    return UserMessage(parts)


def _s(p: dict[str, Any], key: str, at: str) -> str | None:
    """A string field of a part (None when absent); another type is a damaged file."""
    v = p.get(key)
    if v is None or isinstance(v, str):
        return v
    raise TranscriptError(f"{at}: field {key!r} must be a string, not {type(v).__name__}")


def _thinking_item(p: dict[str, Any], at: str) -> tuple[str, dict[str, Any]] | None:
    """(tag, replayable item) of a signed thinking part; None for plain thinking text."""
    sig, provider, pid = _s(p, "signature", at), _s(p, "provider_name", at), _s(p, "id", at)
    content = _s(p, "content", at) or ""
    if not sig and not (provider == "openai" and pid):
        return None
    if provider == "anthropic":
        if pid == "redacted_thinking":
            return "anthropic", {"type": "redacted_thinking", "data": sig}
        return "anthropic", {"type": "thinking", "thinking": content, "signature": sig}
    if provider == "openai":
        item: dict[str, Any] = {"type": "reasoning", "id": pid, "summary": []}
        if content:
            item["summary"] = [{"type": "summary_text", "text": content}]
        if sig:
            item["encrypted_content"] = sig
        return "openai-responses", item
    # another provider's signature: kept as the part itself, replayed only to that provider
    return reasoning_tag(provider), {k: v for k, v in p.items() if k != "part_kind"} | {"part_kind": "thinking"}


def _parts(msg: dict[str, Any], where: str) -> Any:
    for j, p in enumerate(msg["parts"]):
        at = f"{where}, part {j}"
        if not isinstance(p, dict):
            raise TranscriptError(f"{at}: a part must be an object")
        yield p, _s(p, "part_kind", at), at


def _response(msg: dict[str, Any], t: Transcript, names: dict[str, str], where: str) -> AssistantMessage:
    texts: list[str] = []
    thoughts: list[str] = []
    items: list[dict[str, Any]] = []
    tag: str | None = None
    calls: list[ToolCall] = []
    for p, kind, at in _parts(msg, where):
        if kind == "text":
            texts.append(_s(p, "content", at) or "")
        elif kind == "thinking":
            thought = _s(p, "content", at)
            if thought:
                thoughts.append(thought)
            signed = _thinking_item(p, at)
            if signed is not None:
                if tag is not None and signed[0] != tag:
                    t.skip("thinking_of_a_second_provider")
                    continue
                tag = signed[0]
                items.append(signed[1])
        elif kind == "tool-call":
            cid, name = _s(p, "tool_call_id", at), _s(p, "tool_name", at) or ""
            if not cid:
                t.skip("call_without_id")
                continue
            args = p.get("args")
            arguments = args if isinstance(args, str) else _encode(args or {})
            calls.append(ToolCall(cid, name, arguments))
            names[cid] = name
        else:
            t.skip(f"response_part:{kind}")
    return AssistantMessage(
        content="".join(texts),
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=ReasoningItems(tag, items) if tag is not None and items else None,
        tool_calls=calls or None,
    )


def _request(msg: dict[str, Any], t: Transcript, names: dict[str, str], out: list[Message], where: str) -> None:
    for p, kind, at in _parts(msg, where):
        if kind == "system-prompt":
            out.append(SystemMessage(_s(p, "content", at) or ""))
        elif kind == "user-prompt":
            out.append(_user(p.get("content"), t))
        elif kind == "tool-return" or (kind == "retry-prompt" and p.get("tool_name")):
            # a 1.x retry-prompt with a tool name answers that call, as a 2.x "retried" return does
            cid, name = _s(p, "tool_call_id", at), _s(p, "tool_name", at)
            if not cid:
                raise TranscriptError(f"{at}: a {kind} part without a tool_call_id")
            out.append(ToolMessage(cid, name or names.get(cid, ""), _content(p.get("content"))))
            if kind == "retry-prompt":  # the tool asked for another try: the model read an error
                t.failed(cid)
            meta = p.get("metadata")
            if isinstance(meta, dict) and meta.get("pydantic_ai_synthesized_tool_return"):
                t.meta.setdefault("synthesized_by_pydantic_ai", []).append(cid)
        elif kind in ("retry-prompt", "retry-feedback"):
            out.append(UserMessage(_content(p.get("content"))))
        else:  # instructions and other bookkeeping the agent re-creates on each run
            t.skip(f"request_part:{kind}")


def _wire_name(msg: dict[str, Any]) -> str:
    """pydantic-ai names OpenAI "openai" on both of its wires; the response id tells them apart."""
    name = str(msg["provider_name"])
    if name == "openai":
        rid = msg.get("provider_response_id")
        if isinstance(rid, str) and rid.startswith("resp_"):
            return "responses"
        if isinstance(rid, str) and rid.startswith("chatcmpl"):
            return "openai_chat"
    return name


def convert(data: list[Any], t: Transcript, *, where: str) -> None:
    """Fill ``t`` from a list of pydantic-ai message dicts."""
    names: dict[str, str] = {}
    providers: set[str] = set()  # provider names (OpenAI's told apart by wire)
    msg_provider: dict[str, str] = {}
    ids: dict[str, dict[str, None]] = {}  # run and conversation ids, in order, once each
    out = t.messages
    last_kind = None
    for i, msg in enumerate(data):
        if not isinstance(msg, dict) or msg.get("kind") not in ("request", "response"):
            raise TranscriptError(f"{where}: message {i} is not a pydantic-ai request or response")
        if not isinstance(msg.get("parts"), list):
            raise TranscriptError(f"{where}: message {i}: 'parts' must be a list")
        state = msg.get("state") if isinstance(msg.get("state"), str) else "complete"
        if msg["kind"] == "response":
            m = _response(msg, t, names, f"{where}: message {i}")
            out.append(m)
            if isinstance(msg.get("provider_name"), str):
                key = _wire_name(msg)
                providers.add(key)
                msg_provider[key] = msg["provider_name"]
            if state != "complete":
                t.markers.append(Marker("interrupted" if state == "interrupted" else f"response_{state}", len(out) - 1,
                                        f"pydantic-ai marked response {i} {state}", [c.id for c in m.tool_calls or ()]))
        else:
            start = len(out)
            _request(msg, t, names, out, f"{where}: message {i}")
            if state == "interrupted":
                answered = {x.tool_call_id for x in out[start:] if isinstance(x, ToolMessage)}
                prev = next((x for x in reversed(out[:start]) if isinstance(x, AssistantMessage)), None)
                open_ids = [c.id for c in (prev.tool_calls or ()) if c.id not in answered] if prev else []
                t.markers.append(Marker("interrupted", start, f"pydantic-ai marked request {i} interrupted: it holds "
                                        "only the tool returns collected before the run stopped", open_ids))
        for key in ("run_id", "conversation_id"):
            if isinstance(msg.get(key), str):
                ids.setdefault(key + "s", {})[msg[key]] = None
        if isinstance(msg.get("instructions"), str):
            t.meta["instructions"] = msg["instructions"]  # re-sent by the agent each run, not history
        if isinstance(msg.get("model_name"), str):
            t.meta["model"] = msg["model_name"]
        last_kind = (msg["kind"], state)
    if last_kind is not None and last_kind == ("response", "complete"):
        last = out[-1] if out else None
        if isinstance(last, AssistantMessage) and last.tool_calls:
            t.pending_approval.extend(c.id for c in last.tool_calls)
            t.markers.append(Marker("awaiting_tool_results", len(out) - 1,
                                    "the history ends with a response whose calls have no results: pydantic-ai runs "
                                    "them on resume or takes deferred_tool_results", [c.id for c in last.tool_calls]))
    t.meta.update({key: list(seen) for key, seen in ids.items()})
    if len(providers) == 1:
        (only,) = providers
        t.wire = _WIRES.get(only)
        t.meta["provider"] = msg_provider[only]
