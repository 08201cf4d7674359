"""Gemini's offline rules: each fires on the break it names, with Gemini's own words, and a
repaired history passes them."""

from __future__ import annotations

import pytest

from providerkit_nb.core.messages import (
    AssistantMessage,
    ImagePart,
    ReasoningItems,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.repair import repair_history
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.wire import gemini as rules
from providerkit_nb.wire.options import CallOptions
from providerkit_nb.wire.validate import validate_history


def _calls(*ids, sig=None):
    return [ToolCall(i, "f", "{}", sig if n == 0 else None) for n, i in enumerate(ids)]


def _rules(messages):
    return [(p.rule, p.index) for p in rules.check(messages)]


def test_rules_have_ids_and_wordings():
    assert len({r.id for r in rules.RULES}) == len(rules.RULES) == 7
    assert all(r.id.startswith("gemini.") and r.provider_wording for r in rules.RULES)
    wording = {r.id: r.provider_wording for r in rules.RULES}
    assert wording["gemini.missing_thought_signature"].startswith("Function call is missing a thought_signature")
    assert "function call turn comes immediately after a user turn" in wording["gemini.function_call_turn_order"]


def test_a_clean_tool_history_passes():
    msgs = [
        SystemMessage("s"),
        UserMessage("go"),
        AssistantMessage("", tool_calls=_calls("a", "b", sig="c2ln")),
        ToolMessage("a", "f", "1"),
        ToolMessage("b", "f", "2"),
        AssistantMessage("done"),
        UserMessage("again"),
    ]
    assert rules.check(msgs) == []
    assert validate_history(msgs, wire="gemini") == []


def test_count_parity():
    msgs = [UserMessage("go"), AssistantMessage("", tool_calls=_calls("a", "b")), ToolMessage("a", "f", "1")]
    assert _rules(msgs) == [("gemini.function_response_count", 1)]
    p = rules.check(msgs)[0]
    assert p.provider_wording == rules.RESPONSE_COUNT.provider_wording
    assert "2 call(s)" in p.message and "1 function response" in p.message


def test_call_turn_must_follow_a_user_or_response_turn():
    msgs = [SystemMessage("s"), AssistantMessage("", tool_calls=_calls("a")), ToolMessage("a", "f", "1")]
    assert _rules(msgs) == [("gemini.function_call_turn_order", 1)]


def test_response_turn_must_follow_a_call_turn():
    msgs = [UserMessage("go"), AssistantMessage("hello"), ToolMessage("a", "f", "1")]
    assert _rules(msgs) == [("gemini.function_response_turn_order", 2)]


def test_consecutive_assistant_messages_are_one_turn():
    """Text then calls in two messages is one model turn on this wire: no order problem."""
    msgs = [UserMessage("go"), AssistantMessage("let me see"), AssistantMessage("", tool_calls=_calls("a")),
            ToolMessage("a", "f", "1")]
    assert rules.check(msgs) == []


def test_missing_signature_only_in_the_current_turn_and_only_when_gemini_signed_the_step():
    lost = AssistantMessage("", tool_calls=[ToolCall("a", "f", "{}"), ToolCall("b", "f", "{}", "c2ln")])
    tail = [ToolMessage("a", "f", "1"), ToolMessage("b", "f", "2")]
    current = [UserMessage("go"), lost, *tail]
    assert _rules(current) == [("gemini.missing_thought_signature", 1)]
    older = [*current, AssistantMessage("ok"), UserMessage("next question")]
    assert rules.check(older) == []  # Gemini checks the current turn only
    foreign = [UserMessage("go"), AssistantMessage("", tool_calls=_calls("a", "b")), *tail]
    assert rules.check(foreign) == []  # never Gemini's: the wire sends the documented bypass


def test_corrupted_signatures():
    msgs = [
        UserMessage("go"),
        AssistantMessage("x", reasoning_items=ReasoningItems("gemini", [{"type": "text", "offset": 0, "length": 1, "signature": "not base64!"}]),
                         tool_calls=[ToolCall("a", "f", "{}", "%%%")]),
        ToolMessage("a", "f", "1"),
    ]
    assert _rules(msgs) == [("gemini.corrupted_thought_signature", 1)] * 2
    ok = [UserMessage("go"), AssistantMessage("", tool_calls=[ToolCall("a", "f", "{}", "Ep-_w9==")]), ToolMessage("a", "f", "1")]
    assert rules.check(ok) == []  # the URL-safe alphabet is base64 too
    bypass = [UserMessage("go"), AssistantMessage("", tool_calls=[ToolCall("a", "f", "{}", "skip_thought_signature_validator")]), ToolMessage("a", "f", "1")]
    assert rules.check(bypass) == []


def test_empty_content_and_part_without_data():
    msgs = [UserMessage(""), UserMessage([ImagePart("image/png", "")]), UserMessage("fine"),
            AssistantMessage("", tool_calls=_calls("a")), ToolMessage("a", "f", "1", images=[ImagePart("image/png", "")])]
    assert _rules(msgs) == [("gemini.empty_content", 0), ("gemini.part_without_data", 1), ("gemini.part_without_data", 4)]


BROKEN = [
    [UserMessage("go"), AssistantMessage("", tool_calls=_calls("a", "b")), ToolMessage("a", "f", "1"), UserMessage("?")],
    [UserMessage("go"), AssistantMessage("hi"), ToolMessage("zz", "f", "orphan"), UserMessage("?")],
    [UserMessage("go"), AssistantMessage("", tool_calls=_calls("a")), UserMessage("interrupted"), ToolMessage("a", "f", "late")],
    [UserMessage("go"), AssistantMessage(""), AssistantMessage("", tool_calls=_calls("call_0")), ToolMessage("call_0", "f", "1"),
     UserMessage("more"), AssistantMessage("", tool_calls=_calls("call_0")), ToolMessage("call_0", "f", "2")],
]


@pytest.mark.parametrize("history", BROKEN, ids=["dangling", "orphan", "misplaced", "duplicate-ids"])
def test_repaired_histories_pass(history):
    assert rules.check(history) or validate_history(history)  # each one is broken to begin with
    repaired = repair_history(history).messages
    assert rules.check(repaired) == []
    assert validate_history(repaired, wire="gemini") == []


@pytest.mark.parametrize("history", BROKEN, ids=["dangling", "orphan", "misplaced", "duplicate-ids"])
def test_what_the_wire_sends_from_a_repaired_history_is_well_formed(history):
    """Independently of the rules: alternating turns, one response per call, nothing empty."""
    p = GeminiProvider(model="gemini-3-flash-preview", api_key="k")
    contents = p.build_request(p.prepare(history), None, CallOptions(), stream=True).body["contents"]
    opens = [k for k, c in enumerate(contents) if c["role"] == "user" and "functionResponse" not in c["parts"][0]]
    prev = None
    for k, c in enumerate(contents):
        assert c["parts"] and all(part for part in c["parts"])
        assert prev is None or prev["role"] != c["role"] or "functionResponse" in c["parts"][0] or "functionResponse" in prev["parts"][0]
        calls = [q for q in c["parts"] if "functionCall" in q]
        if calls:
            # Gemini 3's current turn (after the last user turn): the bypass or a real signature
            assert ("thoughtSignature" in calls[0]) == (k > opens[-1])
            nxt = contents[k + 1]
            assert len([q for q in nxt["parts"] if "functionResponse" in q]) == len(calls)
        prev = c
