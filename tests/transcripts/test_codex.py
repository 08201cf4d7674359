"""codex: the public rollouts (read in place), a variant with an output cut out, and the
constructed aborted-turn rollout. Expectations come from the raw lines."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb import transcripts
from providerkit_nb.core.messages import AssistantMessage, ToolMessage, text_of

from .conftest import FIXTURES, cut, raw_lines

FULL = "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
MALFORMED = "rollout-66666666-6666-4666-8666-666666666666.jsonl"
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


@pytest.fixture
def codex(upstream_transcripts_dir: Path) -> Path:
    return upstream_transcripts_dir / "codex"


def _items(lines):
    return [x["payload"] for x in lines if x.get("type") == "response_item"]


def test_real_rollout_pairs_function_and_custom_calls_by_call_id(codex):
    raw = raw_lines(codex / FULL)
    items = _items(raw)
    calls = [(i["call_id"], i["name"]) for i in items if i["type"] in CALLS]
    outputs = [i["call_id"] for i in items if i["type"] in OUTPUTS]
    assert len(calls) == 3 and sorted(c for c, _ in calls) == sorted(outputs)
    report = pk.inspect(codex / FULL)
    assert report.format == "codex"
    assert report.thread == raw[0]["payload"]["id"]
    loaded = [(c.id, c.name) for m in report.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []]
    assert loaded == calls
    assert [m.tool_call_id for m in report.messages if isinstance(m, ToolMessage)] == outputs
    assert report.problems == [] and report.repaired.changes == []
    # UI events and the unknown record are skipped and counted, line for line
    events = Counter(f"event_msg:{x['payload']['type']}" for x in raw if x["type"] == "event_msg")
    for k, n in events.items():
        assert report.skipped[k] == n
    unknown = [x["type"] for x in raw if x["type"] not in
               ("session_meta", "turn_context", "response_item", "event_msg", "compacted")]
    assert unknown and report.skipped[f"record:{unknown[0]}"] == len(unknown)


def test_encrypted_reasoning_is_kept_whole(codex):
    raw = raw_lines(codex / FULL)
    reasoning = next(i for i in _items(raw) if i["type"] == "reasoning")
    report = pk.inspect(codex / FULL)
    kept = [it for m in report.messages if isinstance(m, AssistantMessage) and m.reasoning_items
            for it in m.reasoning_items.items]
    assert kept == [reasoning]
    # kept for the provider, never shown: the sample's sentinel says it must not render
    assert "SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER" not in report.report_html()


def test_a_malformed_line_is_reported_and_not_fatal(codex):
    lines = (codex / MALFORMED).read_text().splitlines()
    bad = next(n for n, line in enumerate(lines, 1) if not line.startswith('{"'))
    t = transcripts.load(codex / MALFORMED)
    assert t.format == "codex" and t.messages == []
    assert t.skipped["malformed_line"] == 1
    assert len(t.warnings) == 1 and f"line {bad} " in t.warnings[0] and MALFORMED in t.warnings[0]


@pytest.mark.parametrize("victim_type", OUTPUTS)
def test_an_output_cut_out_dangles_under_its_call_id(codex, tmp_path, victim_type):
    raw = raw_lines(codex / FULL)
    victim = next(i["call_id"] for i in _items(raw) if i["type"] == victim_type)
    variant = tmp_path / FULL
    cut(codex / FULL, variant, lambda x: x.get("type") == "response_item"
        and x["payload"].get("type") == victim_type and x["payload"].get("call_id") == victim)
    report = pk.inspect(variant)
    assert [r.original_id for r in report.interrupted] == [victim]
    # one broken call, one finding, with the provider's wording attached
    assert [p.rule for p in report.problems] == ["dangling_call"]
    assert victim in report.problems[0].message
    assert report.problems[0].provider_wording == f"No tool output found for function call {victim}."
    assert pk.validate_history(report.repaired.messages, wire="responses") == []


def test_a_call_cut_out_leaves_an_orphan_output(codex, tmp_path):
    raw = raw_lines(codex / FULL)
    victim = next(i["call_id"] for i in _items(raw) if i["type"] == "function_call")
    variant = tmp_path / FULL
    cut(codex / FULL, variant, lambda x: x.get("type") == "response_item"
        and x["payload"].get("type") == "function_call" and x["payload"].get("call_id") == victim)
    report = pk.inspect(variant)
    assert report.orphans == [victim]
    assert "responses.orphan_function_call_output" in {p.rule for p in report.problems}
    assert pk.validate_history(report.repaired.messages, wire="responses") == []


def test_turn_aborted_becomes_a_marker_at_the_interrupted_call():
    raw = raw_lines(FIXTURES / "codex_turn_aborted.jsonl")
    items = _items(raw)
    answered = {i["call_id"] for i in items if i["type"] == "function_call_output"}
    dangling = [i["call_id"] for i in items if i["type"] == "function_call" and i["call_id"] not in answered]
    report = pk.inspect(FIXTURES / "codex_turn_aborted.jsonl")
    assert [r.original_id for r in report.interrupted] == dangling
    [marker] = report.markers
    assert marker.kind == "turn_aborted" and "interrupted" in marker.text
    calls_at = report.messages[marker.index]
    assert isinstance(calls_at, AssistantMessage) and [c.id for c in calls_at.tool_calls] == dangling
    assert report.meta["model"] == next(x["payload"]["model"] for x in raw if x["type"] == "turn_context")
    assert pk.validate_history(report.repaired.messages, wire="responses") == []


def test_compacted_replacement_history_replaces_what_came_before(tmp_path):
    import json

    lines = [
        {"type": "session_meta", "payload": {"id": "s"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "old"}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "f", "call_id": "c_old",
                                              "arguments": "{}"}},
        {"type": "compacted", "payload": {"message": "summary", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary"}]}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "new"}]}},
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = pk.inspect(path)
    assert [text_of(m) for m in report.messages] == ["summary", "new"]
    assert report.valid  # the old dangling call went with the compaction
