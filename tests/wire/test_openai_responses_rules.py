"""The offline Responses rules predict the provider's own 400s, word for word.

Oracles: the real recordings (a reasoning item without its follower from OpenAI, a call
without its output from DeepSeek's Responses endpoint, and every request the servers accepted,
which must raise nothing) and the constructed cassettes in cassettes/ for the wordings no
recording had (labelled CONSTRUCTED there), replayed with vcrpy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import vcr
import yaml

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    ReasoningItems,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.wire import openai_responses as rules
from providerkit_nb.wire.openai_responses import from_responses_input
from providerkit_nb.wire.options import CallOptions
from providerkit_nb.wire.validate import validate_history
from tests.providers.responses_cases import CASES, Case

OWN = Path(__file__).resolve().parents[2] / "cassettes"
ACCEPTED = [c for c in CASES if 200 <= c.status < 300 and isinstance(c.request.get("input"), list)]


def _case(stem: str, status: int) -> Case:
    (case,) = [c for c in CASES if c.path.stem == stem and c.status == status]
    return case


def test_rules_table_has_ids_and_wordings():
    ids = [r for r, _ in rules.RULES]
    assert len(ids) == len(set(ids)) == 6
    assert all(r.startswith("responses.") and w for r, w in rules.RULES)


@pytest.mark.upstream
@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.id)
def test_no_rule_fires_on_a_request_the_server_accepted(case: Case):
    assert rules.check_wire(case.request["input"]) == []


@pytest.mark.upstream
def test_recorded_reasoning_400_is_predicted_word_for_word():
    case = _case("test_openai_responses_thinking_with_modified_history", 400)
    said = json.loads(case.text)["error"]["message"]
    found = rules.check_wire(case.request["input"])
    assert [(p.rule, p.message) for p in found] == [(rules.REASONING_WITHOUT_FOLLOWER, said)]
    assert found[0].provider_wording in said
    assert found[0].at == 1
    # imported, that history holds an assistant turn (reasoning + text); our own adapter, sending that history, puts the reasoning before an output message:
    # the shape the server refused is not what we send
    msgs = from_responses_input(case.request["input"])
    assert [p.rule for p in rules.check(msgs)] == []


@pytest.mark.upstream
def test_recorded_deepseek_400_is_predicted():
    case = _case("test_deepseek_responses_rejects_interleaved_function_calls", 400)
    said = json.loads(case.text)["error"]["message"]  # "No tool output found for tool call call-a."
    found = rules.check_wire(case.request["input"])
    assert [(p.rule, p.at) for p in found] == [(rules.DANGLING_CALL, 1)]
    assert "No tool output found for" in said and "call-a" in found[0].message and "call-a" in said


def test_each_rule_on_a_constructed_input():
    rs = {"type": "reasoning", "id": "rs_1", "encrypted_content": "E"}
    found = rules.check_wire([
        {"role": "user", "content": "q"},
        rs,  # no summary, and a user message follows
        {"role": "user", "content": "again"},
        {"type": "function_call_output", "call_id": "call_nope", "output": "x"},
        {"type": "message", "id": "msg_4", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
        {"type": "message", "id": "msg_4", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "1"},
        {"type": "function_call_output", "call_id": "c1", "output": "2"},
    ])
    assert [(p.rule, p.at, p.message) for p in found] == [
        (rules.MISSING_SUMMARY, 1, "Input[1] missing required field `summary`"),
        (rules.REASONING_WITHOUT_FOLLOWER, 1, "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
        (rules.ORPHAN_OUTPUT, 3, "No tool call found for function call output with call_id call_nope."),
        (rules.DUPLICATE_ITEM, 5, "Duplicate item found with id msg_4. Remove duplicate items from your input and try again."),
        (rules.DUPLICATE_OUTPUT, 8, "Duplicate function_call_output for call_id 'c1'. Each function_call must have exactly one "
                                    "matching function_call_output"),
    ]
    for p in found:
        assert p.provider_wording in p.message


def test_canonical_check_indexes_canonical_messages_and_validate_dispatches():
    msgs = [UserMessage("q"),
            AssistantMessage("", reasoning_items=ReasoningItems("openai-responses", [{"type": "reasoning", "id": "rs_1", "summary": []}]),
                             tool_calls=[ToolCall("call_1", "f", "{}")]),
            UserMessage("no result given"),
            ToolMessage("call_zz", "f", "late")]
    found = rules.check(msgs)
    assert [(p.rule, p.index) for p in found] == [(rules.DANGLING_CALL, 1), (rules.ORPHAN_OUTPUT, 3)]
    via = [p for p in validate_history(msgs, wire="responses") if p.rule.startswith("responses.")]
    assert [(p.rule, p.index, p.message) for p in via] == [(p.rule, p.index, p.message) for p in found]


# --------------------------------------------------------------------------- constructed cassettes

CONSTRUCTED = sorted(OWN.glob("openai_responses_*_400.yaml"))


def test_constructed_cassettes_exist_and_are_labelled():
    assert {p.stem for p in CONSTRUCTED} == {
        "openai_responses_dangling_function_call_400",
        "openai_responses_orphan_function_call_output_400",
        "openai_responses_reasoning_without_follower_400",
    }
    for p in CONSTRUCTED:
        assert p.read_text().startswith("# CONSTRUCTED, not recorded")
    readme = (OWN / "README.md").read_text()
    assert all(p.name in readme for p in CONSTRUCTED)


@pytest.mark.parametrize("path", CONSTRUCTED, ids=lambda p: p.stem)
def test_constructed_400_matches_the_validator_and_classifies(path: Path):
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    (it,) = doc["interactions"]
    recorded = json.loads(it["request"]["body"])
    said = json.loads(it["response"]["body"]["string"])["error"]["message"]
    # the validator, on the cassette's own request, says exactly what the provider said
    found = rules.check_wire(recorded["input"])
    assert said in [p.message for p in found]
    # replayed over the real httpx transport (vcrpy intercepts it), the 400 is a clear error
    p = ResponsesProvider(model=recorded["model"], api_key="replay-key")
    with vcr.use_cassette(str(path), record_mode="none", match_on=["method", "scheme", "host", "port", "path"]) as cass:
        with pytest.raises(ProviderError) as info:
            collect_turn(p.create_stream(from_responses_input(recorded["input"])))
        assert cass.all_played
    err = info.value
    assert (err.kind, err.status) == ("invalid", 400)
    assert said in str(err)
    assert not err.is_transient
    # what we would actually send for that history (repaired) raises none of these rules
    sent = p.build_request(p.prepare(from_responses_input(recorded["input"])), None, CallOptions(), stream=True)
    assert rules.check_wire(sent.body["input"]) == []
