"""A tool call the model wrote as text: found in an answer, so a view can say so, never run.

A server whose chat template cannot render tools leaves them out of the prompt, and a model
trained on tool calls may still write one, in its own markup, inside the answer (llama.cpp with
a model's own template; llama-cpp-python without a function-calling chat format). The server
passes it on as text. This module only recognises the markup of the common families, so the
views can show a finding and the live display a line; what is written there is never executed.
The text may be hostile: only the first ``SCAN_CHARS`` are read and at most ``MAX_CALLS`` reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["TextCall", "text_calls", "SCAN_CHARS", "MAX_CALLS"]

SCAN_CHARS = 100_000
MAX_CALLS = 20
EXCERPT = 300

# (the markup as people know it, the pattern; group "body" is the written call, group "name" a name
# the markup itself carries)
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Hermes, Qwen 2.5/3, SmolLM2 and many fine-tunes: <tool_call>{"name": ..., "arguments": ...}</tool_call>
    ("<tool_call>", re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|\Z)", re.S)),
    # Llama 3.1/3.2: <|python_tag|>{"name": ..., "parameters": ...}
    ("<|python_tag|>", re.compile(r"<\|python_tag\|>(?P<body>.*?)(?:<\|eom_id\|>|<\|eot_id\|>|\Z)", re.S)),
    # Llama 3.1 custom tools, Functionary: <function=name>{...}</function>
    ("<function=...>", re.compile(r"<function=(?P<name>[\w.\-]{1,64})>(?P<body>.*?)(?:</function>|\Z)", re.S)),
    # Mistral: [TOOL_CALLS][{"name": ..., "arguments": ...}]
    ("[TOOL_CALLS]", re.compile(r"\[TOOL_CALLS\](?P<body>.*?)(?:</s>|\Z)", re.S)),
)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]{1,64})"')


@dataclass(frozen=True, slots=True)
class TextCall:
    """One call written as text: the tool it names (None when it names none readable), the
    markup it used, and the written call (at most 300 characters)."""

    name: str | None
    form: str
    text: str
    start: int


def _name_in(body: str) -> str | None:
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):
        m = _NAME.search(body)
        return m.group(1) if m else None
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, dict):
        fn = data.get("function")
        name = data.get("name") or (fn.get("name") if isinstance(fn, dict) else None)
        return name if isinstance(name, str) and name else None
    return None


def text_calls(text: str) -> list[TextCall]:
    """The calls written as text in ``text``, in order. Never raises."""
    if not isinstance(text, str) or not text:
        return []
    head = text[:SCAN_CHARS]
    found: list[TextCall] = []
    for form, pattern in _FORMS:
        for m in pattern.finditer(head):
            body = m.group("body").strip()
            named = m.groupdict().get("name")
            found.append(TextCall(named or _name_in(body[:SCAN_CHARS]), form, m.group(0)[:EXCERPT], m.start()))
            if len(found) >= MAX_CALLS:
                break
    found.sort(key=lambda c: c.start)
    return found[:MAX_CALLS]
