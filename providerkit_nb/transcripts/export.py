"""Hand a repaired history back to the framework it came from: ``export(messages, format)``.

- ``pydantic_ai``: the JSON shape of ``ModelMessagesTypeAdapter`` (requests and responses with
  parts). Tool returns lead their request, as pydantic-ai orders them, so its own
  ``repair_messages`` finds nothing to change; our interrupted-call results carry
  ``outcome: "interrupted"``.
- ``langchain``: ``messages_to_dict`` form (``messages_from_dict`` reads it; a LangGraph thread
  takes it through ``graph.update_state``).
- ``responses``: Responses input items (what an Agents SDK session or Codex takes).

Signed reasoning goes back labelled with the provider that signed it (pydantic-ai
``provider_name``, LangChain ``response_metadata.model_provider``) so the framework replays it
only there; ``provider=`` keeps only that provider's, and the Responses export keeps only
``provider`` (default OpenAI's), exactly as the Responses wire does.

A history that still has breaks is refused (export what ``inspect`` repaired); calls waiting
for a person at its end stay unanswered: export never writes a result for them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ..core.json_input import read_json
from ..core.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    ensure_messages,
)
from ..core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY, repair_history

__all__ = ["export", "EXPORT_FORMATS"]

EXPORT_FORMATS: tuple[str, ...] = ("pydantic_ai", "langchain", "responses")
EXPORT_FORMATS += ("cline",)  # Cline 3 messages; transcripts.cline_write.write_session writes them as a new session
_INTERRUPTED = frozenset({INTERRUPTED_READ_ONLY, INTERRUPTED_MAY_HAVE_RUN})


def export(
    messages: Any,
    format: str,
    *,
    provider: str | None = None,
    pending: Collection[str] = (),
) -> list[dict[str, Any]]:
    """``messages`` (canonical messages or dicts, a ``Repaired``, or an Inspection, whose
    repaired history is taken) as the named framework's JSON-ready list.

    ``claude_code``, ``codex`` or ``opencode`` (with an Inspection of such a session) write a
    repaired session beside the original and return a ``writeback.WrittenSession`` instead.

    Raises ``ValueError`` for an unknown format or a history that still has breaks (calls
    without results other than ``pending`` ones at its end, results without calls, reused ids).
    """
    if format in ("claude_code", "codex", "opencode"):  # a new session of the coding agent, beside the original
        from .writeback import write_session

        return write_session(messages, format)  # type: ignore[return-value]  # these formats write a session, not a list (the docstring says so)
    msgs, pending = _history(messages, pending)
    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; one of {', '.join(EXPORT_FORMATS)}")
    check = repair_history(msgs, pending=pending)
    if check.changes:
        kinds = sorted({c.kind for c in check.changes})
        raise ValueError(
            f"the history still has {len(check.changes)} break(s) ({', '.join(kinds)}); export the "
            "repaired history (pk.inspect(...).repaired, or repair_history(...).messages)"
        )
    if format == "cline":  # Cline keeps the system prompt beside the messages: it comes first here
        from .cline import to_cline_messages

        system, turns = to_cline_messages(msgs)
        return ([{"role": "system", "content": system}] if system else []) + turns
    if format == "pydantic_ai":
        return _to_pydantic_ai(msgs, provider)
    if format == "langchain":
        return _to_langchain(msgs, provider)
    from ..wire.openai_responses import OPENAI_TAG, to_responses_input

    instructions, items, _ = to_responses_input(msgs, tag=provider or OPENAI_TAG)
    return ([{"role": "system", "content": instructions}] if instructions else []) + items


def _history(obj: Any, pending: Collection[str]) -> tuple[list[Message], list[str]]:
    if hasattr(obj, "repaired"):  # an Inspection
        repaired = obj.repaired
        if repaired is None:
            threads = getattr(obj, "threads", None) or []
            raise ValueError(
                "this inspection has no repaired history"
                + (f": its source holds {len(threads)} threads, inspect one with thread=..." if threads else "")
            )
        obj = repaired
    if hasattr(obj, "changes") and hasattr(obj, "messages"):  # a Repaired
        # its pending calls under the ids the repaired history gives them (a reused id is renamed)
        return ensure_messages(obj.messages), list(pending) or [p.id for p in getattr(obj, "pending", [])]
    if isinstance(obj, Sequence) and not isinstance(obj, str | bytes):
        return ensure_messages(obj), list(pending)
    raise TypeError(f"export takes messages, a Repaired or an Inspection, not {type(obj).__name__}")


def _json_args(call: ToolCall) -> tuple[dict[str, Any] | None, str]:
    try:
        value = read_json(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return None, call.arguments
    return (value, call.arguments) if isinstance(value, dict) else (None, call.arguments)


# --------------------------------------------------------------------------- pydantic-ai


def _pa_thinking(m: AssistantMessage, provider: str | None) -> list[dict[str, Any]]:
    ri = m.reasoning_items
    out: list[dict[str, Any]] = []
    if ri is not None and (provider is None or ri.provider == provider):
        for it in ri.items:
            if not isinstance(it, dict):
                continue
            if it.get("part_kind") == "thinking":  # kept as pydantic-ai wrote it
                out.append(dict(it))
            elif it.get("type") == "thinking":
                out.append({"part_kind": "thinking", "content": it.get("thinking") or "",
                            "signature": it.get("signature"), "provider_name": "anthropic"})
            elif it.get("type") == "redacted_thinking":
                out.append({"part_kind": "thinking", "content": "", "id": "redacted_thinking",
                            "signature": it.get("data"), "provider_name": "anthropic"})
            elif it.get("type") == "reasoning":
                text = "\n\n".join(p.get("text", "") for p in it.get("summary") or () if isinstance(p, dict))
                out.append({"part_kind": "thinking", "content": text, "id": it.get("id"),
                            "signature": it.get("encrypted_content"), "provider_name": "openai"})
    if not out and m.reasoning:
        out.append({"part_kind": "thinking", "content": m.reasoning})
    return out


def _pa_user(m: UserMessage) -> dict[str, Any]:
    c = m.content
    if isinstance(c, str):
        return {"part_kind": "user-prompt", "content": c}
    content: list[Any] = []
    for p in c:
        if isinstance(p, TextPart):
            content.append(p.text)
        else:
            content.append({"kind": "binary", "data": p.data, "media_type": p.mime_type})
    return {"part_kind": "user-prompt", "content": content}


def _to_pydantic_ai(msgs: list[Message], provider: str | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []

    def close() -> None:
        nonlocal results, others
        if results or others:
            out.append({"kind": "request", "parts": results + others})
        results, others = [], []

    for m in msgs:
        if isinstance(m, SystemMessage):
            others.append({"part_kind": "system-prompt", "content": m.content})
        elif isinstance(m, UserMessage):
            others.append(_pa_user(m))
        elif isinstance(m, ToolMessage):
            part: dict[str, Any] = {"part_kind": "tool-return", "tool_name": m.name, "content": m.content,
                                    "tool_call_id": m.tool_call_id}
            if m.content in _INTERRUPTED:
                part["outcome"] = "interrupted"
            results.append(part)
            if m.images:
                others.append({"part_kind": "user-prompt", "content": [
                    {"kind": "binary", "data": p.data, "media_type": p.mime_type} for p in m.images]})
        elif isinstance(m, AssistantMessage):
            close()
            parts = _pa_thinking(m, provider)
            if m.content:
                parts.append({"part_kind": "text", "content": m.content})
            for c in m.tool_calls or ():
                parts.append({"part_kind": "tool-call", "tool_name": c.name, "args": c.arguments or "{}",
                              "tool_call_id": c.id})
            out.append({"kind": "response", "parts": parts})
    close()
    return out


# --------------------------------------------------------------------------- LangChain


def _lc(kind: str, **data: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"content": "", "additional_kwargs": {}, "response_metadata": {}, "type": kind,
                            "name": None, "id": None}
    base.update(data)
    return {"type": kind, "data": base}


def _lc_user_content(c: str | list[Any]) -> str | list[dict[str, Any]]:
    if isinstance(c, str):
        return c
    out: list[dict[str, Any]] = []
    for p in c:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            out.append({"type": "image", "base64": p.data, "mime_type": p.mime_type})
        else:
            out.append({"type": "file", "base64": p.data, "mime_type": p.mime_type, **({"filename": p.name} if p.name else {})})
    return out


def _to_langchain(msgs: list[Message], provider: str | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in msgs:
        if isinstance(m, SystemMessage):
            out.append(_lc("system", content=m.content))
        elif isinstance(m, UserMessage):
            out.append(_lc("human", content=_lc_user_content(m.content)))
        elif isinstance(m, ToolMessage):
            content: Any = m.content
            if m.images:
                content = ([{"type": "text", "text": m.content}] if m.content else []) + [
                    {"type": "image", "base64": p.data, "mime_type": p.mime_type} for p in m.images]
            out.append(_lc("tool", content=content, tool_call_id=m.tool_call_id, name=m.name or None,
                           status="success", artifact=None))
        elif isinstance(m, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            meta: dict[str, Any] = {}
            extra: dict[str, Any] = {}
            ri = m.reasoning_items
            if ri is not None and (provider is None or ri.provider == provider):
                kept = [it for it in ri.items if isinstance(it, dict) and it.get("type") in ("thinking", "redacted_thinking", "reasoning")]
                if kept:
                    blocks.extend(kept)
                    meta["model_provider"] = {"openai-responses": "openai"}.get(ri.provider, ri.provider)
            elif m.reasoning:
                extra["reasoning_content"] = m.reasoning
            content = m.content
            if blocks:
                content = blocks + ([{"type": "text", "text": m.content}] if m.content else [])
            calls: list[dict[str, Any]] = []
            invalid: list[dict[str, Any]] = []
            for c in m.tool_calls or ():
                args, raw = _json_args(c)
                if args is None:
                    invalid.append({"name": c.name, "args": raw, "id": c.id, "error": "arguments are not a JSON object",
                                    "type": "invalid_tool_call"})
                else:
                    calls.append({"name": c.name, "args": args, "id": c.id, "type": "tool_call"})
            out.append(_lc("ai", content=content, additional_kwargs=extra, response_metadata=meta,
                           tool_calls=calls, invalid_tool_calls=invalid, usage_metadata=None))
    return out
