"""Provider request dialects: ``openai_chat`` (``messages``), ``responses`` (``input`` +
``instructions``), ``anthropic`` (``messages`` + ``system``) and ``gemini`` (``contents`` +
``systemInstruction``), each bare or inside a saved request body. Each is converted by that
wire's own importer and checked against that wire's rules.
"""

from __future__ import annotations

from typing import Any

from ..core.messages import Message
from .base import Source, Transcript, TranscriptError

__all__ = ["detect_format", "convert", "detect", "load"]

_TOOLISH = {"tool_use", "tool_result", "thinking", "redacted_thinking"}


def _blocks(messages: list[Any]) -> set[str]:
    kinds: set[str] = set()
    for m in messages:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, list):
            kinds.update(b.get("type", "") for b in c if isinstance(b, dict))
    return kinds


def _gemini_content(x: Any) -> bool:
    """A Gemini ``Content``: parts keyed by what they hold (``text``, ``functionCall``...), never
    by a ``type`` or ``part_kind`` field as other tools' message lists are."""
    parts = x.get("parts") if isinstance(x, dict) else None
    return isinstance(parts, list) and all(
        isinstance(p, dict) and "type" not in p and "part_kind" not in p for p in parts
    )


def detect_format(data: Any) -> str:
    """Name the dialect of a parsed transcript (``canonical`` for a list of our own messages);
    raises ValueError saying what was expected."""
    if isinstance(data, dict):
        return _request_format(data)
    if isinstance(data, list):
        return _list_format(data)
    raise ValueError("a transcript must be a JSON array of messages or a request object")


def _request_format(data: dict[str, Any]) -> str:
    """A saved request body: its top-level keys name the wire (``messages`` is Chat's and
    Anthropic's: a ``system`` key or Anthropic's blocks tell them apart, else its list decides)."""
    if "contents" in data:
        return "gemini"
    if "input" in data:
        return "responses"
    if "messages" in data:
        msgs = data["messages"]
        if "system" in data or _blocks(msgs) & _TOOLISH:
            return "anthropic"
        return detect_format(msgs)
    raise ValueError(
        "a transcript object must have 'messages' (OpenAI chat or Anthropic), 'input' "
        "(Responses) or 'contents' (Gemini)"
    )


_RESPONSES_ITEMS = ("function_call", "function_call_output", "reasoning")


def _list_format(data: list[Any]) -> str:
    """A bare list of messages (or Responses items, or Gemini contents)."""
    if not data:
        return "canonical"
    if all(_gemini_content(x) for x in data):
        return "gemini"
    if any(isinstance(x, dict) and x.get("type") in _RESPONSES_ITEMS for x in data):
        return "responses"
    if _blocks(data) & _TOOLISH:
        return "anthropic"
    if any(isinstance(x, dict) and "parts" in x and "content" not in x for x in data):
        raise ValueError("messages made of 'parts' that are not Gemini parts (another tool's format?)")
    for x in data:
        if not isinstance(x, dict):
            break
        if _chat_only(x):
            return "openai_chat"
    return "canonical"


def _chat_only(x: dict[str, Any]) -> bool:
    """A message only OpenAI Chat writes (our own messages look like Chat's otherwise): calls
    nested under ``function``, a tool result without a ``name``, an assistant with null content."""
    calls = x.get("tool_calls") or []
    return (
        any(isinstance(c, dict) and "function" in c for c in calls)
        or (x.get("role") == "tool" and "name" not in x)
        or (x.get("content") is None and x.get("role") == "assistant")
    )


def convert(fmt: str, data: Any) -> list[Message]:
    """Canonical messages of a parsed transcript in dialect ``fmt`` (ValueError on bad input)."""
    if fmt == "openai_chat":
        from ..wire.openai_chat import from_openai_messages

        return from_openai_messages(data["messages"] if isinstance(data, dict) else data)
    if fmt == "responses":
        from ..wire.openai_responses import from_responses_input

        if isinstance(data, dict):
            return from_responses_input(data["input"], instructions=data.get("instructions"))
        return from_responses_input(data)
    if fmt == "anthropic":
        from ..wire.anthropic import from_anthropic_messages

        if isinstance(data, dict):
            return from_anthropic_messages(data["messages"], system=data.get("system"))
        return from_anthropic_messages(data)
    if fmt == "gemini":
        from ..wire.gemini import from_gemini_contents

        if isinstance(data, dict):
            system = data.get("systemInstruction") or data.get("system_instruction")
            return from_gemini_contents(data["contents"], system_instruction=system)
        return from_gemini_contents(data)
    raise ValueError(f"unknown provider dialect {fmt!r}")


def detect(source: Source, name: str) -> bool:
    if source.path is not None and source.head().lstrip()[:1] not in (b"[", b"{"):
        return False
    data = source.json()
    if data is None:
        return False
    try:
        return detect_format(data) == name
    except ValueError:
        return False


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    data = source.json()
    if data is None:
        raise TranscriptError(f"{source.name}: not a JSON document; expected a {name} request or message list")
    try:
        messages = convert(name, data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TranscriptError(f"{source.name}: not a valid {name} transcript: {exc}") from exc
    return Transcript(source.name, name, messages, wire=name)
