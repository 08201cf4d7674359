"""pydantic-ai message JSON written by the real library (FunctionModel + capture_run_messages)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb import validate_history  # loads the wire adapter its rules need
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import detect, load
from providerkit_nb.transcripts.base import Source

from .conftest import FIXTURES

FILES = ["pydantic_ai_complete.json", "pydantic_ai_tool_raised.json", "pydantic_ai_ctrl_c.json",
         "pydantic_ai_retry.json", "pydantic_ai_retry_legacy.json"]


def raw_pairs(data: list[dict[str, Any]]) -> tuple[list[str], set[str], bool]:
    """(call ids in order, ids answered by a tool-return or a tool-bound retry-prompt, whether the
    last message is a response) straight from the file."""
    calls: list[str] = []
    answered: set[str] = set()
    for msg in data:
        for p in msg["parts"]:
            if p["part_kind"] == "tool-call":
                calls.append(p["tool_call_id"])
            elif p["part_kind"] == "tool-return" or (p["part_kind"] == "retry-prompt" and p.get("tool_name")):
                answered.add(p["tool_call_id"])
    return calls, answered, data[-1]["kind"] == "response"


@pytest.mark.parametrize("name", FILES)
def test_loads_with_the_dangling_calls_the_file_has(name: str) -> None:
    data = json.loads((FIXTURES / name).read_text())
    calls, answered, ends_on_response = raw_pairs(data)
    assert detect(FIXTURES / name) == "pydantic_ai"
    t = load(FIXTURES / name)
    assert t.format == "pydantic_ai"
    got_calls = [c.id for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()]  # type: ignore[union-attr]
    assert got_calls == calls
    dangling = [c for c in calls if c not in answered]
    r = repair_history(t.messages, pending=t.pending_approval)
    assert [i.id for i in r.interrupted] == ([] if ends_on_response else dangling)
    assert not validate_history(r.messages), "the repaired history must validate"
    interrupted = [m for m in data if m.get("state") == "interrupted"]
    assert len([mk for mk in t.markers if mk.kind == "interrupted"]) == len(interrupted)


def test_tool_raised_mid_batch_reports_the_interrupted_request() -> None:
    data = json.loads((FIXTURES / "pydantic_ai_tool_raised.json").read_text())
    # the library's own record: the request after the calls is state "interrupted"
    assert data[-1]["kind"] == "request" and data[-1]["state"] == "interrupted"
    t = load(FIXTURES / "pydantic_ai_tool_raised.json")
    (marker,) = [m for m in t.markers if m.kind == "interrupted"]
    returned = {p["tool_call_id"] for p in data[-1]["parts"] if p["part_kind"] == "tool-return"}
    asked = [p["tool_call_id"] for p in data[-2]["parts"] if p["part_kind"] == "tool-call"]
    assert marker.ids == [c for c in asked if c not in returned] and marker.ids
    assert t.pending_approval == []


def test_signed_thinking_is_kept_for_its_provider() -> None:
    data = json.loads((FIXTURES / "pydantic_ai_complete.json").read_text())
    part = next(p for m in data for p in m["parts"] if p["part_kind"] == "thinking")
    t = load(FIXTURES / "pydantic_ai_complete.json")
    a = next(m for m in t.messages if m.role == "assistant" and m.reasoning_items)  # type: ignore[union-attr]
    assert a.reasoning_items.provider == part["provider_name"]  # type: ignore[union-attr]
    assert a.reasoning_items.items[0]["signature"] == part["signature"]  # type: ignore[union-attr]
    assert a.reasoning == part["content"]  # type: ignore[union-attr]
    # the Anthropic wire replays it, the Responses wire does not
    from providerkit_nb.wire.anthropic import to_anthropic_messages
    from providerkit_nb.wire.openai_responses import to_responses_input

    sent = to_anthropic_messages(t.messages).messages
    assert any(b.get("signature") == part["signature"] for turn in sent for b in turn["content"] if isinstance(b, dict))
    assert part["signature"] not in json.dumps(to_responses_input(t.messages)[1])


def test_both_retry_generations_load_the_same() -> None:
    new = load(FIXTURES / "pydantic_ai_retry.json")
    old = load(FIXTURES / "pydantic_ai_retry_legacy.json")
    assert [m.to_dict() for m in new.messages] == [m.to_dict() for m in old.messages]
    legacy = json.loads((FIXTURES / "pydantic_ai_retry_legacy.json").read_text())
    retry = next(p for m in legacy for p in m["parts"] if p["part_kind"] == "retry-prompt")
    answer = next(m for m in old.messages if m.role == "tool" and m.tool_call_id == retry["tool_call_id"])  # type: ignore[union-attr]
    assert answer.content == retry["content"]  # type: ignore[union-attr]


def test_trailing_response_calls_are_pending_not_repaired() -> None:
    data = json.loads((FIXTURES / "pydantic_ai_complete.json").read_text())
    cut = data[:2]  # the request and the response that asks for the tools (as a deferred run ends)
    t = load(cut)
    asked = [p["tool_call_id"] for p in cut[1]["parts"] if p["part_kind"] == "tool-call"]
    assert t.pending_approval == asked
    r = repair_history(t.messages, pending=t.pending_approval)
    assert r.interrupted == [] and [p.id for p in r.pending] == asked
    assert len(r.messages) == len(t.messages)


def test_an_unknown_list_is_refused_with_the_source_named() -> None:
    from providerkit_nb.transcripts import TranscriptError

    with pytest.raises(TranscriptError, match="message 1"):
        load(Source([{"kind": "request", "parts": []}, {"kind": "bogus"}]), format="pydantic_ai")
