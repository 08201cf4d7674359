"""Gemini's pre-flight rules: what generateContent would refuse, checked on a canonical history.

The Gemini wire sends a history as alternating *turns*: consecutive assistant messages become
one model turn, a run of tool results one function-response turn, consecutive user messages one
user turn; messages with nothing to send are left out. ``group_turns`` is that grouping (the
wire uses it too, so the rules judge exactly what would be sent). Gemini then checks, and the
rules below predict, with its own words:

- a function call turn must follow a user turn or a function response turn;
- a function response turn must follow a function call turn, with one response per call;
- on Gemini 3, the first function call of every model step in the current turn (since the last
  user turn) carries its ``thought_signature``. A step that was never Gemini's gets Google's
  documented bypass value from the wire, so the rule fires only when a step that Gemini signed
  (some call in it has a signature) lost the signature of its first call;
- signatures are base64 (either alphabet); anything else is "corrupted";
- no user turn with nothing in it, no inline part without data.
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from collections.abc import Sequence
from dataclasses import dataclass

from ..messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)
from ..validate import Problem

__all__ = [
    "RULES",
    "Rule",
    "check",
    "group_turns",
    "current_turn_start",
    "is_generated_id",
    "signed_by_gemini",
    "REPLAY_TAG",
    "BYPASS_SIGNATURE",
]

REPLAY_TAG = "gemini"
BYPASS_SIGNATURE = "skip_thought_signature_validator"
_BYPASS = frozenset({BYPASS_SIGNATURE, "context_engineering_is_the_way_to_go"})
_GENERATED_ID = re.compile(r"call_\d+(?:_\d+)*")


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    provider_wording: str


MISSING_SIGNATURE = Rule(
    "gemini.missing_thought_signature",
    "Function call is missing a thought_signature in functionCall parts.",
)
CORRUPTED_SIGNATURE = Rule("gemini.corrupted_thought_signature", "Corrupted thought signature.")
RESPONSE_COUNT = Rule(
    "gemini.function_response_count",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.",
)
CALL_TURN_ORDER = Rule(
    "gemini.function_call_turn_order",
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn.",
)
RESPONSE_TURN_ORDER = Rule(
    "gemini.function_response_turn_order",
    "Please ensure that function response turn comes immediately after a function call turn",
)
EMPTY_CONTENT = Rule("gemini.empty_content", "contents.parts must not be empty.")
PART_WITHOUT_DATA = Rule(
    "gemini.part_without_data", "required oneof field 'data' must have one initialized field"
)

RULES: list[Rule] = [
    MISSING_SIGNATURE,
    CORRUPTED_SIGNATURE,
    RESPONSE_COUNT,
    CALL_TURN_ORDER,
    RESPONSE_TURN_ORDER,
    EMPTY_CONTENT,
    PART_WITHOUT_DATA,
]


# --------------------------------------------------------------------------- shared with the wire


def is_generated_id(call_id: str) -> bool:
    """Ids made up for calls Gemini gave no id (``call_<n>``, and repair's ``call_<n>_<k>``):
    they are not sent back, Gemini pairs such calls and responses by order."""
    return _GENERATED_ID.fullmatch(call_id) is not None


def signed_by_gemini(m: AssistantMessage) -> bool:
    """Gemini produced this step: one of its calls carries a signature."""
    return any(c.thought_signature for c in m.tool_calls or ())


def _has_own_items(m: AssistantMessage) -> bool:
    ri = m.reasoning_items
    return ri is not None and ri.provider == REPLAY_TAG and bool(ri.items)


def _user_has_parts(m: UserMessage) -> bool:
    c = m.content
    if isinstance(c, str):
        return bool(c)
    return any(not isinstance(p, TextPart) or p.text for p in c)


def _kind(m: Message) -> str | None:
    if isinstance(m, SystemMessage):
        return None
    if isinstance(m, ToolMessage):
        return "response"
    if isinstance(m, UserMessage):
        return "user" if _user_has_parts(m) else None
    if m.content or m.tool_calls or _has_own_items(m):
        return "model"
    return None


def group_turns(messages: Sequence[Message]) -> list[tuple[str, list[int]]]:
    """The turns the Gemini wire sends: ``(kind, message indexes)``, kind one of ``user``,
    ``model``, ``response``; system messages and messages with nothing to send are left out."""
    turns: list[tuple[str, list[int]]] = []
    for i, m in enumerate(messages):
        kind = _kind(m)
        if kind is None:
            continue
        if turns and turns[-1][0] == kind:
            turns[-1][1].append(i)
        else:
            turns.append((kind, [i]))
    return turns


def current_turn_start(messages: Sequence[Message]) -> int:
    """Index of the message that opens Gemini's "current turn": the last user turn (tool
    results do not open one). Calls after it must carry their signatures on Gemini 3."""
    for kind, idx in reversed(group_turns(messages)):
        if kind == "user":
            return idx[0]
    return -1


# --------------------------------------------------------------------------- the rules


def _p(rule: Rule, index: int, message: str) -> Problem:
    return Problem(rule.id, index, message, rule.provider_wording)


def _is_base64(sig: str) -> bool:
    if sig in _BYPASS:
        return True
    s = sig.strip()
    if not s:
        return False
    alt = s.replace("-", "+").replace("_", "/")
    try:
        b64decode(alt + "=" * (-len(alt) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _call_count(messages: Sequence[Message], idx: list[int]) -> int:
    return sum(len(m.tool_calls or ()) for m in (messages[i] for i in idx) if isinstance(m, AssistantMessage))


def check(messages: Sequence[Message]) -> list[Problem]:
    """Every break of Gemini's rules, in message order (an empty list: Gemini would take it)."""
    found: list[Problem] = []
    turns = group_turns(messages)
    current = current_turn_start(messages)

    for i, m in enumerate(messages):
        if isinstance(m, UserMessage):
            if not _user_has_parts(m):
                found.append(
                    _p(EMPTY_CONTENT, i, "user message with no text or data: the Gemini wire leaves it "
                       "out; remove it or give it content")
                )
            elif not isinstance(m.content, str):
                for j, part in enumerate(m.content):
                    if not isinstance(part, TextPart) and (not part.data or not part.mime_type):
                        found.append(
                            _p(PART_WITHOUT_DATA, i, f"part {j} ({part.type}) has no data or no mime_type; "
                               "put the base64 bytes in it or remove it")
                        )
        elif isinstance(m, ToolMessage):
            for j, img in enumerate(m.images or ()):
                if not isinstance(img, ImagePart) or not img.data or not img.mime_type:
                    found.append(
                        _p(PART_WITHOUT_DATA, i, f"tool result image {j} has no data or no mime_type; "
                           "put the base64 bytes in it or remove it")
                    )
        elif isinstance(m, AssistantMessage):
            calls = m.tool_calls or []
            for c in calls:
                if c.thought_signature is not None and not _is_base64(c.thought_signature):
                    found.append(
                        _p(CORRUPTED_SIGNATURE, i, f"tool call {c.id!r} carries a thought_signature that is "
                           "not base64 (edited or from elsewhere); remove it")
                    )
            if _has_own_items(m):
                for it in m.reasoning_items.items:  # type: ignore[union-attr]
                    sig = it.get("signature") if isinstance(it, dict) else None
                    if isinstance(sig, str) and not _is_base64(sig):
                        found.append(
                            _p(CORRUPTED_SIGNATURE, i, "a Gemini reasoning item carries a signature that is "
                               "not base64 (edited?); remove that item")
                        )
            if i > current and calls and calls[0].thought_signature is None and signed_by_gemini(m):
                found.append(
                    _p(MISSING_SIGNATURE, i, f"the first call of this step ({calls[0].name}, "
                       f"{calls[0].id!r}) lost its thought_signature while a later call kept one; "
                       "Gemini 3 refuses it - restore the signature from the original response")
                )

    for k, (kind, idx) in enumerate(turns):
        prev = turns[k - 1] if k else None
        if kind == "model":
            n_calls = _call_count(messages, idx)
            if not n_calls:
                continue
            if prev is None:
                found.append(
                    _p(CALL_TURN_ORDER, idx[0], "the history opens with a function call turn; start it "
                       "with the user message that asked for the call")
                )
            nxt = turns[k + 1] if k + 1 < len(turns) else None
            n_resp = len(nxt[1]) if nxt is not None and nxt[0] == "response" else 0
            if n_resp != n_calls:
                found.append(
                    _p(RESPONSE_COUNT, idx[0], f"this function call turn makes {n_calls} call(s) and is "
                       f"answered by {n_resp} function response(s); give every call exactly one "
                       "result (repair_history does)")
                )
        elif kind == "response":
            if prev is None or prev[0] != "model" or not _call_count(messages, prev[1]):
                found.append(
                    _p(RESPONSE_TURN_ORDER, idx[0], "tool results that do not follow the assistant "
                       "message that made the calls; move them after it, or drop them "
                       "(repair_history turns them into a user note)")
                )
    found.sort(key=lambda p: p.index)
    return found
