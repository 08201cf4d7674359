"""Anthropic Messages: the request rules behind its 400s, checked before sending.

``check_wire`` reads an Anthropic-shaped ``messages`` list (what goes over the wire, or what
another tool saved); ``check`` reads canonical messages, converts them exactly as the
Anthropic adapter does, and checks the result, so it predicts what that request would get
back. Each problem carries the provider's wording with the indexes Anthropic would print
(``messages.N.content.J``); ``Problem.index`` is the canonical message index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message
from ..validate import Problem
from . import conversion

__all__ = ["RULES", "check", "check_wire", "WireProblem"]

DANGLING_TOOL_USE = "anthropic.dangling_tool_use"
ORPHAN_TOOL_RESULT = "anthropic.orphan_tool_result"
TOOL_RESULT_NOT_FIRST = "anthropic.tool_result_not_first"
DUPLICATE_TOOL_USE_ID = "anthropic.duplicate_tool_use_id"
DUPLICATE_TOOL_RESULT = "anthropic.duplicate_tool_result"
EMPTY_MESSAGE = "anthropic.empty_message"
EMPTY_TEXT_BLOCK = "anthropic.empty_text_block"
STREAM_BLOCK = "anthropic.stream_block"
THINKING_MISSING = "anthropic.thinking_missing"
THINKING_WHEN_DISABLED = "anthropic.thinking_when_disabled"
SIGNATURE_MISSING = "anthropic.signature_missing"

# (rule id, stable part of Anthropic's wording)
RULES: list[tuple[str, str]] = [
    (DANGLING_TOOL_USE, "`tool_use` ids were found without `tool_result` blocks immediately after"),
    (ORPHAN_TOOL_RESULT, "unexpected `tool_use_id` found in `tool_result` blocks"),
    (TOOL_RESULT_NOT_FIRST, "`tool_result` block(s) at the beginning of this message"),
    (DUPLICATE_TOOL_USE_ID, "`tool_use` ids must be unique"),
    (DUPLICATE_TOOL_RESULT, "each tool_use must have a single result"),
    (EMPTY_MESSAGE, "all messages must have non-empty content except for the optional final assistant message"),
    (EMPTY_TEXT_BLOCK, "text content blocks must be non-empty"),
    (STREAM_BLOCK, "does not match any of the expected tags"),
    (THINKING_MISSING, "When `thinking` is enabled, a final `assistant` message must start with a thinking block"),
    (THINKING_WHEN_DISABLED, "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`"),
    (SIGNATURE_MISSING, "signature: Field required"),
]

_REASONING = frozenset({"thinking", "redacted_thinking"})
_STREAM_ONLY = frozenset({"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"})
_THINKING_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"


@dataclass(slots=True)
class WireProblem:
    """A break in an Anthropic-shaped request: turn ``turn`` (``messages.N``), its wording."""

    rule: str
    turn: int
    message: str
    provider_wording: str


def _blocks(turn: Any) -> list[Any]:
    content = turn.get("content") if isinstance(turn, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _type(block: Any) -> str | None:
    return block.get("type") if isinstance(block, dict) else None


def check_wire(messages: Sequence[dict[str, Any]], *, thinking: bool | None = None) -> list[WireProblem]:
    """Every rule against an Anthropic ``messages`` list. ``thinking``: True if the request
    enables thinking, False if it is off, None to skip the two rules that depend on it."""
    found: list[WireProblem] = []
    seen_ids: set[str] = set()
    n = len(messages)
    last_assistant = max((k for k in range(n) if messages[k].get("role") == "assistant"), default=None)

    for k, turn in enumerate(messages):
        blocks = _blocks(turn)
        role = turn.get("role")
        if not blocks and not (role == "assistant" and k == n - 1):
            found.append(
                WireProblem(
                    EMPTY_MESSAGE,
                    k,
                    "this turn has no content; drop it or give it text",
                    f"messages.{k}: all messages must have non-empty content except for the optional final assistant message",
                )
            )
        for j, b in enumerate(blocks):
            t = _type(b)
            if t == "text" and not b.get("text"):
                found.append(
                    WireProblem(EMPTY_TEXT_BLOCK, k, f"content block {j} is an empty text block; drop it", "text content blocks must be non-empty")
                )
            elif t in _STREAM_ONLY:
                found.append(
                    WireProblem(
                        STREAM_BLOCK,
                        k,
                        f"content block {j} is a stream delta ({t}), not a content block; send the assembled block",
                        f"Input tag '{t}' does not match any of the expected tags",
                    )
                )
            elif t == "thinking" and not b.get("signature"):
                found.append(
                    WireProblem(
                        SIGNATURE_MISSING,
                        k,
                        f"thinking block {j} has no signature; it cannot be sent back (drop it, or keep the signed block)",
                        f"messages.{k}.content.{j}.thinking.signature: Field required",
                    )
                )
            elif t == "tool_use":
                cid = b.get("id")
                if cid in seen_ids:
                    found.append(
                        WireProblem(
                            DUPLICATE_TOOL_USE_ID,
                            k,
                            f"tool_use id {cid!r} is used twice; give each call its own id",
                            f"messages.{k}.content.{j}: `tool_use` ids must be unique",
                        )
                    )
                seen_ids.add(cid)

        if role == "user":
            prev = messages[k - 1] if k > 0 else None
            uses = [b.get("id") for b in _blocks(prev) if _type(b) == "tool_use"] if prev and prev.get("role") == "assistant" else []
            results = [(j, b) for j, b in enumerate(blocks) if _type(b) == "tool_result"]
            counted: set[str] = set()
            for j, b in results:
                rid = b.get("tool_use_id")
                if rid not in uses:
                    found.append(
                        WireProblem(
                            ORPHAN_TOOL_RESULT,
                            k,
                            f"tool_result {rid!r} answers no tool_use in the turn before it",
                            f"messages.{k}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {rid}. "
                            "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                        )
                    )
                elif rid in counted:
                    found.append(
                        WireProblem(
                            DUPLICATE_TOOL_RESULT, k, f"tool_use {rid!r} has two tool_result blocks; keep one", "each tool_use must have a single result"
                        )
                    )
                counted.add(rid)
            if uses:
                leading = 0
                for b in blocks:
                    if _type(b) != "tool_result":
                        break
                    leading += 1
                if leading < len(results):  # a result after other content (a short count is dangling)
                    found.append(
                        WireProblem(
                            TOOL_RESULT_NOT_FIRST,
                            k,
                            "tool results must be the first blocks of the turn after the calls; move the text after them",
                            f"messages.{k}: Did not find {len(uses)} `tool_result` block(s) at the beginning of this message. "
                            "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                        )
                    )
        if role == "assistant":
            uses = [b.get("id") for b in blocks if _type(b) == "tool_use"]
            nxt = messages[k + 1] if k + 1 < n else None
            answered = {b.get("tool_use_id") for b in _blocks(nxt) if _type(b) == "tool_result"} if nxt and nxt.get("role") == "user" else set()
            missing = [u for u in uses if u not in answered]
            if missing and k + 1 < n:
                found.append(
                    WireProblem(
                        DANGLING_TOOL_USE,
                        k,
                        f"calls {', '.join(map(str, missing))} have no result in the next turn; repair_history adds them",
                        f"messages.{k}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                        f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    )
                )

    if last_assistant is not None:
        blocks = _blocks(messages[last_assistant])
        tail = messages[last_assistant + 1 :]
        in_loop = any(_type(b) == "tool_use" for b in blocks) and all(
            all(_type(b) == "tool_result" for b in _blocks(t)) for t in tail
        )
        if thinking is True and in_loop and blocks and _type(blocks[0]) not in _REASONING:
            found.append(
                WireProblem(
                    THINKING_MISSING,
                    last_assistant,
                    "thinking is on and this tool loop's assistant turn has no leading thinking block; "
                    "keep the signed blocks from that turn, or turn thinking off for this request",
                    f"messages.{last_assistant}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                    f"`{_type(blocks[0])}`. When `thinking` is enabled, a final `assistant` message must start with a thinking "
                    "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
                    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our "
                    f"documentation at {_THINKING_DOCS}",
                )
            )
        if thinking is False:
            for j, b in enumerate(blocks):
                if _type(b) in _REASONING:
                    found.append(
                        WireProblem(
                            THINKING_WHEN_DISABLED,
                            last_assistant,
                            "thinking is off but the last assistant turn carries thinking blocks; drop them or turn thinking on",
                            f"messages.{last_assistant}.content.{j}: When thinking is disabled, an `assistant` message in the "
                            "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
                        )
                    )
                    break
    return found


def check(messages: Sequence[Message], *, thinking: bool | None = None, tag: str = "anthropic") -> list[Problem]:
    """The Anthropic rules for a canonical history, as the adapter would send it.

    The conversion is the adapter's own (it registers it with ``core.rules`` when imported, so
    this module imports nothing above the core and the validator never disagrees with what is
    sent).

    With ``thinking=False`` the adapter drops thinking blocks from the last assistant turn
    (as it does when a request does not think), so that rule can only fire on raw requests.
    """
    conv = conversion("anthropic")(list(messages), tag)
    turns = conv.messages
    if thinking is False:
        k = max((i for i, t in enumerate(turns) if t["role"] == "assistant"), default=None)
        if k is not None:
            turns = list(turns)
            turns[k] = {"role": "assistant", "content": [b for b in turns[k]["content"] if b.get("type") not in _REASONING]}
    out: list[Problem] = []
    for p in check_wire(turns, thinking=thinking):
        src = conv.sources[p.turn] if p.turn < len(conv.sources) else []
        out.append(Problem(p.rule, src[0] if src else p.turn, p.message, p.provider_wording))
    return out
