"""OpenAI Responses: the request rules behind its 400s, checked before sending.

``check_wire`` reads a Responses ``input`` list (what goes over the wire, or a request another
tool recorded); ``check`` reads canonical messages, converts them exactly as the Responses
adapter does, and checks the result, so it predicts what that request would get back. Each
problem carries the provider's full sentence with the ids it would print; ``Problem.index`` is
the canonical message index (``check``) or the input position (``check_wire``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message
from ..validate import Problem
from . import conversion

__all__ = ["RULES", "check", "check_wire", "WireProblem"]

DANGLING_CALL = "responses.dangling_function_call"
ORPHAN_OUTPUT = "responses.orphan_function_call_output"
REASONING_WITHOUT_FOLLOWER = "responses.reasoning_without_follower"
DUPLICATE_ITEM = "responses.duplicate_item"
DUPLICATE_OUTPUT = "responses.duplicate_function_call_output"
MISSING_SUMMARY = "responses.reasoning_missing_summary"

# (rule id, stable part of the provider's wording)
RULES: list[tuple[str, str]] = [
    (DANGLING_CALL, "No tool output found for function call"),
    (ORPHAN_OUTPUT, "No tool call found for function call output with call_id"),
    (REASONING_WITHOUT_FOLLOWER, "of type 'reasoning' was provided without its required following item"),
    (DUPLICATE_ITEM, "Duplicate item found with id"),
    (DUPLICATE_OUTPUT, "Each function_call must have exactly one matching function_call_output"),
    (MISSING_SUMMARY, "missing required field `summary`"),
]
_WORDING = dict(RULES)

# items that can follow a reasoning item: what the model produced after it
_FOLLOWERS = frozenset({"message", "function_call", "custom_tool_call", "web_search_call", "file_search_call",
                        "computer_call", "code_interpreter_call", "image_generation_call", "local_shell_call",
                        "mcp_call", "shell_call", "apply_patch_call"})


@dataclass(slots=True)
class WireProblem:
    """A break in a Responses ``input``: the item position, the provider's sentence."""

    rule: str
    item: int
    message: str
    provider_wording: str


def _kind(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return kind


def _is_output_message(item: dict[str, Any]) -> bool:
    """An assistant message in output form (content parts), which can follow reasoning; an
    "easy" ``{"role": "assistant", "content": "text"}`` cannot (a recorded 400 shows it)."""
    content = item.get("content")
    return (
        item.get("role") == "assistant"
        and isinstance(content, list)
        and any(isinstance(p, dict) and p.get("type") in ("output_text", "refusal") for p in content)
    )


def check_wire(input: Sequence[Any]) -> list[WireProblem]:
    """Every rule against a Responses ``input`` list, in input order."""
    found: list[WireProblem] = []
    items = list(input)
    n = len(items)
    seen_ids: set[str] = set()
    calls: dict[str, int] = {}
    answered: set[str] = set()

    def add(rule: str, at: int, text: str) -> None:
        found.append(WireProblem(rule, at, text, _WORDING[rule]))

    for k, item in enumerate(items):
        kind = _kind(item)
        if kind is None:
            continue
        iid = item.get("id")
        if isinstance(iid, str) and iid:
            if iid in seen_ids:
                add(DUPLICATE_ITEM, k, f"Duplicate item found with id {iid}. Remove duplicate items from your input and try again.")
            seen_ids.add(iid)
        if kind == "reasoning":
            if "summary" not in item:
                add(MISSING_SUMMARY, k, f"Input[{k}] missing required field `summary`")
            nxt = items[k + 1] if k + 1 < n else None
            nk = _kind(nxt)
            ok = nk in _FOLLOWERS and (nk != "message" or _is_output_message(nxt))  # type: ignore[arg-type]
            if not ok and nk != "reasoning":
                add(
                    REASONING_WITHOUT_FOLLOWER,
                    k,
                    f"Item '{iid or f'input[{k}]'}' of type 'reasoning' was provided without its required following item.",
                )
        elif kind == "function_call":
            cid = item.get("call_id")
            if isinstance(cid, str):
                calls.setdefault(cid, k)
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if not isinstance(cid, str) or cid not in calls:
                add(ORPHAN_OUTPUT, k, f"No tool call found for function call output with call_id {cid}.")
            elif cid in answered:
                add(
                    DUPLICATE_OUTPUT,
                    k,
                    f"Duplicate function_call_output for call_id '{cid}'. Each function_call must have exactly "
                    "one matching function_call_output",
                )
            else:
                answered.add(cid)

    # a call must be answered before the conversation moves on to another message
    for cid, k in calls.items():
        end = next((j for j in range(k + 1, n) if _kind(items[j]) == "message"), n)
        if not any(
            _kind(items[j]) == "function_call_output" and items[j].get("call_id") == cid for j in range(k + 1, end)
        ):
            add(DANGLING_CALL, k, f"No tool output found for function call {cid}.")
    found.sort(key=lambda p: p.item)
    return found


def check(messages: Sequence[Message], *, tag: str | None = None) -> list[Problem]:
    """The Responses rules for a canonical history, as the adapter would send it.

    ``tag`` is the receiving provider's replay tag; ``None`` keeps every provider's reasoning
    items (the strictest reading).
    """
    _, items, origin = conversion("openai_responses")(list(messages), tag)
    return [
        Problem(p.rule, origin[p.item] if p.item < len(origin) else p.item, p.message, p.provider_wording)
        for p in check_wire(items)
    ]
