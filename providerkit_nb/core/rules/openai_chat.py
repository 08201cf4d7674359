"""OpenAI Chat Completions (and DeepSeek on it): the history rules behind their 400s.

The pairing breaks are found by the same analysis ``repair_history`` uses (one reading of a
history, never two); this module adds what the Chat servers say about them, in their own words,
and DeepSeek thinking mode's extra rule. ``dialect="deepseek"`` switches to DeepSeek's wordings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import AssistantMessage, Message, ToolMessage, ensure_messages
from ..repair import DUPLICATE_RESULT, MISPLACED, ORPHAN, analyze
from ..validate import Problem

__all__ = ["RULES", "DEEPSEEK_RULES", "check"]

DANGLING_TOOL_CALLS = "openai_chat.dangling_tool_calls"
ORPHAN_TOOL_MESSAGE = "openai_chat.orphan_tool_message"
DEEPSEEK_DANGLING = "deepseek.dangling_tool_calls"
DEEPSEEK_ORPHAN = "deepseek.orphan_tool_message"
DEEPSEEK_REASONING = "deepseek.reasoning_content_missing"

# (rule id, the stable part of the provider's 400 message)
RULES: list[tuple[str, str]] = [
    (
        DANGLING_TOOL_CALLS,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'.",
    ),
    # OpenAI prints both "preceeding" and "preceding"; this part is common to both
    (ORPHAN_TOOL_MESSAGE, "messages with role 'tool' must be a response to a prece"),
]
DEEPSEEK_RULES: list[tuple[str, str]] = [
    (
        DEEPSEEK_DANGLING,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    ),
    (DEEPSEEK_ORPHAN, "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"),
    (DEEPSEEK_REASONING, "The `reasoning_content` in the thinking mode must be passed back to the API."),
]
_WORDING = dict(RULES + DEEPSEEK_RULES)


def _full_dangling(ids: list[str]) -> str:
    return (
        _WORDING[DANGLING_TOOL_CALLS]
        + " The following tool_call_ids did not have response messages: "
        + ", ".join(ids)
    )


def check(messages: Sequence[Message | dict[str, Any]], dialect: str | None = None) -> list[Problem]:
    """Problems a Chat server would answer with a 400, in message order."""
    msgs = ensure_messages(messages)
    deepseek = dialect == "deepseek"
    a = analyze(msgs)
    found: list[Problem] = []
    for i, positions in a.dangling.items():
        m = msgs[i]
        assert isinstance(m, AssistantMessage) and m.tool_calls
        ids = [m.tool_calls[p].id for p in positions]
        found.append(
            Problem(
                DEEPSEEK_DANGLING if deepseek else DANGLING_TOOL_CALLS,
                i,
                f"tool call(s) {', '.join(ids)} have no tool message right after the assistant "
                "message; add their results (repair_history adds 'interrupted' results)",
                _WORDING[DEEPSEEK_DANGLING] if deepseek else _full_dangling(ids),
            )
        )
    for i, why in a.unmatched.items():
        if why not in (ORPHAN, MISPLACED, DUPLICATE_RESULT):
            continue
        m = msgs[i]
        assert isinstance(m, ToolMessage)
        where = {
            ORPHAN: "answers no call in the history",
            MISPLACED: "is not in the run of tool messages right after its call",
            DUPLICATE_RESULT: "is a second result for the same call",
        }[why]
        found.append(
            Problem(
                DEEPSEEK_ORPHAN if deepseek else ORPHAN_TOOL_MESSAGE,
                i,
                f"tool message for {m.tool_call_id!r} {where}; repair_history turns it into a user note",
                _WORDING[DEEPSEEK_ORPHAN] if deepseek else "Invalid parameter: " + _WORDING[ORPHAN_TOOL_MESSAGE] + "eding message with 'tool_calls'.",
            )
        )
    if deepseek:
        found.extend(_deepseek_reasoning(msgs))
    found.sort(key=lambda p: p.index)
    return found


def _deepseek_reasoning(msgs: list[Message]) -> list[Problem]:
    """Thinking mode (the history shows reasoning) needs it back on every tool-call turn.

    The adapter then sends an empty ``reasoning_content`` so the request is accepted, but the
    model has lost what it thought on that turn: worth knowing before a long tool loop.
    """
    assistants = [(i, m) for i, m in enumerate(msgs) if isinstance(m, AssistantMessage)]
    if not any(m.reasoning for _, m in assistants):
        return []
    return [
        Problem(
            DEEPSEEK_REASONING,
            i,
            "tool-call turn without reasoning in a thinking-mode history (from another provider, or "
            "stripped?); the adapter sends an empty reasoning_content, so the model continues "
            "without its earlier reasoning",
            _WORDING[DEEPSEEK_REASONING],
        )
        for i, m in assistants
        if m.tool_calls and m.reasoning is None
    ]
