"""A realistic conversation, deterministic from a seed, built from canonical messages.

Rounds of: user question -> assistant turn with reasoning, signed reasoning items and one to
three tool calls -> one tool result per call (saved one by one) -> assistant answer. Contents vary
in size (a few bytes to several KB) and include non-ASCII text, so byte-for-byte checks mean
something. (A version driven by the recorded provider turns can replace this once the wire
adapters' cassettes are in place; the stores only see canonical messages either way.)
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from providerkit_nb.core.messages import (
    AssistantMessage,
    Message,
    ReasoningItems,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

_WORDS = "the file lists tools für Übersicht 日本語 data rows notebook kernel é café ✓ cache".split()
_TOOLS = ("read_file", "list_dir", "grep", "write_file")


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def conversation(seed: int) -> Iterator[Message]:
    """An endless conversation; the same seed always gives the same messages."""
    rng = random.Random(seed)
    yield SystemMessage("You are a careful assistant with file tools.")
    n = 0
    while True:
        n += 1
        yield UserMessage(f"round {n}: " + _text(rng, 3, 30))
        calls = [
            ToolCall(
                id=f"toolu_{seed}_{n}_{k}",
                name=rng.choice(_TOOLS),
                arguments=json.dumps({"path": f"src/{_text(rng, 1, 2)}.py", "n": k}, ensure_ascii=False),
            )
            for k in range(rng.randint(1, 3))
        ]
        yield AssistantMessage(
            content=_text(rng, 0, 10),
            reasoning=_text(rng, 5, 60),
            reasoning_items=ReasoningItems(
                "anthropic",
                [{"type": "thinking", "thinking": _text(rng, 5, 20), "signature": f"sig{seed}x{n}" * 8}],
            ),
            tool_calls=calls,
        )
        for call in calls:
            yield ToolMessage(call.id, call.name, _text(rng, 10, 600))
        yield AssistantMessage(content=_text(rng, 5, 120))


def first(seed: int, count: int) -> list[Message]:
    out = []
    for m in conversation(seed):
        if len(out) == count:
            break
        out.append(m)
    return out
