"""The Chat wire's offline rules predict the 400s our constructed cassettes carry, word for word,
and the history our adapter sends after repair raises none of them."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.testing.replay import load_interactions
from providerkit_nb.wire import openai_chat as rules
from providerkit_nb.wire.openai_chat import import_request
from tests.providers.cassette_loader import OWN

CASES = [
    ("openai_chat_broken_history_dangling_tool_calls_400.yaml", "openai", rules.DANGLING_TOOL_CALLS),
    ("openai_chat_broken_history_orphan_tool_400.yaml", "openai", rules.ORPHAN_TOOL_MESSAGE),
    ("openai_chat_deepseek_orphan_tool_400.yaml", "deepseek", rules.DEEPSEEK_ORPHAN),
]


@pytest.mark.parametrize(("file", "wire", "rule"), CASES)
def test_rule_predicts_the_recorded_wording(file: str, wire: str, rule: str) -> None:
    (it,) = load_interactions(OWN / file)
    said = it.response_text
    history = import_request(it.url, it.request_json).messages
    problems = pk.validate_history(history, wire=wire)
    mine = [p for p in problems if p.rule == rule]
    assert len(mine) == 1
    assert mine[0].provider_wording in said  # the stable part, exactly as the server words it
    assert dict(rules.RULES + rules.DEEPSEEK_RULES)[rule] in said
    repaired = pk.repair_history(history).messages
    assert rules.check(repaired, dialect="deepseek" if wire == "deepseek" else None) == []


def test_dangling_wording_names_the_ids() -> None:
    (it,) = load_interactions(OWN / "openai_chat_broken_history_dangling_tool_calls_400.yaml")
    (p,) = rules.check(import_request(it.url, it.request_json).messages)
    assert p.provider_wording in it.response_text and "call_twFmiX3ZaovBCo8nJ7o2Qf9e" in p.provider_wording


def test_deepseek_thinking_needs_reasoning_on_tool_call_turns() -> None:
    (it,) = load_interactions(OWN / "openai_chat_deepseek_thinking_missing_reasoning_400.yaml")
    history = import_request(it.url, it.request_json).messages
    assert rules.check(history, dialect="deepseek") == []  # no reasoning anywhere: cannot tell
    # an earlier turn shows thinking mode is on; the tool-call turn lost its reasoning
    with_thinking = [history[0], pk.AssistantMessage(content="noted", reasoning="first I look"), *history[1:]]
    problems = rules.check(with_thinking, dialect="deepseek")
    assert [(p.rule, p.index) for p in problems] == [(rules.DEEPSEEK_REASONING, 2)]
    assert problems[0].provider_wording in it.response_text
    assert rules.check(history, dialect=None) == []
