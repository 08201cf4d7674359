"""``message_from_dict`` builds the common shapes directly (a store's load spends its time
there) and sends the rest to each class's validating ``from_dict``: the two must agree on every
dict, valid or not, so the shortcut can never accept what the validator refuses or build
something else. Dicts are generated near the canonical shapes (the right keys and some wrong
ones, values of every JSON type), where a shortcut is most likely to be wrong."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import providerkit_nb as pk
from providerkit_nb.core.messages import MessageFormatError, message_from_dict

VALIDATORS: dict[str, Any] = {
    "system": pk.SystemMessage,
    "user": pk.UserMessage,
    "assistant": pk.AssistantMessage,
    "tool": pk.ToolMessage,
}

# values of every JSON type, including the ones a field must refuse
VALUES = st.one_of(
    st.text(max_size=4),
    st.just(""),
    st.none(),
    st.integers(-3, 3),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(max_size=2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2),
)
TEXT = st.text(max_size=3)
CALL = {"id": "c1", "name": "read", "arguments": "{}"}
VALID: list[dict[str, Any]] = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": "a"},
    {"role": "assistant", "content": "", "reasoning": "r", "tool_calls": [CALL, CALL]},
    {"role": "assistant", "content": "", "tool_calls": [{**CALL, "thought_signature": "t"}]},
    {"role": "tool", "tool_call_id": "c1", "name": "read", "content": "t"},
]
KEYS = ["role", "content", "reasoning", "tool_calls", "tool_call_id", "name", "images", "extra",
        "reasoning_details", "reasoning_items"]
CALL_KEYS = ["id", "name", "arguments", "thought_signature", "type"]


@st.composite
def near_canonical(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message of one of the common shapes, then a few edits: a key dropped, added or
    given another value, inside the message or inside one of its tool calls."""
    d = {k: (list(v) if isinstance(v, list) else v) for k, v in draw(st.sampled_from(VALID)).items()}
    for _ in range(draw(st.integers(0, 3))):
        calls = d.get("tool_calls")
        inside = isinstance(calls, list) and calls and draw(st.booleans())
        if inside:
            j = draw(st.integers(0, len(calls) - 1))
            target = calls[j] = dict(calls[j]) if isinstance(calls[j], dict) else {}
            keys = CALL_KEYS
        else:
            target, keys = d, KEYS
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(st.one_of(VALUES, TEXT, st.lists(st.just(CALL), max_size=2)))
    return d


MESSAGES = near_canonical()


def _validated(d: dict[str, Any]) -> Any:
    """What the validating path alone makes of ``d``: the message, or the refusal's text."""
    try:
        role = d.get("role")
        cls = VALIDATORS.get(role) if isinstance(role, str) else None
        if cls is None:
            return ("refused", "role")
        return cls.from_dict(d, 4)
    except MessageFormatError as exc:
        return ("refused", str(exc))


def _built(d: dict[str, Any]) -> Any:
    try:
        return message_from_dict(d, 4)
    except MessageFormatError as exc:
        return ("refused", "role" if "unknown role" in str(exc) else str(exc))


@settings(max_examples=1500, deadline=None)
@given(MESSAGES)
def test_the_shortcut_agrees_with_the_validator_on_every_dict(d: dict[str, Any]) -> None:
    assert _built(d) == _validated(d)


@pytest.mark.parametrize(
    ("d", "want"),
    [
        ({"role": "assistant", "content": None}, pk.AssistantMessage("")),
        ({"role": "assistant"}, pk.AssistantMessage("")),
        ({"role": "assistant", "content": "a", "tool_calls": []}, pk.AssistantMessage("a")),
        ({"role": "assistant", "content": "a", "reasoning": None}, pk.AssistantMessage("a")),
        (
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "name": "f", "arguments": "{}", "thought_signature": None}]},
            pk.AssistantMessage("", tool_calls=[pk.ToolCall("c", "f", "{}")]),
        ),
        ({"role": "tool", "tool_call_id": "c", "name": "", "content": "r"}, pk.ToolMessage("c", "", "r")),
        ({"role": "tool", "tool_call_id": "c", "name": "f", "content": "r", "images": None},
         pk.ToolMessage("c", "f", "r")),
    ],
)
def test_edge_shapes_build_what_the_design_says(d: dict[str, Any], want: Any) -> None:
    assert message_from_dict(d) == want


@pytest.mark.parametrize(
    ("d", "needle"),
    [
        ({"role": "user", "content": "x", "extra": 1}, "unknown field(s) ['extra']"),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "", "name": "f", "arguments": ""}]},
         "tool_calls[0].id: must not be empty"),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "f"}]},
         "tool_calls[0].arguments: missing"),
        ({"role": "tool", "tool_call_id": "", "name": "f", "content": "r"}, "tool_call_id: must not be empty"),
        ({"role": "system", "content": 5}, "content: expected str, got int"),
    ],
)
def test_near_misses_are_still_refused_with_the_field_named(d: dict[str, Any], needle: str) -> None:
    with pytest.raises(MessageFormatError) as ei:
        message_from_dict(d, 2)
    assert needle in str(ei.value)
