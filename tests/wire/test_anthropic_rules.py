"""The Anthropic pre-flight rules, and the constructed cassettes for what no recording had.

Each constructed cassette (``cassettes/anthropic_*.yaml``, labelled CONSTRUCTED) is replayed
with vcrpy through the real adapter and httpx; the 400s also carry the broken request, and the
wire checker must predict the rule and the exact wording the response holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vcr
import yaml

import providerkit_nb as pk
from providerkit_nb.core.errors import ProviderError, is_retryable
from providerkit_nb.core.messages import (
    AssistantMessage,
    ReasoningItems,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers import anthropic as a
from providerkit_nb.wire import anthropic as rules

OWN = Path(__file__).resolve().parents[2] / "cassettes"
KEY = "sk-ant-api03-constructed-test-key"
THINK = {"type": "thinking", "thinking": "plan", "signature": "SIG"}


def ids(problems):
    return [p.rule for p in problems]


# ----------------------------------------------------------------------------- wire rules


def test_rules_have_ids_and_wording():
    assert len(RULE_IDS) == len(rules.RULES) >= 10
    assert all(w for _, w in rules.RULES)


RULE_IDS = {rid for rid, _ in rules.RULES}


def test_a_clean_tool_loop_passes():
    turns = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [THINK, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, {"type": "text", "text": "more"}]},
    ]
    assert rules.check_wire(turns, thinking=True) == []


def test_empty_text_block_and_stream_deltas():
    turns = [{"role": "user", "content": [{"type": "text", "text": ""}, {"type": "input_json_delta", "partial_json": "{"}]}]
    found = rules.check_wire(turns)
    assert ids(found) == [rules.EMPTY_TEXT_BLOCK, rules.STREAM_BLOCK]
    assert found[1].provider_wording == "Input tag 'input_json_delta' does not match any of the expected tags"


def test_unsigned_thinking_block():
    turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "a"}]}]
    found = rules.check_wire(turns)
    assert ids(found) == [rules.SIGNATURE_MISSING]
    assert found[0].provider_wording == "messages.1.content.0.thinking.signature: Field required"


def test_duplicate_results():
    turns = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}, {"type": "tool_result", "tool_use_id": "t1"}]},
    ]
    assert ids(rules.check_wire(turns)) == [rules.DUPLICATE_TOOL_RESULT]


def test_thinking_disabled_with_thinking_in_the_last_assistant_turn():
    turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [THINK, {"type": "text", "text": "a"}]}, {"role": "user", "content": "again"}]
    found = rules.check_wire(turns, thinking=False)
    assert ids(found) == [rules.THINKING_WHEN_DISABLED]
    assert found[0].provider_wording.startswith("messages.1.content.0: When thinking is disabled")
    assert rules.check_wire(turns, thinking=True) == [] and rules.check_wire(turns) == []


# ----------------------------------------------------------------------------- canonical histories


def test_check_reads_canonical_messages_as_the_adapter_sends_them():
    history = [
        UserMessage("q"),
        AssistantMessage("", tool_calls=[ToolCall("t1", "f", "{}")]),
        ToolMessage("t1", "f", "ok"),
    ]
    assert rules.check(history) == []
    # thinking on and the loop's assistant turn has no signed block
    found = rules.check(history, thinking=True)
    assert ids(found) == [rules.THINKING_MISSING] and found[0].index == 1
    # with its signed block kept, the same loop is fine
    history[1] = AssistantMessage("", reasoning_items=ReasoningItems("anthropic", [THINK]), tool_calls=history[1].tool_calls)
    assert rules.check(history, thinking=True) == []
    # signed elsewhere: the adapter drops it, so the rule fires again
    history[1] = AssistantMessage("", reasoning_items=ReasoningItems("zai", [THINK]), tool_calls=history[1].tool_calls)
    assert ids(rules.check(history, thinking=True)) == [rules.THINKING_MISSING]


def test_validate_history_dispatches_to_these_rules():
    broken = [UserMessage("q"), AssistantMessage("", tool_calls=[ToolCall("t1", "f", "{}")]), UserMessage("never mind")]
    found = pk.validate_history(broken, wire="anthropic")
    ours = [p for p in found if p.rule == rules.DANGLING_TOOL_USE]
    assert len(ours) == 1 and ours[0].index == 1
    assert ours[0].provider_wording.startswith("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1.")
    # repaired, the same history passes every Anthropic rule
    repaired = pk.repair_history(broken).messages
    assert [p for p in pk.validate_history(repaired, wire="anthropic") if p.rule in RULE_IDS] == []


# ----------------------------------------------------------------------------- constructed cassettes


def _cassette(name):
    return OWN / name


def _replay(name, *, stream=True, model="claude-sonnet-4-5"):
    """Send the cassette's own request history through the adapter (real httpx, vcrpy replay)."""
    recorded = yaml.safe_load(_cassette(name).read_text())["interactions"][0]["request"]
    body = json.loads(recorded["body"])
    messages = rules.from_anthropic_messages(body["messages"], body.get("system"))
    p = a.AnthropicProvider(model=model, api_key=KEY)
    with vcr.use_cassette(str(_cassette(name)), record_mode="none") as cass:
        with pytest.raises(ProviderError) as info:
            if stream:
                collect_turn(p.create_stream(messages))
            else:
                p.complete(messages)
        assert cass.all_played
    err = info.value
    assert KEY not in repr(err) + str(err) + (err.body or "")
    return err, body


BROKEN = {
    "anthropic_400_dangling_tool_use.yaml": rules.DANGLING_TOOL_USE,
    "anthropic_400_orphan_tool_result.yaml": rules.ORPHAN_TOOL_RESULT,
    "anthropic_400_tool_result_not_first.yaml": rules.TOOL_RESULT_NOT_FIRST,
    "anthropic_400_duplicate_tool_use_id.yaml": rules.DUPLICATE_TOOL_USE_ID,
    "anthropic_400_empty_message.yaml": rules.EMPTY_MESSAGE,
    "anthropic_400_thinking_block_missing.yaml": rules.THINKING_MISSING,
}


@pytest.mark.parametrize("name, rule", BROKEN.items())
def test_broken_history_400_is_invalid_and_predicted_word_for_word(name, rule):
    err, body = _replay(name)
    assert err.kind == "invalid" and err.status == 400
    assert not is_retryable(err)
    said = json.loads(err.body)["error"]["message"]
    found = rules.check_wire(body["messages"], thinking="thinking" in body)
    assert [p.rule for p in found] == [rule]
    assert found[0].provider_wording == said


def test_529_is_a_retryable_overload():
    err, _ = _replay("anthropic_529_overloaded.yaml")
    assert err.kind == "overload" and err.status == 529
    assert is_retryable(err)
    assert err.reset_at is None and err.window is None  # an overload never benches a model


def test_in_stream_overloaded_error_is_classified_and_retryable():
    err, _ = _replay("anthropic_stream_overloaded_error.yaml")
    assert err.kind == "overload"
    assert is_retryable(err)
    assert err.partial.message.content == "README.md says" and not err.partial.finished


def test_429_with_retry_after_and_reset_headers():
    err, _ = _replay("anthropic_429_retry_after.yaml", stream=False)
    assert err.kind == "rate" and err.status == 429
    assert err.retry_after == 17  # Retry-After wins over the reset headers
    assert is_retryable(err)


def test_429_with_only_reset_headers_waits_for_the_reset():
    err, _ = _replay("anthropic_429_reset_headers.yaml")
    assert err.kind == "rate"
    assert err.retry_after > 60 * 60 * 24 * 365  # the reset is years away in this cassette
    assert not is_retryable(err)  # too long to sleep: a fallback's job


def test_429_weekly_limit_on_a_signed_in_plan_is_quota():
    err, _ = _replay("anthropic_429_weekly_limit.yaml")
    assert err.kind == "quota"
    assert err.retry_after == 60 and err.window == "weekly" and err.reset_at == 4102444800
    assert not is_retryable(err)


def test_constructed_cassettes_are_labelled():
    names = sorted(p.name for p in OWN.glob("anthropic_*.yaml"))
    assert len(names) == 11
    for name in names:
        assert (OWN / name).read_text().startswith("# CONSTRUCTED, not recorded:")
