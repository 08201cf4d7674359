"""The generic rules of a history: exactly the breaks ``repair_history`` fixes (both read the
same analysis), so a repaired history always passes them. ``Problem`` is what every rule reports,
the generic ones here and each wire's own (``providerkit_nb.wire``, where ``validate_history``
runs both)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import Problem  # noqa: F401 (defined at the bottom, kept importable here)
from .messages import Message, ensure_messages
from .repair import DUPLICATE_RESULT, MISPLACED, ORPHAN, analyze

__all__ = ["Problem", "check", "GENERIC_RULES"]

DANGLING_CALL = "dangling_call"
ORPHAN_RESULT = ORPHAN
MISPLACED_RESULT = MISPLACED
DUPLICATE_ID = "duplicate_id"
DUPLICATE_RESULT_RULE = DUPLICATE_RESULT
EMPTY_ASSISTANT = "empty_assistant"

GENERIC_RULES: tuple[str, ...] = (
    DANGLING_CALL,
    ORPHAN_RESULT,
    MISPLACED_RESULT,
    DUPLICATE_RESULT_RULE,
    DUPLICATE_ID,
    EMPTY_ASSISTANT,
)


def check(messages: Sequence[Message | dict[str, Any]]) -> list[Problem]:
    """The generic rules: every break ``repair_history`` fixes, in message order."""
    msgs = ensure_messages(messages)
    a = analyze(msgs)
    if a.valid:
        return []
    found: list[Problem] = []
    for i in sorted(a.dropped):
        found.append(
            Problem(
                EMPTY_ASSISTANT,
                i,
                "assistant message with no text and no tool calls (a placeholder?); "
                "repair_history drops it",
            )
        )
    for i, pos, new in ((i, p, n) for i, d in a.renamed_calls.items() for p, n in d.items()):
        c = msgs[i].tool_calls[pos]  # type: ignore[union-attr,index]  # the analysis indexes assistant calls
        found.append(
            Problem(
                DUPLICATE_ID,
                i,
                f"tool call id {c.id!r} ({c.name}) is already used by an earlier call in message "
                f"{a.first_use[c.id]}; repair_history renames it to {new!r} with its result",
            )
        )
    for i, positions in a.dangling.items():
        calls = msgs[i].tool_calls  # type: ignore[union-attr]  # the analysis indexes assistant calls
        for pos in positions:
            c = calls[pos]  # type: ignore[index]  # a position among them
            found.append(
                Problem(
                    DANGLING_CALL,
                    i,
                    f"tool call {c.id!r} ({c.name}) has no result in the tool messages right "
                    "after it; repair_history adds one saying the call was interrupted",
                )
            )
    for i, why in a.unmatched.items():
        m = msgs[i]
        cid = m.tool_call_id  # type: ignore[union-attr]  # unmatched: tool messages only
        if why == ORPHAN:
            text = f"tool result for {cid!r} has no call with that id anywhere in the history"
        elif why == DUPLICATE_RESULT:
            text = f"tool result for {cid!r} is a second result for the same call"
        else:
            text = (
                f"tool result for {cid!r} is not in the run of tool messages right after the "
                "assistant message that made the call"
            )
        found.append(Problem(why, i, text + "; repair_history turns it into a user note"))
    found.sort(key=lambda p: p.index)  # stable: within one message, the order above
    return found
