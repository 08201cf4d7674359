"""inspect(path): open a transcript in any supported format and say what is wrong with it.

Formats: our JSON/JSONL (canonical messages, or a store export), OpenAI chat ``messages``,
Responses ``input``, Anthropic ``messages`` (+ ``system``) and Gemini ``contents`` (+
``systemInstruction``), each either bare or inside a request body. The problems come from the
offline validators, rule by rule, with the wording the provider would have answered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.messages import Message, message_from_dict

__all__ = ["inspect", "Inspection", "detect_format", "load_transcript"]

# format -> the wire whose validator rules apply
_WIRE_OF = {
    "canonical": None,
    "openai_chat": "openai_chat",
    "responses": "responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


@dataclass
class Inspection:
    path: str
    format: str
    messages: list[Message]
    problems: list[Any] = field(default_factory=list)
    _view: Any = None

    @property
    def view(self) -> Any:
        if self._view is None:
            from .widgets import HistoryView

            self._view = HistoryView(
                self.messages, problems=self.problems, title=f"{self.path} ({self.format})"
            )
        return self._view

    def problems_frame(self) -> Any:
        import pandas as pd

        rows = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in self.problems]
        return pd.DataFrame(rows, columns=["rule", "index", "message", "provider_wording"])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view.root)

    def __repr__(self) -> str:
        lines = [f"{self.path}: {self.format}, {len(self.messages)} messages, {len(self.problems)} problem(s)"]
        for p in self.problems:
            d = p.to_dict() if hasattr(p, "to_dict") else dict(p)
            lines.append(f"  - {d.get('rule')} at {d.get('index')}: {d.get('message')}")
        return "\n".join(lines)


def _blocks(messages: list[Any]) -> set[str]:
    kinds: set[str] = set()
    for m in messages:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, list):
            kinds.update(b.get("type", "") for b in c if isinstance(b, dict))
    return kinds


def detect_format(data: Any) -> str:
    """Name the dialect of a parsed transcript; raises ValueError with what was expected."""
    if isinstance(data, dict):
        if "contents" in data:
            return "gemini"
        if "input" in data:
            return "responses"
        if "messages" in data:
            msgs = data["messages"]
            if "system" in data or _blocks(msgs) & {"tool_use", "tool_result", "thinking", "redacted_thinking"}:
                return "anthropic"
            return detect_format(msgs)
        raise ValueError(
            "a transcript object must have 'messages' (OpenAI chat or Anthropic), 'input' "
            "(Responses) or 'contents' (Gemini)"
        )
    if isinstance(data, list):
        if not data:
            return "canonical"
        if all(isinstance(x, dict) and "parts" in x for x in data):
            return "gemini"
        if any(isinstance(x, dict) and x.get("type") in ("function_call", "function_call_output", "reasoning") for x in data):
            return "responses"
        if _blocks(data) & {"tool_use", "tool_result", "thinking", "redacted_thinking"}:
            return "anthropic"
        for x in data:
            if not isinstance(x, dict):
                break
            calls = x.get("tool_calls") or []
            if any(isinstance(c, dict) and "function" in c for c in calls):
                return "openai_chat"
            if x.get("role") == "tool" and "name" not in x:
                return "openai_chat"
            if x.get("content") is None and x.get("role") == "assistant":
                return "openai_chat"
        return "canonical"
    raise ValueError("a transcript must be a JSON array of messages or a request object")


def _convert(fmt: str, data: Any) -> list[Message]:
    if fmt == "canonical":
        return [message_from_dict(d, i) for i, d in enumerate(data)]
    if fmt == "openai_chat":
        from ..providers.openai_chat import from_openai_messages

        msgs = data["messages"] if isinstance(data, dict) else data
        return from_openai_messages(msgs)
    if fmt == "responses":
        from ..providers.openai_responses import from_responses_input

        if isinstance(data, dict):
            return from_responses_input(data["input"], instructions=data.get("instructions"))
        return from_responses_input(data)
    if fmt == "anthropic":
        from ..providers.anthropic import from_anthropic_messages

        if isinstance(data, dict):
            return from_anthropic_messages(data["messages"], system=data.get("system"))
        return from_anthropic_messages(data)
    if fmt == "gemini":
        from ..providers.gemini import from_gemini_contents

        if isinstance(data, dict):
            return from_gemini_contents(data["contents"], system_instruction=data.get("systemInstruction") or data.get("system_instruction"))
        return from_gemini_contents(data)
    raise ValueError(f"unknown transcript format {fmt!r}")


def load_transcript(path: str | Path, conversation: str | None = None) -> tuple[str, list[Message]]:
    """The format name and canonical messages of a transcript file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such transcript file")
    if p.suffix == ".jsonl":
        from ..store.jsonl import read_jsonl

        return "canonical", _jsonl_messages(read_jsonl(p), p, conversation)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc}); expected a JSON transcript or a .jsonl export") from exc
    fmt = detect_format(data)
    return fmt, _convert(fmt, data)


def _jsonl_messages(data: Any, path: Path, conversation: str | None) -> list[Message]:
    convs = data.conversations
    if conversation is None:
        if len(convs) != 1:
            raise ValueError(
                f"{path} holds {len(convs)} conversations ({', '.join(sorted(convs)) or 'none'}); "
                "pass conversation='...' to pick one"
            )
        conversation = next(iter(convs))
    if conversation not in convs:
        raise ValueError(f"{path}: no conversation {conversation!r}; it has {', '.join(sorted(convs))}")
    return [r.message for r in convs[conversation]]


def inspect(path: str | Path, conversation: str | None = None) -> Inspection:
    """Load a transcript, list what a provider would refuse in it, and show it in a HistoryView.

    ``conversation`` picks one conversation of a JSONL export that holds several."""
    from ..core.validate import validate_history

    fmt, messages = load_transcript(path, conversation)
    wire = _WIRE_OF.get(fmt)
    problems = validate_history(messages, wire=wire) if wire else validate_history(messages)
    return Inspection(str(path), fmt, messages, problems)
