"""validate_history: say what is wrong with a history before a provider does.

The generic rules are exactly the breaks ``repair_history`` fixes (both read the same analysis),
so a repaired history always validates clean. With ``wire=...`` the rules of that wire's module
in ``providerkit_nb.core.rules`` run too (see that package's docstring for the contract).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .messages import Message, ensure_messages
from .repair import DUPLICATE_RESULT, MISPLACED, ORPHAN, analyze

__all__ = ["Problem", "validate_history", "GENERIC_RULES", "WIRES"]

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

# wire name -> (module under providerkit_nb.core.rules, dialect or None)
WIRES: dict[str, tuple[str, str | None]] = {
    "openai_chat": ("openai_chat", None),
    "openai": ("openai_chat", None),
    "deepseek": ("openai_chat", "deepseek"),
    "responses": ("openai_responses", None),
    "openai_responses": ("openai_responses", None),
    "anthropic": ("anthropic", None),
    "gemini": ("gemini", None),
}


@dataclass(slots=True)
class Problem:
    """One break: which rule, at which message, what to do, and how the provider words it."""

    rule: str
    index: int
    message: str
    provider_wording: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"message {self.index}: {self.rule}: {self.message}"


def _generic(msgs: list[Message]) -> list[Problem]:
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
        c = msgs[i].tool_calls[pos]  # type: ignore[union-attr,index]
        found.append(
            Problem(
                DUPLICATE_ID,
                i,
                f"tool call id {c.id!r} ({c.name}) is already used by an earlier call in message "
                f"{a.first_use[c.id]}; repair_history renames it to {new!r} with its result",
            )
        )
    for i, positions in a.dangling.items():
        calls = msgs[i].tool_calls  # type: ignore[union-attr]
        for pos in positions:
            c = calls[pos]  # type: ignore[index]
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
        cid = m.tool_call_id  # type: ignore[union-attr]
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


def _wire_check(wire: str) -> tuple[Any, str | None]:
    spec = WIRES.get(wire)
    if spec is None:
        raise ValueError(f"unknown wire {wire!r}; known wires: {', '.join(sorted(WIRES))}")
    module_name, dialect = spec
    full = f"{__package__}.rules.{module_name}"
    try:
        module = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        raise ValueError(
            f"no rules for wire {wire!r} yet (module {full} is missing); "
            f"known wires: {', '.join(sorted(WIRES))}"
        ) from exc
    return module.check, dialect


def validate_history(messages: Sequence[Message | dict[str, Any]], wire: str | None = None) -> list[Problem]:
    """Problems in message order; an empty list means every generic rule (and the wire's) holds.

    Accepts message objects or canonical dicts. ``wire`` is one of ``WIRES``'s names.
    """
    check = dialect = None
    if wire is not None:
        check, dialect = _wire_check(wire)  # fail before any work on an unknown wire
    msgs = ensure_messages(messages)
    found = _generic(msgs)
    if check is not None:
        if dialect is not None and "dialect" in inspect.signature(check).parameters:
            found.extend(check(msgs, dialect=dialect))
        else:
            found.extend(check(msgs))
    return found
