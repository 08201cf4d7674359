"""When a conversation outgrows the model's window: the decision, where to cut, and the
summarised history that replaces the older part.

The cut is chosen so the kept tail is a valid history on its own: the newest message is always
kept, a tool result never loses its call, and an assistant's calls never lose their results.

A store keeps everything (it is the record); compacting appends the summary as a user turn
(``[Earlier conversation, summarized]`` then the text) followed by copies of the kept recent
messages. The live history (``active_history``) is the system prompt plus everything from the
newest summary on, so a reload or another process sees the same compacted history.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from .errors import ErrorKind, ProviderError
from .messages import AssistantMessage, Message, SystemMessage, TextPart, ToolMessage, UserMessage
from .overflow import ContextOverflow, parse_context_overflow
from .turn import Turn, collect_turn

__all__ = [
    "CONTEXT_RESERVE_TOKENS",
    "SUMMARY_PREFIX",
    "ContextOverflow",
    "estimate_tokens",
    "message_tokens",
    "conversation_tokens",
    "needs_compaction",
    "history_budget_tokens",
    "pick_cut",
    "apply_compaction",
    "active_history",
    "compaction_messages",
    "is_summary",
    "summarize",
    "guess_context_window",
    "parse_context_overflow",
    "summary_request",
]

CONTEXT_RESERVE_TOKENS = 32_000  # room for the answer and the next tool results
SUMMARY_PREFIX = "[Earlier conversation, summarized]\n\n"


def estimate_tokens(text: str) -> int:
    """About four characters a token: good enough to choose a cut, never to bill."""
    return math.ceil(len(text) / 4)


def message_tokens(m: Message) -> int:
    """Text (images ignored), reasoning, and each tool call's name and arguments."""
    if isinstance(m, AssistantMessage):
        n = estimate_tokens(m.content) + estimate_tokens(m.reasoning or "")
        for c in m.tool_calls or ():
            n += estimate_tokens(c.name) + estimate_tokens(c.arguments)
        if m.reasoning_items is not None:
            n += estimate_tokens(repr(m.reasoning_items.items))
        return n
    content = m.content
    if isinstance(content, str):
        return estimate_tokens(content)
    return sum(estimate_tokens(p.text) for p in content if isinstance(p, TextPart))


def conversation_tokens(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def needs_compaction(input_tokens: int, window: int, reserve: int = CONTEXT_RESERVE_TOKENS) -> bool:
    """Is the last prompt within ``reserve`` of the window? Never true before a first usage."""
    return input_tokens > 0 and input_tokens >= window - reserve


def history_budget_tokens(window: int) -> int:
    """How much recent history to keep verbatim: a tenth of the window, at least 6000."""
    return max(6000, window // 10)


def pick_cut(messages: Sequence[Message], budget: int) -> int:
    """The index where the kept tail starts (``len(messages)`` when there is nothing to cut).

    Walks back from the newest message (always kept) while the tail fits ``budget``, then moves
    the cut back past any tool results so none is separated from the call that asked for it.
    """
    n = len(messages)
    first = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), n)
    if first == n:
        return n
    cut = n - 1
    total = message_tokens(messages[cut])
    while cut - 1 >= first:
        m = messages[cut - 1]
        if isinstance(m, SystemMessage):
            cut -= 1  # system messages are kept anyway; they cost nothing here
            continue
        t = message_tokens(m)
        if total + t > budget:
            break
        total += t
        cut -= 1
    while cut > first and isinstance(messages[cut], ToolMessage | SystemMessage):
        cut -= 1
    return cut


def compaction_messages(messages: Sequence[Message], cut: int, summary: str) -> list[Message]:
    """What a store appends when it compacts: the summary turn, then the kept tail (non-system)."""
    if not 0 <= cut <= len(messages):
        raise ValueError(f"cut {cut} is outside the history (0..{len(messages)})")
    return [UserMessage(SUMMARY_PREFIX + summary), *(m for m in messages[cut:] if not isinstance(m, SystemMessage))]


def apply_compaction(messages: Sequence[Message], cut: int, summary: str) -> list[Message]:
    """Every system message, then the summary as one user turn, then the tail from ``cut``."""
    tail = compaction_messages(messages, cut, summary)
    return [*(m for m in messages if isinstance(m, SystemMessage)), *tail]


def is_summary(m: Message) -> bool:
    return isinstance(m, UserMessage) and isinstance(m.content, str) and m.content.startswith(SUMMARY_PREFIX)


def active_history(messages: Sequence[Message]) -> list[Message]:
    """What is sent of a stored (append-only) history: the system prompt first (the newest
    system message: saving another one replaces the prompt), then everything from the newest
    summary on (all of it if none)."""
    systems = [m for m in messages if isinstance(m, SystemMessage)]
    last = next((i for i in range(len(messages) - 1, -1, -1) if is_summary(messages[i])), None)
    if len(systems) <= 1 and last is None and (not systems or isinstance(messages[0], SystemMessage)):
        return list(messages)
    body = messages if last is None else messages[last:]
    return [*systems[-1:], *(m for m in body if not isinstance(m, SystemMessage))]


# per-call options that make no sense for the summary request
_NOT_FOR_SUMMARY = frozenset({"json", "json_with_tools", "avoid_json_form", "tool_choice", "parallel_tool_calls",
                              "on_activity"})


def summarize(provider: Any, older: Sequence[Message], options: dict[str, Any]) -> Turn:
    """Ask ``provider`` to summarise ``older``; the turn (with its usage) is returned."""
    opts = {k: v for k, v in options.items() if k not in _NOT_FOR_SUMMARY}
    turn = collect_turn(provider.create_stream(summary_request(older), None, **opts))
    if not turn.message.content.strip():
        raise ProviderError(
            getattr(provider, "id", "provider"), ErrorKind.OVERLOAD,
            "compaction: the summary came back empty; nothing was changed (try again, or compact=False)",
        )
    return turn


_WINDOWS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"gemini|gpt-4\.1|grok-4|llama-4", re.I), 1_000_000),
    (re.compile(r"claude|gpt-5|o[34]|deepseek|kimi|glm|qwen", re.I), 200_000),
)


def guess_context_window(model: str) -> int:
    """A conservative guess from the model id (1M, 200k, else 128k); pass the real window
    when you know it."""
    for pattern, window in _WINDOWS:
        if pattern.search(model or ""):
            return window
    return 128_000


def summary_request(messages: Sequence[Message]) -> list[Message]:
    """The history to send when asking a model to summarise ``messages`` (its own older part)."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            continue
        if isinstance(m, AssistantMessage):
            text = m.content
            for c in m.tool_calls or ():
                text += f"\n[called {c.name}({c.arguments})]"
            lines.append(f"assistant: {text.strip()}")
        elif isinstance(m, ToolMessage):
            lines.append(f"tool {m.name} returned: {m.content if isinstance(m.content, str) else '[parts]'}")
        else:
            content = m.content
            lines.append("user: " + (content if isinstance(content, str)
                                     else "".join(p.text for p in content if isinstance(p, TextPart))))
    return [
        SystemMessage(
            "Summarize the conversation below for the assistant who will continue it. Keep every fact, "
            "decision, open question, file name, number and tool result still needed; drop pleasantries. "
            "Write plain prose, no preamble."
        ),
        UserMessage("\n\n".join(lines)),
    ]
