"""vercel_ui: UIMessage lists written by the real `ai` package (scripts/make_transcript_fixtures/
part1_vercel.mjs). Expectations come from the parts' states in the JSON."""

from __future__ import annotations

import json

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import AssistantMessage, ToolMessage
from providerkit_nb.errors import TranscriptError

from .conftest import FIXTURES


def _tool_parts(path):
    data = json.loads(path.read_text())
    return [p for m in data for p in m["parts"] if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"]


@pytest.mark.parametrize("name", ["complete", "tool_error", "interrupted", "approval"])
def test_each_state_is_read_as_the_sdk_means_it(name):
    path = FIXTURES / f"vercel_ui_{name}.json"
    parts = _tool_parts(path)
    results = [p["toolCallId"] for p in parts if p["state"] in ("output-available", "output-error", "output-denied")]
    interrupted = [p["toolCallId"] for p in parts if p["state"] in ("input-streaming", "input-available")]
    waiting = [p["toolCallId"] for p in parts if p["state"] in ("approval-requested", "approval-responded")]
    assert parts and len(results) + len(interrupted) + len(waiting) == len(parts)
    report = pk.inspect(path)
    assert report.format == "vercel_ui"
    calls = [c.id for m in report.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []]
    assert calls == [p["toolCallId"] for p in parts]
    assert [m.tool_call_id for m in report.messages if isinstance(m, ToolMessage)] == results
    assert [r.original_id for r in report.interrupted] == interrupted
    assert [i for m in report.markers if m.kind == "interrupted_tool" for i in m.ids] == interrupted
    assert report.pending_approval == waiting
    assert report.valid == (not interrupted)
    repaired = report.repaired.messages
    assert [p.id for p in report.repaired.pending] == waiting
    if not waiting:
        assert pk.validate_history(repaired) == []


def test_a_tool_error_is_a_result_carrying_the_error_text():
    parts = _tool_parts(FIXTURES / "vercel_ui_tool_error.json")
    [part] = parts
    report = pk.inspect(FIXTURES / "vercel_ui_tool_error.json")
    [tool] = [m for m in report.messages if isinstance(m, ToolMessage)]
    assert tool.content == part["errorText"]


def test_steps_become_separate_assistant_messages_and_reasoning_keeps_its_signature():
    data = json.loads((FIXTURES / "vercel_ui_complete.json").read_text())
    steps = sum(1 for m in data for p in m["parts"] if p["type"] == "step-start")
    reasoning = [p for m in data for p in m["parts"] if p["type"] == "reasoning"]
    report = pk.inspect(FIXTURES / "vercel_ui_complete.json")
    assistants = [m for m in report.messages if isinstance(m, AssistantMessage)]
    assert len(assistants) == steps
    assert [it for m in assistants if m.reasoning_items for it in m.reasoning_items.items] == reasoning
    assert [m.role for m in report.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_denied_call_is_answered_and_an_unknown_state_is_refused(tmp_path):
    data = json.loads((FIXTURES / "vercel_ui_approval.json").read_text())
    part = data[1]["parts"][-1]
    part["state"] = "output-denied"
    part["approval"] = {"id": part["approval"]["id"], "approved": False, "reason": "not now"}
    path = tmp_path / "denied.json"
    path.write_text(json.dumps(data))
    report = pk.inspect(path)
    assert report.valid and "not now" in report.messages[-1].content
    part["state"] = "output-teleported"
    path.write_text(json.dumps({"id": "chat-1", "messages": data}))
    with pytest.raises(TranscriptError, match="unknown state 'output-teleported'"):
        pk.inspect(path)
